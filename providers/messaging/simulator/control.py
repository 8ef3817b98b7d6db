"""The test control plane under `/_simulator` (the package docstring documents the API): the shared faults and
request log (`providers.simulator_control`) in Twilio's error shape, scripts for the next messages' status
callbacks, the simulator-only delivery outcomes, each number's opt-out handling and the numbers for sale. Not part of Twilio's API and
not authenticated."""
from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

import phonenumbers
from aiohttp import web

from core.contact import is_e164
from providers.messaging.simulator.delivery import CallbackScript, Delivery
from providers.messaging.simulator.errors import DELIVERY_ERRORS, error_response, fault_response
from providers.messaging.simulator.numbers import Numbers
from providers.messaging.simulator.optout import HANDLINGS, OptOuts
from providers.simulator_control import ControlPlane, FaultRules, is_int, joined, json_object


def parse_script(body: dict[str, Any]) -> tuple[CallbackScript, list[str]]:
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
    """A fault may stay until cleared (`times` null: an outage, as the soak injects); a delay-only fault serves the
    request and holds its answer back: a send that timed out at the client but went out, which must not be
    repeated."""

    def __init__(self, delivery: Delivery, opt_outs: OptOuts, numbers: Numbers):
        super().__init__(refused, fault_response, rules=FaultRules(until_cleared=True), hold_back=True)
        self.delivery, self.opt_outs, self.numbers = delivery, opt_outs, numbers

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

    async def set_outcome(self, request: web.Request) -> web.Response:
        """Simulator-only: every text to `to` from now on ends with the carrier error `error_code`."""
        body = await json_object(request)
        errors = [f"property {k} should not exist" for k in sorted(set(body) - {"to", "error_code"})]
        if not is_e164(body.get("to")):
            errors.append("to must be a valid E.164 phone number")
        if not (is_int(body.get("error_code")) and body["error_code"] in DELIVERY_ERRORS):
            errors.append(f"error_code must be one of {', '.join(map(str, sorted(DELIVERY_ERRORS)))}")
        if errors:
            return refused(errors)
        self.delivery.outcomes[body["to"]] = body["error_code"]
        return web.json_response({"to": body["to"], "error_code": body["error_code"]}, status=201)

    async def list_outcomes(self, request: web.Request) -> web.Response:
        return web.json_response(self.delivery.outcomes)

    async def clear_outcomes(self, request: web.Request) -> web.Response:
        cleared = len(self.delivery.outcomes)
        self.delivery.outcomes.clear()
        return web.json_response({"cleared": cleared})

    async def set_opt_out(self, request: web.Request) -> web.Response:
        """How one number (or, without `number`, every number without its own) handles opt-out keywords."""
        body = await json_object(request)
        errors = [f"property {k} should not exist" for k in sorted(set(body) - {"handling", "number"})]
        if body.get("handling") not in HANDLINGS:
            errors.append(f"handling must be one of {', '.join(HANDLINGS)}")
        if "number" in body and not is_e164(body["number"]):
            errors.append("number must be a valid E.164 phone number")
        if errors:
            return refused(errors)
        if "number" in body:
            self.opt_outs.numbers[body["number"]] = body["handling"]
        else:
            self.opt_outs.handling = body["handling"]
        return web.json_response(self._opt_out_view(), status=201)

    async def get_opt_out(self, request: web.Request) -> web.Response:
        return web.json_response(self._opt_out_view())

    async def reset_opt_out(self, request: web.Request) -> web.Response:
        """Every number back to the simulator's handling (blocks are kept: only a START lifts one)."""
        cleared = len(self.opt_outs.numbers)
        self.opt_outs.numbers.clear()
        return web.json_response({"cleared": cleared})

    def _opt_out_view(self) -> dict[str, Any]:
        return {"handling": self.opt_outs.handling, "numbers": self.opt_outs.numbers,
                "blocked": [{"from": number, "to": texter} for number, texter in sorted(self.opt_outs.blocked)]}

    async def set_stock(self, request: web.Request) -> web.Response:
        """How many numbers an area code (or, without one, a country) offers for sale (0: sold out)."""
        body = await json_object(request)
        errors = [f"property {k} should not exist" for k in sorted(set(body) - {"country", "area_code", "count"})]
        if not (isinstance(body.get("country"), str) and body["country"] in phonenumbers.SUPPORTED_REGIONS):
            errors.append("country must be an ISO 3166 code such as US")
        if "area_code" in body and not (isinstance(body["area_code"], str) and body["area_code"].isdigit()):
            errors.append("area_code must be a string of digits")
        if not (is_int(body.get("count")) and body["count"] >= 0):
            errors.append("count must be a non-negative integer")
        if errors:
            return refused(errors)
        self.numbers.stock[(body["country"], body.get("area_code", ""))] = body["count"]
        return web.json_response(self._stock_view(), status=201)

    async def get_stock(self, request: web.Request) -> web.Response:
        return web.json_response(self._stock_view())

    async def reset_stock(self, request: web.Request) -> web.Response:
        cleared = len(self.numbers.stock)
        self.numbers.stock.clear()
        return web.json_response({"cleared": cleared})

    def _stock_view(self) -> list[dict[str, Any]]:
        return [{"country": c, "area_code": a, "count": n} for (c, a), n in sorted(self.numbers.stock.items())]

    def add_routes(self, router: web.UrlDispatcher) -> None:
        super().add_routes(router)
        router.add_post(f"{self.prefix}/callbacks", self.add_script)
        router.add_delete(f"{self.prefix}/callbacks", self.clear_scripts)
        router.add_post(f"{self.prefix}/delivery-outcomes", self.set_outcome)
        router.add_get(f"{self.prefix}/delivery-outcomes", self.list_outcomes)
        router.add_delete(f"{self.prefix}/delivery-outcomes", self.clear_outcomes)
        router.add_post(f"{self.prefix}/opt-out", self.set_opt_out)
        router.add_get(f"{self.prefix}/opt-out", self.get_opt_out)
        router.add_delete(f"{self.prefix}/opt-out", self.reset_opt_out)
        router.add_post(f"{self.prefix}/available-numbers", self.set_stock)
        router.add_get(f"{self.prefix}/available-numbers", self.get_stock)
        router.add_delete(f"{self.prefix}/available-numbers", self.reset_stock)
