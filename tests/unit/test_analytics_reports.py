"""Composing an analytics report (services.sdr.analytics_service) from the groups other services count, with
in-memory stand-ins for the port (services.sdr.analytics_port) and for the leads: no database, no other service.
Also the reply the gateway writes from it, the caller's tenancy, and the connector's business info."""
import json
from datetime import UTC, datetime

import pytest

from core import aggregates, tenant
from core.errors import ServiceError
from core.pagination import Paged
from gateway.convert import to_json
from services.sdr.analytics_port import Agent, Business, Workspace
from services.sdr.analytics_service import Reports
from switchboard.v1 import common_pb2, sdr_pb2

# A Monday 02:30 UTC: still Sunday in Los Angeles (its week began on the 16th), Monday afternoon in Tokyo.
NOW = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)
WEST, EAST = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
AVA, BEN, GONE = ("aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb",
                  "cccccccc-cccc-4ccc-8ccc-cccccccccccc")
BUSINESSES = [Business(WEST, "West", "America/Los_Angeles"), Business(EAST, "East", "Asia/Tokyo")]
CREATED = datetime(2026, 1, 5, 9, 30, 0, 250000, tzinfo=UTC)
Row = common_pb2.AggregateRow


class InMemorySources:
    """`AnalyticsSources` over lists; the call groups are canned per grouping, as the calls service would count
    them, and every count asked for is kept in `asked`."""

    def __init__(self, businesses: list[Business], agents: list[Agent], call_groups: dict[tuple, list]):
        self._businesses, self._agents, self.call_groups = businesses, agents, call_groups
        self.asked: list[tuple[aggregates.Query, str | None]] = []
        self.workspaces: list[str] = []  # the workspaces read

    async def businesses(self):
        return list(self._businesses)

    async def agents(self):
        return list(self._agents)

    async def agent(self, agent_id):
        return next((a for a in self._agents if a.id == agent_id), None)

    async def workspace(self, business_id):
        self.workspaces.append(business_id)
        b = next(b for b in self._businesses if b.business_id == business_id)
        return Workspace(b.business_id, b.name, "active", "trialing", b.timezone, CREATED)

    async def call_counts(self, query, agent_id=None):
        self.asked.append((query, agent_id))
        return list(self.call_groups.get(query.group_by, []))


class InMemoryLeads:
    """The leads' side of the reports (`LeadCounts`): groups canned per grouping, and no lead to list."""

    def __init__(self, groups: dict[tuple, list]):
        self.groups = groups

    async def aggregate(self, query, agent_id, source):
        return list(self.groups.get(query.group_by, []))

    async def list(self, filters, page):
        return Paged([], False)


def caller(*business_ids: str) -> tenant.Tenant:
    return tenant.Tenant(account_id="33333333-3333-4333-8333-333333333333", business_ids=business_ids)


async def test_the_weekly_report_compares_each_businesss_own_weeks():
    sources = InMemorySources(BUSINESSES, [Agent(AVA, "Ava", WEST, None), Agent(BEN, "Ben", EAST, None)], {("business", "agent", "week"): [
        Row(business_id=WEST, agent_id=AVA, week="2026-11-16", count=3, duration=300),  # West's current week
        Row(business_id=WEST, agent_id=AVA, week="2026-11-09", count=9, duration=900),  # West's last week
        Row(business_id=EAST, agent_id=BEN, week="2026-11-16", count=5, duration=100),  # East's last week
        Row(business_id=EAST, agent_id=BEN, week="2026-11-23", count=2, duration=50),
        Row(business_id=EAST, agent_id=GONE, week="2026-11-23", count=2, duration=20)]})  # no longer an agent
    leads = InMemoryLeads({("business", "week"): [Row(business_id=WEST, week="2026-11-16", count=4)]})
    with tenant.acting_as(caller(WEST, EAST)):
        report = await Reports(sources, leads, clock=lambda: NOW).weekly()

    expected = {
        "period": {"this_week": {"start": "2026-11-23", "end": "2026-11-29"},  # in UTC: the zones differ
                   "last_week": {"start": "2026-11-16", "end": "2026-11-22"}},
        "calls": {"this_week": 7, "last_week": 14, "change": -50.0},
        "leads": {"this_week": 4, "last_week": 0, "change": None},  # growth from nothing has no percentage
        "top_agents": [
            {"agent_id": AVA, "agent_name": "Ava", "total_calls": 3, "total_duration_seconds": 300},
            {"agent_id": BEN, "agent_name": "Ben", "total_calls": 2, "total_duration_seconds": 50},
            {"agent_id": GONE, "agent_name": None, "total_calls": 2, "total_duration_seconds": 20}],
    }
    assert report == expected
    [(query, agent_id)] = sources.asked
    assert (query.zones, query.window, query.as_of, agent_id) == (
        [(WEST, "America/Los_Angeles"), (EAST, "Asia/Tokyo")], aggregates.Window(weeks=2), NOW, None)
    # The reply carries it whole: the gateway's JSON is the report's, key for key, with change null.
    assert json.dumps(to_json(sdr_pb2.WeeklyReport(**report))) == json.dumps(expected)


