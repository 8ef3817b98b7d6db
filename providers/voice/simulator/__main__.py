"""`python -m providers.voice.simulator --port N --data-dir DIR --api-key KEY` (or VOICE_SIM_PORT,
VOICE_SIM_DATA_DIR and VOICE_API_KEY): serve the voice-provider simulator until SIGTERM or Ctrl-C."""
from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from aiohttp import web

from providers.voice.simulator.app import build_app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=int(os.environ.get("VOICE_SIM_PORT", "8790")))
    parser.add_argument("--data-dir", default=os.environ.get("VOICE_SIM_DATA_DIR", ".switchboard/voice-simulator"))
    parser.add_argument("--api-key", default=os.environ.get("VOICE_API_KEY", ""))
    args = parser.parse_args()
    if not args.api_key:
        raise SystemExit("the simulator needs an API key (--api-key or VOICE_API_KEY)")
    logging.basicConfig(level="INFO", format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    print(f"voice simulator listening on http://127.0.0.1:{args.port}", flush=True)
    web.run_app(build_app(Path(args.data_dir), args.api_key), host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
