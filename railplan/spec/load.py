"""Reading a spec: YAML file, ``--set`` overrides, validation errors as sentences; YAML out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from railplan.errors import SpecError
from railplan.identifiers import shorten
from railplan.safe_load import load_yaml, load_yaml_file
from railplan.sentences import sentence
from railplan.spec.schema import Spec

#: a --set value is a short YAML scalar or flow list; far smaller limits than a file's
_SET_BYTES = 64 * 1024
_SET_NODES = 10_000


#: pydantic's bound errors -> (its context key, what the value is, what to use instead)
_BOUNDS = {
    "greater_than_equal": ("ge", "is less than", "use {} or more"),
    "greater_than": ("gt", "is not more than", "use more than {}"),
    "less_than_equal": ("le", "is more than", "use {} or less"),
    "less_than": ("lt", "is not less than", "use less than {}"),
}


def _bound_message(err: Any) -> str:
    """A value out of its bounds, with the fix: ``0 is less than 1; use 1 or more``."""
    key, what, fix = _BOUNDS[err["type"]]
    bound = (err.get("ctx") or {}).get(key)
    if bound is None:
        return str(err["msg"])
    return f"{shorten(repr(err.get('input')), 40)} {what} {bound}; {fix.format(bound)}"


def _format_errors(exc: ValidationError, where: str) -> str:
    lines = []
    for err in exc.errors():
        path = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = sentence(err)
        if err["type"] == "extra_forbidden":
            msg = "unknown field; check the spelling against `railplan schema`"
        elif err["type"] in _BOUNDS:
            msg = _bound_message(err)
        lines.append(f"{where}{shorten(path, 120)}: {shorten(msg, 400)}")
    return "\n".join(lines)


def spec_from_dict(data: Any, where: str = "") -> Spec:
    """Validate a parsed spec; raises SpecError with one line per problem."""
    prefix = f"{where}: " if where else ""
    if not isinstance(data, dict):
        raise SpecError(f"{prefix}a spec must be a mapping with at least a 'cluster' section")
    try:
        return Spec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_format_errors(exc, prefix)) from None


def load_spec(path: str | Path, overrides: list[str] | None = None) -> Spec:
    """Read and validate a YAML spec file, applying ``path=value`` overrides first."""
    file = Path(path)
    data = load_yaml_file(file, "spec file", SpecError)
    if data is None:
        data = {}
    data = apply_overrides(data, overrides or [])
    return spec_from_dict(data, file.name)


def _plain_copy(value: Any, where: str, depth: int = 0) -> Any:
    """A deep copy of plain data (mappings, lists, str, int, float, bool, None); else SpecError."""
    if depth > 64:
        raise SpecError(f"{where}: nested too deeply for a spec")
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise SpecError(f"{where}: the key {shorten(repr(key))} is not a field name")
            out[key] = _plain_copy(item, where, depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [_plain_copy(item, where, depth + 1) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise SpecError(
        f"{where}: {shorten(repr(value))} is a {type(value).__name__}, which a spec cannot hold; "
        "use strings, numbers, true/false, lists and mappings"
    )


def _override_value(key: str, raw: str) -> Any:
    """A ``--set`` value read as YAML (``2``, ``false``, ``[a, b]``), else the raw string."""
    try:
        return load_yaml(
            raw, f"--set {shorten(key)}", SpecError, limit=_SET_BYTES, max_nodes=_SET_NODES
        )
    except SpecError as exc:
        if "not valid YAML" in str(exc):
            return raw
        raise


def apply_overrides(data: Any, overrides: list[str]) -> Any:
    """Apply ``--set a.b.c=value`` overrides (value parsed as YAML) to a spec dict."""
    if not isinstance(data, dict):
        return data
    data = _plain_copy(data, "spec")
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SpecError(
                f"--set {shorten(item)!r}: write it as path=value, e.g. fabric.planes=2"
            )
        value = _override_value(key, raw)
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise SpecError(
                    f"--set {shorten(key)}: {shorten(part)} is not a section, so it has no fields"
                )
            node = child
        node[parts[-1]] = value
    return data


#: sections written only when they differ from their defaults (outputs of specs that do not
#: use them stay byte-identical to those written before the sections existed)
QUIET_SECTIONS = ("bill", "costs", "spares")
#: fabric fields written only when set: a design planned without them reads as before they
#: existed (byte-identical design files)
QUIET_FABRIC_FIELDS = ("su_nodes",)


def spec_to_dict(spec: Spec) -> dict[str, Any]:
    """The resolved spec as plain data (every default filled in, but the cost sections only
    when set to something other than their defaults)."""
    data = spec.model_dump(mode="json")
    for key in QUIET_SECTIONS:
        if getattr(spec, key) == type(getattr(spec, key))():
            data.pop(key, None)
    for key in QUIET_FABRIC_FIELDS:
        if data["fabric"].get(key) is None:
            data["fabric"].pop(key, None)
    return data


def spec_to_yaml(spec: Spec) -> str:
    return yaml.safe_dump(spec_to_dict(spec), sort_keys=False, default_flow_style=False)


def spec_json_schema() -> dict[str, Any]:
    """JSON Schema of the spec file, for editor completion of YAML specs."""
    schema = Spec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "railplan spec"
    return schema
