"""Switch-model choice with CP-SAT: the allowed models (per tier where buildable) at least cost or power.

What is chosen among, honestly:

- one *base* fabric per allowed switch model, built by the topology generator exactly as
  ``railplan plan`` would (the generators wire a fabric from one model: its radix decides the
  leaf split, spine and core counts);
- per tier (switch role), any allowed model *compatible* with the base model: same protocol,
  cage form factor, radix and ports per cage at the port speed. Such models wire identically,
  so a tier can change model without changing the wiring (e.g. leaves cx864e-n, spines
  sn5600). Models of another radix cannot replace a tier: that would need a generator that
  sizes each tier from its own radix, which railplan does not have.

Each base is priced once by ``price_design`` (a Bom: switches plus whatever media it prices);
the switch lines of that Bom are replaced by the chosen models' catalog price (or typical
power), the rest (media, optics) is kept, which is exact because compatible models take the
same cables. CP-SAT picks one base and one model per role, optionally using at most
``max_models`` distinct models (spares commonality), minimising total cost (USD) or typical
power (W); ties go to the lowest model ids. Deterministic: one worker, fixed seed.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from railplan.catalog import Catalog, SwitchModel
from railplan.design import Cable, Design
from railplan.errors import InfeasibleError, RailplanError, SpecError
from railplan.physical import media
from railplan.physical.bom import Bom, bom
from railplan.spec import Spec
from railplan.topology import GENERATORS
from railplan.topology.shape import allowed_switches, resolve_shape
from railplan.validate import check

OBJECTIVES = ("cost", "power")
#: integer units the solver works in: cents, and tenths of a watt
SCALE = {"cost": 100, "power": 10}
DEFAULT_TIME_LIMIT_S = 10.0
SEED = 0
#: lengths used by ``nominal_pricer`` when no floor layout has been routed
NOMINAL_LENGTHS_M = {"node-leaf": 3.0, "leaf-spine": 20.0, "spine-core": 50.0, "leaf-leaf": 20.0}

PriceDesign = Callable[[Design], Bom]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One fabric CP-SAT could pick: its switch model per role and what it costs and draws."""

    models: dict[str, str]
    cost_usd: float
    power_w: float
    switches: int

    @property
    def label(self) -> str:
        kinds = set(self.models.values())
        if len(kinds) == 1:
            return kinds.pop()
        return ", ".join(f"{role} {m}" for role, m in sorted(self.models.items()))


@dataclass(frozen=True, slots=True)
class SolverReport:
    """What CP-SAT proved: objective, best bound, relative gap and status, with the candidates."""

    objective: str
    status: str
    objective_value: float
    best_bound: float
    gap: float
    chosen: Candidate
    #: every base fabric as built from one model (what ``plan`` compares)
    bases: tuple[Candidate, ...]
    #: models that could not build or price the fabric, with the reason
    skipped: tuple[tuple[str, str], ...]
    lower_bound_switches: int
    scope: str
    wall_time_s: float = dataclasses.field(default=0.0, compare=False)

    def to_json(self) -> dict[str, Any]:
        def cand(c: Candidate) -> dict[str, Any]:
            return {
                "label": c.label,
                "models": dict(sorted(c.models.items())),
                "cost_usd": c.cost_usd,
                "power_w": c.power_w,
                "switches": c.switches,
            }

        return {
            "objective": self.objective,
            "status": self.status,
            "objective_value": self.objective_value,
            "best_bound": self.best_bound,
            "gap": self.gap,
            "chosen": cand(self.chosen),
            "bases": [cand(b) for b in self.bases],
            "skipped": [{"model": m, "reason": r} for m, r in self.skipped],
            "lower_bound_switches": self.lower_bound_switches,
            "scope": self.scope,
        }


def compatible(a: SwitchModel, b: SwitchModel, speed_gbps: int) -> bool:
    """Two models wire a fabric identically at ``speed_gbps`` (so a tier may swap one for the other)."""
    ma, mb = a.mode_at(speed_gbps), b.mode_at(speed_gbps)
    return (
        ma is not None
        and mb is not None
        and a.protocol == b.protocol
        and a.form_factor == b.form_factor
        and a.radix(speed_gbps) == b.radix(speed_gbps)
        and ma.ports_per_cage == mb.ports_per_cage
    )


