"""`python -m services.sdr`: serve the Sdr gRPC service (leads and the sales pipeline)."""
from core import settings
from core.grpc_server import main
from services.sdr.servicer import register
from services.sdr.store import outbox

if __name__ == "__main__":
    cfg = settings.load()
    main("sdr", cfg.sdr_grpc_port, cfg, register, outbox)
