"""The soak's ledger (issue 55, "The ledger at the end"): after the quiet period, one line per promise, each a count
read from the stores themselves (the owner's connection to the stack's database), the provider simulators' APIs
(their resource stores, which keep every call and message, not the control plane's bounded request log), NATS (the
test harness's admin login) and the partner's receiver, compared with what the history recorded.

A line is exact when its actual count is its expected one; the usage line alone allows a stated bound (what a
killed gateway had not yet written: `usage_loss_bound`). Everything is scoped to the history (its calls, texts,
runs, subscriptions and tenants) except the bookkeeping every process shares (unpublished outbox rows, the
consumers, dead letters since the soak began)."""
from __future__ import annotations

import contextlib
import inspect
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import aiohttp
import asyncpg
import nats
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from bench.soak.faults import KILL
from bench.soak.history import History
from bench.soak.partner import Partner
from contracts import runs as runs_contract
from contracts.calls import OUTCOMES, PROGRESS
from core import deadletters, registry, standings
from core.nats_auth import TEST_ADMIN
from core.settings import Settings
from gateway.usage import RETRY_WAIT_SECONDS, UsageWriter
from providers.voice.vapi.calls import call_ref, outcome_of
from providers.voice.vapi.simulator.resources import LIST_LIMIT_MAX
from services.calls.inbound_service import HELD_MESSAGE

if TYPE_CHECKING:
    from deploy.local.stack import Stack

SLACK_SECONDS = 10.0  # after a fault's window: a 5xx answered while the platform recovers is the fault's
TERMINAL_EVENTS = ("call.completed", "call.failed")
SHOWN = 5  # ids listed in a line's detail


@dataclass(frozen=True)
class Line:
    name: str
    expected: int
    actual: int
    exact: bool
    detail: str = ""


def line(name: str, expected: int, actual: int, detail: str = "", exact: bool | None = None) -> Line:
    return Line(name, expected, actual, expected == actual if exact is None else exact, detail)


def shown(items: Iterable[object]) -> str:
    listed = list(items)
    more = f" (+{len(listed) - SHOWN} more)" if len(listed) > SHOWN else ""
    return ", ".join(str(i) for i in listed[:SHOWN]) + more


def wall(at: datetime) -> datetime:
    """A history's wall time as UTC (a naive one is local time)."""
    return at.astimezone(UTC)


@dataclass
class Stores:
    """Where the ledger reads: the database (owner), the simulators' APIs, JetStream."""

    db: Any  # asyncpg.Connection
    http: aiohttp.ClientSession
    env: dict[str, str]
    js: JetStreamContext

    async def voice(self, path: str) -> tuple[int, Any]:
        async with self.http.get(self.env["VOICE_API_URL"] + path,
                                 headers={"Authorization": f"Bearer {self.env['VOICE_API_KEY']}"}) as r:
            return r.status, await r.json(content_type=None)

    async def texts_from(self, number: str) -> list[dict[str, Any]]:
        """Every message the messaging provider took from `number`, page by page (its store keeps them all)."""
        sid, found, page = self.env["SMS_ACCOUNT_SID"], [], 0
        auth = {"Authorization": aiohttp.encode_basic_auth(sid, self.env["SMS_AUTH_TOKEN"])}
        while True:
            async with self.http.get(f"{self.env['SMS_API_URL']}/2010-04-01/Accounts/{sid}/Messages.json",
                                     headers=auth, params={"From": number, "PageSize": "1000", "Page": str(page)}) as r:
                r.raise_for_status()
                body = await r.json()
            found += body["messages"]
            if not body["next_page_uri"]:
                return found
            page += 1

    async def outbox_schemas(self) -> list[str]:
        """The services' own (a service's schema is named after it), those that publish events."""
        rows = await self.db.fetch("SELECT table_schema FROM information_schema.tables WHERE table_name = 'outbox' "
                                   "AND table_schema = ANY($1::text[]) ORDER BY table_schema",
                                   [name for name, use in registry.BUS.items() if use.events])
        return [r["table_schema"] for r in rows]


