"""The messaging service's repositories, one module per capability (spend, ...), and `MessagingUnit`, the unit of
work (core.uow.UnitOfWork) its use cases reach them through. Only these modules import store.py."""
