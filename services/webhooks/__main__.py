"""`python -m services.webhooks`: serve the Webhooks gRPC service (the API over subscriptions, event
history and deliveries; `python -m services.webhooks.dispatcher` delivers)."""
from core.grpc_server import main

if __name__ == "__main__":
    main("webhooks")
