"""`python -m gateway`: serve the public HTTP API until SIGTERM (gateway.serving)."""
import asyncio
import logging

from core import logs, metrics, settings, telemetry
from gateway.app import build_app
from gateway.serving import serve

if __name__ == "__main__":
    cfg = settings.load("gateway")
    logs.configure(cfg.log_level, "gateway")
    telemetry.configure("gateway")
    metrics.configure("gateway", cfg)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    asyncio.run(serve(build_app(cfg), cfg))