def nominal_pricer(catalog: Catalog, lengths_m: Mapping[str, float] | None = None) -> PriceDesign:
    """A pricer that gives every link a nominal length per link kind, picks media, and bills it.

    Use it before a floor layout exists; pass the layout's own pricer for routed lengths.
    """
    table = {**NOMINAL_LENGTHS_M, **(lengths_m or {})}

    def price(design: Design) -> Bom:
        routed = {lk.id: table.get(lk.kind, 20.0) for lk in design.links}
        assignment = media.assign_design(design, catalog, routed)
        cables = tuple(
            Cable(
                id=f"C{n:06d}",
                link_id=lk.id,
                media=assignment.choices[lk.id].cable,
                transceiver_a=assignment.choices[lk.id].transceiver_a,
                transceiver_b=assignment.choices[lk.id].transceiver_b,
                length_m=assignment.choices[lk.id].stocked_length_m,
                label_a="",
                label_b="",
                colour="",
            )
            for n, lk in enumerate(design.links, start=1)
        )
        return bom(dataclasses.replace(design, cables=cables), catalog)

    return price


@dataclass(frozen=True, slots=True)
class _Base:
    model: SwitchModel
    design: Design
    roles: dict[str, int]
    rest: int
    swaps: dict[str, list[SwitchModel]]
    priced: Candidate


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
    """The fabric (and switch model per role) the spec allows at least ``objective``.

    ``price_design`` bills a design (default: ``nominal_pricer``, media at nominal lengths);
    the returned Design is the generated one with the chosen models per role and passes check.
    """
    if objective not in OBJECTIVES:
        raise SpecError(f"objective {objective!r} is not one of {', '.join(OBJECTIVES)}")
    if max_models is not None and max_models < 1:
        raise SpecError("max_models must be at least 1")
    started = time.monotonic()
    price = price_design or nominal_pricer(catalog)
    family = topology or spec.fabric.topology
    if family not in GENERATORS:
        raise SpecError(f"fabric.topology: {family!r} is not one of {', '.join(GENERATORS)}")
    shape = resolve_shape(spec, catalog)
    speed = shape.port_speed_gbps
    allowed = allowed_switches(spec, catalog, speed)
    bases: list[_Base] = []
    skipped: list[tuple[str, str]] = []
    for model in sorted(allowed, key=lambda m: m.id):
        try:
            design = GENERATORS[family](spec, shape, model)
            problems = check(design)
            if problems:
                raise InfeasibleError(f"generated design fails check: {problems[0]}")
            billed = price(design)
        except RailplanError as exc:
            skipped.append((model.id, str(exc)))
            continue
        bases.append(_base(model, design, billed, allowed, speed, objective))
    if not bases:
        reasons = "; ".join(f"{m}: {r}" for m, r in skipped)
        raise InfeasibleError(f"no allowed switch model builds and prices this fabric: {reasons}")
    status, value, bound, pick = _solve(bases, objective, max_models, time_limit_s)
    base, models = pick
    design = _relabel(base, models, objective)
    problems = check(design)
    if problems:
        raise AssertionError(f"chosen design fails check: {problems[:3]}")
    chosen = _candidate(base, models, objective, catalog)
    scale = SCALE[objective]
    report = SolverReport(
        objective=objective,
        status=status,
        objective_value=value / scale,
        best_bound=bound / scale,
        gap=abs(value - bound) / max(abs(value), 1),
        chosen=chosen,
        bases=tuple(b.priced for b in bases),
        skipped=tuple(skipped),
        lower_bound_switches=design.sizing.lower_bound_switches,
        scope="one fabric per allowed model; per role, models of the same protocol, form "
        "factor, radix and ports per cage",
        wall_time_s=round(time.monotonic() - started, 3),
    )
    return design, report


def _units(billed: Bom, objective: str) -> tuple[float, float]:
    """(total, switch part) of a Bom in the objective's units."""
    if objective == "cost":
        total = billed.totals.cost_usd
        switches = sum(ln.total_usd for ln in billed.lines if ln.kind == "switch")
    else:
        total = billed.totals.power_w
        switches = sum(ln.total_power_w for ln in billed.lines if ln.kind == "switch")
    return total, switches


def _unit(model: SwitchModel, objective: str) -> int:
    value = model.price_usd.value if objective == "cost" else model.power_typical_w.value
    return round(value * SCALE[objective])


