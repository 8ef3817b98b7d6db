"""x402 version 2 payments (https://x402.org, the `x402` package on PyPI): HTTP 402 with a `PAYMENT-REQUIRED`
header, a signed `PAYMENT-SIGNATURE` header from the payer, a `PAYMENT-RESPONSE` header with the settlement.

- `server`: `X402Gate`, what our API calls: the 402 requirements, then verify and settle through a facilitator
  (the package's `x402ResourceServer` and `HTTPFacilitatorClient`).
- `payer`: `pay(private_key, payment_required_header)` makes a `PAYMENT-SIGNATURE` value (the package's client
  and its `exact` EVM signer over an `eth_account` key; no network needed), for our tests and API users.
- `facilitator`: `python -m providers.x402.facilitator`, a local facilitator speaking the facilitator HTTP API
  (`POST /verify`, `POST /settle`, `GET /supported`), checking signatures for real with the package's `exact`
  EVM scheme, settling on an in-memory ledger instead of a chain.
- `payload`: the shape checks of an `exact` EVM (EIP-3009) payment both sides share.

Conventions:

- Scheme `exact`, asset transfer method EIP-3009 (`transferWithAuthorization`, a signed EIP-712 message; the
  facilitator pays the gas). Permit2, `upto` and x402 version 1 are not served.
- Network `eip155:84532` (Base Sepolia, CAIP-2) and its USDC, `0x036CbD53842c5426634e7929541eC2318f3dCF7e`, whose
  EIP-712 domain is name `USDC`, version `2`, 6 decimals: the pair the public test facilitators serve, so a real
  one can replace the local one with no other change. Production sets Base mainnet (`eip155:8453`, USDC
  `0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913`, name `USD Coin`, version `2`).
- Amounts are atomic units as decimal strings: 1 USDC is `"1000000"`, $49.00 is `"49000000"`. The `exact`
  scheme takes exactly the amount asked (the spec's rule and the package's): more is refused as well as less.
"""
from __future__ import annotations

# The defaults (Base Sepolia's USDC) live in core.x402_defaults: core.settings reads them, and core never imports
# providers.
from core.x402_defaults import DEFAULT_ASSET as DEFAULT_ASSET
from core.x402_defaults import DEFAULT_ASSET_NAME as DEFAULT_ASSET_NAME
from core.x402_defaults import DEFAULT_ASSET_VERSION as DEFAULT_ASSET_VERSION
from core.x402_defaults import DEFAULT_NETWORK as DEFAULT_NETWORK

SCHEME = "exact"
X402_VERSION = 2

BASE_MAINNET = "eip155:8453"
BASE_MAINNET_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
USDC_DECIMALS = 6

PAYMENT_REQUIRED_HEADER = "PAYMENT-REQUIRED"
PAYMENT_SIGNATURE_HEADER = "PAYMENT-SIGNATURE"
PAYMENT_RESPONSE_HEADER = "PAYMENT-RESPONSE"
