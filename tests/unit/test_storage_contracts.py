"""The storage contracts (tests/storage_contracts.py) on the fast tier's in-memory repositories;
tests/service/test_storage_contracts.py runs the same on the SQL ones."""
import pytest

from services.messaging.repositories.unit import MessagingUnit
from tests.memory import insert
from tests.memory.accounts import MemoryAccounts, MemoryHotPath, MemoryOAuth, MemoryProvisioning
from tests.memory.agents import MemoryAgents, MemoryNumbers, MemoryStock
from tests.memory.billing import MemoryBilling
from tests.memory.calls import MemoryCalls
from tests.memory.evals import MemoryRuns as MemoryEvalRuns
from tests.memory.evals import MemoryScenarios
from tests.memory.messaging import MEMORY, MemoryEmails, MemorySpend
from tests.memory.sdr import MemoryBookings, MemoryLeads, MemoryRuns, MemoryTouches
from tests.memory.webhooks import MemoryDeliveries, MemoryEvents, MemorySubscriptions
from tests.storage_contracts import (
    AccountsRepositoryContract,
    AgentsRepositoryContract,
    BillingRepositoryContract,
    BookingsRepositoryContract,
    CallsRepositoryContract,
    DeliveriesRepositoryContract,
    EmailRepositoryContract,
    EvalRunsRepositoryContract,
    EventsRepositoryContract,
    LeadsRepositoryContract,
    MessagingRepositoryContract,
    NumbersRepositoryContract,
    OAuthRepositoryContract,
    ProvisioningRepositoryContract,
    RunsRepositoryContract,
    ScenariosRepositoryContract,
    SignupRepositoryContract,
    SpendRepositoryContract,
    SubscriptionsRepositoryContract,
    TouchesRepositoryContract,
)


@pytest.fixture
def seed():
    async def seed(conn, table, **values):
        insert(conn.rows(table), table, values)
    return seed


class TestMemoryCalls(CallsRepositoryContract):
    @pytest.fixture
    def calls_in(self):
        return MemoryCalls


class TestMemoryScenarios(ScenariosRepositoryContract):
    @pytest.fixture
    def scenarios_in(self):
        return MemoryScenarios


class TestMemoryEvalRuns(EvalRunsRepositoryContract):
    @pytest.fixture
    def scenarios_in(self):
        return MemoryScenarios

    @pytest.fixture
    def eval_runs_in(self):
        return MemoryEvalRuns


class TestMemorySubscriptions(SubscriptionsRepositoryContract):
    @pytest.fixture
    def subscriptions_in(self):
        return MemorySubscriptions


class TestMemoryWebhookEvents(EventsRepositoryContract):
    @pytest.fixture
    def events_in(self):
        return MemoryEvents


class TestMemoryDeliveries(DeliveriesRepositoryContract):
    @pytest.fixture
    def subscriptions_in(self):
        return MemorySubscriptions

    @pytest.fixture
    def deliveries_in(self):
        return MemoryDeliveries


class TestMemoryLeads(LeadsRepositoryContract):
    @pytest.fixture
    def leads_in(self):
        return MemoryLeads


class TestMemoryAccounts(AccountsRepositoryContract):
    @pytest.fixture
    def accounts_in(self):
        return MemoryAccounts

    @pytest.fixture
    def workspaces(self, database):
        return MemoryHotPath(database)



class TestMemoryProvisioning(ProvisioningRepositoryContract):
    @pytest.fixture
    def provisioning_in(self):
        return MemoryProvisioning

    @pytest.fixture
    def accounts_in(self):
        return MemoryAccounts


class TestMemoryOAuth(OAuthRepositoryContract):
    @pytest.fixture
    def oauth_in(self):
        return MemoryOAuth

    @pytest.fixture
    def accounts_in(self):
        return MemoryAccounts


class TestMemorySignups(SignupRepositoryContract):
    @pytest.fixture
    def accounts_in(self):
        return MemoryAccounts

    @pytest.fixture
    def billing_in(self):
        return MemoryBilling


class TestMemoryBilling(BillingRepositoryContract):
    @pytest.fixture
    def accounts_in(self):
        return MemoryAccounts

    @pytest.fixture
    def billing_in(self):
        return MemoryBilling


class TestMemoryRuns(RunsRepositoryContract):
    @pytest.fixture
    def runs_in(self):
        return MemoryRuns


class TestMemoryTouches(TouchesRepositoryContract):
    @pytest.fixture
    def runs_in(self):
        return MemoryRuns

    @pytest.fixture
    def touches_in(self):
        return MemoryTouches


class TestMemoryAgents(AgentsRepositoryContract):
    @pytest.fixture
    def agents_in(self):
        return MemoryAgents


class TestMemoryMessaging(MessagingRepositoryContract):
    @pytest.fixture
    def messaging_in(self):
        return lambda conn: MessagingUnit(conn, MEMORY)


class TestMemoryNumbers(NumbersRepositoryContract):
    @pytest.fixture
    def numbers_in(self):
        return MemoryNumbers

    @pytest.fixture
    def stock_in(self):
        return MemoryStock

    @pytest.fixture
    def agents_in(self):
        return MemoryAgents


class TestMemorySpend(SpendRepositoryContract):
    @pytest.fixture
    def spend_in(self):
        return MemorySpend


class TestMemoryEmails(EmailRepositoryContract):
    @pytest.fixture
    def emails_in(self):
        return MemoryEmails


class TestMemoryBookings(BookingsRepositoryContract):
    @pytest.fixture
    def bookings_in(self):
        return MemoryBookings
