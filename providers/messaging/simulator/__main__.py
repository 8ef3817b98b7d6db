"""`python -m providers.messaging.simulator --port N --account-sid AC... --auth-token TOKEN [--inbound-url URL]
[--opt-out default|advanced|off] [--test-account-sid AC... --test-auth-token TOKEN]`: serve the SMS-provider
simulator on 127.0.0.1 until SIGTERM or SIGINT. Each option falls back to an environment variable (SMS_SIM_PORT,
SMS_ACCOUNT_SID, SMS_AUTH_TOKEN, SMS_INBOUND_URL, SMS_SIM_OPT_OUT, SMS_SIM_TEST_ACCOUNT_SID,
SMS_SIM_TEST_AUTH_TOKEN); the port defaults to 8791, the Account SID (AC and 32 hex digits) and the auth token are
required, opt-out handling is Twilio's default, and without test credentials only the live ones are accepted.
SMS_SIM_TIME_SCALE multiplies every delay (default 1). State is kept in memory: a restart starts empty."""
from __future__ import annotations

import argparse
import logging
import os

from aiohttp import web

from core.logs import configure_simulator_logs
from providers.messaging.simulator.app import ACCOUNT_SID, build_app
from providers.messaging.simulator.optout import HANDLINGS

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
    parser.add_argument("--opt-out", choices=HANDLINGS, default=os.environ.get("SMS_SIM_OPT_OUT") or "default",
                        help="how the numbers handle STOP, START and HELP: Twilio's default handling, Advanced "
                             "Opt-Out (the webhook carries OptOutType) or off (env SMS_SIM_OPT_OUT, default default)")
    parser.add_argument("--test-account-sid", default=os.environ.get("SMS_SIM_TEST_ACCOUNT_SID") or None,
                        help="the test credentials' Account SID, whose sends play Twilio's magic numbers "
                             "(env SMS_SIM_TEST_ACCOUNT_SID)")
    parser.add_argument("--test-auth-token", default=os.environ.get("SMS_SIM_TEST_AUTH_TOKEN") or None,
                        help="the test credentials' auth token (env SMS_SIM_TEST_AUTH_TOKEN)")
    args = parser.parse_args(argv)
    if args.opt_out not in HANDLINGS:
        parser.error(f"SMS_SIM_OPT_OUT must be one of {', '.join(HANDLINGS)}")
    if bool(args.test_account_sid) != bool(args.test_auth_token):
        parser.error("test credentials are a test Account SID and a test auth token: both or neither")
    if args.test_account_sid and (not ACCOUNT_SID.match(args.test_account_sid)
                                  or args.test_account_sid == args.account_sid):
        parser.error("the test Account SID must be AC followed by 32 hex digits, and not the live one")
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
    configure_simulator_logs("sms-simulator")
    app = build_app(args.account_sid, args.auth_token, inbound_url=args.inbound_url, time_scale=args.time_scale,
                    opt_out=args.opt_out, test_account_sid=args.test_account_sid,
                    test_auth_token=args.test_auth_token)
    # run_app stops on SIGINT and SIGTERM; `print` is called once the port is open.
    web.run_app(app, host="127.0.0.1", port=args.port, shutdown_timeout=2.0, access_log=None,
                print=lambda _: log.info("messaging simulator listening on http://127.0.0.1:%d (account %s)",
                                         args.port, args.account_sid))
    log.info("messaging simulator stopped")


if __name__ == "__main__":
    main()
