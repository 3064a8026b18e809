"""The cluster spec (YAML), validated with pydantic so every error names its field path."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from railplan.errors import SpecError

TOPOLOGIES = ("roft", "rail-only", "matrix", "fat-tree")
ROUTING_POLICIES = ("default", "ecmp", "dmodk", "deterministic", "adaptive")
_RATIO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*:\s*1\s*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClusterSpec(_Strict):
    """The compute side: how many GPUs and what each node looks like."""

    gpus: int = Field(ge=1, le=4_194_304, description="Total GPUs in the cluster")
    node: str | None = Field(None, description="Node model id from the catalog (e.g. dgx-h100)")
    gpus_per_node: int | None = Field(None, ge=1, le=64)
    nic: str | None = Field(None, description="NIC model id from the catalog")
    nics_per_node: int | None = Field(None, ge=1, le=64)
    ports_per_nic: int | None = Field(None, ge=1, le=4)
    port_speed_gbps: int | None = Field(None, gt=0, le=3200)


class MatrixSpec(_Strict):
    """Matrix options: which node ports go to leaf group A (the rest go to group B)."""

    a_ports: list[int] | None = Field(
        None,
        description="Node port numbers wired to group A (default: first port of each dual-"
        "port NIC, else the first half of the NICs)",
    )
    links_per_pair: int | None = Field(None, ge=1, description="Parallel links per A-B leaf pair")


class FatTreeSpec(_Strict):
    tors_per_rack: Literal[1, 2] = 1


class RoutingSpec(_Strict):
    policy: Literal["default", "ecmp", "dmodk", "deterministic", "adaptive"] = "default"
    adaptive_classes: list[int] = Field(
        default_factory=list, description="IB SLs / classes with AR"
    )


class FabricSpec(_Strict):
    """The network: topology family, allowed switches and how it is sized."""

    topology: Literal["roft", "rail-only", "matrix", "fat-tree"] = "roft"
    switches: list[str] | None = Field(
        None,
        description="Allowed switch model ids (default: every catalog switch at the NIC speed)",
    )
    oversubscription: str = Field("1:1", description="Leaf down:up bandwidth, e.g. '1:1', '3:1'")
    planes: int = Field(1, ge=1, le=16)
    plane_assignment: Literal["auto", "port", "nic"] = "auto"
    whole_su: bool = Field(True, description="Provision whole scalable units (leaves and uplinks)")
    tiers: Literal["auto", 2, 3] = "auto"
    matrix: MatrixSpec = Field(default_factory=MatrixSpec)
    fat_tree: FatTreeSpec = Field(default_factory=FatTreeSpec)
    routing: RoutingSpec = Field(default_factory=RoutingSpec)

    @field_validator("oversubscription", mode="before")
    @classmethod
    def _yaml11_sexagesimal(cls, v: object) -> object:
        """YAML 1.1 reads an unquoted ``3:1`` as the base-60 integer 181; read it back."""
        if isinstance(v, bool):
            return v
        if isinstance(v, int):
            return f"{v // 60}:{v % 60}" if v >= 60 else f"{v}:1"
        if isinstance(v, float):
            return f"{v:g}:1"
        return v

    @field_validator("oversubscription")
    @classmethod
    def _ratio(cls, v: str) -> str:
        m = _RATIO.match(str(v))
        if not m or float(m.group(1)) < 1:
            raise ValueError("must be a ratio like '1:1', '2:1' or '3:1' (down:up, >= 1)")
        value = float(m.group(1))
        return f"{value:g}:1"

    @field_validator("switches")
    @classmethod
    def _nonempty(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not v:
            raise ValueError("list at least one switch model id, or leave it out")
        return v

    @property
    def oversubscription_ratio(self) -> float:
        return float(self.oversubscription.split(":")[0])


class LayoutSpec(_Strict):
    """Physical layout (racks and rows); the BOM issue extends it."""

    nodes_per_rack: int = Field(4, ge=1, le=64)


class Spec(_Strict):
    """A whole railplan spec file."""

    name: str = Field("cluster", min_length=1, max_length=80, pattern=r"^[A-Za-z0-9._-]+$")
    cluster: ClusterSpec
    fabric: FabricSpec = Field(default_factory=FabricSpec)
    layout: LayoutSpec = Field(default_factory=LayoutSpec)


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
