"""The Accounts gRPC service: one servicer per part, composed (the parts and how they meet: services.accounts.ports).

identity, billing, workspaces and privacy each answer their own RPCs in their own servicer class, over their own use cases
(provisioning answers none: its saga shows in a workspace's reply). They stay one `Accounts` gRPC service with one
proto, as sdr's capabilities do (services.sdr.servicer): the gateway and the other services call these RPCs through
one client, deadline table and caller rules (core.registry). `AccountsServicer` is the composition gRPC registers;
`wire` gives each part the others' use cases through the ports, and `build` runs its workers and consumers."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from google.protobuf.message import Message

from core import registry
from core.bus import PROVIDER_STREAM, EventBus
from core.grpc_server import Runtime
from core.settings import Settings
from core.uow import UnitOfWork
from providers import configured
from providers.payments.webhooks import EVENTS_SUBJECT
from services.accounts.agents_port import AgentsPort, GrpcAgents
from services.accounts.billing import calls_consumer, payments_service
from services.accounts.billing.checkouts import Checkouts
from services.accounts.billing.servicer import BillingServicer, usage_message
from services.accounts.billing.signup import Signup
from services.accounts.billing.usage import Usage
from services.accounts.billing.worker import BillingWorker, PaymentParts, payment_parts
from services.accounts.identity import standing_consumer
from services.accounts.identity.client_documents import ClientDocuments
from services.accounts.identity.oauth_service import OAuth
from services.accounts.identity.service import Identity
from services.accounts.identity.servicer import IdentityServicer
from services.accounts.identity.sign_in import SignInLinks
from services.accounts.privacy.data_retention import DataRetention, DataRetentionRunner
from services.accounts.privacy.export_sources import GrpcExportSources
from services.accounts.privacy.exports import ExportRunner, Exports
from services.accounts.privacy.personal_data import GrpcPersonalData, GrpcRetention
from services.accounts.privacy.service import ErasureRunner, Erasures
from services.accounts.privacy.servicer import PrivacyServicer
from services.accounts.privacy.teardown_deletion import TeardownDeletionRunner, TeardownDeletions
from services.accounts.privacy_repository import replay_retention
from services.accounts.provisioning.service import Provisioning
from services.accounts.records import UsageRecord, Workspace
from services.accounts.repository import AccountsUnit, HotPath, PooledAccounts, accounts_units, retention_rules
from services.accounts.secret_keys import SecretKeys
from services.accounts.workspaces.service import Workspaces
from services.accounts.workspaces.servicer import WorkspacesServicer, workspace_message
from switchboard.v1 import accounts_pb2_grpc


@dataclass(frozen=True)
class AccountsParts:
    """Each part's use cases, given the others' through the ports."""

    identity: Identity
    signup: Signup
    usage: Usage
    workspaces: Workspaces
    billing: PaymentParts


def wire(s: Settings, uow: UnitOfWork[AccountsUnit], hot: HotPath, bus: EventBus,
         agents: AgentsPort) -> AccountsParts:
    """The parts on one unit of work (for the service and the service-layer tests); the payment providers' closers
    are the caller's to run (`billing.closers`)."""
    identity = Identity(uow, hot, bus, s)
    billing = payment_parts(s, uow, Provisioning(uow, agents, s.provisioning_retry_seconds))
    return AccountsParts(identity, Signup(uow, s, billing.payments, billing.x402, billing.provisioning),
                         Usage(uow, hot, agents), Workspaces(uow, hot, billing.workspaces, identity,
                                                                           timedelta(days=s.teardown_grace_days)), billing)


class PublicRecords:
    """`ports.PublicRecords`: the workspaces' and billing's records as their RPCs answer them."""

    def workspace(self, workspace: Workspace) -> Message:
        return workspace_message(workspace)

    def usage(self, entry: UsageRecord) -> Message:
        return usage_message(entry)


