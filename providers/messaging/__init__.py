"""The messaging (SMS) provider boundary, modelled on Twilio's Programmable Messaging REST API (2010-04-01):
`adapter` (protocol and error), `client` (the real HTTP client), `signatures` (X-Twilio-Signature and TwiML,
through the `twilio` package) and `simulator` (a local server speaking that API, with documented test numbers:
a To number ending 0001 is refused at send, 0003 undelivered, 0005 failed, 0006 undelivered as a landline)."""
