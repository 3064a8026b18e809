"""Reading a spec: YAML file, ``--set`` overrides, validation errors as sentences; YAML out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from railplan.errors import SpecError
from railplan.spec.schema import Spec


def _format_errors(exc: ValidationError, where: str) -> str:
    lines = []
    for err in exc.errors():
        path = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field; check the spelling against `railplan schema`"
        lines.append(f"{where}{path}: {msg}")
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
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"spec file {file} does not exist") from None
    except OSError as exc:
        raise SpecError(f"spec file {file} cannot be read ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark else ""
        raise SpecError(f"{file.name}: not valid YAML{line}; check the indentation there") from None
    if data is None:
        data = {}
    data = apply_overrides(data, overrides or [])
    return spec_from_dict(data, file.name)


def apply_overrides(data: Any, overrides: list[str]) -> Any:
    """Apply ``--set a.b.c=value`` overrides (value parsed as YAML) to a spec dict."""
    if not isinstance(data, dict):
        return data
    data = json.loads(json.dumps(data))  # deep copy of plain data
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SpecError(f"--set {item!r}: write it as path=value, e.g. fabric.planes=2")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise SpecError(f"--set {key}: {part} is not a section, so it has no fields")
            node = child
        node[parts[-1]] = value
    return data


def spec_to_dict(spec: Spec) -> dict[str, Any]:
    """The resolved spec as plain data (every default filled in)."""
    return spec.model_dump(mode="json")


def spec_to_yaml(spec: Spec) -> str:
    return yaml.safe_dump(spec_to_dict(spec), sort_keys=False, default_flow_style=False)


def spec_json_schema() -> dict[str, Any]:
    """JSON Schema of the spec file, for editor completion of YAML specs."""
    schema = Spec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "railplan spec"
    return schema