async def test_a_report_counts_only_the_callers_businesses_and_agents():
    sources = InMemorySources(BUSINESSES, [Agent(AVA, "Ava", WEST, None)], {})
    reports = Reports(sources, InMemoryLeads({}), clock=lambda: NOW)
    with tenant.acting_as(caller(WEST)), pytest.raises(ServiceError) as refused:
        await reports.businesses(30)  # East is not this caller's: nothing is counted
    assert refused.value.code == "forbidden" and sources.asked == []
    with tenant.acting_as(caller(WEST, EAST)), pytest.raises(ServiceError) as refused:
        await reports.calls(7, "day", BEN)  # not one of the caller's agents
    assert refused.value.code == "not_found" and sources.asked == []



async def test_business_info_counts_agents_numbers_and_calls_per_business_and_window():
    agents = [Agent(AVA, "Ava", WEST, "+14155550102"), Agent(BEN, "Ben", WEST, "+14155550101"),
              Agent(GONE, "Quiet", EAST, None)]
    sources = InMemorySources(BUSINESSES, agents, {("business",): [Row(business_id=WEST, count=4)]})
    reports = Reports(sources, InMemoryLeads({}), clock=lambda: NOW)
    with tenant.acting_as(caller(WEST, EAST)):
        info = await reports.business_info(None, call_counts=True)
    west = {"id": WEST, "name": "West", "status": "active", "subscription_status": "trialing",
            "timezone": "America/Los_Angeles", "created_at": CREATED, "agent_count": 2,
            "phone_numbers": ["+14155550101", "+14155550102"], "calls_last_7_days": 4, "calls_last_30_days": 4}
    assert info["businesses"][0] == west
    assert {k: info["businesses"][1][k] for k in ("id", "agent_count", "phone_numbers", "calls_last_7_days")} == {
        "id": EAST, "agent_count": 1, "phone_numbers": [], "calls_last_7_days": 0}
    assert [(q.window, q.group_by, q.as_of) for q, _ in sources.asked] == [
        (aggregates.Window(days=7), ("business",), NOW), (aggregates.Window(days=30), ("business",), NOW)]
    # The gateway's JSON of it: the tool's fields in its order, created_at as the API writes times.
    written = to_json(sdr_pb2.BusinessInfo(**info))["businesses"][0]
    assert list(written) == list(west) and written["created_at"] == "2026-01-05T09:30:00.250000Z"


async def test_business_info_of_one_business_and_without_the_call_volume():
    sources = InMemorySources(BUSINESSES, [Agent(AVA, "Ava", EAST, "+14155550103")], {})
    reports = Reports(sources, InMemoryLeads({}), clock=lambda: NOW)
    with tenant.acting_as(caller(WEST, EAST)):
        [east] = (await reports.business_info(EAST, call_counts=False))["businesses"]
        with pytest.raises(ServiceError) as refused:
            await reports.business_info(GONE, call_counts=True)  # not one of the caller's businesses
    assert east["id"] == EAST and east["phone_numbers"] == ["+14155550103"] and east["calls_last_30_days"] == 0
    assert refused.value.code == "not_found" and sources.asked == [] and sources.workspaces == [EAST]
