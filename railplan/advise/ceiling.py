"""The all-to-all ceiling of a ROFT or fat-tree candidate in closed form, before it is wired.

``evaluate`` judges the all-to-all requirement first on ``alltoall_ceiling`` of the built
design: each leaf's uplink bandwidth over the share of its nodes' traffic that leaves it.
Both figures are known from the generator in counting mode: the leaves' node links
(``Tally.node_runs``: which node ports land on which leaf at which speed) and each leaf's
uplink need, which the upper tiers serve with ``ceil(up / spines)`` links to each of the
plane's (or the pod's) spines as ``size_upper`` sizes them. So a candidate whose ceiling
already fails the requirement is refused with the very figure and sentence its build would
give, without the build; any other candidate is built and analyzed as before.
"""

from __future__ import annotations

import math

from railplan.advise.candidates import Candidate
from railplan.advise.evaluate import Evaluation, leaf_pace
from railplan.advise.requirements import judge
from railplan.catalog import Catalog, SwitchModel
from railplan.errors import RailplanError
from railplan.pipeline.plan import as_built_family
from railplan.spec import Spec
from railplan.spec.requirements import RequirementsSpec
from railplan.topology import GENERATORS
from railplan.topology.clos import size_upper
from railplan.topology.shape import check_capacity, rack_scale_spec, resolve_shape
from railplan.topology.tiers import TierModels, tier_speeds, upper_tiers
from railplan.topology.wiring import counting

#: the families whose leaves reach the rest of the fabric only through ``size_upper``'s tiers
FAMILIES = ("roft", "fat-tree")


def counted_ceiling(spec: Spec, catalog: Catalog, family: str, model: SwitchModel) -> float | None:
    """``alltoall_ceiling`` of the design ``plan`` would build, from counting mode; None where
    the closed form does not apply (another family, rail-grouped spines, a stated
    attachment, one node, or a spine whose leaf ports would reach its up section)."""
    f = spec.fabric
    if family not in FAMILIES or f.spine_groups > 1 or f.attachment != "auto":
        return None
    try:
        spec = as_built_family(rack_scale_spec(spec, catalog), family)  # as plan() builds it
        shape = resolve_shape(spec, catalog)
        speeds = tier_speeds(spec, shape)
        check_capacity(spec, shape, [model], [speeds.leaf_down, speeds.leaf_up, speeds.spine_up])
        with counting() as tally:
            design = GENERATORS[family](spec, shape, model)
        upper = upper_tiers(spec, TierModels(model, model, model), speeds)
        plans = [(lv, size_upper(lv, upper, asked, group)) for lv, asked, group in tally.uppers]
    except RailplanError:
        return None
    if len(design.nodes) < 2:
        return None
    active = {nd.id for nd in design.nodes if not nd.spare}
    n = len(active)
    if n < 2:
        return 1.0
    up: dict[str, float] = {}
    for leaves, plan in plans:
        layout = upper.two_tier_layout() if plan.tiers == 2 else upper.spine.layout
        if plan.tiers == 2:
            pods = [list(leaves)]
        else:
            by_pod: dict[int, list] = {}
            for lf in leaves:
                by_pod.setdefault(lf.group // plan.groups_per_pod, []).append(lf)
            pods = list(by_pod.values())
        for members in pods:
            used = sum(math.ceil(lf.up / plan.spines) for lf in members)
            if layout.mixed and used > layout.up_from:
                return None
            for lf in members:
                links = math.ceil(lf.up / plan.spines) * plan.spines
                up[lf.id] = up.get(lf.id, 0.0) + links * layout.down_gbps
    down: dict[str, float] = {}
    on: dict[str, set[str]] = {}
    for leaf, ends, below, low_gbps, high_gbps in tally.node_runs:
        for k, (dev, _port) in enumerate(ends):
            if dev in active:
                down[leaf] = down.get(leaf, 0.0) + (low_gbps if k < below else high_gbps)
                on.setdefault(leaf, set()).add(dev)
    return leaf_pace(down, up, on, n)


def ceiling_refusal(cand: Candidate, ceiling: float, req: RequirementsSpec) -> Evaluation | None:
    """The evaluation ``evaluate`` returns for a candidate whose all-to-all ceiling fails the
    requirement (not built, so no summary), or None when the ceiling does not fail it."""
    if req.alltoall <= 0 or ceiling >= req.alltoall - 1e-9:
        return None
    early = {"alltoall": ceiling, "alltoall_ceiling": True}
    return Evaluation(
        candidate=cand,
        figures=early,
        verdicts=tuple(v for v in judge(req, early) if v.key == "alltoall"),
        billed=False,
    )
