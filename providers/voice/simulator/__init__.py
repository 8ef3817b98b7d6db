"""A local voice-AI provider: a real HTTP server speaking the provider's (Vapi's) REST API for
assistants, phone numbers, calls, evals and eval runs, keeping its state in a data folder.

`make run` and the test harness start it (`python -m providers.voice.simulator --port N --data-dir DIR
--api-key KEY`) and point the real client at it. Modules:

- `app`: `build_app(state_dir, api_key)`: auth, JSON bodies, the provider's error shape, routes;
- `resources`: one collection class per resource kind (its rules, validation and references);
- `validation`: request checks as the provider makes them (whitelisted properties, field rules);
- `state`: the store (JSON in the data folder, written atomically after every change);
- `control`: the test control plane below.

Test control plane (not part of the provider's API; under `/_simulator`, no authentication):

- `POST /_simulator/faults` `{"method": "POST"|"GET"|"PATCH"|"DELETE"|"*", "path": "/assistant",
  "status": 503, "times": 1, "delay_seconds": 0}` → 201 `{"fault": {...}}`: the next `times` requests whose
  method matches and whose path starts with `path` sleep `delay_seconds`, then fail with `status` and the
  provider's error body (`status` 0: only the delay, then the request is served normally — for time-outs).
  Faults are matched in the order they were added. Defaults: method "*", path "/", status 500, times 1.
- `GET /_simulator/faults` → the faults still pending; `DELETE /_simulator/faults` → `{"cleared": n}`.
- `GET /_simulator/requests?path=/assistant[&method=GET]` → the last 500 provider requests whose path starts
  with `path`, oldest first: `[{"method", "path", "status"}]` (status is null while a request is in progress).
- `GET /_simulator/health` → `{"status": "ok"}`.

Later work plays calls and runs evals: see `resources.Calls` and `resources.EvalRuns`.
"""
