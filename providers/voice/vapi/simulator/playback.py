"""Playing an outbound call the way the provider does: its statuses over time and its end-of-call report,
each POSTed as a server message `{"message": {...}}` to the call's server URL, signed with the server's
credential, retried on failure.

An inbound call to a number with a ringing transfer hook is first offered to its destination (ring-first
forwarding): the destination picks up unless it is a no-answer, busy or failed test number, or the control
plane says otherwise. As the provider documents, the hook's transfer ends the call
(`call.ringing.hook-executed-transfer`) picked up or not, unless the transfer's fallback plan applies: to a warm
transfer, and to a blind one only where the organization enabled transfer-outcome detection and fallback (an
account setting; here VOICE_SIM_TRANSFER_FALLBACK, off by default, on in the embedded stack). Simulator assumption,
beyond what the provider documents: an `endCallEnabled: false` fallback then asks the number's server for an
assistant (the provider documents no assistant-request after a hook); see providers/voice/vapi/FIDELITY-calls.md.

The outcome follows from the dialled number's last four digits (the simulator's test numbers): 0001 nobody
answers, 0002 busy, 0003 a voicemail box answers (ended `voicemail` only with voicemail detection on, the
provider's default being off; otherwise the call is talked to like a person), 0004 the call fails; any other number
is answered and the simulated caller talks with the agent. What is said and the messages sent meanwhile are
`conversation`'s, or, when the control plane gives the caller's lines (`caller`), `dialogue`'s: the stand-in
assistant answers them and its function tools' servers are sent tool-calls messages as the call goes. A test may set
the outcome and ask for duplicated or reordered messages through the control plane (`Playback.script`). Times are multiplied by the time scale (VOICE_SIM_TIME_SCALE; tests run
calls in a fraction of a second).
"""
from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import json
import logging
import math
import struct
import time
import wave
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

from providers.simulator_control import next_script
from providers.voice.vapi.simulator import validation
from providers.voice.vapi.simulator.conversation import (
    UNNOTICED_VOICEMAIL,
    Timeline,
    consent_lines,
    consent_plan,
    detects_voicemail,
    lines_for,
    server_messages,
    transcript,
)
from providers.voice.vapi.simulator.dialogue import LINE_SECONDS, converse
from providers.voice.vapi.simulator.standin import WAITS_FOR_USER, StandIn, effective_assistant
from providers.voice.vapi.simulator.state import Store
from providers.voice.vapi.simulator.tool_calls import NO_RESULT, result_of, timeout_of, tool_calls_message

log = logging.getLogger(__name__)

# endedReason of each outcome, as the provider reports it.
OUTCOMES = {
    "answered": "customer-ended-call",
    "no-answer": "customer-did-not-answer",
    "busy": "customer-busy",
    "voicemail": "voicemail",
    "failed": "pipeline-error-openai-llm-failed",
}
ENDED_REASONS = {**OUTCOMES, UNNOTICED_VOICEMAIL: "customer-ended-call"}  # the box hangs up after its recording
TALKS = ("answered", "voicemail", UNNOTICED_VOICEMAIL)  # outcomes where something is said
TEST_NUMBERS = {"0001": "no-answer", "0002": "busy", "0003": "voicemail", "0004": "failed"}
# Ring-first forwarding: how a forwarded call ends when the forward-to phone picks up, and when it does not and
# the fallback ends the call. A forward-to phone whose number is a no-answer, busy or failed test number never
# picks up (the control plane may say otherwise).
FORWARDED, FORWARD_UNANSWERED = "call.ringing.hook-executed-transfer", "call.forwarding.no-answer"
DIAL_TIMEOUT = 60  # seconds, the transfer plan's default
RING_SECONDS, TALK_SECONDS = 2.0, 12.0
ASSISTANT_REQUEST_TIMEOUT = 7.5  # the provider's limit for an answer to an assistant-request
SEND_ATTEMPTS = 4


@dataclass
class Script:
    """How the next calls play (control plane): an outcome, and message disorder to exercise receivers."""

    outcome: str | None = None
    duplicate: bool = False  # every message is sent twice
    reorder: bool = False  # the end-of-call report goes before the last status update
    silent: bool = False  # the call plays at the provider but no message is sent (for the receiver's reaper)
    timestamp_ms: bool = False  # the HMAC timestamp header in milliseconds (its unit is undocumented)
    legacy_recording: bool = False  # the report names its recording by the deprecated artifact.recordingUrl only
    declines_recording: bool = False  # the callee declines a recording consent plan (says no, or hangs up)
    caller: list[str] | None = None  # what the caller says, answered by the stand-in assistant (`dialogue`)
    times: int = 1


