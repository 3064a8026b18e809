"""Requirements: the spec's ``requirements:`` section, ``--require key=value`` flags, and how a
candidate's figures are judged against them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from railplan.errors import SpecError
from railplan.spec import Spec
from railplan.spec.requirements import RequirementsSpec

#: the keys --require takes, in the order the output lists them
KEYS = tuple(RequirementsSpec.model_fields)
#: figures where more is better (the rest: less is better, or a set to belong to)
AT_LEAST = ("pairs_full", "alltoall", "pd", "worst_failure", "grow_to")
AT_MOST = ("max_power_w", "max_hops", "budget_usd")


def parse_requires(items: Sequence[str]) -> dict[str, Any]:
    """``["alltoall=0.5", "vendors=NVIDIA,Arista"]`` -> a dict of requirement values; a bad
    item raises SpecError naming the key and what it takes."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SpecError(f"--require {item!r}: give key=value, e.g. alltoall=0.9")
        if key not in KEYS:
            raise SpecError(f"--require {key!r} is not a requirement; use one of {', '.join(KEYS)}")
        value = value.strip()
        if key == "vendors":
            out[key] = [v.strip() for v in value.split(",") if v.strip()]
        elif value.lower() in ("none", "any", ""):
            out[key] = None
        else:
            out[key] = value
    return out


def requirements_of(spec: Spec, overrides: Mapping[str, Any] | None = None) -> RequirementsSpec:
    """The spec's requirements (defaults where it states none) with ``overrides`` on top."""
    base = spec.requirements.model_dump() if spec.requirements is not None else {}
    data = {**base, **(overrides or {})}
    try:
        return RequirementsSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "requirements"
        raise SpecError(f"requirements.{where}: {err['msg']}") from None


@dataclass(frozen=True)
class Verdict:
    """One requirement judged on one design: the wanted value, the design's, whether it met."""

    key: str
    wanted: Any
    value: Any
    met: bool

    def as_dict(self) -> dict[str, Any]:
        return {"wanted": self.wanted, "value": self.value, "met": self.met}

    def sentence(self) -> str:
        rel = ">=" if self.key in AT_LEAST else "<=" if self.key in AT_MOST else "in"
        return f"{self.key} {_fmt(self.value)} (wanted {rel} {_fmt(self.wanted)})"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.4g}" if v < 1000 else f"{v:,.0f}"
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return str(v)


def judge(req: RequirementsSpec, figures: Mapping[str, Any]) -> list[Verdict]:
    """Each stated requirement against a design's ``figures`` (keys as the requirements';
    protocol and vendors as the sets the design's switches have)."""
    out = []
    for key, wanted in req.stated().items():
        value = figures.get(key)
        if key in AT_LEAST:
            met = value is not None and value >= wanted - 1e-9
        elif key in AT_MOST:
            met = value is not None and value <= wanted + 1e-9
        elif key == "protocol":
            met = value == [wanted]
        else:  # vendors
            allowed = {v.lower() for v in wanted}
            met = value is not None and all(v.lower() in allowed for v in value)
        out.append(Verdict(key, wanted, value, met))
    return out


def failed(verdicts: Iterable[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if not v.met]
