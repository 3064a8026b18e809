"""The search behind ``railplan recommend``: bound every candidate in closed form, evaluate in
order of bound until no unevaluated candidate can be cheaper, in a process pool.

Branch and bound: candidates are taken in order of their lower bound (``bounds.lower_bound``)
and evaluated (``evaluate.evaluate``: built, billed, checked, analyzed); once the next bound
is at least the cost of the best design meeting every requirement, no other candidate can
win. Workers evaluate a batch ahead, but results are accepted in bound order and the ones a
one-by-one search would not have reached are dropped, so the answer (and every listed
design) is the same for any number of workers. Each family's reference point (its cheapest
1:1, one-plane candidate by bound) is evaluated too, so the frontier shows what every family
that can hold the cluster would cost and do.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

from railplan.advise.bounds import Bound, capacity_refusal, lower_bound
from railplan.advise.candidates import (
    FAMILIES,
    Candidate,
    candidates,
    excluded,
    shortlist,
    spec_of,
)
from railplan.advise.ceiling import ceiling_refusal, counted_ceiling
from railplan.advise.evaluate import Evaluation, evaluate
from railplan.advise.requirements import failed, requirements_of
from railplan.advise.twins import for_twin, twin_of
from railplan.catalog import Catalog, load_catalog
from railplan.errors import InfeasibleError, RailplanError
from railplan.spec import Spec
from railplan.spec.requirements import RequirementsSpec

#: figures the frontier compares (more is better for each)
TRAFFIC_KEYS = ("pairs_full", "alltoall", "pd", "worst_failure")


@dataclass(frozen=True)
class Recommendation:
    """The search's answer: the recommended evaluation, the frontier, what lost and why."""

    requirements: RequirementsSpec
    overridden: tuple[str, ...]
    recommended: Evaluation | None
    frontier: tuple[Evaluation, ...]
    #: (candidate or None for a switch model ruled out, family, model, reason)
    rejected: tuple[dict[str, Any], ...]
    evaluated: tuple[Evaluation, ...]
    bounds: dict[Candidate, Bound] = field(default_factory=dict)
    stats: dict[str, int] = field(default_factory=dict)
    #: the requirements without the overrides (the spec's, else the defaults)
    baseline: RequirementsSpec | None = None

    def spec(self, base: Spec) -> Spec:
        """The base spec set to the recommended candidate (what ``-o`` writes and plans)."""
        assert self.recommended is not None
        return spec_of(base, self.recommended.candidate)


# -- worker processes ----------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _init(base: Spec, req: RequirementsSpec, catalog: Catalog) -> None:
    _WORKER.update(base=base, req=req, catalog=catalog)


def _bound_task(cand: Candidate) -> Bound | str:
    return bound_or_reason(_WORKER["base"], cand, _WORKER["catalog"])


def _evaluate_task(cand: Candidate) -> Evaluation:
    """``evaluate``, or the refusal its closed-form all-to-all ceiling gives without a build."""
    base, req, catalog = _WORKER["base"], _WORKER["req"], _WORKER["catalog"]
    if req.alltoall > 0:
        model = catalog.switch(cand.switch)
        ceiling = counted_ceiling(spec_of(base, cand), catalog, cand.family, model)
        refused = None if ceiling is None else ceiling_refusal(cand, ceiling, req)
        if refused is not None:
            return refused
    return evaluate(base, cand, req, catalog)


def _reference_task(cand: Candidate) -> Evaluation:
    return evaluate(_WORKER["base"], cand, _WORKER["req"], _WORKER["catalog"], full=True)


def bound_or_reason(base: Spec, cand: Candidate, catalog: Catalog) -> Bound | str:
    """The candidate's lower bound, or the reason it cannot hold the cluster."""
    try:
        return lower_bound(spec_of(base, cand), catalog, cand.family, catalog.switch(cand.switch))
    except RailplanError as exc:
        return str(exc)


