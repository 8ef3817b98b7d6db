"""The messaging schema: every table of the service with its indexes, defined once. A new database is created
from this metadata (core.migrations.run_env); the migrations after the baseline carry existing ones. The
queries are in store.py."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from core.columns import Ts, Uuid
from core.ddl import created_with
from core.inbox import inbox_table
from core.leases import lease_columns
from core.outbox import outbox_table
from services.messaging import domain

SCHEMA = "messaging"
metadata = sa.MetaData(schema=SCHEMA)

# One thread per business number and contact number.
conversations = sa.Table(
    "conversations", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("business_number", sa.Text, nullable=False),
    sa.Column("contact_number", sa.Text, nullable=False),
    sa.Column("agent_id", Uuid),
    sa.Column("lead_id", Uuid),
    sa.Column("inbound_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("outbound_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("unread_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_message_at", Ts, nullable=False),
    sa.Column("last_message_id", Uuid),
    sa.Column("created_at", Ts, nullable=False),
    sa.UniqueConstraint("business_id", "business_number", "contact_number", name="conversations_one_per_pair"),
)
sa.Index("conversations_business_latest", conversations.c.business_id, conversations.c.last_message_at.desc(),
         conversations.c.id.desc())

messages = sa.Table(
    "messages", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("conversation_id", Uuid, sa.ForeignKey(conversations.c.id), nullable=False),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("direction", sa.Text, nullable=False),  # inbound, outbound
    sa.Column("from_number", sa.Text, nullable=False),
    sa.Column("to_number", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),  # domain.STATUSES
    sa.Column("provider_sid", sa.Text, unique=True),
    sa.Column("error_code", sa.Text),
    sa.Column("error_message", sa.Text),
    sa.Column("agent_id", Uuid),
    sa.Column("lead_id", Uuid),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    sa.Column("idempotency_key", sa.Text),  # the sender's: one outbound message per business and key
    sa.Column("external_ref", sa.Text),  # a communication run's reference and the touch the text is for
    sa.Column("touch_id", sa.Text),
    # A text the provider took and no callback has settled: when the provider is to be asked next, and how many
    # times it was asked (services.messaging.reconciliation).
    sa.Column("status_check_due", Ts),
    sa.Column("status_checks", sa.Integer, nullable=False, server_default="0"),
    # When its body was redacted here and at the provider (services.messaging.data_retention); a text without a
    # body (a photo alone) still has media at the provider until then.
    sa.Column("redacted_at", Ts),
)
sa.Index("messages_conversation_newest", messages.c.conversation_id, messages.c.created_at.desc(),
         messages.c.id.desc())
sa.Index("messages_business_newest", messages.c.business_id, messages.c.created_at.desc(), messages.c.id.desc())
sa.Index("messages_unknown", messages.c.updated_at, postgresql_where=messages.c.status == "unknown")
sa.Index("messages_in_flight", messages.c.updated_at,
         postgresql_where=messages.c.status.in_(domain.IN_FLIGHT))
# The retention a business set (services.messaging.data_retention) finds what it has still to redact, oldest first.
sa.Index("messages_unredacted", messages.c.business_id, messages.c.created_at,
         postgresql_where=messages.c.redacted_at.is_(None))
sa.Index("messages_idempotency_key", messages.c.business_id, messages.c.idempotency_key, unique=True,
         postgresql_where=messages.c.idempotency_key.isnot(None))

# Consent evidence per business and phone: append-only (a trigger refuses updates and deletes, but an erasure's
# redaction: CONSENT_ERASURE below).
consent_events = sa.Table(
    "consent_events", metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("phone", sa.Text, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),  # domain.CONSENT_KINDS
    sa.Column("source", sa.Text, nullable=False),  # api, keyword, inbound_text, inbound_call, call_request, provider
    sa.Column("actor", sa.Text),
    sa.Column("reference", sa.Text),
    sa.Column("note", sa.Text),
    sa.Column("created_at", Ts, nullable=False),
)
sa.Index("consent_events_phone", consent_events.c.business_id, consent_events.c.phone, consent_events.c.id)
# The evidence the retention a business set has still to redact (its number not yet a hash), oldest first.
HASHED_PREFIX = "hmac-sha256:%"
sa.Index("consent_events_unredacted", consent_events.c.business_id, consent_events.c.created_at,
         postgresql_where=consent_events.c.phone.notlike(HASHED_PREFIX))

# A business's do-not-call list; a removal is kept (with its reason), so the list's history stays readable.
dnc_entries = sa.Table(
    "dnc_entries", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("phone", sa.Text, nullable=False),
    sa.Column("reason", sa.Text),
    sa.Column("added_by", sa.Text),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("removed_at", Ts),
    sa.Column("removed_reason", sa.Text),
    sa.Column("removed_by", sa.Text),
)
sa.Index("dnc_entries_listed", dnc_entries.c.business_id, dnc_entries.c.phone, unique=True,
         postgresql_where=dnc_entries.c.removed_at.is_(None))
sa.Index("dnc_entries_business_newest", dnc_entries.c.business_id, dnc_entries.c.created_at.desc(),
         dnc_entries.c.id.desc())

# The email queue (domain.EMAIL_STATUSES); a delivery holds an email's lease while the mail server has it.
emails = sa.Table(
    "emails", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),  # domain.EMAIL_KINDS
    sa.Column("to_address", sa.Text, nullable=False),
    sa.Column("subject", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    # What queued it (an event id, for the owner's notifications): one email per business and reference.
    sa.Column("reference", sa.Text),
    sa.Column("created_by", sa.Text),
    sa.Column("approved_by", sa.Text),
    sa.Column("approved_at", Ts),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("next_attempt_at", Ts),
    sa.Column("last_error", sa.Text),
    sa.Column("message_id", sa.Text),  # the Message-ID it went out with
    sa.Column("recipient", sa.Text),  # an API caller's: domain.OWNER, KNOWN or OTHER
    sa.Column("on_behalf_of", sa.Text),  # the business an API caller's email is from (its From display name)
    sa.Column("reply_to", sa.Text),  # the owner's address, for answers to an API caller's email
    sa.Column("sent_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    *lease_columns(),
    sa.UniqueConstraint("business_id", "reference", name="emails_one_per_reference"),
)
sa.Index("emails_business_newest", emails.c.business_id, emails.c.created_at.desc(), emails.c.id.desc())
sa.Index("emails_due", emails.c.next_attempt_at, postgresql_where=emails.c.status == "approved")
sa.Index("emails_unredacted", emails.c.business_id, emails.c.created_at, postgresql_where=emails.c.body != "")

# The addresses the business's owner approved in person: a key's email to one goes out at once (domain.recipient_of).
approved_recipients = sa.Table(
    "approved_recipients", metadata,
    sa.Column("business_id", Uuid, primary_key=True),
    sa.Column("address", sa.Text, primary_key=True),
    sa.Column("approved_by", sa.Text, nullable=False),
    sa.Column("approved_at", Ts, nullable=False),
)

# Every compliance decision on an outbound touch (core.compliance.decision): append-only (a trigger refuses updates
# and deletes, but an erasure's redaction: DECISION_ERASURE below), so an owner can always see why a person was or was not called or texted.
compliance_decisions = sa.Table(
    "compliance_decisions", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("channel", sa.Text, nullable=False),  # call, sms
    sa.Column("phone", sa.Text, nullable=False),
    sa.Column("lead_id", Uuid),
    sa.Column("outcome", sa.Text, nullable=False),  # allow, defer, refuse
    sa.Column("rule", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("code", sa.Text),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("not_before", Ts),
    sa.Column("actor", sa.Text, nullable=False),  # who asked: compliance.ACTORS
    sa.Column("reference", sa.Text),  # the call, message or touch it was about
    sa.Column("inputs", JSONB, nullable=False),
    sa.Column("decided_at", Ts, nullable=False),
)
sa.Index("compliance_decisions_business_newest", compliance_decisions.c.business_id,
         compliance_decisions.c.decided_at.desc(), compliance_decisions.c.id.desc())
sa.Index("compliance_decisions_phone_newest", compliance_decisions.c.business_id, compliance_decisions.c.phone,
         compliance_decisions.c.decided_at.desc(), compliance_decisions.c.id.desc())
sa.Index("compliance_decisions_lead_newest", compliance_decisions.c.business_id, compliance_decisions.c.lead_id,
         compliance_decisions.c.decided_at.desc(), compliance_decisions.c.id.desc(),
         postgresql_where=compliance_decisions.c.lead_id.isnot(None))
sa.Index("compliance_decisions_unredacted", compliance_decisions.c.business_id, compliance_decisions.c.decided_at,
         postgresql_where=compliance_decisions.c.phone.notlike(HASHED_PREFIX))

# The touch ledger: every call and text placed, whatever path placed it (each with its logged decision), counted by
# channel against the callee's frequency caps; a touch the provider then refused frees its slot (released_at), so
# the count is of touches actually placed.
counted_touches = sa.Table(
    "counted_touches", metadata,
    sa.Column("decision_id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("phone", sa.Text, nullable=False),
    sa.Column("channel", sa.Text, nullable=False),  # core.compliance.rules.CHANNELS
    sa.Column("placed_at", Ts, nullable=False),
    sa.Column("released_at", Ts),
)
# What each business spent on each UTC day (services.messaging.spend): `what` is a channel of the touch ledger
# (calls placed, texts sent), counted in the transaction that counts the touch, or `call_seconds` (the seconds of its
# calls that ended that day, from call.completed). One row per business, day and kind: its row lock serializes the
# business's counting of that kind, so replicas and keys together never pass a limit.
daily_spend = sa.Table(
    "daily_spend", metadata,
    sa.Column("business_id", Uuid, primary_key=True),
    sa.Column("day", sa.Date, primary_key=True),
    sa.Column("what", sa.Text, primary_key=True),
    sa.Column("used", sa.BigInteger, nullable=False),
)
# Each ended call's seconds, once (call.completed may be delivered again).
call_seconds = sa.Table(
    "call_seconds", metadata,
    sa.Column("call_id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("day", sa.Date, nullable=False),
    sa.Column("seconds", sa.Integer, nullable=False),
)
sa.Index("counted_touches_callee", counted_touches.c.business_id, counted_touches.c.phone,
         counted_touches.c.placed_at, postgresql_where=counted_touches.c.released_at.is_(None))

# The national do-not-call registry as the platform's operator imported it (services.messaging.registry): each
# number a bigint of its ten digits, area code first, so an area code's numbers are one range of the key
# (AREA_SPAN numbers from area_code * AREA_SPAN).
national_dnc = sa.Table("national_dnc", metadata, sa.Column("number", sa.BigInteger, primary_key=True))
# Each area code imported: when its data was last refreshed, by which file (its kind: full or change), and how many
# of its numbers are on the registry.
national_dnc_areas = sa.Table(
    "national_dnc_areas", metadata,
    sa.Column("area_code", sa.SmallInteger, primary_key=True),
    sa.Column("refreshed_at", Ts, nullable=False),
    sa.Column("file", sa.Text, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("numbers", sa.BigInteger, nullable=False),
)
# The files imported (by name and size): an import skips those already imported, so a CronJob may import a whole
# folder again and again.
national_dnc_files = sa.Table(
    "national_dnc_files", metadata,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("numbers", sa.BigInteger, nullable=False),  # the lines loaded
    sa.Column("problems", sa.BigInteger, nullable=False),  # the lines not loaded (malformed, skipped)
    sa.Column("imported_at", Ts, nullable=False),
)

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)


# The evidence logs keep their rows when a person is erased (services.messaging.erasure): the person's number
# becomes its suppression hash (services.messaging.suppression) and what they said is redacted, and nothing else may
# change. Each condition (on OLD and NEW, in the trigger) lets exactly that update through: a number not yet hashed
# replaced by a hash, the content redacted as the erasure redacts it, every other column as it was.
HASHED = "'^hmac-sha256:[0-9a-f]{64}$'"
_NUMBER_HASHED = f"OLD.phone !~ '^hmac-sha256:' AND NEW.phone ~ {HASHED}"
CONSENT_ERASURE = f"""{_NUMBER_HASHED} AND NEW.note IS NULL
    AND (NEW.actor IS NOT DISTINCT FROM OLD.actor OR (OLD.actor = OLD.phone AND NEW.actor = NEW.phone))
    AND (NEW.id, NEW.business_id, NEW.kind, NEW.source, NEW.reference, NEW.created_at)
        IS NOT DISTINCT FROM (OLD.id, OLD.business_id, OLD.kind, OLD.source, OLD.reference, OLD.created_at)"""
DECISION_ERASURE = f"""{_NUMBER_HASHED} AND NEW.message = replace(OLD.message, OLD.phone, NEW.phone)
    AND (NEW.id, NEW.business_id, NEW.channel, NEW.lead_id, NEW.outcome, NEW.rule, NEW.source, NEW.code,
         NEW.not_before, NEW.actor, NEW.reference, NEW.inputs, NEW.decided_at)
        IS NOT DISTINCT FROM (OLD.id, OLD.business_id, OLD.channel, OLD.lead_id, OLD.outcome, OLD.rule, OLD.source,
                              OLD.code, OLD.not_before, OLD.actor, OLD.reference, OLD.inputs, OLD.decided_at)"""


def append_only_function(table: sa.Table, refusal: str, erasure: str | None) -> str:
    """The trigger function refusing every update and delete of `table`'s rows but an erasure's redaction
    (`erasure`, a condition on OLD and NEW; None: none at all). The migration that let the redaction through
    (0014) creates it with the same text."""
    allowed = f"IF TG_OP = 'UPDATE' AND ({erasure}) THEN RETURN NEW; END IF;" if erasure else ""
    return f"""CREATE OR REPLACE FUNCTION {SCHEMA}.{table.name}_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            {allowed}
            RAISE EXCEPTION '{refusal}';
        END $$"""


def _append_only(table: sa.Table, refusal: str, erasure: str) -> None:
    """The table is evidence: nothing may change or delete a row once written, but an erasure's redaction."""
    created_with(
        table, append_only_function(table, refusal, erasure),
        f"""CREATE TRIGGER {table.name}_append_only BEFORE UPDATE OR DELETE ON {SCHEMA}.{table.name}
        FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.{table.name}_append_only()""")


CONSENT_REFUSAL = "consent history is append-only"
DECISIONS_REFUSAL = "the compliance decision log is append-only"
_append_only(consent_events, CONSENT_REFUSAL, CONSENT_ERASURE)
_append_only(compliance_decisions, DECISIONS_REFUSAL, DECISION_ERASURE)
