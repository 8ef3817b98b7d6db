"""The accounts' retention (core.retention): the usage log's API request entries older than RETENTION_USAGE_DAYS
go. A call's entry (method CALL) stays: the balance's minutes_used sums them (services.accounts.store)."""
from __future__ import annotations

from datetime import timedelta

from core.retention import Rule, older_than
from services.accounts.schema import usage_log
from services.accounts.store import CALL_METHOD


def rules(keep: timedelta) -> list[Rule]:
    # method <> 'CALL': the usage_log_requests index
    return [Rule("accounts.usage_log", keep, older_than(usage_log, usage_log.c.created_at,
                                                          usage_log.c.method != CALL_METHOD))]
