"""The sdr schema: every table of the service, its indexes, triggers and functions, defined once. A new database
is created from this metadata (core.migrations.run_env); the migrations after the baseline carry existing ones.
The queries are in the store modules (store.py: leads, interactions, voicemails; pipeline_store.py; runs_store.py)."""
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from contracts import runs as runs_contract
from core import standing
from core.columns import Ts, Uuid
from core.ddl import created_with
from core.inbox import inbox_table
from core.leases import lease_columns
from core.outbox import outbox_table
from services.sdr.domain import LEAD_TEXT

SCHEMA = "sdr"
metadata = sa.MetaData(schema=SCHEMA)

# -- leads, their interactions and voicemails ------------------------------------------------------------------

leads = sa.Table(
    "leads", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    *(sa.Column(name, sa.Text) for name in LEAD_TEXT),
    sa.Column("agent_id", Uuid),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("score", sa.Integer, nullable=False),
    sa.Column("score_confidence", sa.Text, nullable=False),
    sa.Column("score_explanation", sa.Text, nullable=False),
    sa.Column("score_factors", ARRAY(sa.Text), nullable=False),
    sa.Column("intent", sa.Text),
    sa.Column("interaction_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_activity_at", Ts, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    # The sales pipeline's touches of the lead (services.sdr.pipeline_domain) and whether it is paused there.
    sa.Column("touch_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_touch_at", Ts),
    sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.false()),
    # Its latest inbound call, latest and first inbound interaction of any channel (kept by a trigger on
    # interactions), and the pipeline's stored view of it: its segment (the rank in pipeline_domain.SEGMENTS) and
    # next action without the compliance facts, due for computing again from pipeline_until (a trigger makes a
    # change of its signals due at once and bumps pipeline_stamp): the triggers below, services.sdr.pipeline_store.
    sa.Column("last_inbound_call_at", Ts),
    sa.Column("last_inbound_at", Ts),
    sa.Column("first_inbound_at", Ts),
    sa.Column("pipeline_segment", sa.SmallInteger),
    sa.Column("pipeline_next", sa.Text),
    sa.Column("pipeline_until", Ts, nullable=False, server_default=sa.text("'epoch'")),
    sa.Column("pipeline_stamp", sa.BigInteger, nullable=False, server_default="0"),
    # When its status last became converted (a purchase: the national registry's exemption), kept by a trigger on
    # every write of the status (below).
    sa.Column("converted_at", Ts),
    # When its email address became known to the business: given by the person on an inbound call; None when it was
    # written through the API (services.sdr.domain.email_known_at).
    sa.Column("email_known_at", Ts),
)