@contextlib.asynccontextmanager
async def opened(stack: Stack) -> AsyncIterator[Stores]:
    db = await asyncpg.connect(stack.database_url)
    nc = await nats.connect(stack.nats_url, **stack.nats_login(TEST_ADMIN).options())
    try:
        async with aiohttp.ClientSession() as http:
            yield Stores(db, http, stack.env(), nc.jetstream())
    finally:
        await nc.close()
        await db.close()


async def ledger(stack: Stack, history: History, partner: Partner, *,
                 slack_seconds: float = SLACK_SECONDS) -> list[Line]:
    """Every line of the ledger, read now (after the quiet period)."""
    async with opened(stack) as stores:
        return [*await calls_lines(stores, history, slack_seconds), *await events_lines(stores, history, partner),
                *await runs_lines(stores, history), *await texts_lines(stores, history),
                await usage_line(stores, history, stack), *await leftovers_lines(stores, history),
                *answers_lines(history, slack_seconds)]


# -- calls ---------------------------------------------------------------------------------------------------------

async def provider_calls(stores: Stores, history: History) -> tuple[list[dict[str, Any]], list[str]]:
    """The voice provider's calls on the tenants' numbers (outbound from them, inbound to them), listed per number
    (its list's most, newest first), and the numbers whose list was full (older calls of theirs unseen)."""
    numbers = [t.number for t in history.tenants.values() if t.number]
    rows = await stores.db.fetch("SELECT phone_number, provider_phone_number_id FROM agents.phone_numbers "
                                 "WHERE phone_number = ANY($1::text[]) AND provider_phone_number_id IS NOT NULL",
                                 numbers)
    found, full = [], []
    for row in rows:
        status, listed = await stores.voice(f"/call?limit={LIST_LIMIT_MAX}&phoneNumberId={row[1]}")
        if status != 200:
            raise RuntimeError(f"the voice provider's GET /call answered {status}: {listed}")
        found += listed
        if len(listed) >= LIST_LIMIT_MAX:
            full.append(row[0])
    return found, full


def our_id(provider_call: dict[str, Any]) -> str | None:
    """Our call id, as the call carries it back to us (its assistant overrides' metadata)."""
    return call_ref(provider_call).our_call_id


def agrees(ours: Mapping[str, Any], theirs: Mapping[str, Any] | None) -> bool:
    """The provider's record agrees with our call's outcome: ended with an endedReason meaning it (a reason of no
    known meaning leaves it to the call's progress), or, for a call never placed, no record at all."""
    if ours["provider_call_id"] is None:
        return theirs is None
    if theirs is None or theirs.get("status") != "ended":
        return False
    meant = outcome_of(theirs.get("endedReason"))
    return meant is None or meant == ours["status"]


