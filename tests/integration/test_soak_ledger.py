"""The soak's ledger (bench.soak.ledger) on the session stack: a little history made by hand (a webhook subscription,
a call, a text, a run of a call and a text touch, a STOP) reads exact on every line; a promise broken on purpose (a
second terminal event of the call in the calls service's outbox, never relayed) makes its lines, and only those,
inexact."""
import uuid
from datetime import UTC, datetime

from bench.soak.client import SoakClient
from bench.soak.history import History, Tenant
from bench.soak.ledger import Line, as_json, ledger, render
from bench.soak.partner import Partner
from deploy.local.ingress import Balancer
from tests.calling import ENDED
from tests.compliance import answering_callee
from tests.runs import RUNS, run_of, touch
from tests.texting import number, opt_in
from tests.waiting import wait_until

ONE_EVENT = "calls placed: exactly one terminal event each (its outcome's)"
DELIVERED = "events committed: delivered at least once to each matching subscription"


async def settled(client, tenant, path: str, params: dict, final) -> None:
    """Wait, asking through the soak's client (so the usage line counts the questions), until the answer at `path`
    for `params` passes `final`."""
    async def listed():
        status, body = await client.request("GET", path, tenant=tenant, params=params)
        return body
    await wait_until(listed, f"{path} {params} to settle", final, timeout=20, interval=0.5)


async def exact_ledger(stack, history, partner) -> list[Line]:
    """The ledger once every line is exact (deliveries and the usage log land a moment after the answers)."""
    lines = await wait_until(lambda: ledger(stack, history, partner), "every ledger line to be exact",
                             lambda found: all(x.exact for x in found), timeout=30, interval=1)
    print(render(lines))
    return lines


async def test_a_small_history_balances_and_a_second_terminal_event_is_caught(stack, api, account, calling_agent,
                                                                              sms, db):
    business_id, key = account["business_id"], account["key"]
    account_id = str(await db.fetchval("SELECT account_id FROM accounts.businesses WHERE id = $1", business_id))
    to = number(f"{uuid.uuid4().int % 10_000:04d}")
    callee = answering_callee()
    for phone in (to, callee):
        await opt_in(api, key, phone)
    history = History()
    tenant = Tenant(business_id, account_id, key, calling_agent["id"], calling_agent["phone_number"])
    history.tenants[business_id] = tenant
    client = SoakClient(api.session, Balancer([stack.base_url]), history)
    partner = await Partner(fail_rate=0, slow_rate=0).start()
    try:
        status, hook = await client.request("POST", "/api/v1/webhooks", tenant=tenant, json={
            "webhook_url": partner.url_for(business_id), "events": ["call.completed", "call.failed", "sms.sent"]})
        assert status == 201, hook
        partner.secret(business_id, hook["webhook_secret"])
        history.webhooks[hook["webhook"]["id"]] = business_id
        status, call = await client.request("POST", "/api/v1/calls", tenant=tenant, json={
            "agent_id": calling_agent["id"], "to": "+14155550161"}, idempotency_key=str(uuid.uuid4()))
        assert status == 201, call
        history.calls[call["id"]] = business_id
        status, text = await client.request("POST", "/api/v1/sms/send", tenant=tenant, json={
            "to": to, "from_agent_id": calling_agent["id"], "message": "Your quote is ready."})
        assert status == 200, text
        history.texts[text["message_sid"]] = business_id
        status, run = await client.request("POST", RUNS, tenant=tenant, idempotency_key=str(uuid.uuid4()), json=run_of(
            account, calling_agent, touch("call-1", callee),
            touch("text-1", to, channel="sms", context={"body": "Your visit is booked."})))
        assert status == 201, run
        history.runs[run["id"]] = business_id
        await settled(client, tenant, "/api/v1/calls", {"id": call["id"]},
                      lambda c: c["status"] in ENDED and c["ended_reason"] is not None)
        await settled(client, tenant, "/api/v1/sms/messages", {"limit": "10"},
                      lambda page: [m["status"] for m in page["messages"]] == ["delivered", "delivered"])
        stopper = number(f"{uuid.uuid4().int % 10_000:04d}")
        await sms.text_in(stopper, tenant.number, "STOP")  # answered 2xx: acknowledged
        history.stops.append((stopper, tenant.number, datetime.now(UTC)))

        lines = await exact_ledger(stack, history, partner)
        counted = {x.name: (x.expected, x.actual) for x in lines}
        assert counted[ONE_EVENT] == (1, 1)
        assert counted["texts accepted: each taken by the provider once"] == (1, 1)
        assert counted[DELIVERED] == (4, 4)  # the call's, the text's and the run's (its call's and its text's)
        assert counted["run touches executed: each exactly one request at the provider"] == (2, 2)
        assert as_json(lines)["exact"] is True

        row = await db.fetchrow("SELECT type, business_id, data FROM calls.outbox WHERE type = ANY($1::text[]) "
                                "AND data->>'call_id' = $2", ["call.completed", "call.failed"], call["id"])
        # marked published: no consumer or receiver ever sees it, so the ledger finds it doubled and undelivered
        doubled = await db.fetchval(
            "INSERT INTO calls.outbox (event_id, type, business_id, occurred_at, data, published_at) "
            "VALUES (gen_random_uuid(), $1, $2, now(), $3, now()) RETURNING event_id",
            row["type"], row["business_id"], row["data"])
        try:
            broken = {x.name: x for x in await ledger(stack, history, partner) if not x.exact}
        finally:
            await db.execute("DELETE FROM calls.outbox WHERE event_id = $1", doubled)
        assert set(broken) == {ONE_EVENT, DELIVERED}, render(list(broken.values()))
        assert (broken[ONE_EVENT].expected, broken[ONE_EVENT].actual) == (1, 0)
        assert (broken[DELIVERED].expected, broken[DELIVERED].actual) == (5, 4)
    finally:
        await partner.stop()
