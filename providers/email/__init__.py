"""The e-mail provider boundary: any SMTP relay (a transactional provider's SMTP endpoint, a company relay, or the
local catch-all), spoken to with plain SMTP so no provider's HTTP API is baked in.

- `adapter`: the `EmailSender` protocol and `EmailError` (safe message, `permanent` when retrying cannot help);
- `smtp`: `SmtpSender`, the real sender over `aiosmtplib` (one connection per message, STARTTLS and login only
  when configured);
- `catchall`: `python -m providers.email.catchall`, a local SMTP server (`aiosmtpd`) that accepts every message,
  keeps each as an `.eml` file and serves them over HTTP to developers and the tests.
"""
