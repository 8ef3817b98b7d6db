"""`python -m providers.voice.vapi.simulator --port N --data-dir DIR --api-key KEY`: serve the voice-provider
simulator on 127.0.0.1 until SIGTERM or SIGINT. Each option falls back to an environment variable
(VOICE_SIM_PORT, VOICE_SIM_DATA_DIR, VOICE_API_KEY); the port defaults to 8790 and the data folder to
`$SWITCHBOARD_HOME/voice-simulator` (`.switchboard/voice-simulator`); the key is required."""
from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from aiohttp import web

from core.logs import configure_simulator_logs
from providers.voice.vapi.simulator.app import build_app

log = logging.getLogger("providers.voice.vapi.simulator")

DEFAULT_PORT = 8790


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m providers.voice.vapi.simulator", description=__doc__)
    default_dir = Path(os.environ.get("SWITCHBOARD_HOME", ".switchboard")) / "voice-simulator"
    parser.add_argument("--port", type=int, default=int(os.environ.get("VOICE_SIM_PORT") or DEFAULT_PORT),
                        help=f"port on 127.0.0.1 (env VOICE_SIM_PORT, default {DEFAULT_PORT})")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("VOICE_SIM_DATA_DIR") or default_dir),
                        help="folder of the simulator's state (env VOICE_SIM_DATA_DIR)")
    parser.add_argument("--api-key", default=os.environ.get("VOICE_API_KEY"),
                        help="the key clients must send as Authorization: Bearer <key> (env VOICE_API_KEY)")
    args = parser.parse_args(argv)
    if not args.api_key:
        parser.error("an API key is required (--api-key or VOICE_API_KEY)")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    configure_simulator_logs("voice-simulator")
    app = build_app(args.data_dir, args.api_key, float(os.environ.get("VOICE_SIM_TIME_SCALE") or 1.0),
                    f"http://127.0.0.1:{args.port}")
    # run_app stops on SIGINT and SIGTERM; `print` is called once the port is open.
    web.run_app(app, host="127.0.0.1", port=args.port, shutdown_timeout=2.0, access_log=None,
                print=lambda _: log.info("voice simulator listening on http://127.0.0.1:%d", args.port))
    log.info("voice simulator stopped")


if __name__ == "__main__":
    main()