def _iso(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def outcome_for(number: str) -> str:
    return TEST_NUMBERS.get(number[-4:], "answered")


def forward_picks_up(number: str) -> bool:
    return outcome_for(number) in ("answered", "voicemail")


def ringing_transfer(number: dict[str, Any]) -> dict[str, Any] | None:
    """The number destination of the phone number's `call.ringing` transfer hook (its first action), if any."""
    for hook in number.get("hooks") or []:
        if hook.get("on") == "call.ringing" and hook.get("do"):
            action = hook["do"][0]
            destination: dict[str, Any] = action.get("destination") or {}
            if action.get("type") == "transfer" and destination.get("type") == "number":
                return destination
    return None


def sign(plan: dict[str, Any], body: bytes, now: float, milliseconds: bool = False) -> dict[str, str]:
    """The headers a webhook credential's authentication plan puts on a server message. The provider does not
    document the unit of its timestamp header: seconds here, milliseconds when asked (simulator-only)."""
    if plan.get("type") == "bearer":
        prefix = "Bearer " if plan.get("bearerPrefixEnabled", True) else ""
        return {plan.get("headerName") or "Authorization": f"{prefix}{plan['token']}"}
    timestamp = str(int(now * 1000) if milliseconds else int(now))
    payload = (plan.get("payloadFormat") or "{timestamp}.{body}").replace("{timestamp}", timestamp)
    payload = payload.replace("{body}", body.decode())
    digest = hmac.new(plan["secretKey"].encode(), payload.encode(), hashlib.sha256).hexdigest()
    return {plan.get("signatureHeader") or "x-signature": digest,
            plan.get("timestampHeader") or "x-timestamp": timestamp}


RECORDING_SECONDS, RECORDING_RATE = 3, 8000


@functools.cache
def recording_frames(seconds: int = RECORDING_SECONDS) -> bytes:
    """16-bit mono tones a browser plays, alternating like two speakers (made once: every call's recording sounds
    the same, and synthesizing it took most of the simulator's CPU per call)."""
    frames = bytearray()
    for n in range(seconds * RECORDING_RATE):
        pitch = 440 if (n // RECORDING_RATE) % 2 == 0 else 330
        frames += struct.pack("<h", int(8000 * math.sin(2 * math.pi * pitch * n / RECORDING_RATE)))
    return bytes(frames)


def recording_fields(url: str | None, legacy: bool) -> dict[str, Any]:
    """Where the report's artifact names its recording: `recording.mono.combinedUrl`, or (asked for) the deprecated
    `recordingUrl` alone."""
    if url is None:
        return {}
    return {"recordingUrl": url} if legacy else {"recording": {"mono": {"combinedUrl": url}}}


def write_recording(path: Path) -> None:
    """A real (short) WAV of the call."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RECORDING_RATE)
        wav.writeframes(recording_frames())


class CallDeleted(Exception):
    """The call was deleted (DELETE /call/{id}) while it played."""


async def _until_deleted(work: Coroutine[Any, Any, None]) -> None:
    """A call's playback, which stops without a word once the call is deleted: nothing more of it is recorded,
    written or sent (our assumption: Vapi does not document deleting a call that is still going on)."""
    try:
        await work
    except CallDeleted as exc:
        log.info("call %s was deleted: its playback stops", exc)


@dataclass
class Playback:
    store: Store
    time_scale: float = 1.0
    recordings: Path | None = None  # where recordings are written, served at `{public_url}/recording/{id}.wav`
    public_url: str = ""
    # The organization's "transfer outcome detection and fallback" (an account setting at Vapi, not an API field;
    # off unless enabled): without it a blind transfer's fallbackPlan is not applied.
    transfer_fallback: bool = False
    scripts: list[Script] = field(default_factory=list)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def ring(self, number: dict[str, Any], caller: str, outcome: str | None,
                   pickup: bool | None = None, says: list[str] | None = None) -> dict[str, Any]:
        """An inbound call from `caller` to one of the org's numbers. A number with a ringing transfer hook first
        offers the call there (ring-first forwarding, played in the background); otherwise, or when nobody picks
        up and the transfer's fallback keeps the call, the number's assistant answers, or the one its server names
        in answer to an assistant-request; an error answer ends the call unanswered. `says`: the caller's lines."""
        call = self.store.create("call", {"type": "inboundPhoneCall", "status": "ringing", "phoneNumberId": number["id"],
                                          "phoneNumber": {"number": number["number"]}, "customer": {"number": caller}})
        destination = ringing_transfer(number)
        if destination is None:
            return await self._answer(number, call, outcome, says)
        picks_up = pickup if pickup is not None else forward_picks_up(destination["number"])
        self._spawn(self._offer(number, call, destination, picks_up, outcome, says))
        return self.store.update("call", call["id"], {"status": "forwarding"})

    async def _answer(self, number: dict[str, Any], call: dict[str, Any], outcome: str | None,
                      says: list[str] | None = None) -> dict[str, Any]:
        assistant_id, overrides = number.get("assistantId"), None
        if not assistant_id:
            answer = await self._assistant_request(number, call)
            assistant_id, overrides = answer.get("assistantId"), answer.get("assistantOverrides")
            if not assistant_id:
                return self.store.update("call", call["id"], {
                    "status": "ended", "endedReason": "assistant-request-returned-error",
                    "endedMessage": answer.get("error") or "no assistant"})
            invalid = validation.compliance_plan((overrides or {}).get("compliancePlan") or {},
                                                 "assistantOverrides.compliancePlan")
            if invalid:
                return self.store.update("call", call["id"], {
                    "status": "ended", "endedReason": "assistant-request-returned-invalid-assistant",
                    "endedMessage": "; ".join(invalid)})
        call = self.store.update("call", call["id"], {"assistantId": assistant_id,
                                                      **({"assistantOverrides": overrides} if overrides else {})})
        self.start(call, Script(outcome=outcome or "answered", caller=says))
        return call

    async def _offer(self, number: dict[str, Any], call: dict[str, Any], destination: dict[str, Any], picks_up: bool,
                     outcome: str | None, says: list[str] | None) -> None:
        """Ring-first forwarding: dial the hook's destination for its dialTimeout. Picked up, the call is theirs
        and ends `call.ringing.hook-executed-transfer`. Not picked up, the same unless the transfer's fallback
        applies (`_fallback_applies`); then the fallback plan either keeps the call for the assistant
        (endCallEnabled false) or ends it `call.forwarding.no-answer`."""
        plan = destination.get("transferPlan") or {}
        started = datetime.now(UTC)
        await self._emit(call["id"], {**self._status("forwarding"), "destination": destination})
        ring = plan.get("dialTimeout") or plan.get("timeout") or DIAL_TIMEOUT
        if picks_up:
            await self._sleep(min(RING_SECONDS, ring))
            await self._sleep(TALK_SECONDS)
            await self._finish(call["id"], FORWARDED, started)
            return
        await self._sleep(ring)
        fallback = plan.get("fallbackPlan") if self._fallback_applies(plan) else None
        if fallback is None:  # the hook has ended the call: the forward-to phone had it, picked up or not
            await self._finish(call["id"], FORWARDED, started)
        elif fallback.get("endCallEnabled", True):
            await self._finish(call["id"], FORWARD_UNANSWERED, started)
        else:  # our assumption, undocumented: the number's assistant (an assistant-request) takes the call back
            await self._answer(number, self._live(call["id"]), outcome, says)

    def _fallback_applies(self, plan: dict[str, Any]) -> bool:
        """Vapi applies a transfer's fallbackPlan to a warm transfer, and to a blind one only where the organization
        enabled transfer-outcome detection and fallback (an account setting: `transfer_fallback`)."""
        return str(plan.get("mode") or "").startswith("warm-transfer") or self.transfer_fallback

    async def _finish(self, call_id: str, ended_reason: str, started: datetime) -> None:
        """The end of a call the assistant never spoke on: its ended status and a report without a conversation."""
        ended = datetime.now(UTC)
        await self._emit(call_id, self._status("ended", ended_reason))
        await self._emit(call_id, {"type": "end-of-call-report", "endedReason": ended_reason, "startedAt": _iso(started),
                                   "endedAt": _iso(ended), "cost": 0.01, "artifact": {}, "analysis": {}})

    async def _emit(self, call_id: str, message: dict[str, Any]) -> None:
        message = {**message, "timestamp": int(time.time() * 1000)}
        self._record(call_id, message)
        await self._send(self._live(call_id), message)

    async def _assistant_request(self, number: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
        server = number.get("server") or {}
        if not server.get("url"):
            return {"error": "the number has neither an assistant nor a server"}
        body = json.dumps({"message": {"type": "assistant-request", "timestamp": int(time.time() * 1000),
                                       "call": call, "phoneNumber": {"number": number["number"]}}}).encode()
        answer, why = await self._answer_of(server["url"], self._plan(server), body, ASSISTANT_REQUEST_TIMEOUT)
        if why:
            return {"error": why}
        return answer if isinstance(answer, dict) else {"error": "the server's answer is not an object"}

    @staticmethod
    async def _answer_of(url: str, plan: dict[str, Any] | None, body: bytes, timeout: float,
                         timestamp_ms: bool = False) -> tuple[object, str | None]:
        """POST a server message whose answer the call waits for, once, signed by `plan`: (the answer's JSON, None),
        or (None, why there is none)."""
        headers = {"Content-Type": "application/json", **(sign(plan, body, time.time(), timestamp_ms) if plan else {})}
        try:
            async with aiohttp.ClientSession() as session, session.post(
                    url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout)) as r:
                if r.status >= 300:
                    return None, f"server answered {r.status}"
                return await r.json(content_type=None), None
        except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
            return None, f"server unreachable: {exc.__class__.__name__}"

    def start(self, call: dict[str, Any], script: Script | None = None) -> None:
        self._spawn(self._play(call["id"], script or self._next_script()))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(_until_deleted(work))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _live(self, call_id: str) -> dict[str, Any]:
        """The call as stored; `CallDeleted` once DELETE /call/{id} took it (its playback stops there)."""
        call = self.store.get("call", call_id)
        if call is None:
            raise CallDeleted(call_id)
        return call

    def forget(self, call: dict[str, Any]) -> None:
        """A deleted call's recording goes with it: its URL serves 404 from now on (DELETE /call/{id})."""
        if self.recordings is not None:
            (self.recordings / f"{call['id']}.wav").unlink(missing_ok=True)

    def _next_script(self) -> Script:
        return next_script(self.scripts, Script)

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds * self.time_scale)

    def _server(self, call: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
        """The URL and the credential's plan the call's messages go to (`_server_config`)."""
        server = self._server_config(call)
        return server.get("url"), self._plan(server)

    def _server_config(self, call: dict[str, Any]) -> dict[str, Any]:
        """The server the call's messages go to: the call's overrides', then its assistant's, then its phone
        number's (the provider's order of precedence)."""
        assistant = self.store.get("assistant", call.get("assistantId") or "") or {}
        number = self.store.get("phone-number", call.get("phoneNumberId") or "") or {}
        server: dict[str, Any] = ((call.get("assistantOverrides") or {}).get("server") or assistant.get("server")
                                  or number.get("server") or {})
        return server

    def _plan(self, server: dict[str, Any]) -> dict[str, Any] | None:
        """The authentication plan of the server's credential, if it names one."""
        credential = self.store.get("credential", server.get("credentialId") or "") if server else None
        plan: dict[str, Any] | None = (credential or {}).get("authenticationPlan")
        return plan

    def _assistant(self, call: dict[str, Any]) -> dict[str, Any]:
        """The call's assistant with its overrides (top-level settings) applied."""
        assistant = self.store.get("assistant", call.get("assistantId") or "") or {}
        return {**assistant, **(call.get("assistantOverrides") or {})}

    async def _play(self, call_id: str, script: Script) -> None:
        call = self._live(call_id)
        assistant = self._assistant(call)
        outcome = script.outcome or outcome_for(call["customer"]["number"])
        if outcome == "voicemail" and not detects_voicemail(assistant):
            outcome = UNNOTICED_VOICEMAIL
        started, timeline, said = time.time(), Timeline(), []
        if call["status"] != "forwarding":  # a call offered to a forward-to phone first is past ringing
            timeline.add(RING_SECONDS / 2, self._status("ringing"))
        plan = consent_plan(assistant) if outcome == "answered" else None
        consent: dict[str, Any] | None = None  # the report's compliance.recordingConsent
        ended_reason = ENDED_REASONS[outcome]
        if outcome in TALKS:
            timeline.add(RING_SECONDS, self._status("in-progress"))
            first = assistant.get("firstMessage") or "Hello! How can I help you today?"
            lines = lines_for(first, call.get("customer") or {}, outcome)
            asked = consent_lines(plan, script.declines_recording) if plan else []
            if plan and script.declines_recording:  # a no ends the call (its decline tool); else they hang up
                lines, ended_reason = [], "assistant-ended-call" if plan["type"] == "verbal" else "customer-ended-call"
            if script.caller and outcome == "answered" and lines:
                if asked:
                    timeline.talk(asked, LINE_SECONDS * len(asked), started)
                opening = None if assistant.get("firstMessageMode") == WAITS_FOR_USER else first
                ended_reason = await self._converse(call_id, script, timeline, started, opening) or ended_reason
                said = timeline.said
            else:
                said = timeline.talk(asked + lines, TALK_SECONDS if outcome == "answered" else RING_SECONDS * 2,
                                     started)
            if plan:
                consent = self._consent(plan, said[len(asked) - 1], script.declines_recording)
            timeline.add(0, self._status("ended", ended_reason))
        else:
            timeline.add(RING_SECONDS, self._status("ended", ended_reason))
        # The report's times are the call's own (unscaled): a 12 s conversation lasts 12 s in it. The provider records
        # a call with a consent plan only once consent is granted.
        times = (datetime.fromtimestamp(started, UTC), datetime.fromtimestamp(started + timeline.at, UTC))
        recorded = consent is None or "grantedAt" in consent
        report = self._report(call, outcome, times, said, self._recording(call_id, outcome) if recorded else None,
                              script.legacy_recording, ended_reason)
        if consent is not None:
            report["compliance"] = {"recordingConsent": consent}
            if not recorded:  # nobody talked with the agent: nothing to summarise
                report["analysis"] = {}
        timeline.add(0.1, report)
        steps = timeline.take()
        if script.reorder:
            steps[-1], steps[-2] = steps[-2], steps[-1]
        await self._deliver(call_id, steps, script)

    async def _deliver(self, call_id: str, steps: list[tuple[float, dict[str, Any]]], script: Script) -> None:
        """Play `steps` (a call's messages after their delays): each recorded, and sent if the call's server wants
        its type (the assistant's serverMessages)."""
        wanted = server_messages(self._assistant(self._live(call_id)))
        for delay, message in steps:
            await self._sleep(delay)
            message = {**message, "timestamp": int(time.time() * 1000)}  # when it happened; a resend keeps it
            self._record(call_id, message)
            if message["type"] not in wanted:
                continue
            for _ in range(0 if script.silent else 2 if script.duplicate else 1):
                await self._send(self._live(call_id), message, script.timestamp_ms)

    async def _converse(self, call_id: str, script: Script, timeline: Timeline, started: float,
                        opening: str | None) -> str | None:
        """The caller's lines answered by the stand-in assistant (`dialogue`): the call's stored assistant with its
        overrides. A function tool's call waits for its server: what the call said so far is sent first, then the
        tool-calls message (twice with `duplicate`, the last answer kept; not at all with `silent`). Returns the
        endedReason when the assistant ended the call."""
        call = self._live(call_id)
        stored = self.store.get("assistant", call.get("assistantId") or "") or {}
        standin = StandIn(effective_assistant(stored, call.get("assistantOverrides")))

        async def ask(tool: dict[str, Any], made: dict[str, Any]) -> str:
            await self._deliver(call_id, timeline.take(), script)
            own: dict[str, Any] = tool.get("server") or {}
            server = own if own.get("url") else self._server_config(call)
            if script.silent or not server.get("url"):
                return NO_RESULT
            answer: object = None
            body = json.dumps({"message": {"timestamp": int(time.time() * 1000),
                                           **tool_calls_message(tool, made, timeline.said),
                                           "call": self._live(call_id)}}).encode()
            for _ in range(2 if script.duplicate else 1):  # a resend is the same message
                answer, why = await self._answer_of(server["url"], self._plan(server), body, timeout_of(server),
                                                    script.timestamp_ms)
                if why:
                    log.info("tool-calls for call %s: %s", call_id, why)
            return result_of(answer, made["id"])

        return await converse(timeline, standin, script.caller or [], opening, started, ask)

    @staticmethod
    def _consent(plan: dict[str, Any], answer: dict[str, Any], declined: bool) -> dict[str, Any]:
        """The report's recordingConsent: granted once the consent message (and a verbal yes) was said, after the
        plan's waitSeconds on the line for stay-on-line; no grantedAt when the callee declined."""
        if declined:
            return {"type": plan["type"]}
        wait = plan.get("waitSeconds", 3) if plan["type"] == "stay-on-line" else 0
        return {"type": plan["type"], "grantedAt": _iso(datetime.fromtimestamp(answer["endTime"] / 1000 + wait, UTC))}

    @staticmethod
    def _status(status: str, ended_reason: str | None = None) -> dict[str, Any]:
        message = {"type": "status-update", "status": status}
        if ended_reason:
            message["endedReason"] = ended_reason
        return message

    def _recording(self, call_id: str, outcome: str) -> str | None:
        if outcome not in TALKS or self.recordings is None:
            return None
        self._live(call_id)  # none for a call deleted meanwhile
        write_recording(self.recordings / f"{call_id}.wav")
        return f"{self.public_url}/recording/{call_id}.wav"

    @staticmethod
    def _report(call: dict[str, Any], outcome: str, times: tuple[datetime, datetime], said: list[dict[str, Any]],
                recording_url: str | None, legacy_recording: bool, ended_reason: str) -> dict[str, Any]:
        started, ended = times
        report = {"type": "end-of-call-report", "endedReason": ended_reason, "startedAt": _iso(started),
                  "endedAt": _iso(ended), "cost": 0.0, "artifact": {}, "analysis": {}}
        if said:
            report["artifact"] = {"transcript": transcript(said), "messages": said,
                                  **recording_fields(recording_url, legacy_recording)}
            report["cost"] = round(0.05 + 0.01 * len(said), 4)
        if outcome == UNNOTICED_VOICEMAIL:
            report["analysis"] = {"summary": "The call reached a voicemail greeting."}
        if outcome == "answered":
            report["analysis"] = {
                "summary": "The caller asked for a quote to replace a water heater and gave an email for it.",
                "structuredData": {"name": (call.get("customer") or {}).get("name") or "Jordan Lee",
                                   "email": "jordan@example.com", "phone": call["customer"]["number"],
                                   "intent": "Quote for replacing a water heater",
                                   "quality_dimensions": {"professionalism": 9, "empathy": 8,
                                                          "information_gathering": 9, "resolution": 7}},
                "successEvaluation": "true"}
        return report

    def _record(self, call_id: str, message: dict[str, Any]) -> None:
        """The call as GET /call/{id} shows it after this message (only statuses and the report change it)."""
        self._live(call_id)
        if message["type"] == "status-update":
            fields = {"status": message["status"]}
            if "endedReason" in message:
                fields["endedReason"] = message["endedReason"]
        elif message["type"] == "end-of-call-report":
            fields = {k: message[k] for k in ("endedReason", "startedAt", "endedAt", "cost", "artifact", "analysis",
                                              "compliance") if k in message}
            fields["status"] = "ended"
        else:
            return
        self.store.update("call", call_id, fields)

    async def _send(self, call: dict[str, Any], message: dict[str, Any], timestamp_ms: bool = False) -> None:
        url, plan = self._server(call)
        if not url:
            return
        body = json.dumps({"message": {"timestamp": int(time.time() * 1000), **message, "call": call}}).encode()
        for attempt in range(1, SEND_ATTEMPTS + 1):
            headers = {"Content-Type": "application/json",
                       **(sign(plan, body, time.time(), timestamp_ms) if plan else {})}
            try:
                async with aiohttp.ClientSession() as session, session.post(
                        url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=10)) as r:
                    if r.status < 500:
                        return
            except (TimeoutError, aiohttp.ClientError) as exc:
                log.info("server message %s to %s: %s (attempt %d)", message["type"], url, exc, attempt)
            await asyncio.sleep(0.2 * attempt)
        log.warning("server message %s for call %s was not accepted", message["type"], call["id"])
