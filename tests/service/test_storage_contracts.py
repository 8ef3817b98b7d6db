"""The storage contracts (tests/storage_contracts.py) on the SQL repositories over the stack's PostgreSQL;
tests/unit/test_storage_contracts.py runs the same on the in-memory ones."""
from datetime import timedelta

import pytest

from core.ids import new_id
from core.uow import Database
from services.accounts.billing_repository import SqlBilling
from services.accounts.oauth_repository import SqlOAuth
from services.accounts.provisioning_repository import SqlProvisioning
from services.accounts.repository import PooledAccounts, SqlAccounts
from services.agents.repository import SqlAgents, SqlNumbers, SqlStock
from services.calls.repository import SqlCalls
from services.evals.repository import SqlRuns as SqlEvalRuns
from services.evals.repository import SqlScenarios
from services.messaging.repositories.email import SqlEmails
from services.messaging.repositories.spend import SqlSpend
from services.messaging.repositories.unit import MessagingUnit
from services.sdr.repository import SqlBookings, SqlLeads, SqlRuns, SqlTouches
from services.webhooks.repository import SqlDeliveries, SqlEvents, SqlSubscriptions
from tests.storage_contracts import (
    AT,
    LEASE,
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
    held_business,
    job_values,
    run_values,
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



class TestSqlProvisioning(ProvisioningRepositoryContract):
    @pytest.fixture
    def provisioning_in(self):
        return SqlProvisioning

    @pytest.fixture
    def accounts_in(self):
        return SqlAccounts


class TestSqlOAuth(OAuthRepositoryContract):
    @pytest.fixture
    def oauth_in(self):
        return SqlOAuth

    @pytest.fixture
    def accounts_in(self):
        return SqlAccounts


class TestSqlSignups(SignupRepositoryContract):
    @pytest.fixture
    def accounts_in(self):
        return SqlAccounts

    @pytest.fixture
    def billing_in(self):
        return SqlBilling


class TestSqlBilling(BillingRepositoryContract):
    @pytest.fixture
    def accounts_in(self):
        return SqlAccounts

    @pytest.fixture
    def billing_in(self):
        return SqlBilling


class TestSqlRuns(RunsRepositoryContract):
    @pytest.fixture
    def runs_in(self):
        return SqlRuns


class TestSqlTouches(TouchesRepositoryContract):
    @pytest.fixture
    def runs_in(self):
        return SqlRuns

    @pytest.fixture
    def touches_in(self):
        return SqlTouches

    async def test_two_schedulers_claiming_at_once_never_take_the_same_job(self, database, seed):
        """SQL only: a claim skips the jobs another open transaction holds (FOR UPDATE SKIP LOCKED), so replicas
        never wait for each other nor claim one job twice. The in-memory twin runs one transaction at a time: it
        has no such moment to show."""
        async with database.transaction() as conn:
            business_id = await held_business(conn, seed)
            run = await SqlRuns(conn).add_run(**run_values(business_id))
            await SqlRuns(conn).add_jobs([job_values(run, f"t{i}", due_at=AT + timedelta(minutes=i))
                                          for i in range(3)])
        async with database.transaction() as one:
            [first] = await SqlTouches(one).claim(business_id, "call", 1, new_id(), LEASE)
            async with database.transaction() as two:
                others = await SqlTouches(two).claim(business_id, "call", 3, new_id(), LEASE)
        assert first.touch_id == "t0" and sorted(job.touch_id for job in others) == ["t1", "t2"]


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
    def stock_in(self):
        return SqlStock

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
