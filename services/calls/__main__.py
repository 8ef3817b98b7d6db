"""`python -m services.calls`: serve the Calls gRPC service (outbound calls and the calls' records)."""
from core.grpc_server import main

if __name__ == "__main__":
    main("calls")
