"""Call use cases: placing an outbound call, and reading calls. Callers are the servicer and the
service-layer tests; the caller's tenant comes from core.tenant.

Placing a call reads the agent's calling profile (agents), the linked lead (sdr) and the business's name
(accounts) as the caller, records the call `queued`, asks the provider with no transaction open, and then records
the provider's call id. If the provider refuses, the call is recorded `failed` with the provider's reason and the
idempotency key is freed, so a retry places the call: no call is left `queued` without a provider call behind it.
A create whose answer was lost (no answer, or a 5xx: the provider may have placed it all the same) is looked for at
the provider by our id: found, it is the call; not there, it failed as above; the provider unable to say, the call
stays `queued` for a retry to settle (OutcomeUnknown, 503).

An Idempotency-Key is claimed first, under a lease (core.leases) of IDEMPOTENCY_LEASE_SECONDS: longer than the
provider's create can take with its retries, so a holder that is alive settles or frees the claim within it. The
claim names the call from the transaction that records it `queued`, before the provider is asked, and its lease is
released when the provider's call id is recorded. A retry that finds the claim leased is answered 409 (still being
placed), one that finds it settled its call. A claim whose lease lapsed was left by a process that died placing the
call (SIGKILL: nothing freed it): the retry takes it over (one retry does: the lease is taken in one guarded
UPDATE), instead of the key being blocked for its 24 hours. With no call named, the dead process never asked the
provider, and the retry places the call. With a call named, it may have, so the retry reconciles before dialing:
the call's provider id (which the provider's messages, carrying our id, set) or else the provider's own record of a
call with our id in its metadata (`VoiceProvider.placed_call`) means it was placed, and the retry settles the claim
on it and answers it; with neither, the call is closed `failed` as never placed and the request placed afresh.
Every write of the claim is guarded by its holder's lease token, so a holder that was taken over (alive but slower
than its lease) changes nothing of it and records no call under it.

Every call is counted in the touch ledger against the callee's frequency caps (messaging's DecideCall, before
anything is written or sent), whatever its compliance mode. With `enforce` the decision (do-not-call, consent, the
callee's legal window in every zone they may be in, state rules, the frequency caps) may refuse it: a refusal is
its 400 code; a deferral is refused the same way for an immediate call (CreateCall) and returned as data to a
caller that can wait (PlaceCall). With `skip` (the API's default, the spec's "the caller is responsible") the call
is counted and its decision logged as not checked, never refused. A call the provider then refuses frees the slot
its decision took.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from contracts import calls as calls_contract
from core import aggregates, tenant
from core.compliance import decision as compliance
from core.compliance import zones
from core.contact import normalize_e164
from core.errors import ServiceError, invalid, not_found
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.standings import Standings, carried_only
from core.text import optional_text
from core.to_completion import to_completion
from core.uow import UnitOfWork
from providers.voice.port import OutboundCall, ProviderError, VoiceProvider
from services.calls import domain
from services.calls.domain import CallFilter
from services.calls.ports import CallDecision, CallingProfile, Lead, Neighbours
from services.calls.records import Call, ToolCallRecord
from services.calls.repository import CallsUnit
from switchboard.v1 import common_pb2

IDEMPOTENCY_WINDOW = timedelta(hours=24)
IDEMPOTENCY_LEASE = timedelta(seconds=120)  # as core.settings' IDEMPOTENCY_LEASE_SECONDS, which says why
NEVER_PLACED = "never placed: the process placing it stopped before the provider had it"
ERASED_RECORDING = ("recording not found: this call's recording and transcript were erased at the request of the "
                    "person on the call (a privacy erasure), here and at the voice provider")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Claim:
    """The idempotency key a request holds while it places its call: its lease's token (which guards its writes of
    the claim), and the call a process that held it before recorded (a takeover)."""

    account_id: str
    key: str
    token: str
    earlier_call_id: str | None = None


@dataclass(frozen=True)
class RecordingLink:
    """A call's recording state and, when there is audio, a signed link to it."""

    row: Any  # the call (its repository's row)
    url: str | None
    expires_at: datetime | None
    recording_status: str  # domain.media_status
    transcript_status: str


