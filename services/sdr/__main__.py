"""`python -m services.sdr`: serve the Sdr gRPC service (leads and the sales pipeline)."""
from core.grpc_server import main

if __name__ == "__main__":
    main("sdr")