def _base(
    model: SwitchModel,
    design: Design,
    billed: Bom,
    allowed: list[SwitchModel],
    speed: int,
    objective: str,
) -> _Base:
    roles = dict(sorted(Counter(sw.role for sw in design.switches).items()))
    total, switch_part = _units(billed, objective)
    rest = round((total - switch_part) * SCALE[objective])
    swaps = {
        role: sorted((m for m in allowed if compatible(model, m, speed)), key=lambda m: m.id)
        for role in roles
    }
    priced = Candidate(
        models=dict.fromkeys(roles, model.id),
        cost_usd=billed.totals.cost_usd,
        power_w=billed.totals.power_w,
        switches=len(design.switches),
    )
    return _Base(model, design, roles, rest, swaps, priced)


def _solve(
    bases: list[_Base], objective: str, max_models: int | None, time_limit_s: float
) -> tuple[str, int, int, tuple[_Base, dict[str, str]]]:
    """CP-SAT over (base, model per role); returns status, objective, bound and the pick."""
    m = cp_model.CpModel()
    pick = [m.new_bool_var(f"base_{b.model.id}") for b in bases]
    m.add_exactly_one(pick)
    terms = []
    choice: dict[tuple[int, str, str], cp_model.IntVar] = {}
    used: dict[str, cp_model.IntVar] = {}
    model_ids = sorted({sw.id for b in bases for opts in b.swaps.values() for sw in opts})
    for i, base in enumerate(bases):
        terms.append(base.rest * pick[i])
        for role, count in base.roles.items():
            opts = []
            for sw in base.swaps[role]:
                var = m.new_bool_var(f"b{i}_{role}_{sw.id}")
                choice[(i, role, sw.id)] = var
                opts.append(var)
                terms.append(count * _unit(sw, objective) * var)
                if sw.id not in used:
                    used[sw.id] = m.new_bool_var(f"uses_{sw.id}")
                m.add_implication(var, used[sw.id])
            m.add(sum(opts) == pick[i])
    if max_models is not None:
        m.add(sum(used.values()) <= max_models)
    total = sum(terms)
    m.minimize(total)
    solver = _solver(time_limit_s)
    status = solver.solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        if status == cp_model.INFEASIBLE:
            raise InfeasibleError(
                f"no allowed fabric uses at most {max_models} switch model(s); raise max_models"
            )
        raise InfeasibleError(
            f"switch choice found no answer in {time_limit_s:g} s; raise the time limit"
        )
    value = round(solver.objective_value)
    bound = round(solver.best_objective_bound)
    name = solver.status_name(status)
    if status == cp_model.OPTIMAL:  # among equal answers, the lowest model ids
        m.add(total == value)
        rank = {mid: k for k, mid in enumerate(model_ids)}
        m.minimize(
            sum(len(model_ids) * 10 * k * pick[k] for k in range(len(bases)))
            + sum(rank[mid] * var for (_, _, mid), var in choice.items())
        )
        tie = _solver(time_limit_s)
        if tie.solve(m) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            solver = tie
    i = next(k for k in range(len(bases)) if solver.value(pick[k]))
    models = {
        role: mid for (k, role, mid), var in sorted(choice.items()) if k == i and solver.value(var)
    }
    return name, value, bound, (bases[i], models)


def _solver(time_limit_s: float) -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = SEED
    return solver


def _relabel(base: _Base, models: dict[str, str], objective: str) -> Design:
    design = base.design
    if all(mid == base.model.id for mid in models.values()):
        return design
    switches = tuple(
        dataclasses.replace(sw, model=models.get(sw.role, sw.model)) for sw in design.switches
    )
    by_role = ", ".join(f"{role} {mid}" for role, mid in sorted(models.items()))
    note = f"switch models by role: {by_role} (chosen by CP-SAT for least {objective})"
    sizing = dataclasses.replace(design.sizing, notes=(*design.sizing.notes, note))
    return dataclasses.replace(design, switches=switches, sizing=sizing)


def _candidate(base: _Base, models: dict[str, str], objective: str, catalog: Catalog) -> Candidate:
    """The chosen fabric's cost and power: the base's Bom with the switch lines repriced."""
    cost, power = base.priced.cost_usd, base.priced.power_w
    for role, count in base.roles.items():
        new, old = catalog.switch(models[role]), base.model
        cost += count * (new.price_usd.value - old.price_usd.value)
        power += count * (new.power_typical_w.value - old.power_typical_w.value)
    return Candidate(
        models=dict(models),
        cost_usd=round(cost, 2),
        power_w=round(power, 1),
        switches=base.priced.switches,
    )
