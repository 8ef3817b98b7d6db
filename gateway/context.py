"""What handlers reach through the aiohttp app: settings, service clients, auth, usage writer."""
from __future__ import annotations

from dataclasses import dataclass

import grpc
from aiohttp import web

from core.bus import EventBus
from core.outbound import GuardedClient
from core.rpc import Client
from core.settings import Settings
from gateway.auth import Authenticator
from gateway.ratelimit import TokenBuckets
from gateway.usage import UsageWriter


@dataclass
class Deps:
    """Everything handlers reach: settings, service stubs, auth, the usage writer."""

    settings: Settings
    channels: dict[str, grpc.aio.Channel]  # one per service, its clients' (the /readyz?services report)
    clients: dict[str, Client]  # one per service of core.registry, by name
    auth: Authenticator
    usage: UsageWriter
    limiter: TokenBuckets
    bus: EventBus
    recordings: GuardedClient  # fetches provider media (recordings) to stream on, from the provider's storage only


DEPS = web.AppKey("deps", Deps)
ROUTE_TABLE = web.AppKey("route_table", list)


def deps(request: web.Request) -> Deps:
    return request.app[DEPS]
