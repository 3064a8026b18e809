"""Switch-model choice per tier with CP-SAT: a leaf, a spine and a core model at least cost.

Each tier picks its own model from its shortlist (``fabric.leaf/spine/core.switches``, else
``fabric.switches``, else every catalog switch running the tier's speeds), all of one
protocol. The tiers are coupled: the leaf model sets how many leaves there are and how many
uplinks they need, the spine model how many spines those take (and whether a core tier is
needed), the core model how many cores. The model:

- booleans x[leaf], y[spine], z[core], one per tier; a pair variable w[leaf, spine] for every
  pair that fits, a triple v[leaf, spine, core] for every 3-tier pair and core that fits;
- cost = leaf term(leaf) + spine term(leaf, spine) + core term(leaf, spine, core), each from
  ``tier_terms`` (counts from the generators, media per link class at nominal lengths);
- optionally at most ``max_models`` distinct models (spares commonality).

The media terms estimate the bill. Every fabric the solver proposes is built, checked and
billed with ``price_design``; its bill replaces the estimate (a correction on its pair or
triple variable) and CP-SAT solves again, until its answer is a fabric already billed. Every
single-model fabric the shortlists allow is billed from the start (``bases``), so the answer
is never dearer by the bill than any of them. Deterministic: one worker, fixed seed, ties to
the lowest model ids (leaf first).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from railplan.catalog import Catalog, SwitchModel
from railplan.design import Design
from railplan.errors import InfeasibleError, RailplanError, SpecError
from railplan.solve.choice_report import Candidate, SolverReport
from railplan.solve.tier_terms import (
    NOMINAL_LENGTHS_M,
    LeafTerm,
    PriceDesign,
    SpineTerm,
    core_term,
    leaf_term,
    nominal_pricer,
    protocol_match,
    spine_term,
)
from railplan.spec import Spec
from railplan.topology import GENERATORS
from railplan.topology.shape import check_capacity, resolve_shape
from railplan.topology.tiers import LAYERED, TierModels, tier_shortlists, tier_speeds
from railplan.validate import check

OBJECTIVES = ("cost", "power")
#: integer units the solver works in: cents, and tenths of a watt
SCALE = {"cost": 100, "power": 10}
DEFAULT_TIME_LIMIT_S = 10.0
SEED = 0
#: proposals built and billed beyond the single-model fabrics before the bill decides
MAX_PROPOSALS = 6

#: (leaf, spine, core) model ids; spine and core are None where the fabric has no such tier
Combo = tuple[str, str | None, str | None]

__all__ = ["NOMINAL_LENGTHS_M", "Candidate", "SolverReport", "choose", "nominal_pricer"]


@dataclass
class _Terms:
    """The model's data: tier terms, which combinations fit, and the bills known so far."""

    layered: bool
    objective: str
    leaf: dict[str, LeafTerm]
    spine: dict[tuple[str, str], SpineTerm]
    core: dict[tuple[str, str, str], float]
    models: dict[str, SwitchModel]
    billed: dict[Combo, tuple[Design, Candidate]] = dataclasses.field(default_factory=dict)
    forbidden: set[Combo] = dataclasses.field(default_factory=set)
    #: (leaf, spine) pairs of different protocols, named only when nothing else fits
    unmixed: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    def estimate(self, combo: Combo) -> float:
        leaf, spine, core = combo
        total = self.leaf[leaf].cost
        if spine is not None:
            total += self.spine[(leaf, spine)].cost
        if spine is not None and core is not None:
            total += self.core[(leaf, spine, core)]
        return total

    def combos(self) -> list[Combo]:
        """Every combination that fits or was billed, minus those that failed to build."""
        if not self.layered:
            out: set[Combo] = {(m, None, None) for m in self.leaf}
        else:
            out = {(m, k, None) for (m, k), t in self.spine.items() if t.tiers == 2}
            out |= {(m, k, c) for (m, k, c) in self.core}
        out |= set(self.billed)
        return sorted((c for c in out if c not in self.forbidden), key=_tie_key)

    def known(self, combo: Combo) -> float:
        """The bill of a combination already billed, else its estimate."""
        billed = self.billed.get(combo)
        if billed is None:
            return self.estimate(combo)
        return billed[1].cost_usd if self.objective == "cost" else billed[1].power_w


