"""Form fields <-> spec data: the TUI form edits spec paths exactly like ``railplan --set``."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from railplan.spec import Spec, apply_overrides, spec_from_dict

#: the topology select's extra choice: plan every family side by side
COMPARE = "compare"
#: the node select's choice for a node described field by field
CUSTOM = "custom"
#: the switch / NIC select's choice for "let the spec default decide"
AUTO = "auto"


@dataclass(frozen=True)
class Field:
    """One form field: widget id, the spec path it sets, its label, and how its text is passed."""

    id: str
    path: str
    label: str
    #: scalar (parsed like --set) | string (quoted) | list (one id) | option (TUI, not spec)
    kind: str = "scalar"
    hint: str = ""


FIELDS: tuple[Field, ...] = (
    Field("name", "name", "Name", "string", "cluster"),
    Field("gpus", "cluster.gpus", "GPUs"),
    Field("node", "cluster.node", "Node", "string"),
    Field("nic", "cluster.nic", "NIC", "string"),
    Field("gpus_per_node", "cluster.gpus_per_node", "GPUs/node"),
    Field("nics_per_node", "cluster.nics_per_node", "NICs/node"),
    Field("ports_per_nic", "cluster.ports_per_nic", "Ports/NIC"),
    Field("port_speed_gbps", "cluster.port_speed_gbps", "Port Gb/s"),
    Field("switch", "fabric.switches", "Switch", "list"),
    Field("topology", "fabric.topology", "Topology", "string"),
    Field("oversubscription", "fabric.oversubscription", "Oversub", "string", "1:1"),
    Field("planes", "fabric.planes", "Planes", "scalar", "1"),
    Field("nodes_per_rack", "layout.nodes_per_rack", "Nodes/rack", "scalar", "4"),
    Field("racks_per_row", "layout.racks_per_row", "Racks/row", "scalar", "16"),
    Field("placement", "", "Bill racks", "option"),
)
FIELD_BY_ID = {f.id: f for f in FIELDS}
FIELD_BY_PATH = {f.path: f for f in FIELDS}
SELECTS = ("node", "nic", "switch", "topology", "placement")
#: the bill's rack layout: first-fit then solved (``railplan plan``), or first-fit only
PLACEMENTS = (("solved", "solve"), ("first-fit only", "first-fit"))


def _get(data: dict[str, Any], path: str) -> Any:
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _delete(data: dict[str, Any], path: str) -> None:
    *parents, last = path.split(".")
    node: Any = data
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(last, None)


#: a number written in groups of three: "1,024", "1 024", "1_024" (one separator throughout)
_GROUPED = re.compile(r"[+-]?\d{1,3}(?P<sep>[, _])\d{3}(?:(?P=sep)\d{3})*")


def plain_number(text: str) -> str:
    """``1,024``, ``1 024`` or ``1_024`` as ``1024``; any other text as it is."""
    match = _GROUPED.fullmatch(text)
    return text.replace(match["sep"], "") if match else text


#: one phase in the Phases field: ``name=gpus`` (the GPUs may be grouped: ``su4=1,024``)
_PHASE = re.compile(r"([^\s=,;]+)\s*=\s*(\d{1,3}(?:[,_ ]\d{3})+(?!\d)|\d+)")


def phases_data(text: str) -> list[dict[str, Any]]:
    """``su2=512, su4=1,024`` as spec phases; the spec's own checks judge names and GPUs (text
    that is no ``name=gpus`` becomes a phase without GPUs, which they refuse by name)."""
    out: list[dict[str, Any]] = [
        {"name": m[1], "gpus": int(plain_number(m[2]))} for m in _PHASE.finditer(text)
    ]
    rest = _PHASE.sub("", text).strip(" ,;\t")
    if rest:
        out.append({"name": rest, "gpus": ""})
    return out


def phases_text(value: Any) -> str:
    """Spec phases as the Phases field writes them (``su2=512, su4=1024``)."""
    if not isinstance(value, list):
        return ""
    return ", ".join(
        f"{p.get('name', '')}={p.get('gpus', '')}" for p in value if isinstance(p, dict)
    )


def _override(field: Field, text: str) -> str:
    if field.kind == "string":
        return f"{field.path}={json.dumps(text)}"
    if field.kind == "list":
        return f"{field.path}={json.dumps([text])}"
    return f"{field.path}={plain_number(text)}"


def _is_unset(field: Field, text: str) -> bool:
    if not text.strip():
        return True
    if field.id == "node":
        return text == CUSTOM
    if field.id in ("nic", "switch"):
        return text == AUTO
    return field.id == "topology" and text == COMPARE


def form_data(base: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    """The spec data: ``base`` with every form field set from its text (or removed when empty).

    Texts are passed the way ``railplan plan --set path=value`` passes them (YAML scalars), so
    the validation messages are the CLI's own.
    """
    data = copy.deepcopy(base) if isinstance(base, dict) else {}
    data.setdefault("cluster", {})
    overrides = []
    for field in FIELDS:
        if field.id not in values or field.kind == "option":
            continue
        text = values[field.id].strip()
        if field.id == "topology" and text == COMPARE:
            continue  # compare all: the spec keeps its own topology
        _delete(data, field.path)
        if not _is_unset(field, text):
            overrides.append(_override(field, text))
    return apply_overrides(data, overrides)


def form_spec(base: dict[str, Any], values: dict[str, str]) -> Spec:
    """Validate the form like the CLI does; raises SpecError with the CLI's message."""
    return spec_from_dict(form_data(base, values))


def form_values(data: dict[str, Any]) -> dict[str, str]:
    """Texts for every form field from spec data (a loaded spec file or a dump)."""
    values: dict[str, str] = {}
    for field in FIELDS:
        value = _get(data, field.path) if field.path else None
        if field.kind == "list":
            value = value[0] if isinstance(value, list) and len(value) == 1 else None
        if value is None:
            value = {
                "node": CUSTOM,
                "nic": AUTO,
                "switch": AUTO,
                "topology": "roft",
                "placement": PLACEMENTS[0][1],
            }.get(field.id, "")
        values[field.id] = str(value)
    return values


def spec_base(spec: Spec) -> dict[str, Any]:
    """Only what a spec file set: the base the form's fields are applied over."""
    return spec.model_dump(mode="json", exclude_unset=True)


#: spec paths longest first, so ``cluster.nics_per_node`` is not read as ``cluster.nic``
_PATHS = sorted((f for f in FIELDS if f.path), key=lambda f: -len(f.path))
_PATH_RE = re.compile(r"(?<![\w.])(" + "|".join(re.escape(f.path) for f in _PATHS) + r")(?![\w])")


def form_message(message: str) -> str:
    """An error in the form's words: ``cluster.gpus: ...`` reads ``GPUs: ...``."""
    return _PATH_RE.sub(lambda m: FIELD_BY_PATH[m.group(1)].label, message)


def error_fields(message: str) -> set[str]:
    """Form field ids an error message names (``cluster.gpus: ...`` names ``gpus``)."""
    found = set()
    for line in message.splitlines():
        for field in FIELDS:
            named = f"{field.path}:" in line or f"{field.path}." in line.split(":")[0]
            if field.path and named:
                found.add(field.id)
    return found


#: the form's start without a spec: examples/h100-1k.yaml (1,024 H100 GPUs on 64-port switches)
DEFAULT_VALUES = form_values(
    {"cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"}, "fabric": {"switches": ["qm9700"]}}
)