# What placing a call answers: the call, or the compliance decision that deferred it.
Placed = Call | common_pb2.ComplianceDecision


@dataclass(frozen=True)
class NewCall:
    """An outbound call as a client asks for it (unchecked)."""

    agent_id: str
    to: str
    name: str | None = None
    context: str | None = None
    first_message: str | None = None
    lead_id: str | None = None
    webhook_url: str | None = None
    max_duration: int | None = None
    compliance: str = "skip"
    callee_timezone: str | None = None  # with enforce: where the caller says the callee is
    actor: str | None = None  # with enforce: run or pipeline (enforced_call when None)
    reference: str | None = None  # with enforce: the touch the call is for
    external_ref: str | None = None  # a communication run's reference and the touch's id, for its events
    touch_id: str | None = None
    # With enforce: the business's own calling hours (start, end) as a run or the pipeline read them; for a call
    # of the API (actor None) the saved SDR config's are read here.
    business_hours: tuple[int, int] | None = None


class OutcomeUnknown(ServiceError):
    """The provider may have placed the call (its answer to the create was lost, or an earlier holder of the
    request's claim stopped after asking it) and cannot say now whether it did. The call stays `queued` and its
    compliance slot taken; the claim keeps naming it with its lease ended, so a retry with the same Idempotency-Key
    takes it over at once and asks the provider again (`_resume`): the call is answered once the provider says it
    has it, or placed afresh once it says it has not. Never placed twice, and the caller is told to retry (503)."""

    def __init__(self, call_id: str, why: str):
        super().__init__("unavailable", f"the voice provider did not say whether it placed call {call_id} ({why}); "
                                        "retry with the same Idempotency-Key to get the call, placed once")


def _found(row: Call | None) -> Call:
    """The call a lookup found, or 404."""
    if row is None:
        raise not_found("call")
    return row


