"""A local payments provider: a real HTTP server speaking the part of Stripe's v1 API the platform uses (Checkout
Sessions in subscription mode, Subscriptions, Invoices, Events, the Balance), with a hosted checkout page and
signed webhooks, so the real `StripePayments` (the official `stripe` package) and `parse_event` run in every test.

`python -m providers.payments.simulator --port N --api-key sk_test_... [--webhook-url URL --webhook-secret
whsec_...] [--public-url URL]` (env PAYMENTS_SIM_PORT, default 8793; PAYMENTS_API_KEY, required;
PAYMENTS_WEBHOOK_URL; PAYMENTS_WEBHOOK_SECRET, required with a webhook URL; PAYMENTS_SIM_PUBLIC_URL, default
http://127.0.0.1:<port>; PAYMENTS_SIM_TIME_SCALE multiplies every delay: 1 is real time, 0.001 turns a webhook
retry's minute into 60 ms and a 7-day trial into 10 minutes, 0 leaves billing to the control plane).
State is in memory. Modules:

- `app`: `build_app(api_key, webhook_url=, webhook_secret=, public_url=, time_scale=)`: authentication,
  idempotency keys, Stripe's error shape, routes;
- `api`: the v1 routes and the checkout page's; `forms`: Stripe's bracket-notation parameters;
- `objects`: the object shapes and the store; `cards`: the test cards; `page`: the checkout page's HTML;
- `billing`: checkout completion, trial end, renewals, dunning, cancellation, and their events;
- `events`: Event objects and their signed, retried webhook delivery; `errors`: Stripe's error body;
- `control`: the test control plane below.

The API (`Authorization: Bearer <key>`, or the key as Basic-auth user, else 401 `invalid_request_error` "Invalid
API Key provided: sk_test_****abcd"; form-encoded bodies; JSON; errors `{"error": {"type", "code", "message",
"param", "doc_url"}}`; an unknown route: 404 "Unrecognized request URL"; `Request-Id` and `Stripe-Version` on every
answer; a POST with an `Idempotency-Key` already used answers the first result again (`Idempotent-Replayed:
true`), or 400 `idempotency_error` when the parameters differ): see `api`. Any `price_...` id is a price of
49.00 USD a month. Objects follow the API version of the pinned `stripe` package: a subscription's billing
period is on its items (`items.data[].current_period_start/end`), an invoice's subscription is
`parent.subscription_details.subscription`.

The checkout page `GET /c/pay/{session id}` shows the customer's email, the price id and "N-day free trial", and
a form prefilled with 4242 4242 4242 4242, 12 / 34, 123 (button `#submit`). Posting it (cardNumber, cardExpiry,
cardCvc): 4242... completes the session and 303-redirects to the success URL; 4000 0000 0000 0002 and
...9995 answer 402 "Your card was declined."; ...0341 completes, but every later charge fails; a number that is
not 16 Luhn-valid digits answers 400 "Your card number is invalid." (see `cards`). Events and the billing clock:
see `billing` and `events`.

Test control plane (not Stripe's; under `/_simulator`, no authentication; errors in Stripe's shape):

- `POST /_simulator/faults` `{"method": "POST"|"GET"|"DELETE"|"*", "path": "/v1/...", "status": 503, "times": 1,
  "delay_seconds": 0}` → 201: the next `times` requests (null: every request until cleared) whose method matches
  and whose path starts with `path` sleep `delay_seconds`, then fail with `status` in Stripe's error shape
  (`api_error` for 5xx; 429 `rate_limit`); `status` 0: the request is served and its answer held back
  `delay_seconds`. `GET /_simulator/faults` lists them; `DELETE /_simulator/faults` → `{"cleared": n}`.
- `GET /_simulator/log?path=/v1/...&method=POST` → the last 500 requests, oldest first: `[{"method", "path",
  "status"}]` (status null while in progress).
- `GET /_simulator/events?type=invoice.paid` → every event, oldest first: `[{"id", "type", "created",
  "object_id", "status": "pending"|"succeeded"|"retrying"|"failed"|"not_sent", "attempts": [{"at", "status",
  "error", "manual"}], "next_attempt_in", "event"}]`.
- `POST /_simulator/events/{id}/resend` → one more delivery attempt now (a duplicate, if it was delivered),
  recorded with `manual: true`; the event's view.
- `POST /_simulator/subscriptions/{id}/advance` → plays the subscription's next billing moment now (trial end,
  renewal or payment retry): `{"moment", "events": [ids], "subscription"}`; 409 once it is canceled.
- `POST /_simulator/subscriptions/{id}/fail_payments` `{"fail": true|false}` → its card fails (or works) from the
  next charge on.
- `POST /_simulator/subscriptions/{id}/trial_will_end` → sends `customer.subscription.trial_will_end` now (a
  trialing subscription; 409 otherwise); the scaled clock sends it three days before the trial ends.
- `POST /_simulator/reset` → forgets every object, event, fault, idempotency key and logged request.
- `GET /_simulator/health` → `{"status": "ok"}`.
"""
