"""`python -m providers.x402.facilitator [--port N] [--network eip155:84532] [--asset 0x...] [--asset-name USDC]
[--asset-version 2] [--start-balance ATOMIC]`: serve the local x402 facilitator on 127.0.0.1 until SIGTERM or
SIGINT. Each option falls back to an environment variable (X402_FACILITATOR_PORT, default 8795;
X402_FACILITATOR_NETWORK, X402_FACILITATOR_ASSET, X402_FACILITATOR_ASSET_NAME, X402_FACILITATOR_ASSET_VERSION,
default Base Sepolia's USDC; X402_FACILITATOR_START_BALANCE, default 1000000000 = 1000 USDC). State is kept in
memory: a restart starts empty."""
from __future__ import annotations

import argparse
import logging
import os
import re

from aiohttp import web

from core.logs import configure_simulator_logs
from providers.x402 import DEFAULT_ASSET, DEFAULT_ASSET_NAME, DEFAULT_ASSET_VERSION, DEFAULT_NETWORK
from providers.x402.facilitator.app import DEFAULT_START_BALANCE, build_app
from providers.x402.payload import ADDRESS

log = logging.getLogger("providers.x402.facilitator")

DEFAULT_PORT = 8795
EIP155 = re.compile(r"^eip155:[1-9][0-9]{0,18}$")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(prog="python -m providers.x402.facilitator", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", default=env("X402_FACILITATOR_PORT") or str(DEFAULT_PORT),
                        help=f"port on 127.0.0.1 (env X402_FACILITATOR_PORT, default {DEFAULT_PORT})")
    parser.add_argument("--network", default=env("X402_FACILITATOR_NETWORK") or DEFAULT_NETWORK,
                        help=f"CAIP-2 id of the EVM network served (env X402_FACILITATOR_NETWORK, "
                             f"default {DEFAULT_NETWORK}, Base Sepolia)")
    parser.add_argument("--asset", default=env("X402_FACILITATOR_ASSET") or DEFAULT_ASSET,
                        help=f"the EIP-3009 token's address (env X402_FACILITATOR_ASSET, default {DEFAULT_ASSET}, "
                             "Base Sepolia's USDC)")
    parser.add_argument("--asset-name", default=env("X402_FACILITATOR_ASSET_NAME") or DEFAULT_ASSET_NAME,
                        help=f"the token's EIP-712 domain name (env X402_FACILITATOR_ASSET_NAME, "
                             f"default {DEFAULT_ASSET_NAME})")
    parser.add_argument("--asset-version", default=env("X402_FACILITATOR_ASSET_VERSION") or DEFAULT_ASSET_VERSION,
                        help=f"the token's EIP-712 domain version (env X402_FACILITATOR_ASSET_VERSION, "
                             f"default {DEFAULT_ASSET_VERSION})")
    parser.add_argument("--start-balance",
                        default=env("X402_FACILITATOR_START_BALANCE") or str(DEFAULT_START_BALANCE),
                        help="atomic units every address starts with (env X402_FACILITATOR_START_BALANCE, "
                             f"default {DEFAULT_START_BALANCE} = 1000 USDC)")
    args = parser.parse_args(argv)
    if not (args.port.isascii() and args.port.isdigit()) or not 0 < int(args.port) < 65536:
        parser.error("the port must be a number from 1 to 65535")
    args.port = int(args.port)
    if not EIP155.match(args.network):
        parser.error("the network must be an EVM network in CAIP-2 form, eip155:<chain id>")
    if not ADDRESS.match(args.asset):
        parser.error("the asset must be an address (0x and 40 hex digits)")
    if not args.asset_name or not args.asset_version:
        parser.error("the asset's EIP-712 name and version must not be empty")
    if not args.start_balance.isascii() or not args.start_balance.isdigit():
        parser.error("the start balance must be a whole number of atomic units")
    args.start_balance = int(args.start_balance)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    configure_simulator_logs("x402-facilitator")
    app = build_app(network=args.network, asset=args.asset, asset_name=args.asset_name,
                    asset_version=args.asset_version, start_balance=args.start_balance)
    # run_app stops on SIGINT and SIGTERM; `print` is called once the port is open.
    web.run_app(app, host="127.0.0.1", port=args.port, shutdown_timeout=2.0, access_log=None,
                print=lambda _: log.info("x402 facilitator listening on http://127.0.0.1:%d (exact, %s, asset %s)",
                                         args.port, args.network, args.asset))
    log.info("x402 facilitator stopped")


if __name__ == "__main__":
    main()
