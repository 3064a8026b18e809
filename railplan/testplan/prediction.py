"""The collision analyzer's prediction of the fraction of line rate a test's pattern reaches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from railplan.design import Design
from railplan.traffic.collisions import analyze
from railplan.traffic.flows import default_flows_per_nic
from railplan.traffic.routing import effective_policy, fabric_index


@dataclass(frozen=True, slots=True)
class Prediction:
    """Fraction of line rate the analyzer predicts: mean and worst over hash draws."""

    mean: float
    worst: float
    why: str


#: hash draws per prediction under ECMP (QP numbers differ from run to run)
HASH_DRAWS = 4


class Predictor:
    """The collision analyzer's prediction for a pattern on this design (cached)."""

    def __init__(self, design: Design) -> None:
        self.design = design
        self.policy = effective_policy(design)
        self.draws = HASH_DRAWS if self.policy == "ecmp" else 1
        ix = fabric_index(design)
        #: bonded NICs: the analyzer runs one QP per bonded port, as the tests must
        self.bond = (
            f", {default_flows_per_nic(ix)} QPs per {ix.endpoints.nic_gbps:g}G bonded NIC"
            if ix.endpoints.bonded
            else ""
        )

    def _why(self, what: str, mean: float, worst: float) -> str:
        how = f"{self.policy}, {self.draws} hash draws" if self.draws > 1 else self.policy
        how += self.bond
        if abs(mean - worst) < 5e-3:
            return f"{what}, {how}"
        return f"{what}, {how}: mean {mean:.2f}, worst {worst:.2f}"

    def pairs(self, pairs: Sequence[tuple[str, str]]) -> list[Prediction]:
        """Each pair test alone (nothing else on the fabric): its slowest flow's fraction."""
        if not pairs:
            return []
        runs = np.stack(
            [
                analyze(self.design, "pairs", pairs=list(pairs), seed=s).pair_fraction
                for s in range(self.draws)
            ]
        )
        out = []
        for mean, worst in zip(runs.mean(axis=0).tolist(), runs.min(axis=0).tolist(), strict=True):
            out.append(Prediction(mean, worst, self._why("pair alone", mean, worst)))
        return out

    def pattern(self, name: str, **options: Any) -> Prediction:
        """A collective: paced by its slowest flow (``collective_fraction``)."""
        runs = [
            analyze(self.design, name, seed=s, **options).collective_fraction or 1.0
            for s in range(self.draws)
        ]
        mean, worst = sum(runs) / len(runs), min(runs)
        return Prediction(mean, worst, self._why(f"{name} collective", mean, worst))


ALONE = Prediction(1.0, 1.0, "one flow alone on its path")
