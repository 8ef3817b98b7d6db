"""`python -m services.accounts`: serve the Accounts gRPC service."""
from core.grpc_server import main

if __name__ == "__main__":
    main("accounts")
