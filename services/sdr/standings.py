"""What the outbound compliance decision knows of a business's callees, as the runs' preview and the pipeline read
it: one Messaging.GetStandings call for many phones."""
from __future__ import annotations

from datetime import datetime, timezone

from core.compliance import decision as compliance
from core.rpc import Client
from switchboard.v1 import messaging_pb2


async def callee_standings(messaging: Client, business_id: str,
                           phones: list[str]) -> dict[str, tuple[compliance.Standing, tuple[datetime, ...]]]:
    """Each phone's standing (do-not-call, consent) and the times of its calls in the last 24 hours, by phone."""
    reply = await messaging.GetStandings(messaging_pb2.GetStandingsRequest(business_id=business_id, phones=phones))
    found = {}
    for s in reply.standings:
        since = s.business_dnc_since.ToDatetime(tzinfo=timezone.utc) if s.HasField("business_dnc_since") else None
        found[s.phone] = (compliance.Standing(platform_dnc=s.platform_dnc, business_dnc_since=since,
                                              consent=s.consent or "none"),
                          tuple(t.ToDatetime(tzinfo=timezone.utc) for t in s.recent_calls))
    return found
