"""`python -m providers.email.catchall --smtp-port N --http-port M --dir DIR`: a catch-all SMTP server on
127.0.0.1 that accepts every message for every recipient and keeps each as an `.eml` file in DIR, with an HTTP
API to read them, until SIGTERM or SIGINT. Each option falls back to an environment variable
(SMTP_CATCHALL_PORT, default 8825; SMTP_CATCHALL_HTTP_PORT, default 8826; SMTP_CATCHALL_DIR, default
`$SWITCHBOARD_HOME/mail`, i.e. `.switchboard/mail`). The folder is the only state: a restart reads it again."""
from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from aiohttp import web

from core.logs import configure_simulator_logs
from providers.email.catchall.app import build_app
from providers.email.catchall.mailbox import Mailbox

log = logging.getLogger("providers.email.catchall")

DEFAULT_SMTP_PORT = 8825
DEFAULT_HTTP_PORT = 8826


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m providers.email.catchall", description=__doc__)
    default_dir = Path(os.environ.get("SWITCHBOARD_HOME", ".switchboard")) / "mail"
    parser.add_argument("--smtp-port", type=int,
                        default=int(os.environ.get("SMTP_CATCHALL_PORT") or DEFAULT_SMTP_PORT),
                        help=f"SMTP port on 127.0.0.1 (env SMTP_CATCHALL_PORT, default {DEFAULT_SMTP_PORT})")
    parser.add_argument("--http-port", type=int,
                        default=int(os.environ.get("SMTP_CATCHALL_HTTP_PORT") or DEFAULT_HTTP_PORT),
                        help=f"HTTP port on 127.0.0.1 (env SMTP_CATCHALL_HTTP_PORT, default {DEFAULT_HTTP_PORT})")
    parser.add_argument("--dir", type=Path, default=Path(os.environ.get("SMTP_CATCHALL_DIR") or default_dir),
                        help="folder of the received .eml files (env SMTP_CATCHALL_DIR, default "
                             "$SWITCHBOARD_HOME/mail)")
    args = parser.parse_args(argv)
    if args.smtp_port == args.http_port:
        parser.error("the SMTP and HTTP ports must differ")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    configure_simulator_logs("mail-catchall")
    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd's line per SMTP command and recipient
    mailbox = Mailbox(args.dir)
    app = build_app(mailbox, smtp_port=args.smtp_port)
    # run_app stops on SIGINT and SIGTERM; the SMTP server starts with the app, `print` once both ports are open.
    web.run_app(app, host="127.0.0.1", port=args.http_port, shutdown_timeout=2.0, access_log=None,
                print=lambda _: log.info("email catch-all listening: SMTP 127.0.0.1:%d, HTTP http://127.0.0.1:%d, "
                                         "folder %s", args.smtp_port, args.http_port, mailbox.folder.resolve()))
    log.info("email catch-all stopped")


if __name__ == "__main__":
    main()
