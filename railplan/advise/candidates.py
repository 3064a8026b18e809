"""The design space of ``recommend``: candidates as plain specs (family, switch, ratio, planes).

A candidate is plain data (a frozen dataclass of strings and numbers), so it pickles to a
worker process and its evaluation is a pure function of it, the base spec and the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass

from railplan.catalog import Catalog, SwitchModel
from railplan.errors import RailplanError
from railplan.spec import Spec
from railplan.spec.requirements import RequirementsSpec
from railplan.topology.shape import resolve_shape
from railplan.topology.tiers import tier_speeds

#: families searched, in the order the output lists them
FAMILIES = ("single-switch", "rail-only", "roft", "matrix", "fat-tree")
#: leaf down:up ratios tried on the families that take one
RATIOS = ("1:1", "2:1", "3:1")
#: families whose leaves split their ports by fabric.oversubscription
RATIO_FAMILIES = ("roft", "matrix", "fat-tree")
PLANES = (1, 2)


@dataclass(frozen=True, order=True)
class Candidate:
    """One point of the design space: a family on one switch model at every tier."""

    family: str
    switch: str
    oversubscription: str = "1:1"
    planes: int = 1
    whole_su: bool = True

    @property
    def label(self) -> str:
        parts = [self.family, self.switch]
        if self.family in RATIO_FAMILIES:
            parts.append(self.oversubscription)
        if self.planes > 1:
            parts.append(f"{self.planes} planes")
        if not self.whole_su:
            parts.append("partial SU")
        return " ".join(parts)

    def as_dict(self) -> dict[str, object]:
        return {
            "family": self.family,
            "switch": self.switch,
            "oversubscription": self.oversubscription,
            "planes": self.planes,
            "whole_su": self.whole_su,
        }


def spec_of(base: Spec, cand: Candidate) -> Spec:
    """The base spec with the candidate's family, switch, ratio, planes and SU rule."""
    data = base.model_dump(mode="json", exclude_unset=False)
    fabric = data["fabric"]
    fabric["topology"] = cand.family
    fabric["switches"] = [cand.switch]
    fabric["oversubscription"] = cand.oversubscription
    fabric["planes"] = cand.planes
    fabric["whole_su"] = cand.whole_su
    for tier in ("leaf", "spine", "core"):
        if fabric.get(tier) is not None:
            fabric[tier]["switches"] = None
            if tier == "leaf":
                fabric[tier]["oversubscription"] = None
    return Spec.model_validate(data)


def shortlist(
    spec: Spec, catalog: Catalog, req: RequirementsSpec
) -> tuple[list[SwitchModel], list[tuple[str, str]]]:
    """Switch models to try (the spec's list, else every catalog switch at the NIC speed),
    and the ones the requirements rule out with the reason."""
    shape = resolve_shape(spec, catalog)
    speeds = tier_speeds(spec, shape)
    if spec.fabric.switches:
        models = [catalog.switch(s) for s in spec.fabric.switches]
    else:
        models = [
            m
            for m in catalog.switches.values()
            if m.radix(speeds.leaf_down) and m.radix(speeds.leaf_up)
        ]
    kept, out = [], []
    for m in sorted(models, key=lambda m: m.id):
        if not m.radix(speeds.leaf_down):
            out.append((m.id, f"runs no {speeds.leaf_down}G ports"))
        elif req.protocol is not None and m.protocol != req.protocol:
            out.append((m.id, f"requirement protocol={req.protocol}: it runs {m.protocol}"))
        elif req.vendors is not None and m.vendor.lower() not in {v.lower() for v in req.vendors}:
            out.append((m.id, f"requirement vendors: {m.vendor} is not on the list"))
        else:
            kept.append(m)
    return kept, out


def candidates(spec: Spec, catalog: Catalog, req: RequirementsSpec) -> list[Candidate]:
    """Every candidate of the space for this cluster, in a fixed order. What the spec states
    stays fixed: a topology other than auto, a switch list, planes, the ratio, whole_su."""
    models, _ = shortlist(spec, catalog, req)
    f = spec.fabric
    given = f.model_fields_set
    plane_counts = [f.planes] if "planes" in given else _plane_counts(spec, catalog)
    families = FAMILIES if f.topology == "auto" else (f.topology,)
    out: list[Candidate] = []
    for family in families:
        ratios = RATIOS if family in RATIO_FAMILIES else ("1:1",)
        if "oversubscription" in given or (f.leaf is not None and f.leaf.oversubscription):
            ratios = (f.oversubscription,)
        for model in models:
            for ratio in ratios:
                for planes in plane_counts:
                    sus = (True, False) if family == "roft" else (True,)
                    if "whole_su" in given:
                        sus = (f.whole_su,)
                    for whole in sus:
                        out.append(Candidate(family, model.id, ratio, planes, whole))
    return out


def _plane_counts(spec: Spec, catalog: Catalog) -> list[int]:
    """Plane counts that split the node's ports evenly (1 always)."""
    try:
        shape = resolve_shape(spec, catalog)
    except RailplanError:
        return [1]
    return [p for p in PLANES if p == 1 or (shape.ports % p == 0 and shape.ports >= 2 * p)]
