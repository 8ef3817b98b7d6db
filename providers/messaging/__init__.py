"""The messaging (SMS) provider boundary, modelled on Twilio's Programmable Messaging REST API (2010-04-01):
`adapter` (protocol and error, and the Twilio codes the platform reads), `client` (the real HTTP client),
`signatures` (X-Twilio-Signature and TwiML, through the `twilio` package) and `simulator` (a local server speaking
that API: Twilio's default opt-out handling, its test credentials' magic numbers, and a simulator-only switch for
delivery failures)."""