async def calls_lines(stores: Stores, history: History, slack_seconds: float) -> list[Line]:
    ids = list(history.calls)
    rows = {str(r["id"]): r for r in await stores.db.fetch(
        "SELECT id, status, provider_call_id FROM calls.calls WHERE id = ANY($1::uuid[])", ids)}
    missing = [i for i in ids if i not in rows]
    open_ = [f"{i} {r['status']}" for i, r in rows.items() if r["status"] not in OUTCOMES]
    terminal = line("calls placed: each in one terminal state", len(ids), len(rows) - len(open_),
                    "; ".join(filter(None, [f"not found: {shown(missing)}" if missing else "",
                                            f"without an outcome: {shown(open_)}" if open_ else ""])))
    listed, full = await provider_calls(stores, history)
    by_ours: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_id = {c["id"]: c for c in listed}
    for c in listed:
        if (ours := our_id(c)) is not None:
            by_ours[ours].append(c)
    disagree: dict[str, str] = {}
    for call_id, row in rows.items():
        theirs = by_id.get(row["provider_call_id"]) if row["provider_call_id"] else None
        if row["provider_call_id"] and theirs is None:  # not on a tenant's number, or older: read on its own
            status, body = await stores.voice(f"/call/{row['provider_call_id']}")
            theirs = body if status == 200 else None
        if not agrees(row, theirs):
            said = "none" if theirs is None else f"{theirs.get('status')} {theirs.get('endedReason')}"
            disagree[call_id] = f"{call_id} ours {row['status']}, provider {said}"
    doubled = [i for i in ids if len(by_ours.get(i, ())) > 1]
    agreeing = len(rows) - len(set(disagree) | set(doubled))
    # a full list may hide a second call: then the count is not proven
    provider = line("calls placed: the provider's record agrees, one call each", len(rows), agreeing,
                    "; ".join(filter(None, [f"disagree: {shown(disagree.values())}" if disagree else "",
                                            f"placed twice at the provider: {shown(doubled)}" if doubled else "",
                                            f"lists full (older calls unseen): {shown(full)}" if full else ""])),
                    exact=agreeing == len(rows) and not full)
    events = await stores.db.fetch("SELECT data->>'call_id' AS call_id, type FROM calls.outbox "
                                   "WHERE type = ANY($1::text[]) AND data->>'call_id' = ANY($2::text[])",
                                   list(TERMINAL_EVENTS), ids)
    of_call: dict[str, list[str]] = defaultdict(list)
    for e in events:
        of_call[e["call_id"]].append(e["type"])
    wrong = [f"{i} {of_call.get(i, [])}" for i, r in rows.items()
             if of_call.get(i) != [("call.completed" if r["status"] in ("completed", "voicemail") else "call.failed")]]
    once = line("calls placed: exactly one terminal event each (its outcome's)", len(rows), len(rows) - len(wrong),
                f"other than one: {shown(wrong)}" if wrong else "")
    known = await stores.db.fetch("SELECT id, provider_call_id FROM calls.calls WHERE id = ANY($1::uuid[]) "
                                  "OR provider_call_id = ANY($2::text[])", list(by_ours), list(by_id))
    ours_known = {str(r["id"]) for r in known} | {r["provider_call_id"] for r in known}
    since = wall(history.started_wall)
    # an inbound call refused on purpose while its workspace was held is recorded nowhere, by design: the inbound
    # line accounts for each (and fails one refused while its workspace was not held)
    held = {r.provider_call_id for r in history.inbound if r.refused == HELD_MESSAGE}
    strays = [f"{c['id']} to {(c.get('customer') or {}).get('number')}" for c in listed
              if c["id"] not in ours_known and c["id"] not in held and our_id(c) not in ours_known
              and datetime.fromisoformat(c["createdAt"].replace("Z", "+00:00")) >= since]
    unrecorded = line("calls the provider took on the tenants' numbers that we have no record of", 0, len(strays),
                      shown(strays))
    return [terminal, provider, once, unrecorded, await inbound_line(stores, history, slack_seconds)]


async def inbound_line(stores: Stores, history: History, slack_seconds: float) -> Line:
    """The calls rung at the simulator to the tenants' numbers: each recorded and in a terminal state, or refused on
    purpose with HELD_MESSAGE (nothing recorded, as services.calls.inbound_service promises) while its workspace was
    held, or its standing could not be confirmed in a fault; give or take the standing's cache (core.standings)."""
    rows = {r["provider_call_id"]: r["status"] for r in await stores.db.fetch(
        "SELECT provider_call_id, status FROM calls.calls WHERE direction = 'inbound' AND provider_call_id = "
        "ANY($1::text[])", [c.provider_call_id for c in history.inbound])}
    slack = standings.TTL_SECONDS + slack_seconds
    refused, held, wrong = 0, 0, []
    for rung in history.inbound:
        status = rows.get(rung.provider_call_id)
        if rung.refused == HELD_MESSAGE and status is None:
            refused += 1
            if history.was_held(rung.business_id, rung.at, slack) or history.in_window(rung.at, slack):
                held += 1
            else:
                wrong.append(f"{rung.provider_call_id} refused as held while its workspace was not")
        elif status not in OUTCOMES:
            wrong.append(f"{rung.provider_call_id} {status or 'not recorded'}"
                         + (f" (ended: {rung.refused})" if rung.refused else ""))
    accounted = len(history.inbound) - len(wrong)
    return line("inbound calls rung: each recorded in a terminal state, or refused while held", len(history.inbound),
                accounted, "; ".join(filter(None, [f"refused while held: {held}" if held else "",
                                                   f"otherwise: {shown(wrong)}" if wrong else ""])))


