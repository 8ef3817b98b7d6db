"""`python -m services.messaging`: serve the Messaging gRPC service (SMS, threads, consent, do-not-call)."""
from core.grpc_server import main

if __name__ == "__main__":
    main("messaging")
