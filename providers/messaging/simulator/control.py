"""The test control plane under `/_simulator` (the package docstring documents the API): the shared faults and
request log (`providers.simulator_control`) in Twilio's error shape, and scripts for the next messages' status
callbacks. Not part of Twilio's API and not authenticated."""
from __future__ import annotations

from dataclasses import asdict, fields

from aiohttp import web

from providers.messaging.simulator.delivery import CallbackScript, Delivery
from providers.messaging.simulator.errors import error_response, fault_response
from providers.simulator_control import ControlPlane, is_int, joined, json_object


def parse_script(body: dict) -> tuple[CallbackScript, list[str]]:
    names = {f.name for f in fields(CallbackScript)}
    errors = [f"property {k} should not exist" for k in sorted(set(body) - names)]
    errors += [f"{k} must be a boolean" for k in ("reorder", "duplicate", "bad_signature")
               if k in body and not isinstance(body[k], bool)]
    if "times" in body and not (is_int(body["times"]) and body["times"] >= 1):
        errors.append("times must be a positive integer")
    return CallbackScript(**{k: body[k] for k in names if k in body}), errors


def refused(errors: list[str] | str, status: int = 400) -> web.Response:
    """A control-plane refusal: Twilio's shape with code null."""
    return error_response(status, None, joined(errors))


class Control(ControlPlane):
    """A delay-only fault serves the request and holds its answer back: a send that timed out at the client
    but went out, which must not be repeated."""

    def __init__(self, delivery: Delivery):
        super().__init__(refused, fault_response, hold_back=True)
        self.delivery = delivery

    async def add_script(self, request: web.Request) -> web.Response:
        script, errors = parse_script(await json_object(request))
        if errors:
            return refused(errors)
        self.delivery.scripts.append(script)
        return web.json_response({"callbacks": asdict(script)}, status=201)

    async def clear_scripts(self, request: web.Request) -> web.Response:
        cleared = len(self.delivery.scripts)
        self.delivery.scripts.clear()
        return web.json_response({"cleared": cleared})

    def add_routes(self, router: web.UrlDispatcher) -> None:
        super().add_routes(router)
        router.add_post(f"{self.prefix}/callbacks", self.add_script)
        router.add_delete(f"{self.prefix}/callbacks", self.clear_scripts)
