"""Where the messaging provider reaches us: the status-callback and inbound-text webhook paths (under the
public base URL), shared by the messaging service, the gateway and the local launcher; and the PROVIDER stream
subject (core.bus) the gateway stores verified status callbacks under for the messaging service to apply."""
STATUS_PATH = "/api/v1/providers/sms/status"
INBOUND_PATH = "/api/v1/providers/sms/inbound"
STATUS_SUBJECT = "provider.sms.status"


def status_identity(params: dict[str, str]) -> str | None:
    """What makes a status callback the same one again (the provider repeats it when unsure we got it): its
    message and the status it reports; None when it names neither."""
    sid, status = params.get("MessageSid", ""), params.get("MessageStatus", "")
    return f"{sid}:{status}" if sid and status else None


# The statuses of a Message the provider's callbacks and answers bring, which the messaging service takes as its own
# (services/messaging/domain.py adds `pending` and `unknown`, which are ours): compared with Twilio's by
# providers/fidelity.
STATUSES = ("accepted", "queued", "sending", "sent", "delivered", "undelivered", "failed", "received")