# -- events and webhooks -------------------------------------------------------------------------------------------

async def events_lines(stores: Stores, history: History, partner: Partner) -> list[Line]:
    schemas = await stores.outbox_schemas()
    subs = await stores.db.fetch("SELECT id, business_id, url, events, created_at, is_active, disabled_reason "
                                 "FROM webhooks.subscriptions WHERE id = ANY($1::text[])", list(history.webhooks))
    gone = [s for s in history.webhooks if s not in {r["id"] for r in subs}]
    # each subscription delivers to a path of its own (bench.soak.partner.url_for): the last part of its URL
    delivered = {s["id"]: partner.events(s["url"].rstrip("/").rsplit("/", 1)[-1]) for s in subs}
    expected: list[tuple[str, str]] = []  # (subscription, event_id)
    for schema in schemas:
        rows = await stores.db.fetch(f'SELECT event_id, type, business_id, occurred_at FROM "{schema}".outbox '
                                     "WHERE business_id = ANY($1::uuid[])", [s["business_id"] for s in subs])
        for sub in subs:
            expected += [(sub["id"], str(e["event_id"])) for e in rows if e["business_id"] == sub["business_id"]
                         and e["type"] in sub["events"] and e["occurred_at"] >= sub["created_at"]]
    lost = [f"{sub} {event}" for sub, event in expected if event not in delivered[sub]]
    inactive = [f"{s['id']} ({s['disabled_reason']})" for s in subs if not s["is_active"]]
    at_least_once = line("events committed: delivered at least once to each matching subscription", len(expected),
                         len(expected) - len(lost),
                         "; ".join(filter(None, [f"not delivered: {shown(lost)}" if lost else "",
                                                 f"disabled: {shown(inactive)}" if inactive else "",
                                                 f"deleted (not counted): {shown(gone)}" if gone else ""])))
    bodies = partner.events()
    received = list(bodies)
    committed: set[str] = set()
    for schema in schemas:
        committed |= {str(r["event_id"]) for r in await stores.db.fetch(
            f'SELECT event_id FROM "{schema}".outbox WHERE event_id = ANY($1::uuid[])', received)}
    tests = {str(r["event_id"]) for r in await stores.db.fetch(  # the test event goes to the partner, not the bus
        "SELECT event_id FROM webhooks.events WHERE type = 'webhook.test' AND event_id = ANY($1::uuid[])", received)}
    strays = [f"{e} {bodies[e].get('event')}" for e in received if e not in committed | tests]
    none_other = line("events delivered that no outbox committed", 0, len(strays), shown(strays))
    # since the soak began: on a stack shared with tests, an older row is another test's to answer for
    behind: Counter[str] = Counter()
    for schema in schemas:
        behind[schema] = await stores.db.fetchval(
            f'SELECT count(*) FROM "{schema}".outbox WHERE published_at IS NULL AND occurred_at >= $1',
            wall(history.started_wall))
    unpublished = line("outbox rows not yet published (every service)", 0, sum(behind.values()),
                       ", ".join(f"{schema} {n}" for schema, n in behind.items() if n))
    left = await stores.db.fetch("SELECT id, status, attempts, last_error FROM webhooks.deliveries "
                                 "WHERE subscription_id = ANY($1::text[]) AND status = 'pending'",
                                 list(history.webhooks))
    pending_deliveries = line("webhook deliveries still pending", 0, len(left),
                              shown(f"{d['id']} after {d['attempts']} ({d['last_error']})" for d in left))
    return [at_least_once, none_other, unpublished, pending_deliveries]


