"""`python -m providers.messaging.simulator --port N --account-sid AC... --auth-token TOKEN [--inbound-url URL]`:
serve the SMS-provider simulator on 127.0.0.1 until SIGTERM or SIGINT. Each option falls back to an environment
variable (SMS_SIM_PORT, SMS_ACCOUNT_SID, SMS_AUTH_TOKEN, SMS_INBOUND_URL); the port defaults to 8791, the Account
SID (AC and 32 hex digits) and the auth token are required. SMS_SIM_TIME_SCALE multiplies every delay (default 1).
State is kept in memory: a restart starts empty."""
from __future__ import annotations

import argparse
import logging
import os

from aiohttp import web

from core.logs import configure_simulator_logs
from providers.messaging.simulator.app import ACCOUNT_SID, build_app

log = logging.getLogger("providers.messaging.simulator")

DEFAULT_PORT = 8791


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m providers.messaging.simulator", description=__doc__)
    parser.add_argument("--port", type=int, default=int(os.environ.get("SMS_SIM_PORT") or DEFAULT_PORT),
                        help=f"port on 127.0.0.1 (env SMS_SIM_PORT, default {DEFAULT_PORT})")
    parser.add_argument("--account-sid", default=os.environ.get("SMS_ACCOUNT_SID"),
                        help="the Account SID clients authenticate with, AC + 32 hex digits (env SMS_ACCOUNT_SID)")
    parser.add_argument("--auth-token", default=os.environ.get("SMS_AUTH_TOKEN"),
                        help="the auth token clients authenticate with and webhooks are signed with "
                             "(env SMS_AUTH_TOKEN)")
    parser.add_argument("--inbound-url", default=os.environ.get("SMS_INBOUND_URL") or None,
                        help="where inbound texts are POSTed unless the control plane names a URL "
                             "(env SMS_INBOUND_URL)")
    args = parser.parse_args(argv)
    if not args.account_sid:
        parser.error("an Account SID is required (--account-sid or SMS_ACCOUNT_SID)")
    if not ACCOUNT_SID.match(args.account_sid):
        parser.error("the Account SID must be AC followed by 32 hex digits")
    if not args.auth_token:
        parser.error("an auth token is required (--auth-token or SMS_AUTH_TOKEN)")
    try:
        args.time_scale = float(os.environ.get("SMS_SIM_TIME_SCALE") or 1.0)
    except ValueError:
        parser.error("SMS_SIM_TIME_SCALE must be a number")
    if args.time_scale < 0:
        parser.error("SMS_SIM_TIME_SCALE must not be negative")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    configure_simulator_logs()
    app = build_app(args.account_sid, args.auth_token, inbound_url=args.inbound_url, time_scale=args.time_scale)
    # run_app stops on SIGINT and SIGTERM; `print` is called once the port is open.
    web.run_app(app, host="127.0.0.1", port=args.port, shutdown_timeout=2.0, access_log=None,
                print=lambda _: log.info("messaging simulator listening on http://127.0.0.1:%d (account %s)",
                                         args.port, args.account_sid))
    log.info("messaging simulator stopped")


if __name__ == "__main__":
    main()