interactions = sa.Table(
    "interactions", metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("lead_id", Uuid, sa.ForeignKey(leads.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("channel", sa.Text, nullable=False),
    sa.Column("direction", sa.Text, nullable=False),
    sa.Column("reference", sa.Text, nullable=False),
    sa.Column("intent", sa.Text),
    sa.Column("occurred_at", Ts, nullable=False),
    sa.UniqueConstraint("lead_id", "reference", name="interactions_once"),
)

# Voicemails left for a business (fed by voicemail.received events); "unhandled" until the
# business calls or texts that number back.
voicemails = sa.Table(
    "voicemails", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("lead_id", Uuid),
    sa.Column("call_id", sa.Text),
    sa.Column("from_number", sa.Text),
    sa.Column("transcript", sa.Text),
    sa.Column("recording_url", sa.Text),
    sa.Column("received_at", Ts, nullable=False),
)

# Every list is one business's leads newest first; each filter gets an index leading with it.
_newest = (leads.c.created_at.desc(), leads.c.id.desc())
# It carries what analytics counts, so a report reads a window index-only (core.aggregates).
sa.Index("leads_business_created", leads.c.business_id, *_newest, postgresql_include=["agent_id", "status", "source"])
for _column in ("status", "source", "agent_id", "phone", "email"):
    sa.Index(f"leads_business_{_column}", leads.c.business_id, leads.c[_column], *_newest)
sa.Index("leads_business_updated", leads.c.business_id, leads.c.updated_at)
sa.Index("leads_business_score", leads.c.business_id, leads.c.score, *_newest)
sa.Index("leads_business_pipeline", leads.c.business_id, leads.c.pipeline_segment, leads.c.score.desc(), *_newest)
sa.Index("leads_business_pipeline_next", leads.c.business_id, leads.c.pipeline_next)
sa.Index("leads_business_pipeline_until", leads.c.business_id, leads.c.pipeline_until)
sa.Index("interactions_lead", interactions.c.lead_id, interactions.c.occurred_at)
sa.Index("voicemails_business_received", voicemails.c.business_id, voicemails.c.received_at)
# What the retention a business set has still to delete of them (services.sdr.data_retention), oldest first.
sa.Index("voicemails_transcribed", voicemails.c.business_id, voicemails.c.received_at,
         postgresql_where=voicemails.c.transcript.isnot(None))
sa.Index("voicemails_recorded", voicemails.c.business_id, voicemails.c.received_at,
         postgresql_where=voicemails.c.recording_url.isnot(None))

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)

# The lead columns the pipeline's segment and next action read (pipeline_domain.Signals, in its order): a change of
# any of them makes the stored values due (pipeline_until) and bumps pipeline_stamp.
SIGNAL_COLUMNS = ("status", "source", "created_at", "updated_at", "touch_count", "last_touch_at", "paused", "phone",
                    "email", "last_inbound_call_at", "last_inbound_at", "first_inbound_at")
created_with(
    leads,
    f"""CREATE FUNCTION {SCHEMA}.pipeline_signals_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.pipeline_until := 'epoch';
            NEW.pipeline_stamp := OLD.pipeline_stamp + 1;
            RETURN NEW;
        END $$""",
    f"""CREATE TRIGGER leads_pipeline_signals BEFORE UPDATE ON {SCHEMA}.leads
            FOR EACH ROW WHEN ({" OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in SIGNAL_COLUMNS)})
            EXECUTE FUNCTION {SCHEMA}.pipeline_signals_changed()""",
    # converted_at: the write's own updated_at (the service's clock, as every other time of the lead), else the
    # transaction's.
    f"""CREATE FUNCTION {SCHEMA}.lead_converted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.converted_at := COALESCE(NEW.updated_at, now());
            RETURN NEW;
        END $$""",
    f"""CREATE TRIGGER leads_converted_insert BEFORE INSERT ON {SCHEMA}.leads
            FOR EACH ROW WHEN (NEW.status = 'converted') EXECUTE FUNCTION {SCHEMA}.lead_converted()""",
    f"""CREATE TRIGGER leads_converted_update BEFORE UPDATE OF status ON {SCHEMA}.leads
            FOR EACH ROW WHEN (NEW.status = 'converted' AND OLD.status IS DISTINCT FROM 'converted')
            EXECUTE FUNCTION {SCHEMA}.lead_converted()""")
# A lead's latest inbound call and its latest and first inbound interaction of any channel.
created_with(
    interactions,
    f"""CREATE FUNCTION {SCHEMA}.pipeline_inbound() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE {SCHEMA}.leads SET
                last_inbound_at = GREATEST(last_inbound_at, NEW.occurred_at),
                first_inbound_at = LEAST(first_inbound_at, NEW.occurred_at),
                last_inbound_call_at = CASE WHEN NEW.channel = 'call'
                    THEN GREATEST(last_inbound_call_at, NEW.occurred_at) ELSE last_inbound_call_at END
            WHERE id = NEW.lead_id;
            RETURN NULL;
        END $$""",
    f"""CREATE TRIGGER interactions_pipeline_inbound AFTER INSERT ON {SCHEMA}.interactions
            FOR EACH ROW WHEN (NEW.direction = 'inbound') EXECUTE FUNCTION {SCHEMA}.pipeline_inbound()""")

# -- the sales pipeline ---------------------------------------------------------------------------------------

configs = sa.Table(
    "pipeline_configs", metadata,
    sa.Column("business_id", Uuid, primary_key=True),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("min_touch_gap_hours", sa.Integer, nullable=False),
    sa.Column("max_touches", sa.Integer, nullable=False),
    sa.Column("auto_call", sa.Boolean, nullable=False),
    sa.Column("auto_email", sa.Boolean, nullable=False),
    sa.Column("auto_sms", sa.Boolean, nullable=False),
    sa.Column("sdr_agent_id", Uuid),
    sa.Column("business_hours_start", sa.Integer, nullable=False),
    sa.Column("business_hours_end", sa.Integer, nullable=False),
    sa.Column("email_from_account_id", sa.Text),
    sa.Column("updated_at", Ts, nullable=False),
)
# What a business saves of its SDR config: every column but its key and when it was saved.
CONFIG_COLUMNS = tuple(c.name for c in configs.c if c.name not in ("business_id", "updated_at"))

activity = sa.Table(
    "pipeline_activity", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("lead_id", Uuid, sa.ForeignKey("sdr.leads.id", ondelete="CASCADE"), nullable=False),
    sa.Column("action", sa.Text, nullable=False),  # pipeline_domain.ACTIONS, or escalate
    sa.Column("status", sa.Text, nullable=False),  # pending (a touch being made), done, failed
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("touch_number", sa.Integer),  # the lead's n-th touch (touches only): made once
    sa.Column("reference", sa.Text),  # the call, message or email the touch made
    sa.Column("origin", sa.Text, nullable=False),  # api (a key or session) or runner
    sa.Column("window_id", Uuid),  # the scheduled run that made it (runner entries)
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
)

windows = sa.Table(
    "runner_windows", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("window_start", Ts, nullable=False),  # the two-hour window the scheduled run is for
    sa.Column("status", sa.Text, nullable=False),  # running, completed
    sa.Column("lease_token", sa.Text),  # the runner working it; another takes over once lease_until passes
    sa.Column("lease_until", Ts),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="1"),
    sa.Column("started_at", Ts, nullable=False),
    sa.Column("ended_at", Ts),
    sa.UniqueConstraint("business_id", "window_start", name="runner_windows_once"),
)

