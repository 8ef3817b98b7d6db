"""The storage contracts (tests/storage_contracts.py) on the SQL repositories over the stack's PostgreSQL;
tests/unit/test_storage_contracts.py runs the same on the in-memory ones."""
import pytest

from core.uow import Database
from services.accounts.oauth_repository import SqlOAuth
from services.accounts.repository import PooledAccounts, SqlAccounts
from services.agents.repository import SqlAgents, SqlNumbers
from services.calls.repository import SqlCalls
from services.evals.repository import SqlRuns as SqlEvalRuns
from services.evals.repository import SqlScenarios
from services.messaging.repositories.email import SqlEmails
from services.messaging.repositories.spend import SqlSpend
from services.messaging.repositories.unit import MessagingUnit
from services.sdr.repository import SqlBookings, SqlLeads, SqlRuns
from services.webhooks.repository import SqlDeliveries, SqlEvents, SqlSubscriptions
from tests.storage_contracts import (
    AccountsRepositoryContract,
    AgentsRepositoryContract,
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
    RunsRepositoryContract,
    ScenariosRepositoryContract,
    SpendRepositoryContract,
    SubscriptionsRepositoryContract,
)


@pytest.fixture
def seed():
    async def seed(conn, table, **values):
        await conn.execute(table.insert().values(**values))
    return seed


class TestSqlCalls(CallsRepositoryContract):
    @pytest.fixture
    def calls_in(self):
        return SqlCalls


class TestSqlScenarios(ScenariosRepositoryContract):
    @pytest.fixture
    def scenarios_in(self):
        return SqlScenarios


class TestSqlEvalRuns(EvalRunsRepositoryContract):
    @pytest.fixture
    def scenarios_in(self):
        return SqlScenarios

    @pytest.fixture
    def eval_runs_in(self):
        return SqlEvalRuns


class TestSqlSubscriptions(SubscriptionsRepositoryContract):
    @pytest.fixture
    def subscriptions_in(self):
        return SqlSubscriptions


class TestSqlWebhookEvents(EventsRepositoryContract):
    @pytest.fixture
    def events_in(self):
        return SqlEvents


class TestSqlDeliveries(DeliveriesRepositoryContract):
    @pytest.fixture
    def subscriptions_in(self):
        return SqlSubscriptions

    @pytest.fixture
    def deliveries_in(self):
        return SqlDeliveries


class TestSqlLeads(LeadsRepositoryContract):
    @pytest.fixture
    def leads_in(self):
        return SqlLeads


class TestSqlAccounts(AccountsRepositoryContract):
    @pytest.fixture
    def accounts_in(self):
        return SqlAccounts

    @pytest.fixture
    def workspaces(self, engine, pool):
        return PooledAccounts(Database(engine, pool=pool))



class TestSqlOAuth(OAuthRepositoryContract):
    @pytest.fixture
    def oauth_in(self):
        return SqlOAuth

    @pytest.fixture
    def accounts_in(self):
        return SqlAccounts

class TestSqlRuns(RunsRepositoryContract):
    @pytest.fixture
    def runs_in(self):
        return SqlRuns


class TestSqlAgents(AgentsRepositoryContract):
    @pytest.fixture
    def agents_in(self):
        return SqlAgents


class TestSqlMessaging(MessagingRepositoryContract):
    @pytest.fixture
    def messaging_in(self):
        return MessagingUnit


class TestSqlNumbers(NumbersRepositoryContract):
    @pytest.fixture
    def numbers_in(self):
        return SqlNumbers

    @pytest.fixture
    def agents_in(self):
        return SqlAgents


class TestSqlSpend(SpendRepositoryContract):
    @pytest.fixture
    def spend_in(self):
        return SqlSpend


class TestSqlEmails(EmailRepositoryContract):
    @pytest.fixture
    def emails_in(self):
        return SqlEmails


class TestSqlBookings(BookingsRepositoryContract):
    @pytest.fixture
    def bookings_in(self):
        return SqlBookings
