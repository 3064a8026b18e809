"""Traffic figures for ``compare``: pair tests, all-to-all and prefill->decode, fast at 32k GPUs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from railplan.design import Design
from railplan.traffic.collisions import analyze
from railplan.traffic.failures import worst_single_failure
from railplan.traffic.report import CollisionReport
from railplan.traffic.routing import effective_policy, fabric_index

#: pair tests above this many are sampled
COMPARE_PAIRS = 20_000
#: all-to-all and prefill->decode span at most this many nodes, spread evenly over the cluster
COMPARE_JOB_NODES = 128
#: prefill->decode as compared: prefill and decode spread over every leaf group (a B leaf on a
#: Matrix, an SU on a ROFT), every prefill node sending KV cache to every decode node
COMPARE_PD: dict[str, Any] = {"rule": "spread", "mapping": "all"}


def _job(design: Design) -> tuple[int, Sequence[int] | None]:
    """A job's nodes: all of them, or ``COMPARE_JOB_NODES`` spread evenly over the node order
    (every leaf group and scalable unit gets its share, whatever the family)."""
    n = len(design.nodes)
    m = min(n, COMPARE_JOB_NODES)
    return m, ([k * n // m for k in range(m)] if m < n else None)


def job_alltoall(design: Design, seed: int = 0) -> CollisionReport:
    """The all-to-all ``summary_for_compare`` analyzes: every node, or the spread job."""
    _, nodes = _job(design)
    return analyze(design, "alltoall", seed=seed, nodes=nodes)


def _collective(r: CollisionReport, nodes: int, of_nodes: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "nodes": nodes,
        "of_nodes": of_nodes,
        "sampled": nodes < of_nodes,
        "collective_fraction": round(r.collective_fraction or 0.0, 4),
        "mean": r.bandwidth["mean"],
        "fraction_full": round(r.fraction_full, 4),
    }
    if nodes < of_nodes:
        out["note"] = f"a job on {nodes} of {of_nodes} nodes spread evenly over the cluster"
    return out


def summary_for_compare(
    design: Design,
    seed: int = 0,
    failures: bool = False,
    alltoall: CollisionReport | None = None,
) -> dict[str, Any]:
    """Pair-test, all-to-all and PD figures under the design's own routing and bonding.

    Pair tests: every pair up to ``COMPARE_PAIRS`` pairs, else that many sampled (``sampled``
    says so). All-to-all and PD (``COMPARE_PD``): across every node, or a job of
    ``COMPARE_JOB_NODES`` nodes spread evenly over a larger cluster. Every family gets the
    same patterns and placement rule; fractions are of the logical NIC's line rate.
    ``failures``: add ``worst_failure``, the single switch or link failure (one of each kind,
    ``failures.candidates``) that slows the same all-to-all the most. ``alltoall``: the
    report of that same all-to-all (``job_alltoall``) when the caller has analyzed it.
    """
    ix = fabric_index(design)
    n = ix.n_nodes
    ep = ix.endpoints
    out: dict[str, Any] = {
        "routing": effective_policy(design),
        "bonding": ep.bonding,
        "line_rate_gbps": {"nic": ep.nic_gbps, "port": ep.port_gbps},
    }
    if n < 2:
        out["flows_per_nic"] = None
        out["pairs"] = out["alltoall"] = out["pd"] = None
        return out
    total = n * (n - 1) // 2
    sample = COMPARE_PAIRS if total > COMPARE_PAIRS else None
    pr = analyze(design, "pairs", seed=seed, sample=sample)
    out["flows_per_nic"] = pr.flows_per_nic
    out["pairs"] = {
        "pairs": pr.pairs,
        "of_pairs": total,
        "sampled": sample is not None,
        "fraction_full": round(pr.fraction_full, 4),
        "fraction_half_or_less": round(pr.fraction_half_or_less, 4),
        "mean": pr.bandwidth["mean"],
        "min": pr.bandwidth["min"],
    }
    if sample is not None:
        out["pairs"]["note"] = f"{sample} of {total} node pairs sampled (seed {seed})"
    m, nodes = _job(design)
    ar = alltoall or analyze(design, "alltoall", seed=seed, nodes=nodes)
    out["alltoall"] = _collective(ar, m, n)
    pd = analyze(design, "pd", seed=seed, nodes=nodes, **COMPARE_PD)
    out["pd"] = _collective(pd, m, n) | COMPARE_PD
    if failures:
        out["worst_failure"] = worst_single_failure(design, "alltoall", seed=seed, nodes=nodes)
    return out
