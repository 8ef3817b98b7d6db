"""The x402 payment terms asked for unless X402_NETWORK, X402_ASSET, X402_ASSET_NAME and X402_ASSET_VERSION say
otherwise: Base Sepolia's USDC, the pair the public test facilitators serve (see providers.x402).

They live in core, not in providers.x402 (which imports them from here), because core.settings defaults to them
and core never imports providers.
"""
DEFAULT_NETWORK = "eip155:84532"  # Base Sepolia (CAIP-2)
DEFAULT_ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"  # its USDC
DEFAULT_ASSET_NAME = "USDC"  # EIP-712 domain name of Base Sepolia's USDC ("USD Coin" on Base mainnet)
DEFAULT_ASSET_VERSION = "2"
