"""A local e-mail catch-all: a real SMTP server (`aiosmtpd`) that accepts every message for every recipient and
keeps each as an `.eml` file, so the real `SmtpSender` runs in development and in every test, and what it sent
can be opened in a mail client or read back over HTTP.

`python -m providers.email.catchall --smtp-port N --http-port M --dir DIR` (env SMTP_CATCHALL_PORT, default
8825; SMTP_CATCHALL_HTTP_PORT, default 8826; SMTP_CATCHALL_DIR, default `$SWITCHBOARD_HOME/mail`). Both listen
on 127.0.0.1 only. The folder is the only state: a restart lists what is in it. Modules:

- `mailbox`: the folder (`<n>-<UTC timestamp>.eml`, the envelope in prepended trace headers) and its summaries;
- `receiver`: the aiosmtpd handler and server, on the app's event loop;
- `app`: the HTTP API below, running the SMTP server for its lifetime.

The HTTP API (JSON; unknown paths 404 `{"error": ...}`):

- `GET /messages[?to=part]` → `{"messages": [{"id", "from", "to", "reply_to", "subject", "body", "message_id",
  "received_at"}]}`, oldest first. `from` is the From header (the envelope sender when there is none), `to` the
  envelope recipients (Bcc included), `reply_to` the Reply-To header (null when absent), `body` the text/plain part decoded, with `\n` line ends (`""` when there
  is none), `message_id` the Message-ID header (null when absent), `received_at` ISO 8601 UTC. `to=` keeps the
  messages with a recipient containing that text, in any case.
- `GET /messages/{id}` → the stored file as `message/rfc822` (404 when there is no such message).
- `DELETE /messages` → `{"deleted": n}`: every stored message removed.
- `GET /health` → `{"status": "ok"}`.
"""
