"""The design space of ``recommend``: candidates as plain specs (family, switch, ratio, planes).

A candidate is plain data (a frozen dataclass of strings and numbers), so it pickles to a
worker process and its evaluation is a pure function of it, the base spec and the catalog.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from railplan.catalog import Catalog, SwitchModel
from railplan.errors import RailplanError
from railplan.spec import Spec
from railplan.spec.requirements import RequirementsSpec
from railplan.topology.reserved import reserve
from railplan.topology.roft import ports_per_rail, rails_per_plane
from railplan.topology.shape import resolve_shape
from railplan.topology.tiers import tier_speeds, tier_split

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
    #: ROFT: nodes per SU when fewer than a leaf's down ports hold (None: as many as fit)
    su_nodes: int | None = None

    @property
    def label(self) -> str:
        parts = [self.family, self.switch]
        if self.family in RATIO_FAMILIES:
            parts.append(self.oversubscription)
        if self.planes > 1:
            parts.append(f"{self.planes} planes")
        if not self.whole_su:
            parts.append("partial SU")
        if self.su_nodes is not None:
            parts.append(f"SU {self.su_nodes}")
        return " ".join(parts)

    def as_dict(self) -> dict[str, object]:
        return {
            "family": self.family,
            "switch": self.switch,
            "oversubscription": self.oversubscription,
            "planes": self.planes,
            "whole_su": self.whole_su,
            "su_nodes": self.su_nodes,
        }


def spec_of(base: Spec, cand: Candidate) -> Spec:
    """The base spec with the candidate's family, switch, ratio, planes and SU rule."""
    # only what the user set, so the candidate's fields left out stay left out (a rack-scale
    # node fills in its own rack facts where the spec is silent: ``rack_scale_spec``)
    data = base.model_dump(mode="json", exclude_unset=True)
    fabric = data.setdefault("fabric", {})
    fabric["topology"] = cand.family
    fabric["switches"] = [cand.switch]
    fabric["oversubscription"] = cand.oversubscription
    fabric["planes"] = cand.planes
    fabric["whole_su"] = cand.whole_su
    fabric["su_nodes"] = cand.su_nodes
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
    stays fixed: a topology other than auto, a switch list, planes, the ratio, whole_su and
    su_nodes."""
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
                        cand = Candidate(family, model.id, ratio, planes, whole)
                        if family != "roft":
                            out.append(cand)
                        elif f.su_nodes is not None:
                            out.append(dataclasses.replace(cand, su_nodes=f.su_nodes))
                        else:
                            out.append(cand)
                            if whole:  # partial SUs already shrink the last SU's uplinks
                                out += [
                                    dataclasses.replace(cand, su_nodes=n)
                                    for n in even_su_sizes(spec_of(spec, cand), catalog, model)
                                ]
    return out


def even_su_sizes(spec: Spec, catalog: Catalog, model: SwitchModel) -> list[int]:
    """SU sizes below a leaf's capacity that spread the nodes evenly: for the fewest SUs
    that hold the cluster (k) and for k + 1, ceil(nodes / SUs) nodes each. With SUs that
    are not full, each leaf needs fewer uplinks (their ratio kept for the ports used), so a
    tier of spines can fill its ports: 128 DGX on 2:1 QM9700 leaves (42 down, 21 up) take 4
    SUs; at 32 nodes each a leaf needs 16 uplinks, 2 to each of 8 spines, where the full
    42-node SU spreads 21 over 21 half-empty spines."""
    try:
        shape = resolve_shape(spec, catalog)
        speeds = tier_speeds(spec, shape)
        leaf = tier_split(
            model, speeds.leaf_down, speeds.leaf_up, spec.fabric.oversubscription_fraction
        )
        res = reserve(spec, rails_per_plane(shape), ports_per_rail(shape))
    except RailplanError:
        return []
    most = res.su_active(leaf.down)
    nodes = spec.cluster.gpus // shape.gpus
    if most < 1 or nodes < 1:
        return []
    fewest = math.ceil(nodes / most)
    sizes = {math.ceil(nodes / k) for k in (fewest, fewest + 1)}
    # only sizes whose leaves need fewer uplinks than a full SU's: the rest wire the same
    # upper tiers with more leaves
    ppr = ports_per_rail(shape)
    return sorted(
        (n for n in sizes if n < most and leaf.up_for(res.per_leaf + n * ppr) < leaf.up),
        reverse=True,
    )


def excluded(family: str, model: SwitchModel) -> str | None:
    """Why ``family`` is not built on ``model`` by the advisor, or None."""
    if family == "matrix" and model.protocol == "infiniband":
        return MATRIX_ON_INFINIBAND
    return None


#: the Matrix is an Ethernet construction; why the advisor does not offer it on InfiniBand
MATRIX_ON_INFINIBAND = (
    "not offered on InfiniBand: the Matrix is a RoCE Ethernet construction (Asterfusion "
    "AsterFabric Matrix); on its spineless graph a subnet manager's min-hop routes between "
    "leaves of one group (A -> B -> A) can close a credit loop, and UPDN, LASH or fat-tree "
    "routing (OpenSM doc/current-routing.txt) would not take the A-to-B paths railplan "
    "analyzes"
)


def _plane_counts(spec: Spec, catalog: Catalog) -> list[int]:
    """Plane counts that split the node's ports evenly (1 always)."""
    try:
        shape = resolve_shape(spec, catalog)
    except RailplanError:
        return [1]
    return [p for p in PLANES if p == 1 or (shape.ports % p == 0 and shape.ports >= 2 * p)]
