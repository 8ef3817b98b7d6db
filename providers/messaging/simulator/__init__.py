"""A local SMS provider: a real HTTP server speaking the part of Twilio's Programmable Messaging REST API
(2010-04-01) the platform uses, so the real `TwilioClient`, signature checks and TwiML replies run in every test.

`python -m providers.messaging.simulator --port N --account-sid AC... --auth-token T [--inbound-url URL]
[--opt-out default|advanced|off] [--test-account-sid AC... --test-auth-token T]` (env SMS_SIM_PORT, default 8791;
SMS_ACCOUNT_SID and SMS_AUTH_TOKEN, both required; SMS_INBOUND_URL; SMS_SIM_OPT_OUT; SMS_SIM_TEST_ACCOUNT_SID and
SMS_SIM_TEST_AUTH_TOKEN; SMS_SIM_TIME_SCALE multiplies every delay: 1 plays a message in about 3 s, the tests use
0.05). State is in memory. Modules:

- `app`: `build_app(account_sid, auth_token, inbound_url=, time_scale=, opt_out=, test_account_sid=,
  test_auth_token=)`: auth, routes, Twilio's error shape;
- `messages`: the Message resource, Twilio's checks on a send, the store and its list pages;
- `delivery`: a sent message played through its statuses, with signed status callbacks;
- `inbound`: texts from a phone, POSTed to the inbound URL, and their TwiML replies;
- `numbers`: numbers for sale (AvailablePhoneNumbers) and the account's own (IncomingPhoneNumbers);
- `optout`: Twilio's opt-out keyword handling (STOP blocks the texter for the number, 21610 on later sends);
- `magic`: Twilio's test credentials and magic numbers;
- `webhooks`: signed form POSTs to the customer's server; `errors`: Twilio's error body and codes;
- `control`: the test control plane below.

The API (HTTP Basic auth with the Account SID and auth token, else 401 code 20003; form-encoded bodies; JSON;
errors `{"code", "message", "more_info", "status"}`; another Account SID in the path or an unknown route: 404
code 20404):

- `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` (To, From, Body, StatusCallback) → 201 Message, status
  `queued`. Refused with 400: To missing 21604, From missing 21603, Body missing 21602, Body over 1600
  characters 21617, To not E.164 21211, From not E.164 21212, StatusCallback not an http(s) URL 21609, the
  recipient replied STOP to the From number 21610 (Twilio's opt-out handling, `optout`).
- `GET .../Messages/{Sid}.json` → the Message; `GET .../Messages.json?To=&From=&PageSize=&Page=` → Twilio's
  list envelope (`messages`, `page`, `page_size`, `start`, `end`, `uri`, `first_page_uri`, `next_page_uri`,
  `previous_page_uri`), newest first.
- `POST .../Messages/{Sid}.json` (Body "") → 200 the Message, its `body` "" from now on (Twilio's redaction of a
  message's text); no Body or Status, both, or a Body that is not empty: 400 code 30400; Status alone (a scheduled
  message's cancelation, not modelled): 400; an unknown message 404.
- `GET .../Messages/{Sid}/Media.json` → the list envelope (`media_list`) of the message's Media resources (`ME`
  sids: `parent_sid`, `content_type`, ...); `GET`/`DELETE .../Messages/{Sid}/Media/{Sid}.json` → the Media / 204
  (gone for good; 404 when the message has none such).
- `GET /2010-04-01/Accounts/{AccountSid}.json` → the Account resource (status `active`).
- `GET .../AvailablePhoneNumbers/{CountryCode}/Local.json?AreaCode=&PageSize=` → `{"available_phone_numbers",
  "uri"}`: local numbers for sale (`numbers`), each taking calls, texts and MMS (SmsEnabled, VoiceEnabled and
  MmsEnabled filter nothing out); a country libphonenumber does not know: 404 code 20404.
- `POST .../IncomingPhoneNumbers.json` (PhoneNumber, or AreaCode: the first for sale there; and any of Twilio's
  settings: SmsUrl, SmsMethod, VoiceUrl, FriendlyName, ...) → 201 IncomingPhoneNumber (`PN` sid, status `in-use`),
  the settings kept as its fields. A number not for sale (bought already, or never offered) 400 code 21422; one
  that is not E.164 21421; neither PhoneNumber nor AreaCode 400 (code null: Twilio's code for it not confirmed).
- `GET .../IncomingPhoneNumbers.json?PhoneNumber=&FriendlyName=&PageSize=&Page=` → the list envelope
  (`incoming_phone_numbers`), oldest first, PhoneNumber matching part of a number (`*`: any digits);
  `GET .../IncomingPhoneNumbers/{Sid}.json` → the resource; `DELETE` → 204 (released: for sale again), 404 when
  the account does not hold it.

With the test credentials (when given; the path's AccountSid is the test Account SID) a send checks Twilio's
magic numbers and nothing else happens (`magic`): From `+15005550006` passes, `+15005550001` 21212,
`+15005550007` 21606, `+15005550008` 21611, any other From 21606; To `+15005550001` 21211, `+15005550002`
21612, `+15005550003` 21408, `+15005550004` 21610, `+15005550009` 21614. The answer is a `queued` Message that
no GET finds and no status callback follows; every other route answers 403, code 20008.

With the live credentials every text is `sent` then `delivered` (no number is special), unless the simulator-only
delivery outcomes below say otherwise. Each status after `queued` is POSTed to the StatusCallback (if given) as
Twilio does, signed with X-Twilio-Signature (see `delivery`), and made once more, at once, only when the
connection failed (Twilio's default connection settings; an answer, 5xx included, is final).

Test control plane (not Twilio's; under `/_simulator`, no authentication; errors in the same shape, code null):

- `POST /_simulator/faults` `{"method": "POST"|"GET"|"*", "path": "/2010-04-01/...", "status": 503, "times": 1,
  "delay_seconds": 0}` → 201: the next `times` API requests (null: every request until cleared) whose method
  matches and whose path starts with `path` sleep `delay_seconds`, then fail with `status` in Twilio's error shape
  (`status` 0: the request is served and its answer held back `delay_seconds`: a client time-out after the work
  was done).
  `GET /_simulator/faults` lists the pending ones; `DELETE /_simulator/faults` → `{"cleared": n}`.
- `GET /_simulator/log?path=/2010-04-01/...&method=POST` → the last 500 API requests, oldest first:
  `[{"method", "path", "status"}]` (status null while in progress).
- `POST /_simulator/callbacks` `{"reorder": false, "duplicate": false, "bad_signature": false, "times": 1}` → 201:
  the next `times` sends report their statuses with the final one before `sent` (`reorder`), every callback
  twice with the same I-Twilio-Idempotency-Token (`duplicate`), or signed with a wrong token
  (`bad_signature`). `DELETE /_simulator/callbacks` forgets the scripts not used yet.
- `POST /_simulator/delivery-outcomes` `{"to": "+14155550106", "error_code": 30006}` → 201 (simulator-only: Twilio
  has no such switch): every text to `to` from now on ends with that carrier error: 30003-30008 `undelivered`
  after `sent`, 30001 and 30002 `failed` (never sent). `GET` lists them; `DELETE` → `{"cleared": n}`.
- `POST /_simulator/opt-out` `{"handling": "default"|"advanced"|"off", "number"?: "+1..."}` → 201: how one of our
  numbers (or, without `number`, every number without its own) handles opt-out keywords (`optout`); `GET` →
  `{"handling", "numbers", "blocked": [{"from", "to"}]}`; `DELETE` forgets the numbers' own (blocks stay).
- `POST /_simulator/inbound` `{"from": "+14155550123", "to": "<the business number>", "body": "Hi", "url"?,
  "media"?: ["image/jpeg"]}` (`media`: an MMS's media, by content type) →
  201 `{"sid", "status", "auto_reply", "replies", "refused"}`: Twilio's opt-out handling takes the text first
  (`auto_reply`: Twilio's own answer to a keyword, or null), then POSTs Twilio's inbound-message webhook (signed)
  to `url`, else the SmsUrl `to` was bought with (IncomingPhoneNumbers), else the inbound URL, waits for the answer (15 s), and sends each TwiML `<Message>` in it back to the
  texter (recorded as an `outbound-reply` message: `delivered`, or `failed` with 21610 while the texter is
  blocked for the number); `status` is the HTTP status our server answered, `replies` the reply texts delivered,
  `refused` those Twilio refused. 400 when a field is bad or there is no URL; 502 when the URL cannot be reached.
- `POST /_simulator/available-numbers` `{"country": "US", "area_code"?: "907", "count": 0}` → 201 (simulator-only):
  how many numbers an area code (or, without one, a whole country's search) offers for sale, 20 unless set;
  0 sells out. `GET` lists them; `DELETE` → `{"cleared": n}`.
- `GET /_simulator/health` → `{"status": "ok"}`.
"""
