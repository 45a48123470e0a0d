"""The models against the committed contract, clients/openapi.json (which the server's own test
keeps equal to what the server generates): every schema has a model, and every model has the
schema's fields with the same names, presence, nullability, types, enums and minimums. Then
objects built from the contract alone go through the decoders: valid ones decode, and each
missing, mistyped or null required field is refused by name."""

from __future__ import annotations

import copy
import dataclasses
import json
import typing
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from lfp_swarm_lease import LeaderToken, ProtocolError
from lfp_swarm_lease import _models as models
from lfp_swarm_lease._wire import decode, encode, hints, required, unwrap_optional, wire_name

CONTRACT = json.loads((Path(__file__).resolve().parents[2] / "openapi.json").read_text())
SCHEMAS: dict[str, Any] = CONTRACT["components"]["schemas"]

# The model of each schema of the contract.
MODELS: dict[str, type] = {
    "State": models.State,
    "InfoBody": models.Info,
    "HealthBody": models.Health,
    "ErrorBody": models.ErrorBody,
    "CreatedElection": models.CreatedElection,
    "ElectionLeader": models.ElectionLeader,
    "CampaignRequest": models.CampaignRequest,
    "CampaignResult": models.CampaignResult,
    "RenewRequest": models.RenewRequest,
    "ResignRequest": models.ResignRequest,
    "ResignResult": models.ResignResult,
    "ElectionStatus": models.ElectionStatus,
    "WatchFrame": models.WatchFrame,
}
SCHEMA_OF = {m: name for name, m in MODELS.items()}
RESPONSES = [name for name in MODELS if not name.endswith("Request")]


def test_every_schema_has_a_model() -> None:
    assert sorted(SCHEMAS) == sorted(MODELS)


def nullable(prop: dict[str, Any]) -> bool:
    """Whether the contract lets a property be null. WatchFrame.leader is a $ref, which cannot
    say null, and says it in its description ("or null when vacant"); the server sends null."""
    t = prop.get("type")
    return (isinstance(t, list) and "null" in t) or "or null" in prop.get("description", "")


def python_type(name: str, prop: dict[str, Any]) -> Any:
    """The Python type a property maps to."""
    if "$ref" in prop:
        return MODELS[prop["$ref"].rsplit("/", 1)[1]]
    t = prop["type"]
    t = next(x for x in t if x != "null") if isinstance(t, list) else t
    if "enum" in prop:
        return typing.Literal[tuple(prop["enum"])]
    if t == "string":
        if prop.get("format") == "date-time":
            return datetime
        return LeaderToken if name == "leader_token" else str
    return {"integer": int, "boolean": bool}[t]


@pytest.mark.parametrize("schema", sorted(MODELS))
def test_model_fields_match_the_schema(schema: str) -> None:
    model = MODELS[schema]
    spec = SCHEMAS[schema]
    props: dict[str, Any] = spec["properties"]
    req = set(spec.get("required", []))
    fields = {wire_name(f): f for f in dataclasses.fields(model)}
    assert sorted(fields) == sorted(props), f"{model.__name__} fields vs {schema} properties"
    types_ = hints(model)
    for name, f in fields.items():
        prop = props[name]
        assert required(f) == (name in req), f"{schema}.{name}: required"
        inner, is_optional = unwrap_optional(types_[f.name])
        if required(f):
            assert is_optional == nullable(prop), f"{schema}.{name}: nullable"
        else:
            assert is_optional and f.default is None, f"{schema}.{name}: optional, default None"
        assert inner == python_type(name, prop), f"{schema}.{name}: type"
        assert f.metadata.get("minimum") == prop.get("minimum"), f"{schema}.{name}: minimum"


