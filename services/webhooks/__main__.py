"""`python -m services.webhooks`: serve the Webhooks gRPC service (the API over subscriptions, event
history and deliveries; `python -m services.webhooks.dispatcher` delivers)."""
from core import settings
from core.grpc_server import main
from services.webhooks.servicer import register

if __name__ == "__main__":
    cfg = settings.load()
    main("webhooks", cfg.webhooks_grpc_port, cfg, register)