# -- communication runs --------------------------------------------------------------------------------------------

async def runs_lines(stores: Stores, history: History) -> list[Line]:
    run_ids = list(history.runs)
    runs = await stores.db.fetch("SELECT id, business_id, external_ref, touches FROM sdr.communication_runs "
                                 "WHERE id = ANY($1::uuid[])", run_ids)
    jobs = await stores.db.fetch("SELECT id, touch_id, channel, status, code, reason, due_at, message_id "
                                 "FROM sdr.communication_jobs WHERE run_id = ANY($1::uuid[])", run_ids)
    attempts = await stores.db.fetch("SELECT call_id FROM sdr.communication_attempts "
                                     "WHERE run_id = ANY($1::uuid[]) AND call_id IS NOT NULL", run_ids)
    businesses, refs = [r["business_id"] for r in runs], [r["external_ref"] for r in runs]
    touch_calls = await stores.db.fetch("SELECT id, touch_id FROM calls.calls WHERE business_id = ANY($1::uuid[]) "
                                        "AND external_ref = ANY($2::text[]) AND touch_id IS NOT NULL", businesses, refs)
    touch_texts = await stores.db.fetch("SELECT id, provider_sid, external_ref, touch_id FROM messaging.messages "
                                        "WHERE business_id = ANY($1::uuid[]) AND external_ref = ANY($2::text[]) "
                                        "AND touch_id IS NOT NULL AND direction = 'outbound'", businesses, refs)
    placed = {str(a["call_id"]) for a in attempts}
    by_ours = Counter(our_id(c) for c in (await provider_calls(stores, history))[0] if our_id(c) is not None)
    texts = {str(t["id"]): t for t in touch_texts}
    sent_sids = {t["provider_sid"] for t in touch_texts if t["provider_sid"]}
    at_provider: Counter[str] = Counter()
    for number in {n for t in history.tenants.values() if (n := t.number)}:
        at_provider.update(m["sid"] for m in await stores.texts_from(number) if m["sid"] in sent_sids)
    requests = [("call", c) for c in placed] + [("sms", str(j["message_id"])) for j in jobs
                                                  if j["channel"] == "sms" and j["message_id"]]
    unmatched = [f"{kind} {ref}" for kind, ref in requests
                 if (by_ours[ref] if kind == "call"
                     else at_provider[(texts.get(ref) or {}).get("provider_sid") or ""]) != 1]
    executed = line("run touches executed: each exactly one request at the provider", len(requests),
                    len(requests) - len(unmatched), f"not one: {shown(unmatched)}" if unmatched else "")
    # a touch's call the provider refused (never placed) may be tried again: only one it took counts
    extra_calls = [f"call {c['id']} (touch {c['touch_id']})" for c in touch_calls
                   if str(c["id"]) not in placed and by_ours[str(c["id"])]]
    per_touch = Counter((t["external_ref"], t["touch_id"]) for t in touch_texts)
    extra_texts = [f"texts of touch {touch} x{n}" for (_, touch), n in per_touch.items() if n > 1]
    twice = line("run touches: none placed twice", 0, len(extra_calls) + len(extra_texts),
                 shown(extra_calls + extra_texts))
    now = datetime.now(UTC)
    unaccounted = [f"{j['touch_id']} {j['status']}" for j in jobs if not accounted(j, now)]
    planned = sum(r["touches"] for r in runs)
    accounted_line = line("run touches planned: each executed, deferred with a reason, canceled or not yet due",
                          planned, len(jobs) - len(unaccounted),
                          "; ".join(filter(None, [f"jobs {len(jobs)} of {planned} planned: " + ", ".join(
                                                      f"{k} {n}" for k, n in sorted(Counter(
                                                          f"{j['status']}{' (' + j['code'] + ')' if j['code'] else ''}"
                                                          for j in jobs).items())),
                                                  f"unaccounted: {shown(unaccounted)}" if unaccounted else ""])))
    return [executed, twice, accounted_line]