def example(schema: str) -> dict[str, Any]:
    """A valid object of the schema, every property present, built from the contract only."""
    out: dict[str, Any] = {}
    for name, prop in SCHEMAS[schema]["properties"].items():
        if "$ref" in prop:
            out[name] = example(prop["$ref"].rsplit("/", 1)[1])
            continue
        t = prop["type"]
        t = next(x for x in t if x != "null") if isinstance(t, list) else t
        if "enum" in prop:
            out[name] = prop["enum"][0]
        elif t == "string":
            out[name] = "2026-11-29T12:00:30.123456789Z" if prop.get("format") == "date-time" \
                else f"{name}-value"
        elif t == "integer":
            out[name] = prop.get("minimum", 0) + 7
        else:
            out[name] = True
    return out


def wrong(prop: dict[str, Any]) -> object:
    """A value of another JSON type than the property's."""
    if "$ref" in prop:
        return 42
    t = prop["type"]
    t = next(x for x in t if x != "null") if isinstance(t, list) else t
    return {"string": 42, "integer": "7", "boolean": "true"}[t]


@pytest.mark.parametrize("schema", RESPONSES)
def test_contract_objects_decode(schema: str) -> None:
    obj = example(schema)
    decoded = decode(MODELS[schema], obj, schema)
    for f in dataclasses.fields(decoded):
        value = getattr(decoded, f.name)
        wire = obj[wire_name(f)]
        if isinstance(value, LeaderToken):
            assert value.reveal() == wire
        elif isinstance(value, datetime):
            assert value.isoformat() == "2026-11-29T12:00:30.123456+00:00"
        elif dataclasses.is_dataclass(value):
            assert encode(value).keys() == wire.keys()
        else:
            assert value == wire
    # Unknown fields, of a later server version, are ignored.
    assert decode(MODELS[schema], {**obj, "added_later": [1]}, schema) == decoded


@pytest.mark.parametrize("schema,name", [
    (s, n) for s in RESPONSES for n in SCHEMAS[s].get("required", [])])
def test_missing_mistyped_or_null_required_fields_are_refused(schema: str, name: str) -> None:
    obj = example(schema)
    prop = SCHEMAS[schema]["properties"][name]
    missing = copy.deepcopy(obj)
    del missing[name]
    with pytest.raises(ProtocolError, match=f"field '{name}' is missing"):
        decode(MODELS[schema], missing, schema)
    with pytest.raises(ProtocolError, match=f"field '{name}'"):
        decode(MODELS[schema], {**obj, name: wrong(prop)}, schema)
    if nullable(prop):
        assert getattr(decode(MODELS[schema], {**obj, name: None}, schema), name) is None
    else:
        with pytest.raises(ProtocolError, match=f"field '{name}': .*got null"):
            decode(MODELS[schema], {**obj, name: None}, schema)


@pytest.mark.parametrize("data", [None, 42, "state", [], True])
def test_anything_but_an_object_is_refused(data: object) -> None:
    with pytest.raises(ProtocolError, match="want a JSON object"):
        decode(models.State, data, "event 'current'")


def test_integers_refuse_booleans_fractions_and_values_below_the_minimum() -> None:
    obj = example("State")
    for bad, why in [(True, "want an integer"), (1.5, "want an integer"),
                     (-1, "below the minimum")]:
        with pytest.raises(ProtocolError, match=why):
            decode(models.State, {**obj, "fence": bad}, "State")
    assert decode(models.State, {**obj, "fence": 9.0}, "State").fence == 9
    with pytest.raises(ProtocolError, match="'status': 'elected' is not one of"):
        decode(models.ElectionStatus, {**example("ElectionStatus"), "status": "elected"}, "s")
    with pytest.raises(ProtocolError, match="schema_version': .* is not one of"):
        decode(models.WatchFrame, {**example("WatchFrame"), "schema_version": True}, "w")


def test_errors_never_quote_a_string_value() -> None:
    token = "t0k3n-value-that-must-not-show"
    with pytest.raises(ProtocolError) as e:
        decode(models.ElectionLeader, {"candidate_id": token, "term": "x", "expires_at": token},
               "leader")
    assert token not in str(e.value)
