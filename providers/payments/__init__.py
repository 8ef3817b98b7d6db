"""The payments provider boundary, modelled on Stripe's public API (v1 REST, form-encoded, JSON answers):
`adapter` (the protocol, `PaymentsError`, `Checkout` and readers for Stripe's current object shapes), `client`
(`StripePayments`, over the official `stripe` package), `webhooks` (Stripe-Signature: `parse_event` and
`sign_payload`) and `simulator` (a local server speaking that API, with a hosted checkout page, Stripe's test
cards, subscriptions that renew or fall into dunning as time passes, and signed webhook events)."""