def accounted(job: Mapping[str, Any], now: datetime) -> bool:
    """A touch that ended (refused and failed ones with their reason), was deferred with a reason, is planned for
    later or waits on its paused run; not one left executing or overdue."""
    status = job["status"]
    if status in (runs_contract.SUCCEEDED, runs_contract.JOB_CANCELED, runs_contract.JOB_PAUSED):
        return True
    if status in (runs_contract.FAILED, runs_contract.REFUSED, runs_contract.DEFERRED):
        return bool(job["reason"])
    return status in runs_contract.WAITING and job["due_at"] > now


# -- texts ---------------------------------------------------------------------------------------------------------

def sent_at(message: Mapping[str, Any]) -> datetime:
    return parsedate_to_datetime(message["date_created"])


async def texts_lines(stores: Stores, history: History) -> list[Line]:
    """What the provider took from the tenants' numbers as sends (outbound-api: our requests; outbound-reply is
    the provider's own keyword confirmation or a TwiML answer) against the texts the load saw accepted, and no text
    after a STOP."""
    since = wall(history.started_wall).replace(microsecond=0)
    taken: list[dict[str, Any]] = []
    for number in {n for t in history.tenants.values() if (n := t.number)}:
        taken += [m for m in await stores.texts_from(number)
                  if m["direction"] == "outbound-api" and sent_at(m) >= since]
    count = Counter(m["sid"] for m in taken)
    not_once = [f"{sid} x{count[sid]}" for sid in history.texts if count[sid] != 1]
    once = line("texts accepted: each taken by the provider once", len(history.texts),
                len(history.texts) - len(not_once), shown(not_once))
    ours = {r["provider_sid"] for r in await stores.db.fetch(
        "SELECT provider_sid FROM messaging.messages WHERE provider_sid = ANY($1::text[])", list(count))}
    strays = [f"{m['sid']} to {m['to']}" for m in taken if m["sid"] not in ours]
    unrecorded = line("texts the provider took that we have no record of", 0, len(strays), shown(strays))
    # The provider refuses a text to a texter who sent STOP to that number (21610: the simulator keeps Twilio's
    # default handling), so what it took shows only a provider that does not; our own outbound rows after the
    # acknowledgement show that we tried at all.
    taken_after, tried_after = [], []
    for contact, number, acknowledged in history.stops:
        # The provider's times are whole seconds: a text in the second of the acknowledgement is given the benefit.
        cutoff = wall(acknowledged).replace(microsecond=0) + timedelta(seconds=1)
        ours = await stores.db.fetch("SELECT id, status, provider_sid FROM messaging.messages WHERE direction = "
                                     "'outbound' AND from_number = $1 AND to_number = $2 AND created_at > $3",
                                     number, contact, wall(acknowledged))
        tried_after += [f"{r['id']} {r['status']} {number}->{contact}" for r in ours]
        taken_after += [f"{m['sid']} {number}->{contact}" for m in taken  # a text of ours is counted once
                        if m["from"] == number and m["to"] == contact and sent_at(m) >= cutoff
                        and m["sid"] not in {r["provider_sid"] for r in ours}]
    stops = line("texts sent or tried after their STOP was acknowledged", 0, len(taken_after) + len(tried_after),
                 "; ".join(filter(None, [f"STOPs {len(history.stops)}",
                                         f"taken by the provider: {shown(taken_after)}" if taken_after else "",
                                         f"ours: {shown(tried_after)}" if tried_after else ""])))
    return [once, unrecorded, stops]


