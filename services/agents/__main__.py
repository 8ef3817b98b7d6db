"""`python -m services.agents`: serve the Agents gRPC service."""
from core import settings
from core.grpc_server import main
from services.agents.servicer import register
from services.agents.store import outbox

if __name__ == "__main__":
    cfg = settings.load()
    main("agents", cfg.agents_grpc_port, cfg, register, outbox)