class AccountsServicer(IdentityServicer, BillingServicer, WorkspacesServicer, PrivacyServicer,
                       accounts_pb2_grpc.AccountsServicer):
    """The parts' servicers as the one Accounts service, each given its own use cases."""

    def __init__(self, parts: AccountsParts, oauth: OAuth, sign_in: SignInLinks, erasures: Erasures,
                 exports: Exports):
        IdentityServicer.__init__(self, parts.identity, oauth, sign_in)
        b = parts.billing
        BillingServicer.__init__(self, parts.signup, parts.usage, b.payments, Checkouts(b.payments.uow, b.payments),
                                 b.x402, sign_in)
        WorkspacesServicer.__init__(self, parts.workspaces)
        PrivacyServicer.__init__(self, erasures, exports)


def build(runtime: Runtime) -> AccountsServicer:
    s = runtime.settings
    parts = wire(s, accounts_units(runtime.db), PooledAccounts(runtime.db), runtime.bus,
                 GrpcAgents(runtime.client("agents")))
    runtime.on_stop.extend(parts.billing.closers)
    runtime.run(BillingWorker(parts.billing, s.billing_interval_seconds))
    runtime.retain(*retention_rules(timedelta(days=s.retention_usage_days)))
    # The provider's events the gateway stored: retried until they apply (a database outage of any length loses
    # none); only one that can never apply is terminated.
    runtime.consume(payments_service.EVENTS_CONSUMER, parts.billing.payments.apply_event, stream=PROVIDER_STREAM,
                    filter_subject=EVENTS_SUBJECT, max_deliver=-1)
    runtime.consume(calls_consumer.CONSUMER, calls_consumer.CallUsage(parts.usage).handle,
                    batch=100, batched=True, filter_subject=calls_consumer.CALLS_SUBJECT)
    runtime.consume(standing_consumer.CONSUMER,
                    standing_consumer.StandingInvalidation(parts.identity).handle,
                    filter_subject=standing_consumer.SUBJECT)
    documents = ClientDocuments(allow_loopback=s.environment == "local")
    runtime.on_stop.append(documents.close)
    sign_in = SignInLinks(parts.identity, configured.mail(s))
    runtime.on_stop.append(sign_in.close)
    # Erasures of a person: started at once by their request, and claimed by the runner when due (a retry, or a job
    # whose runner died), across the services holding personal data.
    erasures = Erasures(accounts_units(runtime.db),
                        GrpcPersonalData({name: runtime.client(name) for name in registry.PERSONAL_DATA_SERVICES}),
                        SecretKeys.of(s), retry_seconds=s.erasure_retry_seconds, max_attempts=s.erasure_max_attempts)
    runtime.run(ErasureRunner(erasures, s.erasure_interval_seconds))
    # their replay entries (for a restore of a backup) are kept as long as the backups
    runtime.retain(replay_retention(timedelta(days=s.backup_retention_days)))
    # The retention each business set: a claimed round a day per business, across the same services.
    retention = DataRetention(accounts_units(runtime.db),
                              GrpcRetention({name: runtime.client(name) for name in registry.PERSONAL_DATA_SERVICES}),
                              retry_seconds=s.privacy_retention_retry_seconds)
    runtime.run(DataRetentionRunner(retention, s.privacy_retention_interval_seconds))
    # A torn-down business's data deletion, claimed by its runner once the grace period is over.
    deletions = TeardownDeletions(
        accounts_units(runtime.db),
        GrpcPersonalData({name: runtime.client(name) for name in registry.TEARDOWN_SERVICES}), parts.identity,
        retry_seconds=s.erasure_retry_seconds)
    runtime.run(TeardownDeletionRunner(deletions, s.erasure_interval_seconds))
    # Exports of a business's data: the same, a page at a time from the services holding its records; the runner
    # also deletes the archives past their expiry.
    exports = Exports(accounts_units(runtime.db),
                      GrpcExportSources({name: runtime.client(name) for name in registry.EXPORT_SERVICES}),
                      PublicRecords(), SecretKeys.of(s), retry_seconds=s.export_retry_seconds,
                      max_attempts=s.export_max_attempts,
                      retention=timedelta(hours=s.export_retention_hours), link_seconds=s.export_link_seconds)
    runtime.run(ExportRunner(exports, s.export_interval_seconds))
    return AccountsServicer(parts, OAuth(parts.identity, documents), sign_in, erasures, exports)