class _Later:
    """An inline call run when its result is asked for (the one-worker runner's future)."""

    def __init__(self, fn: Callable[[Candidate], Any], item: Candidate) -> None:
        self.fn, self.item = fn, item

    def done(self) -> bool:
        return False

    def result(self) -> Any:
        return self.fn(self.item)


class _Runner:
    """Map a task over candidates inline (one worker) or in a fork-started process pool."""

    def __init__(self, workers: int, base: Spec, req: RequirementsSpec, catalog: Catalog):
        self.workers = workers
        _init(base, req, catalog)
        self.pool: ProcessPoolExecutor | None = None
        if workers > 1:
            self.pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=get_context("fork"),
                initializer=_init,
                initargs=(base, req, catalog),
            )

    def submit(self, fn: Callable[[Candidate], Any], item: Candidate) -> Future[Any] | _Later:
        """Start ``fn(item)`` in a worker (inline: run when its result is asked for)."""
        if self.pool is None:
            return _Later(fn, item)
        return self.pool.submit(fn, item)

    def map(self, fn: Callable[[Candidate], Any], items: Sequence[Candidate]) -> list[Any]:
        if self.pool is None or len(items) < 2:
            return [fn(c) for c in items]
        return list(self.pool.map(fn, items, chunksize=max(1, len(items) // (4 * self.workers))))

    def close(self) -> None:
        if self.pool is not None:  # evaluations started past the stopping point are not waited
            self.pool.shutdown(cancel_futures=True)  # for unless already running


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def recommend(
    spec: Spec,
    catalog: Catalog | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    workers: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Recommendation:
    """The cheapest candidate meeting every requirement, the frontier and the rejected, for
    the cluster of ``spec`` (its shortlist, stated fabric fields and requirements kept)."""
    catalog = catalog or load_catalog()
    say = progress or (lambda _m: None)
    req = requirements_of(spec, overrides)
    _, ruled_out = shortlist(spec, catalog, req)
    rejected: list[dict[str, Any]] = [
        {"family": "*", "model": m, "candidate": None, "reason": why} for m, why in ruled_out
    ]
    cands = []
    for cand in candidates(spec, catalog, req):
        why = excluded(cand.family, catalog.switch(cand.switch))
        if why is None:
            cands.append(cand)
        else:
            rejected.append(_reject(cand, why))
    if not cands:
        out = [f"{m} {why}" for m, why in ruled_out]
        out += [f"{r['family']} on {r['model']}: {r['reason']}" for r in rejected[len(out) :]]
        raise RailplanError(
            "no candidate is left to search: "
            + "; ".join(dict.fromkeys(out))
            + "; relax protocol or vendors, or list other fabric.switches or another topology"
        )
    # known before any candidate is built or counted, or a worker started
    too_big = capacity_refusal(
        catalog, [(spec_of(spec, c), catalog.switch(c.switch)) for c in cands]
    )
    if too_big is not None:
        raise InfeasibleError(too_big)
    runner = _Runner(workers or default_workers(), spec, req, catalog)
    try:
        say(f"bounding {len(cands)} candidates")
        raw = runner.map(_bound_task, cands)
        bounds: dict[Candidate, Bound] = {}
        for cand, b in zip(cands, raw, strict=True):
            if isinstance(b, str):
                rejected.append(_reject(cand, f"cannot hold the cluster: {b}"))
            elif req.budget_usd is not None and b.cost_usd > req.budget_usd:
                rejected.append(
                    _reject(
                        cand,
                        f"its lower bound ${b.cost_usd:,.0f} exceeds "
                        f"budget_usd ${req.budget_usd:,.0f}",
                    )
                )
            elif req.max_power_w is not None and b.switch_power_w > req.max_power_w:
                rejected.append(
                    _reject(
                        cand,
                        f"its switches alone draw {b.switch_power_w:,.0f} W, "
                        f"above max_power_w {req.max_power_w:,.0f} W",
                    )
                )
            else:
                bounds[cand] = b
        for cand in [c for c in bounds if not c.whole_su]:
            twin = dataclasses.replace(cand, whole_su=True)
            if twin in bounds and bounds[twin] == bounds[cand]:
                del bounds[cand]  # every SU is whole: the same design as its twin
                rejected.append(
                    _reject(cand, f"the same design as {twin.label}: every SU is whole")
                )
        order = sorted(bounds, key=lambda c: (bounds[c].cost_usd, c.label, c))
        evaluated = _branch_and_bound(runner, order, bounds, say, req, catalog)
        reps = _references(order, bounds, evaluated)
        if reps:
            say(f"evaluating {len(reps)} family reference point(s)")
            evaluated.update(zip(reps, runner.map(_reference_task, reps), strict=True))
    finally:
        runner.close()
    return _answer(spec, req, overrides, evaluated, order, bounds, rejected, len(cands))


def _branch_and_bound(
    runner: _Runner,
    order: list[Candidate],
    bounds: dict[Candidate, Bound],
    say: Callable[[str], None],
    req: RequirementsSpec,
    catalog: Catalog,
) -> dict[Candidate, Evaluation]:
    """Accept evaluations in bound order until the next bound reaches the best cost met.

    Up to ``runner.workers`` candidates ahead are evaluated at once, each worker taking the
    next as soon as it is free; a result the one-by-one search would not reach is dropped.
    A candidate refused on its closed-form all-to-all ceiling (``ceiling``) is not built; one
    whose wiring twin (``twins``) failed a wiring requirement takes the twin's figures instead
    of an evaluation of its own."""
    evaluated: dict[Candidate, Evaluation] = {}
    twins = twin_of(order, catalog)
    running: dict[Candidate, Future[Any] | _Later] = {}
    best: float | None = None
    ahead = 0  # the next position a worker may start on
    #: candidates started and not yet accepted, at most (as many as a batch: bounded waste)
    window = runner.workers

    def waits_for_twin(cand: Candidate) -> bool:
        rep = twins.get(cand)
        if rep is None:
            return False
        ev = evaluated.get(rep)
        return ev is None or for_twin(ev, cand, req, catalog) is not None

    def start(cand: Candidate) -> None:
        say(f"evaluating {cand.label}")
        running[cand] = runner.submit(_evaluate_task, cand)

    def fill() -> None:
        """Start the next candidates in order while a worker is free."""
        nonlocal ahead
        while ahead < len(order) and len(running) < window:
            if sum(not f.done() for f in running.values()) >= runner.workers:
                return
            nxt = order[ahead]
            if best is not None and bounds[nxt].cost_usd >= best:
                return
            if nxt not in running and nxt not in evaluated and not waits_for_twin(nxt):
                start(nxt)
            ahead += 1

    for i, cand in enumerate(order):
        if best is not None and bounds[cand].cost_usd >= best:
            break
        rep = twins.get(cand)
        ev = None
        if rep is not None and rep in evaluated:
            ev = for_twin(evaluated[rep], cand, req, catalog)
        if ev is None:
            ahead = max(ahead, i)
            if cand not in running:
                start(cand)
            fill()
            head = running[cand]
            while runner.pool is not None and not head.done():
                futures = [f for f in running.values() if isinstance(f, Future)]
                wait(futures, return_when=FIRST_COMPLETED)
                fill()
            ev = running.pop(cand).result()
        evaluated[cand] = ev
        if ev.meets and (best is None or ev.cost_usd < best):
            best = ev.cost_usd
    return evaluated  # what is still running was started past the stopping point: dropped


def _references(
    order: list[Candidate], bounds: dict[Candidate, Bound], evaluated: dict[Candidate, Evaluation]
) -> list[Candidate]:
    """Per family, its cheapest-bound 1:1 one-plane whole-SU candidate (SUs as full as the
    leaves hold), when not evaluated."""
    out = []
    seen: set[str] = set()
    for cand in order:
        if cand.family in seen:
            continue
        if (
            cand.oversubscription == "1:1"
            and cand.planes == 1
            and cand.whole_su
            and cand.su_nodes is None
        ):
            seen.add(cand.family)
            if cand not in evaluated:
                out.append(cand)
    return out


def _reject(cand: Candidate, reason: str) -> dict[str, Any]:
    return {"family": cand.family, "model": cand.switch, "candidate": cand, "reason": reason}


def dominates(a: Evaluation, b: Evaluation) -> bool:
    """``a`` costs no more and is at least as good in every traffic figure, better in one."""
    keys = [k for k in TRAFFIC_KEYS if k in a.figures and k in b.figures]
    ge = a.cost_usd <= b.cost_usd and all(a.figures[k] >= b.figures[k] - 1e-9 for k in keys)
    gt = a.cost_usd < b.cost_usd or any(a.figures[k] > b.figures[k] + 1e-9 for k in keys)
    return ge and gt


def _answer(
    spec: Spec,
    req: RequirementsSpec,
    overrides: dict[str, Any] | None,
    evaluated: dict[Candidate, Evaluation],
    order: list[Candidate],
    bounds: dict[Candidate, Bound],
    rejected: list[dict[str, Any]],
    total: int,
) -> Recommendation:
    built = sorted(
        (e for e in evaluated.values() if e.built and e.billed),
        key=lambda e: (e.cost_usd, FAMILIES.index(e.candidate.family), e.candidate.label),
    )
    same: dict[Candidate, Candidate] = {}
    seen: dict[str, Candidate] = {}
    for e in built:  # one wiring under two names (rail-only on one switch = single switch)
        key = repr((e.cost_usd, e.summary.get("switches"), e.summary.get("links"), e.figures))
        if key in seen:
            same[e.candidate] = seen[key]
        else:
            seen[key] = e.candidate
    built = [e for e in built if e.candidate not in same]
    meeting = [e for e in built if e.meets]
    best = meeting[0] if meeting else None
    frontier = [e for e in built if not any(dominates(o, e) for o in built)]
    on_frontier = {e.candidate for e in frontier}
    for cand in order:
        ev = evaluated.get(cand)
        if cand in same:
            rejected.append(_reject(cand, f"the same design as {same[cand].label}"))
        elif ev is None:
            if best is not None:
                reason = (
                    f"cannot win: its lower bound ${bounds[cand].cost_usd:,.0f} is at least "
                    f"the recommended ${best.cost_usd:,.0f}"
                )
            else:
                reason = "not evaluated"
            rejected.append(_reject(cand, reason))
        elif not ev.built:
            rejected.append(_reject(cand, f"cannot hold the cluster: {ev.reason}"))
        elif not ev.billed:
            rejected.append(_reject(cand, lost_reason(ev, best)))
        elif best is not None and cand == best.candidate:
            continue
        elif cand not in on_frontier:
            rejected.append(_reject(cand, lost_reason(ev, best)))
    return Recommendation(
        requirements=req,
        overridden=tuple(sorted(overrides or {})),
        recommended=best,
        frontier=tuple(frontier),
        rejected=tuple(rejected),
        evaluated=tuple(built),
        bounds=bounds,
        baseline=requirements_of(spec),
        stats={
            "candidates": total,
            "bounded": len(bounds),
            "evaluated": len(evaluated),
            "pruned": len(bounds) - len(evaluated),
        },
    )


def lost_reason(ev: Evaluation, best: Evaluation | None) -> str:
    """Why ``ev`` is not the recommendation: a failed requirement, or its extra cost."""
    bad = failed(ev.verdicts)
    if ev.check_problems:
        return f"fails railplan check: {ev.check_problems[0]}"
    if bad:
        said = [v.sentence() for v in bad]
        if ev.figures.get("alltoall_ceiling"):
            said = [
                t.replace("alltoall ", "alltoall at most ", 1) + " by the closed-form ceiling"
                if t.startswith("alltoall ")
                else t
                for t in said
            ]
        return "fails " + "; ".join(said)
    if best is None:
        return "no design meets the requirements"
    extra = ev.cost_usd - best.cost_usd
    pct = 100 * extra / best.cost_usd if best.cost_usd else 0.0
    return f"costs ${extra:,.0f} more (+{pct:.1f}%)"
