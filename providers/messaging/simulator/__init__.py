"""A local SMS provider: a real HTTP server speaking the part of Twilio's Programmable Messaging REST API
(2010-04-01) the platform uses, so the real `TwilioClient`, signature checks and TwiML replies run in every test.

`python -m providers.messaging.simulator --port N --account-sid AC... --auth-token T [--inbound-url URL]`
(env SMS_SIM_PORT, default 8791; SMS_ACCOUNT_SID and SMS_AUTH_TOKEN, both required; SMS_INBOUND_URL;
SMS_SIM_TIME_SCALE multiplies every delay: 1 plays a message in about 3 s, the tests use 0.05).
State is in memory. Modules:

- `app`: `build_app(account_sid, auth_token, inbound_url=, time_scale=)`: auth, routes, Twilio's error shape;
- `messages`: the Message resource, Twilio's checks on a send, the store and its list pages;
- `delivery`: a sent message played through its statuses, with signed status callbacks;
- `inbound`: texts from a phone, POSTed to the inbound URL, and their TwiML replies;
- `webhooks`: signed form POSTs to the customer's server; `errors`: Twilio's error body and codes;
- `control`: the test control plane below.

The API (HTTP Basic auth with the Account SID and auth token, else 401 code 20003; form-encoded bodies; JSON;
errors `{"code", "message", "more_info", "status"}`; another Account SID in the path or an unknown route: 404
code 20404):

- `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` (To, From, Body, StatusCallback) → 201 Message, status
  `queued`. Refused with 400: To missing 21604, From missing 21603, Body missing 21602, Body over 1600
  characters 21617, To not E.164 21211, From not E.164 21212, StatusCallback not an http(s) URL 21609.
- `GET .../Messages/{Sid}.json` → the Message; `GET .../Messages.json?To=&From=&PageSize=&Page=` → Twilio's
  list envelope (`messages`, `page`, `page_size`, `start`, `end`, `uri`, `first_page_uri`, `next_page_uri`,
  `previous_page_uri`), newest first.
- `GET /2010-04-01/Accounts/{AccountSid}.json` → the Account resource (status `active`).

Test numbers, by the To number's last four digits:

- `0001`: the API refuses the send: 400, code 21211 (no message is created);
- `0003`: queued → sent → undelivered, ErrorCode 30003 (unreachable destination handset);
- `0005`: queued → failed, ErrorCode 30005 (unknown destination handset; never sent);
- `0006`: queued → sent → undelivered, ErrorCode 30006 (landline or unreachable carrier);
- anything else: queued → sent → delivered.

Each status after `queued` is POSTed to the StatusCallback (if given) as Twilio does, signed with
X-Twilio-Signature (see `delivery`), and repeated up to 3 times on connection errors and 5xx.

Test control plane (not Twilio's; under `/_simulator`, no authentication; errors in the same shape, code null):

- `POST /_simulator/faults` `{"method": "POST"|"GET"|"*", "path": "/2010-04-01/...", "status": 503, "times": 1,
  "delay_seconds": 0}` → 201: the next `times` API requests whose method matches and whose path starts with
  `path` sleep `delay_seconds`, then fail with `status` in Twilio's error shape (`status` 0: the request is
  served and its answer held back `delay_seconds`: a client time-out after the work was done).
  `GET /_simulator/faults` lists the pending ones; `DELETE /_simulator/faults` → `{"cleared": n}`.
- `GET /_simulator/log?path=/2010-04-01/...&method=POST` → the last 500 API requests, oldest first:
  `[{"method", "path", "status"}]` (status null while in progress).
- `POST /_simulator/callbacks` `{"reorder": false, "duplicate": false, "bad_signature": false, "times": 1}` → 201:
  the next `times` sends report their statuses with the final one before `sent` (`reorder`), every callback
  twice with the same I-Twilio-Idempotency-Token (`duplicate`), or signed with a wrong token
  (`bad_signature`). `DELETE /_simulator/callbacks` forgets the scripts not used yet.
- `POST /_simulator/inbound` `{"from": "+14155550123", "to": "<the business number>", "body": "Hi", "url"?}` →
  201 `{"sid", "status", "replies"}`: POSTs Twilio's inbound-message webhook (signed) to `url` or else the
  inbound URL, waits for the answer (15 s), and sends each TwiML `<Message>` in it back to the texter (recorded
  as an `outbound-reply` message, status `delivered`); `status` is the HTTP status our server answered,
  `replies` the reply texts. 400 when a field is bad or there is no URL; 502 when the URL cannot be reached.
- `GET /_simulator/health` → `{"status": "ok"}`.
"""
