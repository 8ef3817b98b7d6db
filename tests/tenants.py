"""The caller a service names in its gRPC metadata, for tests that call the services as another service does."""
from core.tenant import Tenant


def as_business(account) -> tuple:
    """The tenant metadata a service passes when it acts for one business (e.g. on an inbound call)."""
    return Tenant(account_id=account["signup"]["business_id"], business_ids=(account["business_id"],)).to_metadata()