def choose(
    spec: Spec,
    catalog: Catalog,
    objective: str = "cost",
    price_design: PriceDesign | None = None,
    *,
    topology: str | None = None,
    max_models: int | None = None,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
) -> tuple[Design, SolverReport]:
    """The fabric (a switch model per tier) the spec allows at least ``objective``.

    ``price_design`` bills a design (default: ``nominal_pricer``, media at nominal lengths);
    the returned Design passes check.
    """
    if objective not in OBJECTIVES:
        raise SpecError(f"objective {objective!r} is not one of {', '.join(OBJECTIVES)}")
    if max_models is not None and max_models < 1:
        raise SpecError("max_models must be at least 1")
    started = time.monotonic()
    price = price_design or nominal_pricer(catalog)
    family = topology or spec.fabric.topology
    if family == "auto":
        from railplan.topology.single_switch import auto_family

        family = auto_family(spec, catalog)
    if family not in GENERATORS:
        raise SpecError(f"fabric.topology: {family!r} is not one of {', '.join(GENERATORS)}")
    shape = resolve_shape(spec, catalog)
    lists = tier_shortlists(spec, catalog, tier_speeds(spec, shape), family)
    skipped: list[tuple[str, str]] = []
    terms = _terms(spec, catalog, family, lists, objective, skipped)
    build = _builder(spec, catalog, family, price, terms)
    bases = _bill_bases(terms, build, _single_models(lists, family), skipped)
    if not terms.combos():
        reasons = "; ".join(f"{m}: {r}" for m, r in [*skipped, *terms.unmixed])
        raise InfeasibleError(f"no allowed switch model builds and prices this fabric: {reasons}")
    status, value, bound, combo = _propose(
        terms, build, skipped, objective, max_models, time_limit_s
    )
    design, chosen = terms.billed[combo]
    scale = SCALE[objective]
    report = SolverReport(
        objective=objective,
        status=status,
        objective_value=value / scale,
        best_bound=bound / scale,
        gap=abs(value - bound) / max(abs(value), 1),
        chosen=chosen,
        bases=tuple(bases),
        skipped=tuple(skipped),
        lower_bound_switches=design.sizing.lower_bound_switches,
        scope="per tier: every allowed model that runs the tier's speeds, one protocol; "
        "counts from the generators, media per link class at nominal lengths, every "
        "proposal and every single-model fabric billed",
        wall_time_s=round(time.monotonic() - started, 3),
        billed=tuple(c for _, c in terms.billed.values()),
    )
    return design, report


def _bill_bases(
    terms: _Terms,
    build: Callable[[Combo, SwitchModel | None], tuple[Design, Candidate]],
    models: list[SwitchModel],
    skipped: list[tuple[str, str]],
) -> list[Candidate]:
    """Build and bill every single-model fabric the shortlists allow."""
    bases = []
    for model in models:
        combo = _single_combo(terms, model.id)
        if model.id not in terms.leaf and any(m == model.id for m, _ in skipped):
            continue  # its leaf tier already failed: the reason is listed once
        try:
            bases.append(build(combo, model)[1])
        except RailplanError as exc:
            skipped.append((model.id, str(exc)))
            terms.forbidden.add(combo)
    return bases


def _propose(
    terms: _Terms,
    build: Callable[[Combo, SwitchModel | None], tuple[Design, Candidate]],
    skipped: list[tuple[str, str]],
    objective: str,
    max_models: int | None,
    time_limit_s: float,
) -> tuple[str, int, int, Combo]:
    """Solve, bill the proposal, solve again with its bill, until CP-SAT's answer is billed.

    After ``MAX_PROPOSALS`` bills the cheapest fabric billed so far stands.
    """
    for _ in range(MAX_PROPOSALS + 1):
        status, value, bound, combo = _solve(terms, objective, max_models, time_limit_s)
        if combo in terms.billed:
            return status, value, bound, combo
        try:
            build(combo, None)
        except RailplanError as exc:
            skipped.append((_combo_label(combo), str(exc)))
            terms.forbidden.add(combo)
    scale = SCALE[objective]
    billed = [c for c in terms.billed if c not in terms.forbidden]
    combo = min(billed, key=lambda c: (terms.known(c), _tie_key(c)))
    value = round(terms.known(combo) * scale)
    return f"{status}, proposals capped", value, min(bound, value), combo


