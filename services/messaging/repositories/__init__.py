"""The messaging service's repositories, one module per capability (messages, compliance, consent, spend, email, erasure), and
`MessagingUnit`, the unit of work (core.uow.UnitOfWork) its use cases reach them through. Only these modules import
store.py. They only store and find; the rules stay in domain.py, core.compliance and the use cases. The fast test
tier has in-memory twins (tests/memory/messaging.py), held to the same behaviour tests (tests/storage_contracts.py)."""
