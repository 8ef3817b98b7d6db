"""What the platform needs from a voice-AI provider, in our own types: the services never see a provider's JSON.

An adapter per provider (`providers/voice/vapi/`) turns these types into its requests and its answers and server
messages back into them; `providers.configured.voice` picks the one the settings name. What passes through
untouched is what our public API already takes as the owner's own provider settings (an agent's `voice`, `model`
and `provider_config`, an eval scenario's turns and judge plans): opaque here, forwarded as given.

Every failure is a `ProviderError`, a public `provider_error` whose message is safe to show the caller (never the
provider key or a raw 5xx body).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from core.compliance.recording_rules import Setting
from core.errors import ServiceError


class ProviderError(ServiceError):
    """The voice provider failed or refused a request.

    `status` is the provider's HTTP status (None when it could not be reached),
    so a caller can tell "not there any more" (404) from an outage. `retry_after`
    is the provider's numeric Retry-After in seconds on a refusal that had one
    (a 429 above all), so a caller that backs off itself knows for how long.
    `maybe_applied`: a create whose answer was lost (no answer, or a 5xx), which
    the provider may have carried out all the same.
    """

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None, *,
                 maybe_applied: bool = False):
        super().__init__("provider_error", message)
        self.status = status
        self.retry_after = retry_after
        self.maybe_applied = maybe_applied


Json = Mapping[str, Any]


# -- assistants ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionTool:
    """A function the model may call during a call; the provider asks our server for its result (the call's
    `tool-calls` message). `parameters` is the JSON Schema of its arguments (an object)."""

    name: str
    description: str
    parameters: Json


@dataclass(frozen=True)
class TransferDestination:
    """A person a call may be transferred to: `name` tells the model when, `message` is said to the caller first
    (None: the provider's default), `warm` tells the person who is coming and why before the caller is put
    through (else the call is put through at once)."""

    name: str
    phone_number: str
    warm: bool
    message: str | None = None


@dataclass(frozen=True)
class TransferTool:
    """Transfer the call to one of `destinations`; none: the provider asks our server for the destination when the
    model transfers (the business's own phone)."""

    destinations: tuple[TransferDestination, ...] = ()


@dataclass(frozen=True)
class EndCallTool:
    """Hang up."""


AssistantTool = FunctionTool | TransferTool | EndCallTool


@dataclass(frozen=True)
class AssistantSpec:
    """An agent's assistant as the provider runs it. `model`, `voice` and `settings` are the owner's own provider
    settings (the agent's model, voice and provider_config), forwarded as given; `collect` is the JSON Schema of
    what the end-of-call analysis extracts (reported back in `CallReport.structured_data`); `tools` what the
    assistant may do during a call."""

    name: str
    prompt: str
    first_message: str | None
    model: Json
    voice: Json | None
    settings: Json
    collect: Json
    agent_id: str
    business_id: str
    tools: tuple[AssistantTool, ...] = ()


@dataclass(frozen=True)
class LiveAssistant:
    """What the provider runs now: its system prompt (None: it has none) and its tools, as the provider holds them
    (opaque: an eval run against a configuration not yet live keeps them, `Conversation.tools`)."""

    prompt: str | None
    tools: Json = field(default_factory=dict)


@dataclass(frozen=True)
class Conversation:
    """One channel's configuration, run on top of the live assistant without changing it (an eval gate's target):
    its prompt, first message (none when `speaks_first` is False: the other party opens) and model."""

    prompt: str
    first_message: str | None
    model: Json
    speaks_first: bool = True
    tools: Json = field(default_factory=dict)


# -- phone numbers ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Forwarding:
    """Ring-first forwarding of a number: each inbound call rings `to` for `ring_seconds` before the agent answers."""

    to: str
    ring_seconds: int


# -- calls --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutboundCall:
    """A call to place with the agent's assistant: this call's prompt (with `context` added to it), first message
    and model, the variables the prompt may use, our call id (every message about the call carries it back), and
    the recording disclosure to speak first (None: none), and the agent's tools (the call's model replaces the
    assistant's, tools and all)."""

    call_id: str
    assistant_id: str
    number_id: str
    to: str
    name: str | None
    prompt: str
    first_message: str
    model: Json
    context: str | None
    max_duration: int
    variables: Json
    detect_voicemail: bool = True
    disclosure: Setting | None = None
    tools: tuple[AssistantTool, ...] = ()


@dataclass(frozen=True)
class InboundAnswer:
    """Who answers an inbound call: the agent's assistant with the call's variables, our call id and the recording
    disclosure to speak first (None: none)."""

    call_id: str
    assistant_id: str
    variables: Json
    disclosure: Setting | None = None


@dataclass(frozen=True)
class CallRef:
    """The call a server message is about: the provider's id, ours when the provider carries it back (None: a call
    placed or answered without one, or not ours), whether it came in, and its numbers (E.164 when readable)."""

    provider_call_id: str
    our_call_id: str | None = None
    inbound: bool = False
    number: str | None = None
    caller: str | None = None


@dataclass(frozen=True)
class RecordingConsent:
    """The other party's answer to the recording disclosure: the consent type asked and when it was granted
    (None: declined, or hung up first)."""

    type: str | None
    granted_at: datetime | None


Outcome = Literal["completed", "voicemail", "no-answer", "busy", "canceled", "failed"]


@dataclass(frozen=True)
class StatusUpdate:
    """A call moved: `status` is one of PROGRESS; `forwarded_to` the phone a forwarding call is offered to."""

    call: CallRef
    status: str
    at: datetime | None = None
    forwarded_to: str | None = None


PROGRESS = ("queued", "ringing", "in-progress", "forwarding", "ended")


@dataclass(frozen=True)
class CallReport:
    """How a call ended and what was said. `ended_reason` is the provider's own words (kept and shown as given);
    `outcome` what they mean in ours, None when the adapter does not know (the call's progress then decides);
    `ended_message` the provider's words on why it ended (for an inbound call our answer refused, the words we gave
    it to say)."""

    call: CallRef
    ended_reason: str | None
    outcome: Outcome | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    cost_cents: int = 0
    transcript: str | None = None
    recording_url: str | None = None
    summary: str | None = None
    structured_data: Json | None = None
    recording_consent: RecordingConsent | None = None
    ended_message: str | None = None


@dataclass(frozen=True)
class AnswerRequest:
    """The provider asks who answers an inbound call (and wants the answer within its timeout)."""

    call: CallRef


@dataclass(frozen=True)
class Ignored:
    """A server message nothing of ours follows from (acknowledged and dropped)."""

    kind: str


@dataclass(frozen=True)
class ToolCall:
    """One function the model called: the provider's id of this call of it (a retried message carries the same),
    the function's name and its arguments (an object: {} when the model sent none or none readable)."""

    id: str
    name: str
    arguments: Json


@dataclass(frozen=True)
class ToolCallsRequest:
    """The model called functions of ours during the call; the provider waits for a result of each."""

    call: CallRef
    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class ToolResult:
    """What we answer one tool call with (`id`: its ToolCall.id): words the model reads and may say."""

    id: str
    result: str


@dataclass(frozen=True)
class TransferRequest:
    """The model transfers the call with a transfer tool that names no destination (the agent's transfer_call with
    none: the business's own phone); the provider waits for where to. `sent_at`: when the provider sent it (a
    retried message carries the same), None when it does not say."""

    call: CallRef
    sent_at: datetime | None = None


@dataclass(frozen=True)
class TransferAnswer:
    """Where a `TransferRequest`'s call goes: `phone_number` (E.164), `warm` (the person hears `introduction`, who
    is coming, before the caller is put through) or blind, and `message` said to the caller first; or, with no
    phone number, `refusal`: words the assistant says instead of transferring."""

    phone_number: str | None = None
    warm: bool = True
    message: str | None = None
    introduction: str | None = None
    refusal: str | None = None


CallMessage = StatusUpdate | CallReport | AnswerRequest | ToolCallsRequest | TransferRequest | Ignored


# -- evals --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalSpec:
    """A scenario mirrored at the provider: its name, description and turns (as our API takes them), and `stubs`:
    turn index -> the results (words) that answer, in order, the tool calls that turn expects (test mode: the
    provider plays them as mock tool responses, so no tool runs)."""

    name: str
    description: str
    messages: Sequence[Json]
    stubs: Mapping[int, Sequence[str]] = field(default_factory=dict)


RunStatus = Literal["queued", "in-progress", "ended"]


@dataclass(frozen=True)
class EvalRun:
    """A run of a scenario at the provider; once `ended`, whether every result passed (a run that ended any other
    way than played to its end did not), the results (`{status, messages}`) and the tool calls the assistant made
    (`{turn, name, arguments, result}`, stubbed in a run: nothing happened; `result`, the stub the provider reports
    the assistant got, or None)."""

    id: str
    status: RunStatus
    passed: bool | None = None
    results: Sequence[Json] = ()
    ended_reason: str | None = None
    tool_calls: Sequence[Json] = ()


# -- the port -----------------------------------------------------------------------------------------------------


class VoiceProvider(Protocol):
    """A voice-AI provider. Deleting what is already gone (404) is not an error; a 404 on a read is a
    `ProviderError` with status 404."""

    # The owner's provider settings that, once set, can be changed but not removed (the provider has no default to
    # go back to): a rollback keeps them.
    kept_settings: frozenset[str]

    async def check(self) -> None:
        """A cheap authenticated request: raises `ProviderError` when the provider does not answer it."""

    # Assistants
    async def create_assistant(self, spec: AssistantSpec) -> str:
        """The new assistant's id."""

    async def update_assistant(self, assistant_id: str, spec: AssistantSpec, previous: AssistantSpec) -> None:
        """Turn the assistant of `previous` into that of `spec` (what differs only)."""

    async def live_assistant(self, assistant_id: str) -> LiveAssistant: ...
    async def delete_assistant(self, assistant_id: str) -> None: ...

    # Phone numbers (ours, reached over our SIP trunk: the provider asks us who answers each call)
    async def import_number(self, e164: str) -> str:
        """The provider's id of the number."""

    async def forward_first(self, number_id: str, forwarding: Forwarding | None) -> None:
        """Set the number's ring-first forwarding (None: off)."""

    async def delete_number(self, number_id: str) -> None: ...

    # Calls
    async def place_call(self, call: OutboundCall) -> str:
        """The provider's id of the call."""

    async def placed_call(self, assistant_id: str, our_call_id: str) -> str | None:
        """The provider's id of the call placed with our id (`OutboundCall.call_id`) among the assistant's newest
        calls, None when the provider has none: whether a placing that was cut off reached the provider."""

    async def ended_call(self, provider_call_id: str) -> CallReport | None:
        """The call's end as the provider knows it, None while it goes on."""

    async def delete_call(self, provider_call_id: str) -> None:
        """Delete the call at the provider with all it holds of it (its recording, transcript and artifact): a
        person's erasure (services.calls.erasure). A call already gone is deleted."""

    async def inbound_calls_since(self, since: datetime) -> list[CallReport]:
        """The inbound calls to our numbers created at or after `since` that have ended, each as its end-of-call
        report would have it: the calls whose server messages never reached us are among them."""

    def read_message(self, payload: object) -> CallMessage:
        """A server message (as verified by the gateway) in our types; `invalid` when it is not one."""

    async def answer(self, answer: InboundAnswer | str) -> dict[str, Any]:
        """The reply to an `AnswerRequest`: the assistant that answers, or words spoken before the call ends."""

    def tool_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        """The reply to a `ToolCallsRequest`: a result for each of its tool calls."""

    def transfer_answer(self, answer: TransferAnswer) -> dict[str, Any]:
        """The reply to a `TransferRequest`: the destination, or the refusal the assistant says."""

    # Evals: scenarios mirrored at the provider, and runs of them against an assistant
    async def create_eval(self, spec: EvalSpec) -> str: ...
    async def update_eval(self, eval_id: str, spec: EvalSpec) -> None: ...
    async def delete_eval(self, eval_id: str) -> None: ...
    async def run_eval(self, eval_id: str, assistant_id: str, conversation: Conversation | None = None) -> EvalRun:
        """Start a run (on the live assistant, or with `conversation` in place of its configuration). Never retried
        on a 429: the `ProviderError` (status 429, `retry_after`) reaches the caller, which backs off."""

    async def eval_run(self, run_id: str) -> EvalRun: ...
    async def eval_runs_since(self, eval_id: str, assistant_id: str, since: datetime) -> list[EvalRun]:
        """The runs of this eval against this assistant created at or after `since`, oldest first: a run whose
        submission was cut off before its id was recorded is found here instead of being submitted again."""

    async def close(self) -> None: ...