# -- usage ---------------------------------------------------------------------------------------------------------

def usage_loss_bound(history: History, stack: Stack, lookback: float) -> tuple[int, list[str]]:
    """How many usage entries the killed gateways may have lost: the requests each answered in the `lookback`
    seconds before its kill (what it had queued and not yet written, or had in a batch not yet acknowledged)."""
    bound, kills = 0, []
    for w in history.windows:
        if w.kind != KILL or not w.target.startswith("gateway"):
            continue
        url = f"http://127.0.0.1:{stack.process(w.target).port}"
        lost = sum(1 for a in history.attempts
                   if a.gateway == url and a.status and w.start - lookback <= a.at <= w.start)
        bound += lost
        kills.append(f"{w.target}@{w.start - history.started:.0f}s<={lost}")
    return bound, kills


async def usage_line(stores: Stores, history: History, stack: Stack) -> Line:
    """Usage rows of the tenants' keys since the soak began against the requests the gateways answered them. The
    gateway writes usage behind (gateway.usage: a batch every `interval` seconds, or a full one sooner), so a
    SIGKILL loses what it queued since its last write: the bound is what each killed gateway answered in its last
    interval plus RETRY_WAIT_SECONDS (a batch in flight waits that long for accounts). Answers before a key was
    known (401) or over its rate (429) are not the key's usage; answers the load never saw (status 0: a time-out or
    a reset after the gateway wrote them) may be."""
    accounts = sorted({t.account_id for t in history.tenants.values()})
    rows = await stores.db.fetchval("SELECT count(*) FROM accounts.usage_log WHERE account_id = ANY($1::uuid[]) "
                                    "AND method <> 'CALL' AND created_at >= $2", accounts, wall(history.started_wall))
    mine = [a for a in history.attempts if a.account_id in accounts]
    answered = sum(1 for a in mine if a.status)
    keyless = sum(1 for a in mine if a.status in (401, 429))
    unseen = sum(1 for a in mine if not a.status and a.gateway)
    interval = inspect.signature(UsageWriter).parameters["interval"].default  # as gateway.app starts it
    bound, kills = usage_loss_bound(history, stack, interval + RETRY_WAIT_SECONDS)
    low, high = answered - keyless - bound, answered + unseen
    return line("usage rows: the requests the gateways answered", answered, rows,
                f"allowed {low}..{high} (401/429 {keyless}, kill loss bound {bound}: {', '.join(kills) or 'no kills'}; "
                f"unanswered {unseen})", exact=low <= rows <= high)


def default(setting: str) -> Any:
    return Settings.model_fields[setting].default


# -- what must be left of no one -----------------------------------------------------------------------------------

