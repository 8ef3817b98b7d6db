"""A local voice-AI provider: a real HTTP server speaking the provider's (Vapi's) REST API for
assistants, phone numbers, calls, webhook credentials, evals and eval runs, keeping its state in a data folder.
It plays every call it places (`playback`, `conversation`): statuses, the conversation's speech-update,
conversation-update, user-interrupted and hang messages (or the assistant's own `serverMessages`) and an
end-of-call report POSTed as signed server messages to the call's server URL. The dialled number's last four
digits choose the outcome: 0001 no answer, 0002 busy, 0003 voicemail (noticed only with voicemail detection on),
0004 failed, anything else answered. VOICE_SIM_TIME_SCALE multiplies the times
(1: a call lasts about 16 s; the tests use 0.05). VOICE_SIM_SAVE_SECONDS: how long changes wait to be saved
(default 1; a save rewrites the whole state). VOICE_SIM_TRANSFER_FALLBACK: the organization has transfer-outcome
detection and fallback enabled (an account setting at the provider; off unless set: a ring-first hook's blind
transfer then ends the call, picked up or not; see `playback`).

`make run` and the test harness start it (`python -m providers.voice.vapi.simulator --port N --data-dir DIR
--api-key KEY`) and point the real client at it. Modules:

- `app`: `build_app(state_dir, api_key)`: auth, JSON bodies, the provider's error shape, routes, and the test
  control plane below (faults and the request log: `providers.simulator_control`, shared by the simulators);
- `resources`: one collection class per resource kind (its rules, validation and references);
- `validation`: request checks as the provider makes them (whitelisted properties, field rules); what still
  differs from the provider: providers/voice/vapi/FIDELITY.md;
- `evals`: evals and eval runs (collections, the runs' queued → running → ended life, and a simulator-only limit
  on runs in flight: VOICE_SIM_EVAL_RUN_LIMIT, default 10, beyond it a 429 with Retry-After);
- `eval_validation`: the eval API's request checks (each turn of a mock conversation, judge plans);
- `mock_conversation`: a run's mock conversation played (simulator-only: tool calls are never executed);
- `standin`: the stand-in assistant's documented rules (firstMessage, `When the caller says "X", answer "Y".`);
- `dialogue`: a call whose caller says scripted lines (the control plane's `caller`), answered by the stand-in,
  its function tools asked at their servers (`tool_calls`: the tool-calls message and artifact entries);
- `judges`: exact, regex and ai judge plans (ai: an OpenAI-compatible judge at EVAL_JUDGE_URL, or a
  deterministic `must mention "X"` / `must not mention "Y"` rubric reader);
- `state`: the store (JSON in the data folder, written atomically after every change);
- `playback`: calls played through their statuses to their end-of-call report.

Test control plane (not part of the provider's API; under `/_simulator`, no authentication):

- `POST /_simulator/faults` `{"method": "POST"|"GET"|"PATCH"|"DELETE"|"*", "path": "/assistant",
  "status": 503, "times": 1, "delay_seconds": 0, "hold": "request"}` → 201 `{"fault": {...}}`: the next `times`
  requests (null: every request until cleared) whose method matches and whose path starts with `path` sleep
  `delay_seconds`, then fail with `status` and the provider's error body (`status` 0: only the delay, then the
  request is served normally — for time-outs; with `hold` "answer" the request is served at once and its answer
  held back: the call is placed though the client gave up waiting).
  Faults are matched in the order they were added. Defaults: method "*", path "/", status 500, times 1.
- `GET /_simulator/faults` → the faults still pending; `DELETE /_simulator/faults` → `{"cleared": n}`.
- `GET /_simulator/requests?path=/assistant[&method=GET]` → the last 500 provider requests whose path starts
  with `path`, oldest first: `[{"method", "path", "status"}]` (status is null while a request is in progress).
  An injected 429 carries `Retry-After: 1`; `{"method": "POST", "path": "/eval/run", "status": 429}` refuses the
  next eval run starts (mind that a fault on path `/eval` also hits `/eval/run`).
- `GET /_simulator/health` → `{"status": "ok"}`.
- `POST /_simulator/playback` `{"outcome": "answered"|"no-answer"|"busy"|"voicemail"|"failed", "duplicate": false,
  "reorder": false, "silent": false, "timestamp_ms": false, "legacy_recording": false, "times": 1}` → 201: the
  next `times` calls play that outcome (instead of the number's), with every message sent twice (`duplicate`),
  the end-of-call report before the last status update (`reorder`) or no message at all (`silent`: the call still
  plays and `GET /call/{id}` shows it), the HMAC `x-timestamp` in milliseconds rather than seconds
  (`timestamp_ms`: the provider does not document its unit), or the recording named only by the deprecated
  `artifact.recordingUrl` (`legacy_recording`: older reports' shape; by default `artifact.recording.mono`);
  `DELETE /_simulator/playback` forgets the scripts not used yet.
- `POST /_simulator/inbound` `{"to": "<one of the org's numbers>", "from": "+14155550123", "outcome": "answered"}`
  → 201 with the call: rings the number from that caller. A number without an assistant sends an
  `assistant-request` to its server (signed, 7.5 s to answer) and the assistant named in the answer takes the
  call (an error answer ends it unanswered, `assistant-request-returned-error` with the error in
  `endedMessage`); the call then plays like an outbound one (`outcome` default answered).
- `"caller": ["line", ...]` (1 to 50 non-empty lines of at most 1000 characters; on `/_simulator/inbound`, and on
  `/_simulator/playback` for the next outbound calls): what the caller says on an answered call, in order, instead
  of the simulator's own lines. The stand-in assistant (`standin`) answers each by its prompt rules; a rule's call of
  a function tool is a signed `tool-calls` message to the tool's server (else the assistant's, else the number's),
  its result said when the rule has no answer; endCall and transferCall end the call (see `dialogue`,
  `tool_calls`). A bad `caller` is a 400 saying why.
"""
