"""A local payments provider: a real HTTP server speaking the part of Stripe's v1 API the platform uses (Checkout
Sessions in subscription mode, Subscriptions, Invoices, Prices and Products, Events, the Balance), with a hosted
checkout page and signed webhooks, so the real `StripePayments` (the official `stripe` package) and `parse_event`
run in every test.

`python -m providers.payments.simulator --port N --api-key sk_test_... [--webhook-url URL --webhook-secret
whsec_...] [--public-url URL]` (env PAYMENTS_SIM_PORT, default 8793; PAYMENTS_API_KEY, required;
PAYMENTS_WEBHOOK_URL; PAYMENTS_WEBHOOK_SECRET, required with a webhook URL; PAYMENTS_SIM_PUBLIC_URL, default
http://127.0.0.1:<port>; PAYMENTS_SIM_TIME_SCALE multiplies every delay: 1 is real time, 0.001 turns a webhook
retry's minute into 60 ms, an invoice's hour as a draft into 3.6 s and a 7-day trial into 10 minutes, 0 leaves
billing to the control plane; the account's prices, retry settings and event delivery: see `__main__`).
State is in memory. Modules:

- `app`: `build_app(api_key, webhook_url=, webhook_secret=, public_url=, time_scale=, prices=, dunning=,
  delivery=)`: authentication, idempotency keys, Stripe's error shape, routes;
- `api`: the v1 routes and the hosted pages'; `forms`: Stripe's bracket-notation parameters;
- `objects`: the object shapes (the pinned package's API version), the catalogue and the store; `cards`: the test
  cards; `page`: the pages' HTML;
- `billing`: checkout completion, trial end, renewals (drafted, then finalized and charged an hour later),
  dunning as the account's settings say, cancellation, and their events;
- `events`: Event objects and their signed, retried webhook delivery; `errors`: Stripe's error body;
- `control`: the test control plane below.

The API (`Authorization: Bearer <key>`, or the key as Basic-auth user, else 401 `invalid_request_error` "Invalid
API Key provided: sk_test_****abcd"; form-encoded bodies; JSON; errors `{"error": {"type", "code",
"decline_code", "message", "param", "doc_url"}}`; an unknown route: 404 "Unrecognized request URL"; `Request-Id`
and `Stripe-Version` on every answer; a POST with an `Idempotency-Key` keeps the answer of a request that began
executing, errors included, for 24 hours and answers it again (`Idempotent-Replayed: true`), 409
`idempotency_key_in_use` while the first is still running, 400 `idempotency_error` when the endpoint or the
parameters differ; a request refused for its parameters leaves the key unused): see `api` and `app`. A price is
one of the account's (the stack's CHECKOUT_PRICES, or `POST /v1/prices`), else 400 `resource_missing`. Objects
follow the API version of the pinned `stripe` package: a Checkout Session is `ui_mode: hosted_page` with the
account's payment method configuration (`allowed_payment_method_types` only when sent), a subscription's billing
period is on its items (`items.data[].current_period_start/end`), an invoice's subscription is
`parent.subscription_details.subscription`.

The checkout page `GET /c/pay/{session id}` shows the product, the price id, the customer's email and "N-day free
trial", and a form prefilled with 4242 4242 4242 4242, 12 / 34, 123 (button `#submit`). Posting it (cardNumber,
cardExpiry, cardCvc) with one of Stripe's test cards completes the session and 303-redirects to the success URL;
any other number is declined as Stripe's test mode declines a real card; Stripe's decline cards answer 402 with
their codes; 3-D Secure cards get the bank's challenge first (see `cards`). Events and the billing clock: see
`billing` and `events`.

Test control plane (not Stripe's; under `/_simulator`, no authentication; errors in Stripe's shape):

- `POST /_simulator/faults` `{"method": "POST"|"GET"|"DELETE"|"*", "path": "/v1/...", "status": 503, "times": 1,
  "delay_seconds": 0, "code": null}` → 201: the next `times` requests (null: every request until cleared) whose
  method matches and whose path starts with `path` sleep `delay_seconds`, then fail with `status` in Stripe's
  error shape (5xx `api_error`; 429 `rate_limit`, or `lock_timeout` with `"code": "lock_timeout"`; 409
  `idempotency_key_in_use`; see `errors`); `status` 0: the request is served and its answer held back
  `delay_seconds`. `GET /_simulator/faults` lists them; `DELETE /_simulator/faults` → `{"cleared": n}`.
- `GET /_simulator/log?path=/v1/...&method=POST` → the last 500 requests, oldest first: `[{"method", "path",
  "status"}]` (status null while in progress).
- `GET /_simulator/settings` → `{"retries": {"mode": "smart", "attempts": 8, "window_days": 14} | {"mode":
  "custom", "days": [3, 5, 7]}, "final_action": "cancel"|"unpaid"|"past_due", "delivery": "ordered"|"shuffled"}`;
  `POST /_simulator/settings` with any of them changes them (a payment failing from then on follows them), as the
  Dashboard's Revenue recovery settings do.
- `GET /_simulator/events?type=invoice.paid` → every event, oldest first: `[{"id", "type", "created",
  "object_id", "status": "pending"|"succeeded"|"retrying"|"failed"|"not_sent", "attempts": [{"at", "status",
  "error", "manual"}], "next_attempt_in", "event"}]`.
- `POST /_simulator/events/hold` → first deliveries are held back from now on; `POST /_simulator/events/release`
  `{"order": "created"|"reversed"|"shuffled"}` → `{"released": [ids]}`: the held events go out one after another
  in that order (a real out-of-order delivery).
- `POST /_simulator/events/{id}/resend` → one more delivery attempt now (a duplicate, if it was delivered),
  recorded with `manual: true`; the event's view.
- `POST /_simulator/subscriptions/{id}/advance` → plays the subscription's next billing moment now (trial end or
  renewal: the period moves and its invoice is drafted; payment: the draft is finalized and charged; a payment
  retry): `{"moment", "events": [ids], "subscription"}`; 409 once it is canceled.
- `POST /_simulator/subscriptions/{id}/fail_payments` `{"fail": true|false}` → its card is declined (or works)
  from the next charge on.
- `POST /_simulator/subscriptions/{id}/trial_will_end` → sends `customer.subscription.trial_will_end` now (a
  trialing subscription; 409 otherwise); the scaled clock sends it three days before the trial ends.
- `POST /_simulator/reset` → forgets every object, event, held delivery, fault, idempotency key, logged request
  and price made through the API; the settings go back to the start's.
- `GET /_simulator/health` → `{"status": "ok"}`.
"""
