"""The architecture's floor for bench.gateway: bench.bare_server's request split over one gRPC hop, nothing else.

`python -m bench.bare_two_hop back PORT` serves one gRPC method (raw bytes, no protobuf): it does bench.bare_server's
work (the key by its keyed hash, the business row, the JSON) and answers the JSON. `python -m bench.bare_two_hop
front PORT BACK_PORT` is an aiohttp server whose handler passes the Authorization header and `?id=` to that method
and returns what it answers (the body passed through as bytes). Two processes and one gRPC aio hop, as the real path has (gateway -> accounts), with no
authentication cache, signed caller context, tracing, usage log or validation: what the shape itself costs on this
machine, so the full path's ratio can be read against it as well as against one process.
"""
from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import grpc
from aiohttp import web

from bench.bare_server import _init, workspace_json
from core.settings import load
from services.accounts.secret_keys import SecretKeys

METHOD = "/bench.Bare/Workspace"


class Back:
    def __init__(self, pool: asyncpg.Pool, keys: SecretKeys):
        self.pool, self.keys = pool, keys

    async def workspace(self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        header, _, business_id = request.decode().partition("\n")
        status, body = await workspace_json(self.pool, self.keys, header, business_id)
        return b"%d " % status + json.dumps(body).encode()  # the status, a space, the JSON body


async def serve_back(port: int) -> None:
    settings = load()
    pool = await asyncpg.create_pool(settings.database_url.reveal(), min_size=10, max_size=20, init=_init)
    back = Back(pool, SecretKeys.of(settings))
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_unary_rpc_method_handler(back.workspace)  # bytes in, out
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Bare", {"Workspace": handler}),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


CALL = web.AppKey("call", grpc.aio.UnaryUnaryMultiCallable)


async def front_workspaces(request: web.Request) -> web.Response:
    asked = f"{request.headers.get('Authorization', '')}\n{request.query.get('id', '')}".encode()
    status, _, body = (await request.app[CALL](asked, timeout=5)).partition(b" ")
    return web.Response(body=body, status=int(status), content_type="application/json")


def front_app(back_port: int) -> web.Application:
    app = web.Application()

    async def channel_ctx(app: web.Application) -> AsyncIterator[None]:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{back_port}")
        app[CALL] = channel.unary_unary(METHOD)
        yield
        await channel.close()

    app.cleanup_ctx.append(channel_ctx)
    app.router.add_get("/api/v1/workspaces", front_workspaces)
    return app


if __name__ == "__main__":
    import uvloop

    uvloop.install()
    if sys.argv[1] == "back":
        asyncio.run(serve_back(int(sys.argv[2])))
    else:
        web.run_app(front_app(int(sys.argv[3])), host="127.0.0.1", port=int(sys.argv[2]), print=None,
                    access_log=None)
