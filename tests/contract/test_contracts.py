"""Contract tests generated from the proto descriptors, not hand-listed."""
from __future__ import annotations

import filecmp
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pool, json_format, symbol_database
from google.protobuf.descriptor import FieldDescriptor
from grpc_health.v1 import (
    health_pb2,  # noqa: F401 - registers grpc.health.v1 in the pool
)

from core import registry
from core.tenant import Tenant
from gateway.route_table import all_routes
from tests.tenants import signed

ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = ROOT / "protos" / "switchboard" / "v1"
PB2_MODULES = [importlib.import_module(f"switchboard.v1.{p.stem}_pb2") for p in sorted(PROTO_DIR.glob("*.proto"))]
# The registered services' own protos. switchboard.v1.Costs is every process's counter of what tagged requests
# cost (core.costs), served only where counting is on; tests/guard/test_cost_budgets.py calls it on each process.
SERVICES = [svc for mod in PB2_MODULES for svc in mod.DESCRIPTOR.services_by_name.values()
            if svc.full_name != "switchboard.v1.Costs"]
MESSAGES = [msg for mod in PB2_MODULES for msg in mod.DESCRIPTOR.message_types_by_name.values()]
GATEWAY_LOCAL = {("GET", "/api/v1/openapi.json"), ("GET", "/api/v1/schemas"),
                 ("POST", "/api/mcp/initialize"), ("POST", "/api/mcp/tools/list"),  # the connector's self-description
                 ("GET", "/.well-known/oauth-protected-resource"), ("GET", "/.well-known/oauth-protected-resource/api/mcp"),
                 ("GET", "/.well-known/oauth-authorization-server"), ("GET", "/.well-known/openid-configuration"),
                 # providers' messages the gateway stores on the PROVIDER stream for their owner's consumer
                 ("POST", "/api/v1/providers/sms/status"), ("POST", "/api/v1/providers/payments/events")}


def servicer_class(service):
    """The class defined in a services/<name>/servicer.py that implements the generated base servicer of `service`
    (sdr's composes the servicers of its capabilities, which it imports)."""
    grpc_module = importlib.import_module(service.file.name.replace(".proto", "_pb2_grpc").replace("/", "."))
    base = getattr(grpc_module, f"{service.name}Servicer")
    for path in (ROOT / "services").glob("*/servicer.py"):
        module = importlib.import_module(f"services.{path.parent.name}.servicer")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, base) and cls is not base and cls.__module__ == module.__name__:
                return cls, base
    pytest.fail(f"no servicer implements {service.full_name}")


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.full_name)
def test_every_rpc_is_implemented(service):
    cls, base = servicer_class(service)
    for method in service.methods:
        assert getattr(cls, method.name) is not getattr(base, method.name), f"{service.name}.{method.name}"


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.full_name)
async def test_every_rpc_answers_on_the_running_service(service, stack):
    port = stack.process(service.name.lower()).port
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        for method in service.methods:
            # the gateway's own calls, or those of the process an rpc is reserved to: past the interceptor, into the
            # handler
            path = f"/{service.full_name}/{method.name}"
            process = registry.RPC_CALLERS.get(path, (registry.GATEWAY,))[0]
            proven = signed(stack, Tenant(), process, to=service.name.lower())
            request_cls = symbol_database.Default().GetSymbol(method.input_type.full_name)
            response_cls = symbol_database.Default().GetSymbol(method.output_type.full_name)
            call = channel.unary_unary(path,
                                       request_serializer=request_cls.SerializeToString,
                                       response_deserializer=response_cls.FromString)
            try:
                await call(request_cls(), metadata=proven, timeout=10)
            except grpc.aio.AioRpcError as exc:
                assert exc.code() not in (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.INTERNAL,
                                          grpc.StatusCode.UNKNOWN), f"{method.name}: {exc.code()} {exc.details()}"
                assert "caller context is refused" not in (exc.details() or ""), f"{method.name}: {exc.details()}"


def _fill(message, depth=0):
    """Set every field of a message to a non-default sample value."""
    for field in message.DESCRIPTOR.fields:
        if field.message_type is not None:
            name = field.message_type.full_name
            if field.message_type.GetOptions().map_entry:
                value = field.message_type.fields_by_name["value"]
                getattr(message, field.name)["k"] = "x" if value.cpp_type == value.CPPTYPE_STRING else 1
            elif name == "google.protobuf.Timestamp":
                target = getattr(message, field.name).add() if field.is_repeated else getattr(message, field.name)
                target.FromSeconds(1_700_000_000)
            elif name == "google.protobuf.Struct":
                target = getattr(message, field.name).add() if field.is_repeated else getattr(message, field.name)
                target.update({"k": "v", "n": 1.5, "nested": {"b": True}})
            elif depth < 3:
                target = getattr(message, field.name).add() if field.is_repeated else getattr(message, field.name)
                _fill(target, depth + 1)
            continue
        sample = {FieldDescriptor.CPPTYPE_STRING: "x", FieldDescriptor.CPPTYPE_BOOL: True}.get(field.cpp_type, 7)
        if field.type == FieldDescriptor.TYPE_BYTES:
            sample = b"x"
        if field.is_repeated:
            getattr(message, field.name).append(sample)
        else:
            setattr(message, field.name, sample)
    return message


@pytest.mark.parametrize("descriptor", MESSAGES, ids=lambda m: m.full_name)
def test_every_message_round_trips_through_json(descriptor):
    cls = symbol_database.Default().GetSymbol(descriptor.full_name)
    original = _fill(cls())
    text = json_format.MessageToJson(original, preserving_proto_field_name=True)
    assert json_format.Parse(text, cls()) == original


@pytest.mark.parametrize("route", all_routes(), ids=lambda r: f"{r.method} {r.path}")
def test_every_route_points_at_an_existing_rpc(route):
    if not route.rpcs:
        assert (route.method, route.path) in GATEWAY_LOCAL, "only self-description routes and stored provider messages may skip RPCs"
        return
    pool = descriptor_pool.Default()
    for rpc in route.rpcs:
        service_name, method_name = rpc.split("/")
        service = pool.FindServiceByName(service_name)
        assert service.FindMethodByName(method_name) is not None, rpc


def test_generated_code_matches_the_protos(tmp_path):
    protos = sorted(str(p.relative_to(ROOT / "protos")) for p in PROTO_DIR.glob("*.proto"))
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-Iprotos", f"--python_out={tmp_path}",
                    f"--pyi_out={tmp_path}", f"--grpc_python_out={tmp_path}", *protos], cwd=ROOT, check=True)
    generated = sorted(p.name for p in (tmp_path / "switchboard" / "v1").iterdir())
    committed = sorted(p.name for p in PROTO_DIR.iterdir() if p.suffix in (".py", ".pyi"))
    assert generated == committed, "run `make protos` and commit the result"
    match, mismatch, errors = filecmp.cmpfiles(tmp_path / "switchboard" / "v1", PROTO_DIR, generated, shallow=False)
    assert not mismatch and not errors, f"stale generated code {mismatch + errors}: run `make protos` and commit"
