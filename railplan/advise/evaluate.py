"""Evaluate one candidate: plan, lay out and bill it, check it, analyze its traffic, judge it.

``evaluate`` is a pure function of plain data (the base spec, the candidate, the requirements
and the catalog), so a process pool (or a cluster engine) can run it unchanged; what it
returns is plain data too (no Design), small enough to send back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from railplan.advise.candidates import Candidate, spec_of
from railplan.advise.requirements import Verdict, judge
from railplan.catalog import Catalog
from railplan.design import Design
from railplan.design.metrics import max_hops
from railplan.design.summary import plan_summary
from railplan.errors import RailplanError
from railplan.physical.media_policy import catalog_for
from railplan.pipeline.build import build, plan_json
from railplan.pipeline.plan import plan
from railplan.spec import Spec
from railplan.spec.requirements import RequirementsSpec
from railplan.traffic.collisions import analyze
from railplan.traffic.summary import COMPARE_JOB_NODES, job_alltoall, summary_for_compare
from railplan.validate import check


@dataclass(frozen=True)
class Evaluation:
    """A candidate's bill, figures and verdicts (or why it could not be built)."""

    candidate: Candidate
    reason: str = ""
    cost_usd: float = 0.0
    power_w: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)
    verdicts: tuple[Verdict, ...] = ()
    summary: dict[str, Any] = field(default_factory=dict)
    traffic: dict[str, Any] = field(default_factory=dict)
    check_problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: laid out and billed (False: it failed a wiring requirement first; cost unknown)
    billed: bool = True

    @property
    def built(self) -> bool:
        return not self.reason

    @property
    def meets(self) -> bool:
        return (
            self.built
            and self.billed
            and not self.check_problems
            and all(v.met for v in self.verdicts)
        )


def traffic_figures(traffic: dict[str, Any]) -> dict[str, float]:
    """pairs_full, alltoall and pd of a ``summary_for_compare`` result (1.0 on one node)."""

    def pick(section: str, key: str) -> float:
        value = traffic.get(section)
        return 1.0 if value is None else float(value[key])

    out = {
        "pairs_full": pick("pairs", "fraction_full"),
        "alltoall": pick("alltoall", "collective_fraction"),
        "pd": pick("pd", "collective_fraction"),
    }
    worst = traffic.get("worst_failure")
    if worst is not None:
        out["worst_failure"] = float(worst["collective_fraction"])
    elif "worst_failure" in traffic:
        out["worst_failure"] = out["alltoall"]
    return out