class Calls:
    def __init__(self, uow: UnitOfWork[CallsUnit], voice: VoiceProvider, neighbours: Neighbours, *, recording_secret: str,
                 base_url: str, standings: Standings | None = None, idempotency_lease: timedelta = IDEMPOTENCY_LEASE):
        self.uow = uow  # the calls and idempotency keys (services.calls.repository)
        self.lease = idempotency_lease
        self.standings = standings or carried_only()  # may the business spend (core.standings)
        self.voice = voice
        self.recording_secret = recording_secret  # signs recording links
        self.base_url = base_url.rstrip("/")
        self.others = neighbours  # the other services, asked as the caller (services.calls.ports)

    # -- placing a call ----------------------------------------------------------------------

    async def create(self, new: NewCall, idempotency_key: str | None = None) -> Call:
        """The call placed (or, for a repeated idempotency key with the same request, the call placed the first
        time); a deferral is refused with its code and the instant the call becomes legal."""
        placed = await self.place(new, idempotency_key)
        if isinstance(placed, common_pb2.ComplianceDecision):
            raise ServiceError(placed.code, placed.message)
        return placed

    async def place(self, new: NewCall, idempotency_key: str | None = None) -> Placed:
        """The call placed (as `create`), or the compliance decision that deferred it (nothing was placed)."""
        who = tenant.require_account()
        request = self._checked(new)
        key = domain.check_idempotency_key(idempotency_key)
        claim = None
        if key is not None:
            claimed = await self._claim(who.account_id, key, domain.request_hash(request))
            if isinstance(claimed, Call):
                return claimed
            claim = claimed
        # Once the key is claimed the placement runs to its end even if the caller goes away, so a retry with
        # the same key gets this call instead of dialing again.
        return await to_completion(self._place_settling(request, claim))

    async def _place_settling(self, request: dict[str, Any], claim: Claim | None) -> Placed:
        """Place the call (or, taking over a claim, the call the earlier holder placed), then settle the claim on
        it (or free the claim when nothing was placed). A takeover that cannot tell whether the earlier call was
        placed (the provider unreachable) keeps the claim, for a retry after its lease to ask again."""
        try:
            if claim is not None and claim.earlier_call_id:
                resumed = await self._resume(claim)
                if resumed is not None:
                    return resumed
            placed = await self._place(request, claim)
        except OutcomeUnknown:
            if claim is not None:
                await self._lapse(claim)
            raise
        except BaseException:
            if claim is not None:
                await self._release(claim)
            raise
        if claim is not None and isinstance(placed, common_pb2.ComplianceDecision):
            await self._release(claim)
        return placed

    async def _lapse(self, claim: Claim) -> None:
        async with self.uow.transaction() as work:
            await work.calls.lapse_key(claim.account_id, claim.key, claim.token)

    async def _release(self, claim: Claim) -> None:
        async with self.uow.transaction() as work:
            await work.calls.release_key(claim.account_id, claim.key, claim.token)

    async def _resume(self, claim: Claim) -> Call | None:
        """The call an earlier holder of the claim recorded, when it reached the provider (its provider id from the
        provider's messages, or found at the provider by our id), settled on the claim; else None, with that call
        closed `failed` as never placed, for the request to be placed afresh."""
        assert claim.earlier_call_id is not None
        async with self.uow.read() as work:
            earlier = await work.calls.owned(tenant.require_account().business_ids, claim.earlier_call_id)
        if earlier is None:  # erased meanwhile
            return None
        provider_call_id = earlier.provider_call_id
        if provider_call_id is None:
            profile = await self.others.agents.calling_profile(earlier.agent_id)
            provider_call_id = await self._placed_by_our_id(profile.provider_assistant_id, earlier.id)
        async with self.uow.transaction() as work:
            if provider_call_id is None:
                if earlier.status == "queued":
                    await work.calls.change(earlier.id, {"status": "failed", "ended_reason": NEVER_PLACED,
                                                         "updated_at": utcnow()})
                return None
            log.info("call %s of a lapsed idempotency claim was placed (%s): answered, not placed again", earlier.id,
                     provider_call_id)
            await work.calls.settle_key(claim.account_id, claim.key, claim.token, earlier.id)
            return await work.calls.change(earlier.id, {"provider_call_id": provider_call_id, "updated_at": utcnow()})

    @staticmethod
    def _checked(new: NewCall) -> dict[str, Any]:
        if new.compliance not in calls_contract.COMPLIANCE_MODES:
            raise invalid(f"compliance must be one of {', '.join(calls_contract.COMPLIANCE_MODES)}")
        enforced = new.compliance == "enforce"
        if not enforced and (new.callee_timezone or new.actor or new.reference or new.business_hours):
            raise invalid("callee_timezone, actor, reference and business_hours apply only to calls with compliance "
                          "enforce (the checks run only then)")
        if new.actor is not None and new.actor not in compliance.CALL_ACTORS:
            raise invalid(f"actor must be one of {', '.join(compliance.CALL_ACTORS)}")
        return {
            "agent_id": require_uuid(new.agent_id, "agent_id"), "to": normalize_e164(new.to, "to"),
            "name": optional_text(new.name, "name", calls_contract.NAME_MAX),
            "context": optional_text(new.context, "context", calls_contract.CONTEXT_MAX),
            "first_message": optional_text(new.first_message, "first_message", calls_contract.FIRST_MESSAGE_MAX),
            "lead_id": require_uuid(new.lead_id, "lead_id") if new.lead_id else None,
            "webhook_url": domain.check_webhook_url(new.webhook_url),
            "max_duration": domain.check_max_duration(new.max_duration), "compliance": new.compliance,
            "callee_timezone": zones.check_zone(new.callee_timezone, "callee_timezone") if new.callee_timezone
            else None,
            "actor": new.actor or ("enforced_call" if enforced else compliance.UNCHECKED),
            "business_hours": new.business_hours,
            "reference": optional_text(new.reference, "reference", domain.REFERENCE_MAX),
            "external_ref": optional_text(new.external_ref, "external_ref", domain.REFERENCE_MAX),
            "touch_id": optional_text(new.touch_id, "touch_id", domain.REFERENCE_MAX),
        }

    async def _claim(self, account_id: str, key: str, request_hash: str) -> Claim | Call:
        """The claim this request holds to go ahead (a new one, or one taken over from a holder whose lease
        lapsed); the first call when it repeats a finished request."""
        now, token = utcnow(), new_id()
        async with self.uow.transaction() as work:
            repository = work.calls
            taken = await repository.claim_key(account_id, key, request_hash, now, now - IDEMPOTENCY_WINDOW, token,
                                               self.lease)
            if taken is None:
                return Claim(account_id, key, token)
            if taken.request_hash != request_hash:
                raise ServiceError("conflict", "this Idempotency-Key was used with another request in the last 24 "
                                   "hours; use a new key for a new call")
            if not taken.placing:
                assert taken.call_id is not None  # a settled claim names its call
                return _found(await repository.owned(tenant.require_account().business_ids, taken.call_id))
            if not await repository.take_over_key(account_id, key, token, self.lease):
                raise ServiceError("conflict", "a request with this Idempotency-Key is still being placed; retry in "
                                   "a moment to get its call")
        log.warning("taking over the idempotency claim of a request whose lease lapsed (its process stopped placing "
                    "call %s)", taken.call_id or "none yet")
        return Claim(account_id, key, token, taken.call_id)

    async def _place(self, request: dict[str, Any], claim: Claim | None) -> Placed:
        """The call placed (the request's idempotency claim naming it in the transaction that records it queued,
        and settled on it in the one that records the provider's call id), or the decision that deferred it."""
        profile = await self.others.agents.calling_profile(request["agent_id"])
        if profile.provider_phone_number_id is None:
            raise invalid("agent_id names an agent without a phone number: assign it a number first")
        await self.standings.require_good(profile.business_id, "placing calls")
        lead = await self._lead(request["lead_id"], profile.business_id, request["to"])
        business_name = await self.others.workspaces.business_name(profile.business_id)
        call_id = new_id()
        decision = await self._decide(request, profile, lead, call_id)
        if decision.outcome == "refuse":
            raise ServiceError(decision.code, decision.message)
        if decision.outcome == "defer":
            return decision
        now = utcnow()
        variables = domain.enrichment(to=request["to"], now=now, name=request["name"],
                                      lead=domain.lead_facts(lead) if lead else None, business_name=business_name,
                                      business_phone=profile.phone_number)
        first_message = request["first_message"] or profile.first_message
        disclosure, disclosure_spoken = domain.recording_disclosure(
            zones.possible_states(request["to"], lead.state if lead else None), profile.disclosure, outbound=True)
        async with self.uow.transaction() as work:
            if claim is not None and not await work.calls.hold_key(claim.account_id, claim.key, claim.token, call_id):
                raise ServiceError("conflict", "this request's Idempotency-Key was taken over by a retry after its "
                                   "lease lapsed; the retry places the call")
            await work.calls.add(
                id=call_id, business_id=profile.business_id, agent_id=profile.agent_id, agent_name=profile.name,
                lead_id=lead.id if lead else None, direction="outbound", status="queued", to_number=request["to"],
                from_number=profile.phone_number, name=request["name"], context=request["context"],
                first_message=first_message, max_duration=request["max_duration"],
                webhook_url=request["webhook_url"], compliance=request["compliance"], variables=variables,
                external_ref=request["external_ref"], touch_id=request["touch_id"], recording_disclosure=disclosure,
                created_at=now, updated_at=now)
        placed = OutboundCall(
            call_id=call_id, assistant_id=profile.provider_assistant_id, number_id=profile.provider_phone_number_id,
            to=request["to"], name=request["name"], prompt=profile.prompt, first_message=first_message,
            model=profile.model, context=request["context"], max_duration=request["max_duration"], variables=variables,
            detect_voicemail=not profile.own_voicemail_detection, disclosure=disclosure_spoken, tools=profile.tools)
        try:
            provider_call_id = await self.voice.place_call(placed)
        except ProviderError as exc:
            found = await self._placed_by_our_id(placed.assistant_id, call_id) if exc.maybe_applied else None
            if found is not None:
                log.info("call %s was placed though the provider's answer was lost (%s)", call_id, exc.message)
                return await self._placed(call_id, found, claim)
            async with self.uow.transaction() as work:
                await work.calls.change(call_id, {"status": "failed", "updated_at": utcnow(),
                                                           "ended_reason": f"provider refused: {exc.message}"[:500]})
            await self._release_slot(decision.id)
            raise ServiceError("call_failed", f"the voice provider refused the call: {exc.message}") from None
        return await self._placed(call_id, provider_call_id, claim)

    async def _placed(self, call_id: str, provider_call_id: str, claim: Claim | None) -> Call:
        """Record the provider's call id, and settle the request's claim on the call."""
        async with self.uow.transaction() as work:
            repository = work.calls
            if claim is not None:
                await repository.settle_key(claim.account_id, claim.key, claim.token, call_id)
            placed_call = await repository.change(call_id, {"provider_call_id": provider_call_id,
                                                            "updated_at": utcnow()})
        if placed_call is None:  # erased while it was being placed
            raise not_found("call")
        if placed_call.erased_at is not None:  # the person was erased while it was being placed: theirs goes too
            await self._delete_erased(placed_call, provider_call_id)
        return placed_call

    async def _placed_by_our_id(self, assistant_id: str, call_id: str) -> str | None:
        """The provider's call carrying our id, or None when it has none; OutcomeUnknown when it cannot say."""
        try:
            return await self.voice.placed_call(assistant_id, call_id)
        except ProviderError as exc:
            raise OutcomeUnknown(call_id, exc.message) from None

    async def _delete_erased(self, call: Call, provider_call_id: str) -> None:
        """Delete at the provider a call erased (services.calls.erasure) before its provider id was known."""
        try:
            await self.voice.delete_call(provider_call_id)
        except ProviderError as exc:
            log.warning("call %s was erased while it was placed, and the provider did not delete it: %s", call.id,
                        exc.message)

    async def _decide(self, request: dict[str, Any], profile: CallingProfile, lead: Lead | None,
                      call_id: str) -> common_pb2.ComplianceDecision:
        """The compliance decision on this call, logged by the messaging service (for the call or its touch) and
        counted; an enforced call of the API (actor enforced_call) keeps to the calling hours the business saved."""
        business_hours = request["business_hours"]
        if request["actor"] == "enforced_call":
            business_hours = await self.others.leads.saved_business_hours(profile.business_id)
        return await self.others.compliance.decide_call(CallDecision(
            profile.business_id, request["to"], request["callee_timezone"], lead, profile.phone_number,
            request["actor"], request["reference"] or call_id, business_hours))

    async def _release_slot(self, decision_id: str) -> None:
        """Free the frequency slot of a call that was never placed; if that fails the slot stays counted (a cap
        one call stricter for a day, never looser)."""
        try:
            await self.others.compliance.release_slot(decision_id)
        except Exception:  # noqa: BLE001 - the call's own failure is what the caller must hear
            log.warning("could not free the frequency slot of decision %s", decision_id, exc_info=True)

    async def _lead(self, lead_id: str | None, business_id: str, to: str) -> Lead | None:
        """The lead named, which must be of the agent's business; else the business's lead with this number."""
        if lead_id:
            lead = await self.others.leads.lead(lead_id)
            if lead.business_id != business_id:
                raise invalid("lead_id is a lead of another business than the agent's")
            return lead
        return await self.others.leads.lead_with_phone(business_id, to)

    # -- reads ---------------------------------------------------------------------------------

    async def get(self, call_id: str) -> Call:
        require_uuid(call_id, "id")
        async with self.uow.read() as work:
            return _found(await work.calls.owned(tenant.require_account().business_ids, call_id))

    async def detail(self, call_id: str) -> tuple[Call, list[ToolCallRecord]]:
        """The call (of the caller's businesses) and the tool calls of its agent during it, oldest first."""
        require_uuid(call_id, "id")
        async with self.uow.read() as work:
            found = await work.calls.with_tool_calls(tenant.require_account().business_ids, call_id)
        if found is None:
            raise not_found("call")
        return found

    async def transcripts(self, agent_id: str | None, days: int | None, page: Page) -> Paged:
        """Calls of the last `days` days that have a transcript, newest first."""
        who = tenant.require_account()
        since = utcnow() - timedelta(days=domain.check_days(days))
        agent_id = require_uuid(agent_id, "agent_id") if agent_id else None
        async with self.uow.read() as work:
            return await work.calls.transcripts(who.business_ids, agent_id, since, page)

    async def transcript(self, call_id: str) -> Call:
        """One call with its transcript; refused while it has none; empty once erased."""
        row = await self.get(call_id)
        if row.erased_at is not None:
            return row
        why = domain.transcript_refusal(row.status, row.reported_at is not None, bool(row.transcript))
        if why is not None:
            raise ServiceError("conflict", why)
        return row

    async def recording(self, call_id: str) -> RecordingLink:
        row = await self.get(call_id)
        if row.erased_at is not None:
            raise ServiceError("not_found", ERASED_RECORDING)
        reported = row.reported_at is not None
        statuses = (domain.media_status(reported, bool(row.recording_url)),
                    domain.media_status(reported, bool(row.transcript)))
        if not row.recording_url:
            return RecordingLink(row, None, None, *statuses)
        expires = int(time.time()) + calls_contract.RECORDING_URL_TTL_SECONDS
        query = urlencode({"call_id": row.id, "expires": expires,
                           "signature": domain.recording_signature(self.recording_secret, str(row.id), expires)})
        return RecordingLink(row, f"{self.base_url}{calls_contract.AUDIO_PATH}?{query}",
                             datetime.fromtimestamp(expires, UTC), *statuses)

    async def recording_source(self, call_id: str, expires: int, signature: str) -> str:
        """The provider's URL of the audio behind a link we signed (no caller: the link is the credential)."""
        require_uuid(call_id, "call_id")
        why = domain.recording_refusal(self.recording_secret, call_id, expires, signature, time.time())
        if why is not None:
            raise ServiceError("unauthorized", why)
        async with self.uow.read() as work:
            url = await work.calls.recording_url(call_id)
        if url is None:
            raise not_found("recording")
        return url

    async def aggregate(self, query: aggregates.Query, agent_id: str | None) -> list[Any]:
        """Analytics: the calls of the query's businesses in its window, counted per group (core.aggregates):
        how many, how many completed, their total duration."""
        agent_id = require_uuid(agent_id, "agent_id") if agent_id else None
        async with self.uow.read() as work:
            return await work.calls.aggregate(query, agent_id)

    async def list(self, filters: CallFilter, page: Page, business_id: str | None = None) -> Paged:
        """The caller's calls (of one of their businesses when named) that pass the filters, newest first."""
        who = tenant.require_account()
        if filters.status is not None and filters.status not in calls_contract.STATUSES:
            raise invalid(f"status must be one of {', '.join(calls_contract.STATUSES)}")
        if filters.direction is not None and filters.direction not in calls_contract.DIRECTIONS:
            raise invalid(f"direction must be one of {', '.join(calls_contract.DIRECTIONS)}")
        if filters.agent_id:
            require_uuid(filters.agent_id, "agent_id")
        businesses = who.business_ids
        if business_id is not None:
            if require_uuid(business_id, "business_id") not in who.business_ids:
                raise not_found("business")
            businesses = (business_id,)
        async with self.uow.read() as work:
            return await work.calls.page(businesses, filters, page)

