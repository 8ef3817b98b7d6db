"""A local voice-AI provider: a real HTTP server speaking the provider's REST API (assistants,
phone numbers, calls, evals and eval runs), keeping its state in a data folder.

`make run` and the test harness start it (`python -m providers.voice.simulator`) and point the
real client at it. Besides the provider's API it has a small test control plane, outside the
provider's paths and without authentication:

- `POST /_simulator/faults` `{"method": "POST"|"*", "path": "/assistant", "status": 503, "times": 1,
  "delay_seconds": 0}`: the next `times` requests whose method matches and whose path starts with
  `path` sleep `delay_seconds`, then fail with `status` (status 0: only the delay);
- `DELETE /_simulator/faults`: no more faults;
- `GET /_simulator/requests?path=/assistant`: the last 500 requests (method, path, status);
- `GET /_simulator/health`: `{"status": "ok"}`.

Later issues make it play calls and run evals; resources live in `state.Store` collections.
"""