def alltoall_pace(
    design: Design, spread: float | None = None, ceiling: float | None = None
) -> float | None:
    """The all-to-all pace a requirement is judged on: the slower of the job
    ``summary_for_compare`` spreads evenly over the cluster (``spread``, computed when not
    given) and the closed-form ceiling of an all-to-all across every node
    (``alltoall_ceiling``: a job of a few nodes per leaf leaves an oversubscribed leaf's
    uplinks idle); None on one node."""
    n = len(design.nodes)
    if n < 2:
        return None
    m = min(n, COMPARE_JOB_NODES)
    if spread is None:
        nodes = [k * n // m for k in range(m)] if m < n else None
        spread = float(analyze(design, "alltoall", nodes=nodes).collective_fraction or 0.0)
    return min(spread, alltoall_ceiling(design) if ceiling is None else ceiling)


def alltoall_ceiling(design: Design) -> float:
    """The pace an all-to-all across every node can reach at most, in closed form: each leaf
    carries its nodes' traffic to the nodes not on it, a share (n - k) / (n - 1) of it for k
    of n nodes on the leaf, over its links to other switches; pace <= up bandwidth / that
    traffic (1.0 when every leaf has room). A job of ``COMPARE_JOB_NODES`` nodes does not
    reach an oversubscribed leaf's limit when one leaf group holds it; the whole cluster does.
    """
    switches = {s.id: s for s in design.switches}
    active = {nd.id for nd in design.nodes if not nd.spare}
    n = len(active)
    if n < 2:
        return 1.0
    down: dict[str, float] = {}
    up: dict[str, float] = {}
    on: dict[str, set[str]] = {}
    for lk in design.links:
        if lk.a_device in active and lk.b_device in switches:
            down[lk.b_device] = down.get(lk.b_device, 0.0) + lk.rate_gbps
            on.setdefault(lk.b_device, set()).add(lk.a_device)
        elif lk.a_device in switches and lk.b_device in switches:
            for end in (lk.a_device, lk.b_device):
                if switches[end].tier == 1:
                    up[end] = up.get(end, 0.0) + lk.rate_gbps
    return leaf_pace(down, up, on, n)


def leaf_pace(
    down: dict[str, float], up: dict[str, float], on: dict[str, set[str]], n: int
) -> float:
    """An all-to-all across ``n`` nodes at its slowest leaf: each leaf's uplink bandwidth over
    the traffic that must leave it (a share (n - k)/(n - 1) of its nodes' ``down`` bandwidth
    for the k of them ``on`` it); 1.0 where every leaf's uplinks carry it."""
    pace = 1.0
    for leaf, bw in down.items():
        leaving = bw * (n - len(on[leaf])) / (n - 1)
        if leaving > 0:
            pace = min(pace, up.get(leaf, 0.0) / leaving)
    return round(pace, 4)


def growth(spec: Spec, design: Design, catalog: Catalog, gpus: int) -> tuple[int, str]:
    """(GPUs the design grows to, why not): the same candidate built for ``gpus`` GPUs must
    keep every link of this design exactly (same ends, same ports), so growing recables
    nothing."""
    if gpus <= spec.cluster.gpus:
        return gpus, ""
    bigger = spec.model_copy(deep=True)
    bigger.cluster.gpus = gpus
    try:
        grown = plan(bigger, catalog)
    except RailplanError as exc:
        return spec.cluster.gpus, f"cannot grow to {gpus} GPUs: {exc}"
    ends = {(lk.a_device, lk.a_port, lk.b_device, lk.b_port) for lk in grown.links}
    moved = sum(
        1 for lk in design.links if (lk.a_device, lk.a_port, lk.b_device, lk.b_port) not in ends
    )
    if moved:
        return spec.cluster.gpus, f"growing to {gpus} GPUs recables {moved} existing link(s)"
    return gpus, ""


def evaluate(
    base: Spec, cand: Candidate, req: RequirementsSpec, catalog: Catalog, full: bool = False
) -> Evaluation:
    """Build ``cand`` on ``base`` as ``railplan plan`` builds it and judge it on ``req``.

    The wiring is judged first (check, traffic, hops, growth: none needs the floor); a
    candidate that fails a requirement there is not laid out or billed (``billed`` False)
    unless ``full``. The rest is laid out, cabled and billed, then judged on cost and power.
    """
    try:
        spec = spec_of(base, cand)
        planned = build(spec, catalog, layout=False)
        topo = planned.design
    except RailplanError as exc:
        return Evaluation(cand, reason=str(exc))
    problems = tuple(check(topo, catalog))
    report = None
    ceiling: float | None = None  # alltoall_ceiling(topo), once worked out
    if not full and req.alltoall > 0 and len(topo.nodes) > 1:
        # the cheapest test that can fail, cheapest part first: the closed-form ceiling (one
        # pass over the links), then the job's all-to-all, which the summary reuses
        ceiling = alltoall_ceiling(topo)
        short = ceiling < req.alltoall - 1e-9
        pace = ceiling
        if not short:
            report = job_alltoall(topo)
            pace = min(float(report.collective_fraction or 0.0), ceiling)
        if pace < req.alltoall - 1e-9:
            early: dict[str, Any] = {"alltoall": pace}
            if short:
                early["alltoall_ceiling"] = True  # at most this: the job was not routed
            return Evaluation(
                candidate=cand,
                figures=early,
                verdicts=tuple(v for v in judge(req, early) if v.key == "alltoall"),
                summary=plan_summary(topo),
                check_problems=problems,
                billed=False,
            )
    traffic = summary_for_compare(topo, failures=req.worst_failure is not None, alltoall=report)
    models = {catalog.switch(m) for m in {s.model for s in topo.switches}}
    figures: dict[str, Any] = {**traffic_figures(traffic)}
    if traffic.get("alltoall") is not None:
        judged = alltoall_pace(topo, figures["alltoall"], ceiling)
        figures["alltoall"] = judged or figures["alltoall"]
    figures |= {
        "max_hops": max_hops(topo),
        "protocol": sorted({m.protocol for m in models}),
        "vendors": sorted({m.vendor for m in models}),
    }
    notes: list[str] = []
    if req.grow_to is not None:
        figures["grow_to"], why = growth(spec, topo, catalog, req.grow_to)
        if why:
            notes.append(why)
    wiring = [v for v in judge(req, figures) if v.key not in ("max_power_w", "budget_usd")]
    if not full and (problems or not all(v.met for v in wiring)):
        return Evaluation(
            candidate=cand,
            figures=figures,
            verdicts=tuple(wiring),
            summary=plan_summary(topo),
            traffic=traffic,
            check_problems=problems,
            notes=tuple(notes),
            billed=False,
        )
    try:
        built = build(spec, catalog, planned=planned)  # laid out, not planned again
    except RailplanError as exc:
        return Evaluation(cand, reason=str(exc))
    assert built.bom is not None
    # build checked the laid-out design (and refuses one with problems) on the catalog its
    # media policy allows: when that is ``catalog`` itself, its answer is this one (none)
    same = catalog_for(catalog, spec.bill.media) is catalog
    laid_out = () if same else tuple(check(built.design, catalog))
    totals = built.bom.totals
    figures["max_power_w"] = totals.power_w
    figures["budget_usd"] = totals.cost_usd
    return Evaluation(
        candidate=cand,
        cost_usd=totals.cost_usd,
        power_w=totals.power_w,
        figures=figures,
        verdicts=tuple(judge(req, figures)),
        summary=plan_json(built),
        traffic=traffic,
        check_problems=problems + laid_out,
        notes=tuple(notes),
    )
