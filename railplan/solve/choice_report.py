"""What the switch-choice solver reports: the fabrics it billed and what CP-SAT proved."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Candidate:
    """One fabric: its switch model per role and what it costs and draws (by the bill)."""

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
    """What CP-SAT proved: objective, best bound, relative gap and status, with the fabrics."""

    objective: str
    status: str
    objective_value: float
    best_bound: float
    gap: float
    chosen: Candidate
    #: every single-model fabric the shortlists allow, billed
    bases: tuple[Candidate, ...]
    #: models (or tier combinations) that could not build or price the fabric, with the reason
    skipped: tuple[tuple[str, str], ...]
    lower_bound_switches: int
    scope: str
    wall_time_s: float = dataclasses.field(default=0.0, compare=False)
    #: every fabric built and billed while solving (the bases first), in order
    billed: tuple[Candidate, ...] = ()

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
            "billed": [cand(b) for b in self.billed],
            "skipped": [{"model": m, "reason": r} for m, r in self.skipped],
            "lower_bound_switches": self.lower_bound_switches,
            "scope": self.scope,
        }
