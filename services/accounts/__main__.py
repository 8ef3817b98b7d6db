"""`python -m services.accounts`: serve the Accounts gRPC service."""
from core import settings
from core.grpc_server import main
from services.accounts.servicer import register
from services.accounts.store import outbox

if __name__ == "__main__":
    cfg = settings.load()
    main("accounts", cfg.accounts_grpc_port, cfg, register, outbox)