def _terms(
    spec: Spec,
    catalog: Catalog,
    family: str,
    lists: dict[str, list[SwitchModel]],
    objective: str,
    skipped: list[tuple[str, str]],
) -> _Terms:
    """Leaf terms per leaf model, spine terms per pair and core terms per triple that fit."""
    shape = resolve_shape(spec, catalog)
    speeds = tier_speeds(spec, shape)
    models = {m.id: m for tier in lists.values() for m in tier}
    terms = _Terms(family in LAYERED, objective, {}, {}, {}, models)
    # the leaf tier is counted with any spine and core that run their speeds (counting mode
    # sizes no upper tier, so which one does not matter)
    spine0 = next((k for k in lists["spine"] if k.radix(speeds.leaf_up)), lists["spine"][0])
    core0 = next((c for c in lists["core"] if c.radix(speeds.spine_up)), spine0)
    for m in lists["leaf"]:
        try:
            terms.leaf[m.id] = leaf_term(
                spec, shape, family, TierModels(m, spine0, core0), catalog, objective
            )
        except RailplanError as exc:
            skipped.append((m.id, str(exc)))
    if not terms.layered:
        return terms
    for m_id, leaf in terms.leaf.items():
        for k in lists["spine"]:
            if not protocol_match(leaf.model, k):
                why = f"{leaf.model.protocol} and {k.protocol} tiers do not mix"
                terms.unmixed.append((f"leaf {m_id}, spine {k.id}", why))
                continue
            try:
                pair = spine_term(spec, leaf, k, speeds, catalog, objective)
            except RailplanError as exc:
                skipped.append((f"leaf {m_id}, spine {k.id}", str(exc)))
                continue
            terms.spine[(m_id, k.id)] = pair
            if pair.tiers == 2:
                continue
            for c in lists["core"]:
                if not protocol_match(k, c):
                    continue
                try:
                    cost, _ = core_term(spec, leaf, k, c, speeds, catalog, objective)
                except RailplanError as exc:
                    skipped.append((f"leaf {m_id}, spine {k.id}, core {c.id}", str(exc)))
                    continue
                terms.core[(m_id, k.id, c.id)] = cost
    return terms


def _single_models(lists: dict[str, list[SwitchModel]], family: str) -> list[SwitchModel]:
    """Models the shortlists allow in every tier (each builds a single-model fabric)."""
    if family not in LAYERED:
        return list(lists["leaf"])
    spine = {m.id for m in lists["spine"]}
    core = {m.id for m in lists["core"]}
    return [m for m in lists["leaf"] if m.id in spine and m.id in core]


def _single_combo(terms: _Terms, model: str) -> Combo:
    if not terms.layered:
        return (model, None, None)
    pair = terms.spine.get((model, model))
    if pair is not None and pair.tiers == 3:
        return (model, model, model)
    return (model, model, None)


def _combo_label(combo: Combo) -> str:
    leaf, spine, core = combo
    parts = (
        [f"leaf {leaf}"]
        + ([f"spine {spine}"] if spine else [])
        + ([f"core {core}"] if core else [])
    )
    return ", ".join(parts)


def _builder(
    spec: Spec, catalog: Catalog, family: str, price: PriceDesign, terms: _Terms
) -> Callable[[Combo, SwitchModel | None], tuple[Design, Candidate]]:
    """Build, check and bill one combination (``single``: one model for every tier)."""
    shape = resolve_shape(spec, catalog)
    speeds = tier_speeds(spec, shape)
    gbps = [speeds.leaf_down, speeds.leaf_up, speeds.spine_up]

    def build(combo: Combo, single: SwitchModel | None) -> tuple[Design, Candidate]:
        leaf, spine, core = combo
        models: SwitchModel | TierModels
        if single is not None:
            models = single
        else:
            pick = terms.models
            models = TierModels(pick[leaf], pick[spine or leaf], pick[core or spine or leaf])
        tiers = TierModels.of(models)
        check_capacity(spec, shape, [tiers.leaf, tiers.spine, tiers.core], gbps)  # closed form
        design = GENERATORS[family](spec, shape, models)
        problems = check(design)
        if problems:
            raise InfeasibleError(f"generated design fails check: {problems[0]}")
        billed = price(design)
        by_role = dict(sorted({sw.role: sw.model for sw in design.switches}.items()))
        if len(set(by_role.values())) > 1:
            note = ", ".join(f"{role} {m}" for role, m in by_role.items())
            sizing = dataclasses.replace(
                design.sizing, notes=(*design.sizing.notes, f"switch models by tier: {note}")
            )
            design = dataclasses.replace(design, sizing=sizing)
        cand = Candidate(
            models=by_role,
            cost_usd=billed.totals.cost_usd,
            power_w=billed.totals.power_w,
            switches=len(design.switches),
        )
        terms.billed[combo] = (design, cand)
        return design, cand

    return build