briefings = sa.Table(
    "briefings", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("window_id", Uuid, sa.ForeignKey(windows.c.id, ondelete="CASCADE"), nullable=False, unique=True),
    sa.Column("summary", JSONB, nullable=False),  # the run's summary counts
    sa.Column("needs_owner", JSONB, nullable=False),  # [{lead_id, name, reason}] escalated to the owner
    sa.Column("text", sa.Text, nullable=False),  # as e-mailed to the owner
    sa.Column("email_id", sa.Text),
    sa.Column("created_at", Ts, nullable=False),
)

sa.Index("pipeline_activity_business_created", activity.c.business_id, activity.c.created_at.desc(),
         activity.c.id.desc())
sa.Index("pipeline_activity_lead_created", activity.c.lead_id, activity.c.created_at.desc(), activity.c.id.desc())
sa.Index("pipeline_activity_window", activity.c.window_id, activity.c.lead_id,
         postgresql_where=activity.c.window_id.is_not(None))
sa.Index("briefings_business_created", briefings.c.business_id, briefings.c.created_at.desc(), briefings.c.id.desc())
sa.Index("pipeline_activity_touch_once", activity.c.lead_id, activity.c.touch_number, unique=True,
         postgresql_where=sa.and_(activity.c.touch_number.is_not(None), activity.c.status != "failed"))

# -- communication runs ---------------------------------------------------------------------------------------

