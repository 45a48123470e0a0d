"""Strict decoding and encoding of the contract's JSON objects into the client's dataclasses.

A model is a dataclass whose fields carry the wire's names and types: ``str``, ``int``,
``bool``, ``datetime``, ``Literal[...]``, :class:`LeaderToken` (a string on the wire), another
model, or one of those ``| None``. A field without a default is required (``| None`` then means
the value may be null); a field defaulting to ``None`` may be omitted. Field metadata
``{"minimum": n}`` bounds an integer. The same annotations drive the contract test
(tests/test_contract.py), so a model cannot drift from clients/openapi.json unnoticed.

Unknown fields are ignored, so that a newer server may add some; everything else that is not
the contract's is refused with a :class:`ProtocolError` naming the field. Messages never quote
a string value, so a token in the wrong place cannot leak through one.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, TypeVar

from ._errors import ProtocolError
from ._token import LeaderToken

T = TypeVar("T")
_NONE = type(None)

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)


def parse_time(text: str) -> datetime:
    """An RFC 3339 timestamp (the server writes up to nanoseconds; kept to microseconds) as an
    aware datetime. Python 3.10's ``fromisoformat`` takes neither ``Z`` nor nine digits."""
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise ValueError("not an RFC 3339 timestamp")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    micro = int((m.group(7) or "0").ljust(6, "0")[:6])
    if m.group(8):
        tz = timezone.utc
    else:
        offset = timedelta(hours=int(m.group(10)), minutes=int(m.group(11)))
        tz = timezone(-offset if m.group(9) == "-" else offset)
    # A leap second (60) is not representable; it is the last instant of its minute.
    return datetime(year, month, day, hour, minute, min(second, 59), micro, tzinfo=tz)


def format_time(t: datetime) -> str:
    """The RFC 3339 form of an aware datetime, in UTC with ``Z``."""
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def kind(v: object) -> str:
    """The JSON kind of a decoded value, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


@functools.lru_cache(maxsize=None)
def hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of a model."""
    return typing.get_type_hints(cls)


def wire_name(f: dataclasses.Field[Any]) -> str:
    """The JSON name of a model's field."""
    return str(f.metadata.get("wire", f.name))


def required(f: dataclasses.Field[Any]) -> bool:
    """Whether a model's field must be present on the wire."""
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def unwrap_optional(tp: Any) -> tuple[Any, bool]:
    """``(X, True)`` for ``X | None``, else ``(tp, False)``."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not _NONE]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0], True
    return tp, False


def decode(cls: Callable[..., T], obj: object, what: str) -> T:
    """The model ``cls`` from decoded JSON; a :class:`ProtocolError` naming ``what`` and the
    field when ``obj`` is not the contract's object."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"{what}: want a JSON object, got {kind(obj)}")
    assert isinstance(cls, type) and dataclasses.is_dataclass(cls)
    types_ = hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        name = wire_name(f)
        if name not in obj:
            if required(f):
                raise ProtocolError(f"{what}: field {name!r} is missing")
            continue
        kwargs[f.name] = _value(types_[f.name], obj[name], f"{what}: field {name!r}", f.metadata,
                                optional=not required(f))
    return cls(**kwargs)


def _value(tp: Any, v: object, where: str, meta: typing.Mapping[str, Any], optional: bool) -> Any:
    inner, nullable = unwrap_optional(tp)
    if v is None:
        if nullable or optional:
            return None
        raise ProtocolError(f"{where}: want {_expected(inner)}, got null")
    if inner is str:
        if isinstance(v, str):
            return v
    elif inner is bool:
        if isinstance(v, bool):
            return v
    elif inner is int:
        # JSON has one number type: 5.0 is an integer, 5.5 and true are not.
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, int) and not isinstance(v, bool):
            minimum = meta.get("minimum")
            if minimum is not None and v < minimum:
                raise ProtocolError(f"{where}: {v} is below the minimum {minimum}")
            return v
    elif inner is datetime:
        if isinstance(v, str):
            try:
                return parse_time(v)
            except ValueError:
                raise ProtocolError(f"{where}: not an RFC 3339 timestamp") from None
    elif inner is LeaderToken:
        if isinstance(v, str) and v:
            return LeaderToken(v)
    elif typing.get_origin(inner) is typing.Literal:
        allowed = typing.get_args(inner)
        if v in allowed and not isinstance(v, bool):  # true == 1, but is not the enum's 1
            return v
        shown = repr(v)[:40] if isinstance(v, (str, int)) else kind(v)
        raise ProtocolError(f"{where}: {shown} is not one of {', '.join(map(repr, allowed))}")
    elif dataclasses.is_dataclass(inner):
        return decode(inner, v, where)
    else:  # pragma: no cover - a model with a type this module does not know
        raise TypeError(f"{where}: unsupported type {inner!r}")
    raise ProtocolError(f"{where}: want {_expected(inner)}, got {kind(v)}")


def _expected(tp: Any) -> str:
    if tp is str or tp is LeaderToken:
        return "a string"
    if tp is bool:
        return "a boolean"
    if tp is int:
        return "an integer"
    if tp is datetime:
        return "an RFC 3339 timestamp"
    if typing.get_origin(tp) is typing.Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(tp)))
    return "an object"


def encode(model: object) -> dict[str, Any]:
    """The JSON object of a request model; fields that are ``None`` are left out."""
    assert dataclasses.is_dataclass(model) and not isinstance(model, type)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(model):
        v = getattr(model, f.name)
        if v is None:
            continue
        if isinstance(v, LeaderToken):
            v = v.reveal()
        elif isinstance(v, datetime):
            v = format_time(v)
        out[wire_name(f)] = v
    return out