def _solve(
    terms: _Terms, objective: str, max_models: int | None, time_limit_s: float
) -> tuple[str, int, int, Combo]:
    """CP-SAT over one model per tier; returns status, objective, bound and the combination.

    Variables: one per fitting combination (its pair or triple indicator) and one per tier
    and model, equal to the sum of the combinations using that model there. The objective
    puts each term where it belongs: leaf terms on the leaf-model variables, spine terms on
    the (leaf, spine) sums, core terms on the triples, and on every billed combination the
    difference between its bill and its estimate.
    """
    combos = terms.combos()
    if not combos:
        raise InfeasibleError("every proposed switch model combination failed to build")
    scale = SCALE[objective]
    m = cp_model.CpModel()
    pick = {c: m.new_bool_var("c_" + "_".join(x or "-" for x in c)) for c in combos}
    m.add_exactly_one(pick.values())
    tier_var: dict[tuple[int, str], cp_model.IntVar] = {}
    members: dict[tuple[int, str], list[cp_model.IntVar]] = {}
    for combo, var in pick.items():
        for t, model_id in enumerate(combo):
            if model_id is not None:
                members.setdefault((t, model_id), []).append(var)
    for key, vars_ in sorted(members.items()):
        tier_var[key] = m.new_bool_var(f"t{key[0]}_{key[1]}")
        m.add(tier_var[key] == sum(vars_))
    if max_models is not None:
        used: dict[str, cp_model.IntVar] = {}
        for (_, model_id), v in sorted(tier_var.items()):
            used.setdefault(model_id, m.new_bool_var(f"uses_{model_id}"))
            m.add_implication(v, used[model_id])
        m.add(sum(used.values()) <= max_models)
    leaf_units = {mid: round(t.cost * scale) for mid, t in terms.leaf.items()}
    terms_expr = [
        leaf_units[model_id] * v
        for (t, model_id), v in sorted(tier_var.items())
        if t == 0 and model_id in leaf_units
    ]
    for combo, var in pick.items():  # the rest of each combination's cost (or bill)
        rest = round(terms.known(combo) * scale) - leaf_units.get(combo[0], 0)
        terms_expr.append(rest * var)
    total = sum(terms_expr)
    m.minimize(total)
    solver = _solver(time_limit_s)
    status = solver.solve(m)
    _refuse(status, max_models, time_limit_s)
    value = round(solver.objective_value)
    bound = round(solver.best_objective_bound)
    if status == cp_model.OPTIMAL:  # among equal answers, the lowest model ids, leaf first
        m.add(total == value)
        m.minimize(sum(k * pick[c] for k, c in enumerate(combos)))
        tie = _solver(time_limit_s)
        if tie.solve(m) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return solver.status_name(status), value, bound, _picked(tie, pick)
    return solver.status_name(status), value, bound, _picked(solver, pick)


def _picked(solver: cp_model.CpSolver, pick: dict[Combo, cp_model.IntVar]) -> Combo:
    return next(c for c, v in pick.items() if solver.value(v))


def _refuse(status: Any, max_models: int | None, time_limit_s: float) -> None:
    if status == cp_model.INFEASIBLE:
        raise InfeasibleError(
            f"no allowed fabric uses at most {max_models} switch model(s); raise max_models"
        )
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise InfeasibleError(
            f"switch choice found no answer in {time_limit_s:g} s; raise the time limit"
        )


def _tie_key(combo: Combo) -> tuple[str, str, str]:
    return (combo[0], combo[1] or "", combo[2] or "")


def _solver(time_limit_s: float) -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    solver.parameters.catch_sigint_signal = False  # keep the caller's Ctrl-C handling
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = SEED
    return solver
