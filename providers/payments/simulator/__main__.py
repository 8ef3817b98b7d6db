"""`python -m providers.payments.simulator --port N --api-key sk_test_... [--webhook-url URL --webhook-secret
whsec_...] [--public-url URL]`: serve the payments-provider simulator on 127.0.0.1 until SIGTERM or SIGINT.
Each option falls back to an environment variable (PAYMENTS_SIM_PORT, PAYMENTS_API_KEY, PAYMENTS_WEBHOOK_URL,
PAYMENTS_WEBHOOK_SECRET, PAYMENTS_SIM_PUBLIC_URL); the port defaults to 8793, the public URL to
http://127.0.0.1:<port>; the API key is required, and so is the signing secret when there is a webhook URL.
PAYMENTS_SIM_TIME_SCALE multiplies every delay (default 1; 0: billing moves only through the control plane).

The account's prices: PAYMENTS_SIM_PRICES (`price_id=cents,...`, monthly USD), else the prices the stack offers
(CHECKOUT_PRICES, the same setting the services read, with the plans' monthly prices; unset: the local stack's
stand-ins, core.plans). Its Revenue recovery settings: PAYMENTS_SIM_RETRIES (`smart:<tries>/<days>`, default
`smart:8/14`, or `custom:<days>,<days>,...`) and PAYMENTS_SIM_FINAL_ACTION (`cancel`, the default, `unpaid` or
`past_due`). PAYMENTS_SIM_DELIVERY: `ordered` (default) or `shuffled` events. State is kept in memory: a restart
starts empty."""
from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Mapping

from aiohttp import web

from core import plans
from core.logs import configure_simulator_logs
from providers.payments.simulator.api import is_url
from providers.payments.simulator.app import build_app
from providers.payments.simulator.billing import Dunning
from providers.payments.simulator.events import DELIVERIES

log = logging.getLogger("providers.payments.simulator")

DEFAULT_PORT = 8793


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m providers.payments.simulator", description=__doc__)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PAYMENTS_SIM_PORT") or DEFAULT_PORT),
                        help=f"port on 127.0.0.1 (env PAYMENTS_SIM_PORT, default {DEFAULT_PORT})")
    parser.add_argument("--api-key", default=os.environ.get("PAYMENTS_API_KEY"),
                        help="the secret key clients authenticate with, e.g. sk_test_... (env PAYMENTS_API_KEY)")
    parser.add_argument("--webhook-url", default=os.environ.get("PAYMENTS_WEBHOOK_URL") or None,
                        help="where events are POSTed (env PAYMENTS_WEBHOOK_URL; none: events are only recorded)")
    parser.add_argument("--webhook-secret", default=os.environ.get("PAYMENTS_WEBHOOK_SECRET") or None,
                        help="the endpoint's signing secret, whsec_... (env PAYMENTS_WEBHOOK_SECRET)")
    parser.add_argument("--public-url", default=os.environ.get("PAYMENTS_SIM_PUBLIC_URL") or None,
                        help="where browsers reach this server, for checkout URLs (env PAYMENTS_SIM_PUBLIC_URL, "
                             "default http://127.0.0.1:<port>)")
    args = parser.parse_args(argv)
    if not args.api_key:
        parser.error("an API key is required (--api-key or PAYMENTS_API_KEY)")
    if args.webhook_url and not is_url(args.webhook_url):
        parser.error("the webhook URL must be an http(s) URL")
    if args.webhook_url and not (args.webhook_secret or "").startswith("whsec_"):
        parser.error("a webhook URL needs a signing secret starting with whsec_ "
                     "(--webhook-secret or PAYMENTS_WEBHOOK_SECRET)")
    args.public_url = (args.public_url or f"http://127.0.0.1:{args.port}").rstrip("/")
    if not is_url(args.public_url):
        parser.error("the public URL must be an http(s) URL")
    try:
        args.time_scale = float(os.environ.get("PAYMENTS_SIM_TIME_SCALE") or 1.0)
    except ValueError:
        parser.error("PAYMENTS_SIM_TIME_SCALE must be a number")
    if args.time_scale < 0:
        parser.error("PAYMENTS_SIM_TIME_SCALE must not be negative")
    try:
        args.prices = account_prices(os.environ)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        args.dunning = Dunning.parse(os.environ.get("PAYMENTS_SIM_RETRIES"), os.environ.get("PAYMENTS_SIM_FINAL_ACTION"))
    except ValueError as exc:
        parser.error(f"PAYMENTS_SIM_RETRIES / PAYMENTS_SIM_FINAL_ACTION: {exc}")
    args.delivery = os.environ.get("PAYMENTS_SIM_DELIVERY") or "ordered"
    if args.delivery not in DELIVERIES:
        parser.error(f"PAYMENTS_SIM_DELIVERY must be one of {', '.join(DELIVERIES)}")
    return args


def account_prices(env: Mapping[str, str]) -> dict[str, tuple[int, str]]:
    """The account's prices: price id → (monthly amount in cents, product name)."""
    if env.get("PAYMENTS_SIM_PRICES"):
        prices = {}
        for pair in filter(None, (p.strip() for p in env["PAYMENTS_SIM_PRICES"].split(","))):
            price, _, cents = (s.strip() for s in pair.partition("="))
            if not price.startswith("price_") or not cents.isdigit():
                raise ValueError(f"PAYMENTS_SIM_PRICES: {pair!r} must be <price_id>=<monthly amount in cents>")
            prices[price] = (int(cents), price)
        return prices
    try:
        offered = plans.parse_checkout_prices(env.get("CHECKOUT_PRICES", plans.LOCAL_CHECKOUT_PRICES))
    except SystemExit as exc:
        raise ValueError(str(exc)) from None
    return {price: (plans.MONTHLY_PRICE_CENTS[plan], f"Switchboard {plan.capitalize()}")
            for price, plan in offered.items()}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    configure_simulator_logs("payments-simulator")
    app = build_app(args.api_key, webhook_url=args.webhook_url, webhook_secret=args.webhook_secret,
                    public_url=args.public_url, time_scale=args.time_scale, prices=args.prices,
                    dunning=args.dunning, delivery=args.delivery)
    # run_app stops on SIGINT and SIGTERM; `print` is called once the port is open.
    web.run_app(app, host="127.0.0.1", port=args.port, shutdown_timeout=2.0, access_log=None,
                print=lambda _: log.info("payments simulator listening on http://127.0.0.1:%d (checkout pages on %s, "
                                         "webhooks to %s, time scale %g, prices %s)", args.port, args.public_url,
                                         args.webhook_url or "nowhere", args.time_scale,
                                         ", ".join(args.prices) or "none"))
    log.info("payments simulator stopped")


if __name__ == "__main__":
    main()
