"""The collision analyzer's report: per-pair bandwidth distribution, hottest links, node faults."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: A pair at or above this fraction of line rate counts as full rate.
FULL_RATE = 0.99
#: ... and at or below this one as half rate or worse.
HALF_RATE = 0.5
HOTTEST_LINKS = 10
FLOWS_PER_HOT_LINK = 8
HISTOGRAM_EDGES = tuple(round(0.1 * i, 1) for i in range(11))


@dataclass
class CollisionReport:
    """What every node pair of a pattern gets, as a fraction of NIC line rate, and why.

    ``line_rate_gbps`` is the logical NIC's (both ports of a bonded NIC), ``port_rate_gbps``
    one port's. A pair with a connection that cannot be routed (a dead port, no path) is at 0
    and its bottleneck reads ``disconnected``. ``failure`` holds the what-if of ``--fail``.
    """

    design: str
    topology: str
    pattern: str
    routing: str
    hash: str | None
    hash_seeds: str | None
    flows_per_nic: int
    seed: int
    flows: int
    line_rate_gbps: float
    port_rate_gbps: float
    bonding: str
    node_ids: list[str]
    pair_nodes: NDArray[np.int64]
    pair_fraction: NDArray[np.float64]
    pair_bottleneck: list[str]
    collective_fraction: float | None
    hottest: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    failure: dict[str, Any] | None = None

    @property
    def pairs(self) -> int:
        return len(self.pair_fraction)

    @property
    def fraction_full(self) -> float:
        """Share of pairs at full rate (>= 0.99 of line rate)."""
        return float((self.pair_fraction >= FULL_RATE).mean()) if self.pairs else 1.0

    @property
    def fraction_half_or_less(self) -> float:
        return float((self.pair_fraction <= HALF_RATE + 1e-9).mean()) if self.pairs else 0.0

    @property
    def bandwidth(self) -> dict[str, float]:
        """min, p10, median, mean, max of the per-pair fraction of line rate."""
        f = self.pair_fraction
        if not f.size:
            return dict.fromkeys(("min", "p10", "median", "mean", "max"), 1.0)
        return {
            "min": round(float(f.min()), 4),
            "p10": round(float(np.percentile(f, 10)), 4),
            "median": round(float(np.median(f)), 4),
            "mean": round(float(f.mean()), 4),
            "max": round(float(f.max()), 4),
        }

    @property
    def histogram(self) -> dict[str, list[float] | list[int]]:
        """Pair counts per tenth of line rate (the last bin includes 1.0)."""
        counts, _ = np.histogram(np.clip(self.pair_fraction, 0, 1), bins=HISTOGRAM_EDGES)
        return {"edges": list(HISTOGRAM_EDGES), "counts": counts.astype(int).tolist()}

    @property
    def disconnected(self) -> NDArray[np.bool_]:
        """Pairs with a connection that cannot be routed."""
        return np.array([neck == "disconnected" for neck in self.pair_bottleneck], dtype=bool)

    def slow_nodes(self) -> dict[str, list[str]]:
        """The partner test's diagnostic: nodes slow with every partner (node fault) vs only some."""
        if not self.pairs:
            return {"every_partner": [], "some_partners": []}
        n = len(self.node_ids)
        ends = self.pair_nodes.ravel()
        slow = np.repeat(self.pair_fraction < FULL_RATE, 2)
        tested = np.bincount(ends, minlength=n)
        slow_count = np.bincount(ends, weights=slow, minlength=n)
        every = np.nonzero((tested > 0) & (slow_count == tested))[0]
        some = np.nonzero((slow_count > 0) & (slow_count < tested))[0]
        return {
            "every_partner": [self.node_ids[i] for i in every],
            "some_partners": [self.node_ids[i] for i in some],
        }

    def to_json(self, max_nodes: int = 50) -> dict[str, Any]:
        """Plain data: the keys of ``railplan analyze --json``."""
        out: dict[str, Any] = {
            "design": self.design,
            "topology": self.topology,
            "pattern": self.pattern,
            "routing": self.routing,
            "hash": self.hash,
            "hash_seeds": self.hash_seeds,
            "flows_per_nic": self.flows_per_nic,
            "seed": self.seed,
            "flows": self.flows,
            "pairs": self.pairs,
            "bonding": self.bonding,
            "line_rate_gbps": {"nic": self.line_rate_gbps, "port": self.port_rate_gbps},
            "fraction_full": round(self.fraction_full, 4),
            "fraction_half_or_less": round(self.fraction_half_or_less, 4),
            "bandwidth": self.bandwidth,
            "histogram": self.histogram,
            "collective_fraction": None
            if self.collective_fraction is None
            else round(self.collective_fraction, 4),
            "hottest_links": self.hottest,
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
        }
        out["disconnected_pairs"] = int(self.disconnected.sum())
        if self.failure is not None:
            out["failure"] = self.failure
        if self.pattern == "pairs":
            slow = self.slow_nodes()
            out["slow_nodes"] = {
                "every_partner": len(slow["every_partner"]),
                "some_partners": len(slow["some_partners"]),
                "every_partner_nodes": slow["every_partner"][:max_nodes],
                "some_partners_nodes": slow["some_partners"][:max_nodes],
            }
        return out

    def pair_rows(self) -> list[dict[str, Any]]:
        """One row per node pair for a CSV: ends, fraction, Gbps per NIC, bottleneck link."""
        rows = []
        ids = self.node_ids
        for (a, b), f, neck in zip(
            self.pair_nodes.tolist(), self.pair_fraction.tolist(), self.pair_bottleneck, strict=True
        ):
            rows.append(
                {
                    "node_a": ids[a],
                    "node_b": ids[b],
                    "fraction": round(f, 4),
                    "gbps_per_nic": round(f * self.line_rate_gbps, 1),
                    "full_rate": f >= FULL_RATE,
                    "bottleneck": neck,
                }
            )
        return rows
