"""Expected values of the plan's checks, derived from the design, and the checks as grader rows.

Every expected number starts from the NIC line rate, the catalog's sourced RDMA efficiency and
the collision analyzer's prediction for the pattern the test runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from railplan.catalog import Catalog, Sourced
from railplan.design import Design
from railplan.testplan.model import Check
from railplan.testplan.prediction import Prediction

#: used when the NIC's catalog entry has no measured figure (same source as cx7-400g)
DEFAULT_EFFICIENCY = Sourced(
    value=0.98,
    source="vendor: Asterfusion CX732Q-N test report: ib_write_bw 391.96 of 400 Gb/s",
)
DEFAULT_LATENCY_US = Sourced(
    value=1.95,
    source="vendor: Asterfusion CX732Q-N test report: NIC back to back 1.95 us",
)
#: a switch hop adds well under 1 us (the CX732Q-N report measured 560 ns); pass bound per hop
HOP_BOUND_US = 1.0
#: NCCL bus bandwidth over the ib_write_bw rate, measured two-node in the Asterfusion CX732Q-N test report
NCCL_EFFICIENCY = {
    "all_reduce": Sourced(
        value=0.944,
        source="vendor: Asterfusion CX732Q-N test report: two-node ring all-reduce busbw 369.92 Gb/s vs ib_write_bw "
        "391.96 Gb/s",
    ),
    "alltoall": Sourced(
        value=0.864,
        source="vendor: Asterfusion CX732Q-N test report: two-node all-to-all busbw 79.40 GB/s vs 91.87 GB/s NIC-bound "
        "model at 391.96 Gb/s",
    ),
}
#: nccl-tests fails a run whose average bus bandwidth is below 0.9 x NCCL_TESTS_MIN_BW
NCCL_MIN_BW_FACTOR = 0.9


@dataclass(frozen=True, slots=True)
class Rates:
    """The figures every expectation starts from."""

    port_gbps: int
    gpu_gbps: float
    efficiency: Sourced
    efficiency_default: bool
    latency_us: Sourced
    hop_ns: Sourced | None
    protocol: str


def rates(design: Design, catalog: Catalog) -> Rates:
    shape = design.shape
    nic = catalog.nics.get(shape.nic_model)
    eff = nic.rdma_efficiency if nic and nic.rdma_efficiency else None
    lat = nic.rdma_latency_us if nic and nic.rdma_latency_us else DEFAULT_LATENCY_US
    model = catalog.switches.get(design.sizing.switch_model)
    return Rates(
        port_gbps=shape.port_speed_gbps,
        gpu_gbps=shape.ports * shape.port_speed_gbps / shape.gpus,
        efficiency=eff or DEFAULT_EFFICIENCY,
        efficiency_default=eff is None,
        latency_us=lat,
        hop_ns=model.hop_latency_ns if model else None,
        protocol=model.protocol if model else "ethernet",
    )


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def _source_tag(src: Sourced) -> str:
    """``vendor, Asterfusion ...``: the kind of source and the document it cites, if any."""
    kind, _, rest = src.source.partition(":")
    document = rest.split(":", 1)[0].strip()
    return f"{kind.strip()}, {document}" if rest and document else kind.strip()


def same_check(metric: str, value: float, unit: str, better: str, reason: str, **kw: Any) -> Check:
    """A check whose pass threshold is its expected value (counts, flags)."""
    return Check(metric, value, value, unit, better, reason, **kw)


def bw_check(r: Rates, tol: float, pred: Prediction) -> Check:
    """ib_write_bw: line rate x RDMA efficiency x the analyzer's fraction; pass within ``tol``."""
    line = r.port_gbps * r.efficiency.value
    reason = (
        f"{r.port_gbps} Gb/s x {_fmt(r.efficiency.value)} RDMA efficiency "
        f"({_source_tag(r.efficiency)}) x {pred.mean:.2f} analyzer ({pred.why}); "
        f"pass >= {_fmt(100 * (1 - tol))}%"
    )
    return Check(
        "bw_avg_gbps",
        round(line * pred.mean, 2),
        round(line * pred.worst * (1 - tol), 2),
        "Gb/s",
        "higher",
        reason,
    )


def lat_check(r: Rates, hops: int) -> Check:
    """ib_write_lat: NIC-to-NIC latency plus ``hops`` switch hops; pass under 1 us per hop."""
    base = r.latency_us.value
    bound = base + hops * HOP_BOUND_US
    if r.hop_ns is not None:
        expected = base + hops * r.hop_ns.value / 1000
        why = f"{_fmt(base)} us NIC to NIC + {hops} x {_fmt(r.hop_ns.value)} ns per switch hop"
    else:
        expected = bound
        why = f"{_fmt(base)} us NIC to NIC + {hops} x <1 us per hop (no measured hop latency)"
    reason = f"{why} ({_source_tag(r.latency_us)}); pass <= {_fmt(base)} + {hops} x 1 us"
    return Check("lat_typical_us", round(expected, 2), round(bound, 2), "us", "lower", reason)


def nccl_check(
    r: Rates, g: int, op: str, nodes: int, pred: Prediction, per_rail: bool = False
) -> Check:
    """nccl-tests bus bandwidth of ``op`` on ``nodes`` nodes of ``g`` GPUs each (GB/s)."""
    base = r.port_gbps if per_rail else r.gpu_gbps
    eff = NCCL_EFFICIENCY[op]
    if op == "alltoall":
        ranks = g * nodes
        factor = ((ranks - 1) / ranks) / ((nodes - 1) / nodes)
        shape = f" x {factor:.3f} ({g}x{nodes} ranks, NIC-bound)"
    else:
        factor, shape = 1.0, ""
    gbytes = base * r.efficiency.value * eff.value * factor / 8
    reason = (
        f"{_fmt(base)} Gb/s per {'rail' if per_rail else 'GPU'} x {_fmt(r.efficiency.value)} "
        f"RDMA x {_fmt(eff.value)} NCCL ({_source_tag(eff)}){shape} x {pred.mean:.2f} analyzer "
        f"({pred.why}) / 8; pass >= {_fmt(100 * NCCL_MIN_BW_FACTOR)}% (nccl-tests' own rule)"
    )
    return Check(
        "busbw_gbytes",
        round(gbytes * pred.mean, 2),
        round(gbytes * pred.worst * NCCL_MIN_BW_FACTOR, 2),
        "GB/s",
        "higher",
        reason,
    )


GDR_CHECK = Check(
    "gdrdma", 1, 1, "seen", "higher",
    "NCCL_DEBUG=INFO must show NET/IB/<n>/GDRDMA on inter-node channels",
)  # fmt: skip
