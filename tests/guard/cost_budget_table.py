"""What one request of each hot route may cost, over every process (core.costs.Budget), checked by
tests/guard/test_cost_budgets.py. Budgets are of the common case, the key's principal cached in the gateway.

They are the tests' measure of the routes, not part of a route's declaration (gateway.route.Route): the gateway
never reads them. Each is tight: a route that comes to cost less fails its test until its budget is lowered.
"""
from __future__ import annotations

from core.costs import Budget
from providers.messaging.webhooks import STATUS_PATH
from providers.payments import webhooks as payment_webhooks
from providers.voice.vapi.server_messages import MESSAGES_PATH

# A key-authenticated read: its statement and the RPC that makes it.
_READ = Budget(sql=1, rpc=1)
# A stored provider message costs its publish, nothing more, until its owner applies it.
_STORED = Budget(publish=1)

# (method, path, "read_one" for its ?id= read or "" for the route itself): every hot route (the authenticated ?id=
# read and list of every resource, sends, calls, the providers' messages).
ROUTE_BUDGETS: dict[tuple[str, str, str], Budget] = {
    ("GET", "/api/v1/workspaces", ""): _READ,
    ("GET", "/api/v1/workspaces", "read_one"): _READ,
    ("GET", "/api/v1/agents", ""): Budget(sql=2, rpc=1),
    ("GET", "/api/v1/agents", "read_one"): Budget(sql=2, rpc=1, provider=1),
    ("GET", "/api/v1/calls", ""): _READ,
    ("GET", "/api/v1/calls", "read_one"): _READ,
    ("GET", "/api/v1/leads", ""): _READ,
    ("GET", "/api/v1/leads", "read_one"): _READ,
    ("GET", "/api/v1/sms/conversations", ""): _READ,
    ("GET", "/api/v1/sms/conversations", "read_one"): _READ,
    ("GET", "/api/v1/emails", ""): _READ,
    ("GET", "/api/v1/emails", "read_one"): _READ,
    ("GET", "/api/v1/communication-runs", ""): Budget(sql=2, rpc=1),
    ("GET", "/api/v1/communication-runs", "read_one"): Budget(sql=2, rpc=1),
    ("GET", "/api/v1/evals", ""): _READ,
    ("GET", "/api/v1/evals", "read_one"): _READ,
    ("GET", "/api/v1/phone-numbers", ""): _READ,
    ("GET", "/api/v1/webhooks", ""): _READ,
    ("GET", "/api/v1/sms/messages", ""): Budget(sql=2, transaction=1, rpc=1),
    # The agent's number is kept by messaging (services/messaging/senders.py): once warm, no RPC to agents. The
    # decision is made under the recipient's lock, their touches counted and the text's ledger row written with the
    # message (issue 50): three statements more than an uncounted send.
    ("POST", "/api/v1/sms/send", ""): Budget(sql=10, transaction=2, rpc=2, provider=1),
    # Every call, compliance skip too, is decided and counted by messaging (DecideCall: the callee's lock, their
    # standing and touches, the logged decision and its ledger row in one transaction; issue 50).
    ("POST", "/api/v1/calls", ""): Budget(sql=9, transaction=3, rpc=4, provider=1),
    # Bookings are shown in their business's zone, asked of accounts on every request (an RPC, a statement).
    ("GET", "/api/v1/bookings", ""): Budget(sql=2, rpc=2),
    ("GET", "/api/v1/bookings", "read_one"): Budget(sql=2, rpc=2),
    # The zone, then under the business's lock its availability, the bookings around the slot, the lead by number,
    # the booking and booking.created (one transaction).
    ("POST", "/api/v1/bookings", ""): Budget(sql=7, transaction=1, rpc=2),
    ("POST", MESSAGES_PATH, ""): _STORED,
    ("POST", STATUS_PATH, ""): _STORED,
    ("POST", payment_webhooks.EVENTS_PATH, ""): _STORED,
}

# (path, kind): the voice provider's messages acknowledged without storing them cost nothing past the signature
# check.
KIND_BUDGETS: dict[tuple[str, str], Budget] = {
    (MESSAGES_PATH, kind): Budget() for kind in ("conversation-update", "speech-update", "hang", "user-interrupted")}

# Tool type ("custom" for a custom tool): what one call of the agent's tool costs in the voice provider's tool-calls
# message, answered while the provider waits (services.calls.tools_service). Every tool call costs what end_call
# does: the gateway's RPC to calls, the call read, the tool call claimed and its result written (a transaction
# each), and the agent's tools read from agents (an RPC, a statement). Each row says what its tool adds.
TOOL_BUDGETS: dict[str, Budget] = {
    "end_call": Budget(sql=4, transaction=2, rpc=2),
    # messaging's PlaceSms: the idempotency key's read, the caller's lead asked of sdr (an RPC, a statement), then
    # under the recipient's lock their standing and touches, the daily spend, the message on its thread and the
    # logged decision (one transaction), the provider's send, and the message's status with its event (another).
    "send_sms": Budget(sql=15, transaction=4, rpc=4, provider=1),
    "send_link": Budget(sql=15, transaction=4, rpc=4, provider=1),  # send_sms's, with the saved link as its text
    # sdr's ListSlots: the business's zone asked of accounts (an RPC, a statement), its availability and bookings.
    "check_availability": Budget(sql=7, transaction=2, rpc=4),
    # A start with its offset (as check_availability gives it) is booked at once, sdr's CreateBooking: the zone, the
    # call's business asked of calls (an RPC, a statement), and under the business's lock its availability, the
    # bookings around the slot, the lead by number, the booking and booking.created (one transaction).
    "book_appointment": Budget(sql=12, transaction=3, rpc=5),
    # sdr's RecordCallerLead: under the caller's lock (the business and their number) their lead found and updated
    # and the activity entry naming the call written (one transaction).
    "update_lead": Budget(sql=8, transaction=3, rpc=3),
    # agents' RunCustomTool: the agent read again (its tool and signing secret) and the signed POST to the business's
    # endpoint.
    "custom": Budget(sql=5, transaction=2, rpc=3, provider=1),
}
# The provider's transfer-destination-request (services.calls.transfer_service): the gateway's RPC to calls, the
# call read, the request claimed and its result written (a transaction each), the agent's tools (agents) and the
# business's phone (accounts), an RPC and a statement each.
TRANSFER_REQUEST_BUDGET = Budget(sql=5, transaction=2, rpc=3)

# (path, kind): what a stored provider message sets off, with one webhook subscription receiving its events, counted
# under core.costs.after. An upper bound: consumers that fetch two of its events at once apply them in one
# transaction, which is not promised.
AFTER_BUDGETS: dict[tuple[str, str], Budget] = {
    # calls moves the call forward: read and update, one transaction, no event.
    (MESSAGES_PATH, "status-update"): Budget(sql=2, transaction=1),
    # calls ends the call (read, update, call.completed); sdr makes its lead (lock, read, insert, score, interaction,
    # lead.created); accounts logs its usage; the dispatcher keeps five events (three statements a batch, at worst
    # one event a batch) and delivers call.completed (a delivery, then its attempt, outcome and subscription).
    (MESSAGES_PATH, "end-of-call-report"): Budget(sql=30, transaction=9, provider=1),
    # messaging moves the text forward (read, update, sms.delivered); the dispatcher keeps it and delivers it.
    (STATUS_PATH, "delivered"): Budget(sql=10, transaction=3, provider=1),
}
