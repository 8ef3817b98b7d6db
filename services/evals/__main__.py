"""`python -m services.evals`: serve the Evals gRPC service (eval scenarios mirrored to the voice provider)."""
from core.grpc_server import main

if __name__ == "__main__":
    main("evals")
