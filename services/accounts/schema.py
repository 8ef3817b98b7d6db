"""The accounts schema: every table of the service with its indexes, defined once. A new database is created
from this metadata (core.migrations.run_env); the migrations after the baseline carry existing ones. The
queries are in store.py."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from core.columns import Ts, Uuid
from core.inbox import inbox_table
from core.leases import lease_columns
from core.outbox import outbox_table

SCHEMA = "accounts"
metadata = sa.MetaData(schema=SCHEMA)

users = sa.Table(
    "users", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("email", sa.Text, nullable=False, unique=True),
    sa.Column("email_confirmed_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
)

businesses = sa.Table(
    "businesses", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("lifecycle_state", sa.Text, nullable=False),
    sa.Column("metadata", JSONB, nullable=False),
    sa.Column("external_ref", sa.Text),
    sa.Column("business_type", sa.Text),
    sa.Column("website", sa.Text),
    sa.Column("phone_forward_to", sa.Text),
    sa.Column("plan_id", sa.Text, nullable=False),
    sa.Column("subscription_status", sa.Text, nullable=False),
    sa.Column("trial_ends_at", Ts),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    # IANA time zone its reports cut days and weeks in.
    sa.Column("timezone", sa.Text, nullable=False, server_default="UTC"),
    # How the subscription is paid (domain.HOSTED_CHECKOUT or domain.X402) and the payment provider's ids.
    sa.Column("payment_capture", sa.Text),
    sa.Column("checkout_session_id", sa.Text),
    sa.Column("customer_id", sa.Text),
    sa.Column("subscription_id", sa.Text),
    # The provider's time of the event that set subscription_status (older events do not override it).
    sa.Column("subscription_event_at", Ts),
    sa.Column("past_due_since", Ts),
    sa.Column("paid_through", Ts),  # x402: the end of the period paid for
    # The workspace was paused for an unpaid subscription (and is resumed when it is paid).
    sa.Column("paused_by_billing", sa.Boolean, nullable=False, server_default=sa.false()),
    # x402: the paid_through the owner was last reminded of (one reminder per period).
    sa.Column("renewal_reminded_through", Ts),
    # A workspace made through the API: the business whose card subscription pays for it (one unit of its quantity);
    # null for one that pays for itself (a signup's, or a workspace paid by x402). While it is being added there the
    # row holds the lease and its subscription is `incomplete` (held); added, it carries its payer's billing columns.
    sa.Column("billed_on", Uuid, sa.ForeignKey("accounts.businesses.id")),
    *lease_columns(),
    # The retention it set for its customers' personal data: only the kinds it set, {kind: days} (the others have
    # their default: services.accounts.privacy.data_retention_rules), and its retention job: when it is due next
    # ('epoch': at once) and the lease of the replica running it.
    sa.Column("retention", JSONB, nullable=False, server_default="{}"),
    sa.Column("retention_next_at", Ts, nullable=False, server_default=sa.text("'epoch'")),
    sa.Column("retention_lease_token", Uuid),
    sa.Column("retention_lease_until", Ts),
    # A torn-down business's data deletion (services.accounts.privacy.teardown_deletion): due at the grace period's
    # end (set by the teardown), done once data_deleted_at is set; its next attempt, each step's report
    # ({service: {"lines": [{what, action, count}], "done": bool}}), attempts and last error, and the runner's lease
    # (its own: the billing's lease above is another writer's).
    sa.Column("data_deletion_due_at", Ts),
    sa.Column("data_deleted_at", Ts),
    sa.Column("data_deletion_next_at", Ts),
    sa.Column("data_deletion_steps", JSONB, nullable=False, server_default="{}"),
    sa.Column("data_deletion_attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("data_deletion_error", sa.Text),
    sa.Column("data_deletion_lease_token", Uuid),
    sa.Column("data_deletion_lease_until", Ts),
    sa.Index("businesses_data_deletion_due", "data_deletion_next_at",
             postgresql_where=sa.text("data_deletion_due_at IS NOT NULL AND data_deleted_at IS NULL")),
)

api_keys = sa.Table(
    "api_keys", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("business_id", Uuid, sa.ForeignKey(businesses.c.id)),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("prefix", sa.Text, nullable=False),
    sa.Column("key_hash", sa.Text, nullable=False, unique=True),
    sa.Column("scopes", ARRAY(sa.Text), nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("last_used_at", Ts),
    sa.Column("expires_at", Ts),
    sa.Column("revoked_at", Ts),
)

magic_links = sa.Table(
    "magic_links", metadata,
    sa.Column("token_hash", sa.Text, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("expires_at", Ts, nullable=False),
    sa.Column("used_at", Ts),
    # Sent by e-mail (sign_in.py), not handed out in an API answer: using it confirms the account's address.
    sa.Column("mailed", sa.Boolean, nullable=False, server_default=sa.false()),
)

sessions = sa.Table(
    "sessions", metadata,
    sa.Column("token_hash", sa.Text, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id), nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("expires_at", Ts, nullable=False),
    sa.Column("last_used_at", Ts, nullable=False),
)
sa.Index("sessions_account", sessions.c.account_id)  # signing out everywhere, a sign-in's cleanup

signup_attempts = sa.Table(
    "signup_attempts", metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("client_ip", sa.Text, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
)

usage_log = sa.Table(
    "usage_log", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, nullable=False),
    sa.Column("business_id", Uuid),
    sa.Column("api_key_id", Uuid),  # null for a call's entry
    sa.Column("endpoint", sa.Text, nullable=False),
    sa.Column("method", sa.Text, nullable=False),
    sa.Column("status_code", sa.Integer, nullable=False),
    sa.Column("call_id", sa.Text),
    sa.Column("cost_cents", sa.Integer, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("minutes", sa.Integer, nullable=False, server_default="0"),  # billed minutes of a call's entry
)

sa.Index("businesses_account_created", businesses.c.account_id, businesses.c.created_at.desc())
sa.Index("businesses_retention_due", businesses.c.retention_next_at)
sa.Index("businesses_billed_on", businesses.c.billed_on, postgresql_where=sa.text("billed_on IS NOT NULL"))
sa.Index("businesses_subscription", businesses.c.subscription_id, unique=True)
sa.Index("businesses_billing_watch", businesses.c.subscription_status,
         postgresql_where=sa.text("subscription_status IN ('incomplete', 'past_due', 'active')"))
sa.Index("api_keys_account", api_keys.c.account_id)
sa.Index("signup_attempts_ip_time", signup_attempts.c.client_ip, signup_attempts.c.created_at)
sa.Index("usage_log_account_created", usage_log.c.account_id, usage_log.c.created_at.desc())
sa.Index("usage_log_business_calls", usage_log.c.business_id, postgresql_where=sa.text("call_id IS NOT NULL"))
# One entry per call (a redelivered call event adds nothing).
sa.Index("usage_log_call_once", usage_log.c.call_id, unique=True, postgresql_where=sa.text("method = 'CALL'"))
# The retention sweep's scan of the requests' entries (services.accounts.retention).
sa.Index("usage_log_requests", usage_log.c.created_at, postgresql_where=sa.text("method <> 'CALL'"))

payment_events = sa.Table(
    "payment_events", metadata,
    sa.Column("event_id", sa.Text, primary_key=True),  # the payment provider's event id: each applies once
    sa.Column("type", sa.Text, nullable=False),
    sa.Column("business_id", Uuid),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("received_at", Ts, nullable=False),
)

x402_payments = sa.Table(
    "x402_payments", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("transaction", sa.Text, unique=True),  # once settled (unknown when an earlier answer was lost)
    sa.Column("business_id", Uuid, sa.ForeignKey(businesses.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("purpose", sa.Text, nullable=False, server_default="signup"),  # payments_domain.X402_PURPOSES
    sa.Column("status", sa.Text, nullable=False, server_default="settled"),  # payments_domain.X402_STATUSES
    sa.Column("payer", sa.Text, nullable=False),
    sa.Column("nonce", sa.Text),  # the EIP-3009 authorization's nonce: (payer, nonce) pays once
    sa.Column("valid_before", Ts),  # after it, the facilitator can no longer settle the authorization
    sa.Column("network", sa.Text, nullable=False),
    sa.Column("asset", sa.Text, nullable=False),
    sa.Column("amount", sa.Text, nullable=False),  # atomic units of the asset
    # What asking the facilitator again takes: the PaymentPayload and the PaymentRequirements it matched.
    sa.Column("payload", JSONB),
    sa.Column("requirements", JSONB),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("next_attempt_at", Ts),  # pending: when the reconciler asks next (a lease while a request settles)
    sa.Column("last_error", sa.Text),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("settled_at", Ts),
    sa.Index("x402_payments_authorization", "payer", "nonce", unique=True),
    sa.Index("x402_payments_due", "next_attempt_at", postgresql_where=sa.text("status = 'pending'")),
)

provisionings = sa.Table(
    "provisionings", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, sa.ForeignKey(businesses.c.id, ondelete="CASCADE"), nullable=False, unique=True),
    sa.Column("status", sa.Text, nullable=False),  # provisioning_domain.STATUSES
    sa.Column("step", sa.Text, nullable=False),  # the next step to run (provisioning_domain.STEPS)
    sa.Column("forward_to", sa.Text),
    sa.Column("agent_id", Uuid),
    sa.Column("phone_number", sa.Text),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_error", sa.Text),
    sa.Column("next_attempt_at", Ts, nullable=False),
    *lease_columns(),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    sa.Index("provisionings_due", "next_attempt_at", postgresql_where=sa.text("status IN ('pending', 'retrying')")),
)

# -- erasure of a person (services.accounts.privacy; statements in privacy_repository) --

# A job per erasure request, run step by step (sdr, calls, messaging, webhooks) under its lease. The subject (phones,
# emails) is kept only while the job is not over: completed or failed, they are cleared and only the masked forms
# stay (the suppression is the messaging service's hash of the number), and so is the request's fingerprint.
erasures = sa.Table(
    "erasures", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, sa.ForeignKey(businesses.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("status", sa.Text, nullable=False),  # privacy.domain.STATUSES
    sa.Column("phones", ARRAY(sa.Text)),  # E.164; null once over
    sa.Column("emails", ARRAY(sa.Text)),  # lower case; null once over
    # The subject as one text ("<phone>|<email>"), for "one erasure of a subject at a time"; null once over.
    sa.Column("subject_key", sa.Text),
    sa.Column("phone_masked", sa.Text),
    sa.Column("email_masked", sa.Text),
    sa.Column("suppress", sa.Boolean, nullable=False),
    # {service: [{what, action, count}]} of the steps done, in privacy.domain.STEPS order.
    sa.Column("reports", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
    # The ids the steps found ({lead_ids, call_ids, message_ids}), passed on to the steps after.
    sa.Column("found", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
    sa.Column("idempotency_key", sa.Text),
    sa.Column("request_hash", sa.Text),  # null once over
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("error", sa.Text),
    sa.Column("next_attempt_at", Ts, nullable=False),
    *lease_columns(),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    sa.Column("completed_at", Ts),
    sa.Index("erasures_due", "next_attempt_at", postgresql_where=sa.text("status IN ('queued', 'running')")),
    sa.Index("erasures_business", "business_id", "created_at"),
    sa.Index("erasures_idempotency", "business_id", "idempotency_key", unique=True,
             postgresql_where=sa.text("idempotency_key IS NOT NULL")),
    sa.Index("erasures_one_per_subject", "business_id", "subject_key", unique=True,
             postgresql_where=sa.text("status IN ('queued', 'running')")),
)

# A completed erasure's replay entry (services.accounts.privacy.replay): what it takes to run it again on data a
# restored backup brings back, kept BACKUP_RETENTION_DAYS after it completed (no key to businesses: it is written
# back into a restored database, which may predate the business).
erasure_replay = sa.Table(
    "erasure_replay", metadata,
    sa.Column("erasure_id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("suppress", sa.Boolean, nullable=False),
    # {"phones": [...], "emails": [...]} sealed under the server secret's "erasure replay" subkey (secret_keys)
    sa.Column("subject", sa.Text, nullable=False),
    sa.Column("completed_at", Ts, nullable=False),
    # set by a restore (deploy.backup): the erasure is queued again, then this is cleared
    sa.Column("replay_requested_at", Ts),
    sa.Index("erasure_replay_completed", "completed_at"),
    sa.Index("erasure_replay_requested", "replay_requested_at",
             postgresql_where=sa.text("replay_requested_at IS NOT NULL")),
)

# -- export of a business's data (services.accounts.privacy exports; statements in exports_repository) --

# A job per export, run a page at a time under its lease: `kinds` holds each kind's progress in the order written,
# [{kind, records, pages, after, done}], `after` the cursor of the page the next one starts after. The archive is
# `export_parts` in `seq` order (each a gzip member: concatenated, one .tar.gz); deleted when it expires.
exports = sa.Table(
    "exports", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, sa.ForeignKey(businesses.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("status", sa.Text, nullable=False),  # privacy.export_domain.STATUSES
    sa.Column("kinds", JSONB, nullable=False),
    sa.Column("records", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("bytes", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("parts", sa.Integer, nullable=False, server_default="0"),
    # The archive's gzip stream so far (export_domain.Stream): the CRC-32 and size of what its parts hold uncompressed.
    sa.Column("crc32", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("raw_bytes", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("sha256", sa.Text),  # the whole archive's, once completed
    sa.Column("idempotency_key", sa.Text),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("error", sa.Text),
    sa.Column("next_attempt_at", Ts, nullable=False),
    *lease_columns(),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("updated_at", Ts, nullable=False),
    sa.Column("completed_at", Ts),
    sa.Column("expires_at", Ts),  # completed: when its archive is deleted
    sa.Index("exports_due", "next_attempt_at", postgresql_where=sa.text("status IN ('queued', 'running')")),
    sa.Index("exports_expiring", "expires_at", postgresql_where=sa.text("status = 'completed'")),
    sa.Index("exports_business", "business_id", "created_at"),
    sa.Index("exports_idempotency", "business_id", "idempotency_key", unique=True,
             postgresql_where=sa.text("idempotency_key IS NOT NULL")),
    # one export of a business under way at a time (privacy.exports: a request while one is answers it)
    sa.Index("exports_one_under_way", "business_id", unique=True,
             postgresql_where=sa.text("status IN ('queued', 'running')")),
)

export_parts = sa.Table(
    "export_parts", metadata,
    sa.Column("export_id", Uuid, sa.ForeignKey(exports.c.id, ondelete="CASCADE"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("data", sa.LargeBinary, nullable=False),
)

# -- OAuth sign-in for the assistant connector (queries in oauth_store, rules in oauth_domain) --

oauth_clients = sa.Table(
    "oauth_clients", metadata,
    sa.Column("client_id", sa.Text, primary_key=True),  # ours (sbc_...) or a metadata document's URL
    sa.Column("source", sa.Text, nullable=False),  # registration | metadata_document
    sa.Column("client_name", sa.Text),
    sa.Column("client_uri", sa.Text),
    sa.Column("redirect_uris", ARRAY(sa.Text), nullable=False),
    sa.Column("grant_types", ARRAY(sa.Text), nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("fetched_at", Ts),  # metadata documents: when last fetched
)

# One approval by the account user: a client, the scopes and businesses approved, the resource.
oauth_grants = sa.Table(
    "oauth_grants", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("account_id", Uuid, sa.ForeignKey(users.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("client_id", sa.Text, sa.ForeignKey(oauth_clients.c.client_id), nullable=False),
    sa.Column("scopes", ARRAY(sa.Text), nullable=False),
    sa.Column("business_ids", ARRAY(Uuid), nullable=False),
    sa.Column("resource", sa.Text, nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("last_used_at", Ts),
    sa.Column("revoked_at", Ts),
    sa.Index("oauth_grants_account", "account_id", postgresql_where=sa.text("revoked_at IS NULL")),
)

oauth_codes = sa.Table(
    "oauth_codes", metadata,
    sa.Column("code_hash", sa.Text, primary_key=True),
    sa.Column("grant_id", Uuid, sa.ForeignKey(oauth_grants.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("redirect_uri", sa.Text, nullable=False),
    sa.Column("code_challenge", sa.Text, nullable=False),
    sa.Column("expires_at", Ts, nullable=False),
    sa.Column("used_at", Ts),
    sa.Index("oauth_codes_grant", "grant_id"),
)

oauth_refresh_tokens = sa.Table(
    "oauth_refresh_tokens", metadata,
    sa.Column("token_hash", sa.Text, primary_key=True),
    sa.Column("grant_id", Uuid, sa.ForeignKey(oauth_grants.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("created_at", Ts, nullable=False),
    sa.Column("expires_at", Ts, nullable=False),
    sa.Column("used_at", Ts),  # rotated: a second use revokes the grant
    sa.Index("oauth_refresh_tokens_grant", "grant_id"),
)

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)