async def leftovers_lines(stores: Stores, history: History) -> list[Line]:
    businesses = list(history.tenants)
    leased = await stores.db.fetch("SELECT table_schema, table_name FROM information_schema.columns "
                                   "WHERE column_name = 'lease_until' ORDER BY 1, 2")
    held = []
    for t in leased:
        table = f'"{t["table_schema"]}"."{t["table_name"]}"'
        scoped = await stores.db.fetchval("SELECT count(*) FROM information_schema.columns WHERE table_schema = $1 "
                                          "AND table_name = $2 AND column_name = 'business_id'",
                                          t["table_schema"], t["table_name"])
        where = " AND business_id = ANY($1::uuid[])" if scoped else ""
        n = await stores.db.fetchval(f"SELECT count(*) FROM {table} WHERE lease_until > now(){where}",
                                     *([businesses] if scoped else []))
        if n:
            held.append(f"{t['table_schema']}.{t['table_name']} {n}")
    leases = line("leases held after the quiet period", 0, len(held), shown(held))
    margin = float(stores.env.get("CALLS_REAPER_MARGIN_SECONDS", default("calls_reaper_margin_seconds")))
    interval = float(stores.env.get("CALLS_REAPER_INTERVAL_SECONDS", default("calls_reaper_interval_seconds")))
    # the switchboard_calls_stuck gauge's count (services.calls.reaper.stuck), of the tenants' calls
    beyond = 2 * margin + interval
    stuck = await stores.db.fetch(
        "SELECT id, status FROM calls.calls WHERE status = ANY($1::text[]) AND business_id = ANY($2::uuid[]) "
        "AND created_at < now() - $3 * interval '1 second' "
        "AND created_at + (max_duration + $3) * interval '1 second' < now()", list(PROGRESS), businesses, beyond)
    stuck_line = line("calls stuck beyond the reaper's limit", 0, len(stuck),
                      shown(f"{r['id']} {r['status']}" for r in stuck))
    unacked = []
    for consumer in {c for use in registry.BUS.values() for c in use.consumers}:
        try:
            info = await stores.js.consumer_info(consumer.stream, consumer.durable)
        except NotFoundError:
            continue  # never created: its process has not consumed yet
        if info.num_ack_pending or info.num_pending:
            unacked.append(f"{consumer.durable} ack_pending {info.num_ack_pending} pending {info.num_pending}")
    consumers = line("consumers with unacknowledged or undelivered messages", 0, len(unacked), shown(sorted(unacked)))
    dead = await deadletters.stored(stores.js, deadletters.Filter(since=wall(history.started_wall)))
    dead_line = line("dead letters since the soak began", 0, len(dead),
                     shown(f"{d.consumer} {d.subject}: {d.error_type} {d.error[:120]}" for _, d in dead))
    return [leases, stuck_line, consumers, dead_line]


# -- the load's answers --------------------------------------------------------------------------------------------

def answers_lines(history: History, slack_seconds: float) -> list[Line]:
    errors = [a for a in history.attempts if a.status >= 500]
    # a request in flight when a fault began is the fault's too: its span from sent to answered meets the window
    outside = [f"{a.method} {a.route} {a.status} at {a.at - history.started:.1f}-{a.answered - history.started:.1f}s"
               for a in errors if not history.in_window(a.at, slack_seconds, a.answered)]
    inside = line(f"5xx answers inside a fault's window (+{slack_seconds:g} s)", len(errors),
                  len(errors) - len(outside), f"outside: {shown(outside)}" if outside else "")
    # A retry settles with a final answer: a success, or the platform's refusal of the request itself (a 4xx such as
    # a STOP that came in meanwhile, or the provider's refusal the spec answers 500 call_failed); a transient error
    # (no answer, 429, 502-504, internal_error) after two minutes of retries is a request the platform lost.
    unsettled = [f"{r.method} {r.route} {r.first_status}->{r.final_status} x{r.attempts}" for r in history.retried
                 if not r.settled]
    refused = [f"{r.method} {r.route} {r.first_status}->{r.final_status}" for r in history.retried
               if r.settled and not 0 < r.final_status < 400]
    retried = line("retried requests that ended with a final answer", len(history.retried),
                   len(history.retried) - len(unsettled),
                   "; ".join(filter(None, [f"not: {shown(unsettled)}" if unsettled else "",
                                           f"refused in the end: {shown(refused)}" if refused else ""])))
    return [inside, retried]


# -- output --------------------------------------------------------------------------------------------------------

def render(lines: list[Line]) -> str:
    width = max([len(x.name) for x in lines] + [4])
    out = [f"{'':3}{'line':<{width}} {'expected':>9} {'actual':>9}  detail"]
    for x in lines:
        out.append(f"{'ok' if x.exact else '!!':<3}{x.name:<{width}} {x.expected:>9} {x.actual:>9}  {x.detail}")
    exact = sum(x.exact for x in lines)
    out.append(f"{exact} of {len(lines)} lines exact")
    return "\n".join(out)


def as_json(lines: list[Line]) -> dict[str, Any]:
    return {"exact": all(x.exact for x in lines), "lines": [asdict(x) for x in lines]}