runs = sa.Table(
    "communication_runs", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("account_id", Uuid, nullable=False),  # whose key created it: the scheduler acts as that account
    sa.Column("external_ref", sa.Text, nullable=False),
    sa.Column("idempotency_key", sa.Text, nullable=False),
    sa.Column("request_hash", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),  # rules.RUN_STATES
    sa.Column("agent_id", Uuid, nullable=False),  # the default agent of its touches
    sa.Column("retry", JSONB, nullable=False),  # rules.RetryPolicy.to_json()
    sa.Column("touches", sa.Integer, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    sa.Column("started_at", Ts),  # its first touch was claimed
    sa.Column("ended_at", Ts),  # completed or canceled
    sa.UniqueConstraint("business_id", "idempotency_key", name="communication_runs_idempotency"),
    sa.UniqueConstraint("business_id", "external_ref", name="communication_runs_external_ref"),
)

jobs = sa.Table(
    "communication_jobs", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("run_id", Uuid, sa.ForeignKey(runs.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("touch_index", sa.Integer, nullable=False),
    sa.Column("touch_id", sa.Text, nullable=False),
    sa.Column("channel", sa.Text, nullable=False),
    sa.Column("phone", sa.Text, nullable=False),
    sa.Column("timezone", sa.Text),
    sa.Column("agent_id", Uuid, nullable=False),
    sa.Column("context", JSONB, nullable=False),
    sa.Column("scheduled_at", Ts, nullable=False),  # as the caller asked
    sa.Column("due_at", Ts, nullable=False),  # when it is next claimable (moved by deferrals and retries)
    sa.Column("status", sa.Text, nullable=False),  # rules.JOB_STATES
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),  # calls placed
    sa.Column("rule", sa.Text),  # the compliance rule that last deferred or refused it
    sa.Column("code", sa.Text),  # the error code of a refusal or failure
    sa.Column("reason", sa.Text),  # what happened last, in words
    sa.Column("call_id", Uuid),  # the last call placed
    sa.Column("message_id", Uuid),  # the text sent
    *lease_columns(),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    sa.Column("ended_at", Ts),
    sa.UniqueConstraint("run_id", "touch_id", name="communication_jobs_touch"),
)

attempts = sa.Table(
    "communication_attempts", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("job_id", Uuid, sa.ForeignKey(jobs.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("run_id", Uuid, nullable=False),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),  # 1 for the first call of the touch
    sa.Column("call_id", Uuid, unique=True),  # null when the provider refused the call
    sa.Column("phone", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),  # rules.ATTEMPT_STATES
    sa.Column("retry_eligible", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("reason", sa.Text),
    sa.Column("next_attempt_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("ended_at", Ts),
    sa.UniqueConstraint("job_id", "attempt", name="communication_attempts_once"),
)

sa.Index("communication_runs_business_created", runs.c.business_id, runs.c.created_at.desc(), runs.c.id.desc())
sa.Index("communication_jobs_due", jobs.c.due_at, postgresql_where=jobs.c.status.in_(runs_contract.WAITING))
sa.Index("communication_jobs_executing", jobs.c.lease_until, postgresql_where=jobs.c.status == runs_contract.EXECUTING)
sa.Index("communication_jobs_in_flight", jobs.c.business_id,
         postgresql_where=sa.and_(jobs.c.channel == "call", jobs.c.status.in_((runs_contract.EXECUTING, runs_contract.IN_PROGRESS))))
sa.Index("communication_jobs_run", jobs.c.run_id, jobs.c.status)
# The ended text touches still holding their words (the retention a business set: services.sdr.data_retention).
HAS_BODY = sa.text("context ? 'body'")
sa.Index("communication_jobs_bodies", jobs.c.business_id, jobs.c.ended_at,
         postgresql_where=sa.and_(HAS_BODY, jobs.c.ended_at.isnot(None)))
sa.Index("communication_jobs_run_scheduled", jobs.c.run_id, jobs.c.scheduled_at.desc(), jobs.c.id.desc())
sa.Index("communication_attempts_business_created", attempts.c.business_id, attempts.c.created_at.desc(),
         attempts.c.id.desc())
sa.Index("communication_attempts_run", attempts.c.run_id, attempts.c.created_at.desc(), attempts.c.id.desc())

# -- businesses held from touches (services.sdr.held_businesses) ----------------------------------------------

standings = sa.Table(
    "business_standings", metadata,
    sa.Column("business_id", Uuid, primary_key=True),
    sa.Column("standing", sa.Text, nullable=False),
    sa.Column("changed_at", Ts, nullable=False),
)


def not_held(business_id: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
    """A condition on a query's business id column: the business is not held from scheduled outreach (its standing,
    as services.sdr.held_businesses records it); the stores' queries of due work take it."""
    return ~sa.exists().where(standings.c.business_id == business_id, standings.c.standing.in_(standing.HELD))

# -- bookings (services.sdr.bookings_domain) ------------------------------------------------------------------

# A business's availability as it saved it (Availability.to_json's parts); none saved: the defaults.
availability = sa.Table(
    "booking_availability", metadata,
    sa.Column("business_id", Uuid, primary_key=True),
    sa.Column("weekly_hours", JSONB, nullable=False),  # {"mon": [["09:00", "17:00"]], ...}, the business's wall clock
    sa.Column("slot_minutes", sa.Integer, nullable=False),
    sa.Column("buffer_minutes", sa.Integer, nullable=False),
    sa.Column("blackout_dates", JSONB, nullable=False),  # ["YYYY-MM-DD"]
    sa.Column("horizon_days", sa.Integer, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
)

# Appointments booked on it. Two confirmed bookings of a business never overlap: every write of one takes the
# business's booking lock first (store.lock_bookings) and checks the others under it.
bookings = sa.Table(
    "bookings", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("starts_at", Ts, nullable=False),
    sa.Column("ends_at", Ts, nullable=False),
    sa.Column("status", sa.Text, nullable=False),  # contracts.bookings.STATUSES
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("phone_number", sa.Text, nullable=False),
    sa.Column("email", sa.Text),
    sa.Column("notes", sa.Text),
    sa.Column("lead_id", Uuid, sa.ForeignKey(leads.c.id, ondelete="SET NULL")),
    sa.Column("call_id", Uuid),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
)
sa.Index("bookings_business_starts", bookings.c.business_id, bookings.c.starts_at.desc(), bookings.c.id.desc())
sa.Index("bookings_business_confirmed", bookings.c.business_id, bookings.c.starts_at,
         postgresql_where=bookings.c.status == "confirmed")
