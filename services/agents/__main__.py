"""`python -m services.agents`: serve the Agents gRPC service."""
from core.grpc_server import main

if __name__ == "__main__":
    main("agents")
