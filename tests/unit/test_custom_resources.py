"""The custom resources of every rendered overlay (cert-manager's Certificates and Issuers, the Prometheus Operator's
PodMonitor and PrometheusRule, CloudNativePG's Cluster and ScheduledBackup, the External Secrets Operator's
ExternalSecrets, the Gateway API's HTTPRoute) against their CRDs' own OpenAPI schemas, vendored in deploy/k8s/crds
(kubernetes-validate knows only Kubernetes' own types). Strict as the API server's field validation: an unknown field is an
error, except where the CRD keeps unknown fields (x-kubernetes-preserve-unknown-fields)."""
from __future__ import annotations

import copy
from functools import cache
from typing import Any

import jsonschema
import pytest
import yaml

from tests.unit.test_k8s_manifests import CUSTOM_GROUPS, K8S, RENDERS, needs_kubectl, of_kind, rendered

CRDS = K8S / "crds"


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """A CRD's structural schema as JSON Schema that refuses unknown fields: an object schema with `properties` and
    no `additionalProperties` of its own closes them; the Kubernetes extensions are read, then dropped."""
    out = {k: v for k, v in schema.items() if not k.startswith("x-kubernetes-")}
    if "properties" in schema:
        out["properties"] = {name: strict(sub) for name, sub in schema["properties"].items()}
        if "additionalProperties" not in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    if isinstance(schema.get("additionalProperties"), dict):
        out["additionalProperties"] = strict(schema["additionalProperties"])
    if "items" in schema:
        out["items"] = strict(schema["items"])
    for key in ("anyOf", "allOf", "oneOf"):
        if key in schema:
            out[key] = [strict(sub) for sub in schema[key]]
    if schema.get("x-kubernetes-int-or-string") and "anyOf" not in schema:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return out


@cache
def schemas() -> dict[tuple[str, str], jsonschema.Draft4Validator]:
    """(apiVersion, kind) -> a validator, for every served version of every vendored CRD."""
    found = {}
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        spec = crd["spec"]
        for version in spec["versions"]:
            if version["served"]:
                schema = strict(version["schema"]["openAPIV3Schema"])
                found[(f"{spec['group']}/{version['name']}", spec["names"]["kind"])] = jsonschema.Draft4Validator(schema)
    return found


def errors(doc: dict[str, Any]) -> list[str]:
    validator = schemas()[(doc["apiVersion"], doc["kind"])]
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def custom(render: str) -> list[dict[str, Any]]:
    return [d for d in rendered(render) if d["apiVersion"].startswith(CUSTOM_GROUPS)]


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_every_custom_resource_is_valid_against_its_crds_schema(render):
    docs = custom(render)
    for doc in docs:
        assert (doc["apiVersion"], doc["kind"]) in schemas(), f"no vendored CRD for {doc['apiVersion']} {doc['kind']}"
        assert not errors(doc), (doc["kind"], doc["metadata"]["name"], errors(doc))
    kinds = {d["kind"] for d in docs}
    assert {"Certificate", "Issuer", "Cluster", "ScheduledBackup", "ExternalSecret", "HTTPRoute"} <= kinds
    if render == "production":  # the monitoring component
        assert {"PodMonitor", "PrometheusRule"} <= kinds


@needs_kubectl
def test_the_schemas_refuse_an_unknown_field_and_a_wrong_type():
    """The check bites: a misspelt field (ignored by a lax reading, silently dropped by a lax server) and a value
    of the wrong type are errors."""
    monitor = copy.deepcopy(next(iter(of_kind(tuple(custom("production")), "PodMonitor").values())))
    monitor["spec"]["podMetricsEndpoints"][0]["scrapeIntervall"] = "30s"
    assert any("scrapeIntervall" in e for e in errors(monitor))
    rule = copy.deepcopy(next(iter(of_kind(tuple(custom("production")), "PrometheusRule").values())))
    rule["spec"]["groups"][0]["rules"][0]["labels"] = {"severity": 3}
    assert errors(rule)
    certificate = copy.deepcopy(next(iter(of_kind(tuple(custom("production")), "Certificate").values())))
    certificate["spec"]["dnsName"] = ["accounts"]
    assert errors(certificate)
    docs = tuple(custom("production"))
    cluster = copy.deepcopy(of_kind(docs, "Cluster")["switchboard-db"])
    cluster["spec"]["backup"]["barmanObjectStore"]["wal"]["compresion"] = "gzip"
    assert any("compresion" in e for e in errors(cluster))
    cluster = copy.deepcopy(of_kind(docs, "Cluster")["switchboard-db"])
    cluster["spec"]["instances"] = "three"
    assert errors(cluster)
    secret = copy.deepcopy(of_kind(docs, "ExternalSecret")["switchboard-secrets"])
    secret["spec"]["target"]["template"]["mergePolicy"] = "Union"
    assert errors(secret)
    route = copy.deepcopy(next(iter(of_kind(docs, "HTTPRoute").values())))
    route["spec"]["rules"][0]["backendRefs"][0]["servicePort"] = 8080
    assert any("servicePort" in e for e in errors(route))


def test_the_vendored_crds_name_their_origin():
    """Each vendored CRD is a release's file, unchanged (its version is in its annotations or the README's list)."""
    readme = (CRDS / "README.md").read_text()
    for path in CRDS.glob("*.yaml"):
        assert path.name in readme, path.name
        assert yaml.safe_load(path.read_text())["kind"] == "CustomResourceDefinition"

