"""Logging setup: one line per record, to stderr; the launcher sends it to a file."""
import logging
import os


def configure(level: str = "INFO") -> None:
    logging.basicConfig(level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("nats").setLevel(logging.WARNING)
    logging.getLogger("sqlalchemy").setLevel(logging.WARNING)
    # the x402 package's HTTP client and signer log a line per request and per signature
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("x402").setLevel(logging.WARNING)
    logging.getLogger("stripe").setLevel(logging.WARNING)


def configure_simulator_logs() -> None:
    """A local simulator's logging: LOG_LEVEL, without aiohttp's line per request."""
    configure(os.environ.get("LOG_LEVEL", "INFO"))
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
