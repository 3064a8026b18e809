"""Fewest moved cables when a fabric grows into a design that does not contain it: which
installed switch becomes which switch of the new design (CP-SAT), with a solver-free bound.

The caller (``change/align.py``) poses the problem on switches left unmatched by id: ``gain[i]``
lists, for an installed switch ``i``, the new switches ``j`` it may become (same model and
role) with how many of its cables stay where they are if it does. Each installed switch
becomes at most one new switch and each new switch is at most one installed one; the model
maximises the cables kept, i.e. minimises the moved ones.

The relaxation that lets every installed switch take its best new switch, ignoring that two
may want the same one, keeps at least as many cables as any assignment: ``upper_kept`` below.
It is computed without the solver and gives the stated lower bound on moved cables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model

#: CP-SAT's work budget in deterministic seconds (machine-independent, not the wall clock)
DEFAULT_BUDGET_S = 10.0


@dataclass(frozen=True, slots=True)
class RegrowSolution:
    """The mapping found, the cables it keeps and what is proved about it."""

    #: installed switch index -> new switch index
    mapping: dict[int, int]
    kept: int
    #: no mapping keeps more (CP-SAT's best bound, capped by the relaxation)
    upper_kept: int
    #: the relaxation's bound alone (every installed switch takes its best new switch)
    relaxed_kept: int
    status: str

    @property
    def gap(self) -> int:
        """Cables by which the answer may exceed the fewest moves possible."""
        return self.upper_kept - self.kept


def relaxed_bound(gain: Sequence[Mapping[int, int]]) -> int:
    """Cables kept if every installed switch took its best new switch (an upper bound)."""
    return sum(max(g.values(), default=0) for g in gain)


def check_mapping(gain: Sequence[Mapping[int, int]], mapping: Mapping[int, int]) -> int:
    """Cables ``mapping`` keeps; raises ValueError if it maps two switches to one or a pair
    not offered (the solver-free check of an answer)."""
    if len(set(mapping.values())) != len(mapping):
        raise ValueError("two installed switches become the same new switch")
    total = 0
    for i, j in mapping.items():
        if j not in gain[i]:
            raise ValueError(f"installed switch {i} cannot become new switch {j}")
        total += gain[i][j]
    return total


def solve_regrow(
    gain: Sequence[Mapping[int, int]],
    *,
    budget_s: float = DEFAULT_BUDGET_S,
    seed: int = 1,
) -> RegrowSolution:
    """The assignment of installed to new switches that keeps the most cables."""
    relaxed = relaxed_bound(gain)
    pairs = [(i, j, w) for i, g in enumerate(gain) for j, w in sorted(g.items()) if w > 0]
    if not pairs:
        return RegrowSolution({}, 0, 0, 0, "optimal")
    model = cp_model.CpModel()
    x = {(i, j): model.new_bool_var(f"x{i}_{j}") for i, j, _ in pairs}
    rows: dict[int, list[cp_model.IntVar]] = {}
    cols: dict[int, list[cp_model.IntVar]] = {}
    for (i, j), var in x.items():
        rows.setdefault(i, []).append(var)
        cols.setdefault(j, []).append(var)
    for group in (*rows.values(), *cols.values()):
        model.add_at_most_one(group)
    model.maximize(sum(w * x[i, j] for i, j, w in pairs))
    # a greedy start: installed switches in turn take their best free new switch
    taken: set[int] = set()
    for i, g in enumerate(gain):
        best = max(((w, -j) for j, w in g.items() if w > 0 and j not in taken), default=None)
        if best is not None:
            taken.add(-best[1])
            model.add_hint(x[i, -best[1]], 1)
    solver = cp_model.CpSolver()
    solver.parameters.catch_sigint_signal = False
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = budget_s
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        mapping: dict[int, int] = {}
        return RegrowSolution(mapping, 0, relaxed, relaxed, "no solution within the budget")
    mapping = {i: j for (i, j), var in x.items() if solver.value(var)}
    kept = check_mapping(gain, mapping)
    upper = min(relaxed, int(solver.best_objective_bound + 1e-6))
    name = "optimal" if status == cp_model.OPTIMAL else "feasible"
    return RegrowSolution(mapping, kept, max(upper, kept), relaxed, name)
