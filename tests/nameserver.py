"""A DNS server of the test's own on loopback, answering A records the test sets: a stand-in for the cluster DNS
that resolves a headless Service's name to the address of every ready pod. A gRPC target names it as the DNS
server to ask (`dns://127.0.0.1:<port>/<name>:<port>`, gRPC's c-ares resolver); the name and what a client does
with its answer (round robin, resolving again when a connection closes) are as on Kubernetes."""
from __future__ import annotations

import asyncio
from typing import cast

import dns.message
import dns.rdatatype
import dns.rrset

TTL = 1


class Resolver(asyncio.DatagramProtocol):
    """Answers a query for a name of `records` with its addresses (A), any other with no record."""

    def __init__(self) -> None:
        self.records: dict[str, list[str]] = {}
        self.queries = 0
        self._transport: asyncio.DatagramTransport | None = None

    @property
    def port(self) -> int:
        assert self._transport is not None
        return self._transport.get_extra_info("sockname")[1]

    def target(self, name: str, port: int) -> str:
        """A gRPC target resolving `name` with this server."""
        return f"dns://127.0.0.1:{self.port}/{name}:{port}"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)  # (uvloop's is not of asyncio's class)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        query = dns.message.from_wire(data)
        reply = dns.message.make_response(query)
        (question,) = query.question
        addresses = self.records.get(question.name.to_text(omit_final_dot=True), [])
        if question.rdtype == dns.rdatatype.A and addresses:
            self.queries += 1
            reply.answer.append(dns.rrset.from_text_list(question.name, TTL, "IN", "A", addresses))
        assert self._transport is not None
        self._transport.sendto(reply.to_wire(), addr)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


async def serve() -> Resolver:
    _, resolver = await asyncio.get_running_loop().create_datagram_endpoint(Resolver, local_addr=("127.0.0.1", 0))
    return resolver
