"""`python -m gateway`: serve the public HTTP API."""
import logging

from aiohttp import web

from core import logs, metrics, settings, telemetry
from gateway.app import build_app

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
    web.run_app(build_app(cfg), host=cfg.http_host, port=cfg.http_port, print=None, shutdown_timeout=10,
                access_log=None)
