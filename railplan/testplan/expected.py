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
#: NCCL bus bandwidth over the node's aggregate RDMA rate (NIC ports x ib_write_bw rate).
#: nccl-tests prints GB/s (bytes; doc/PERFORMANCE.md). Across nodes a ring all-reduce moves
#: 2(n-1)/n x S bytes out of every node through all its NICs at once, so busbw (= algbw x
#: 2(n-1)/n) is bounded by the node's aggregate NIC bandwidth, not by one NIC: 8 x 400 Gb/s =
#: 400 GB/s raw, 8 x 391.96 Gb/s / 8 = 391.96 GB/s at the measured RDMA rate.
NCCL_EFFICIENCY = {
    "all_reduce": Sourced(
        value=0.944,
        source="vendor: Asterfusion CX732Q-N test report: two-node ring all-reduce busbw 369.92 "
        "GB/s over 8 x 391.96 Gb/s / 8 = 391.96 GB/s (the report writes Gbps; its single-node "
        "NVLink run of 478.57 shows nccl-tests' GB/s)",
    ),
    "all_reduce_multinode": Sourced(
        value=0.794,
        source="vendor: Tolly report for New H3C, H3C S9827 RoCE vs NVIDIA QM9700 InfiniBand: "
        "8 nodes x 8 x 400G ring all-reduce busbw 311.18 GB/s at 512 MB over 8 x 400 Gb/s x "
        "0.98 / 8 = 392 GB/s",
    ),
    "alltoall": Sourced(
        value=0.864,
        source="vendor: Asterfusion CX732Q-N test report: two-node all-to-all busbw 79.40 GB/s vs "
        "91.87 GB/s NIC-bound model at 391.96 Gb/s",
    ),
}
#: nccl-tests fails a run whose average bus bandwidth is below 0.9 x NCCL_TESTS_MIN_BW
NCCL_MIN_BW_FACTOR = 0.9


@dataclass(frozen=True, slots=True)
class Rates:
    """The figures every expectation starts from."""

    port_gbps: int
    gpu_gbps: float
    #: NIC ports per node: the node's aggregate NIC rate is ports x port_gbps
    ports: int
    efficiency: Sourced
    efficiency_default: bool
    latency_us: Sourced
    hop_ns: Sourced | None
    protocol: str
    #: the NIC's vendor (catalog), "" when the catalog does not know the model
    nic_vendor: str = ""


def rates(design: Design, catalog: Catalog) -> Rates:
    shape = design.shape
    nic = catalog.nics.get(shape.nic_model)
    eff = nic.rdma_efficiency if nic and nic.rdma_efficiency else None
    lat = nic.rdma_latency_us if nic and nic.rdma_latency_us else DEFAULT_LATENCY_US
    model = catalog.switches.get(design.sizing.switch_model)
    return Rates(
        port_gbps=shape.port_speed_gbps,
        gpu_gbps=shape.ports * shape.port_speed_gbps / shape.gpus,
        ports=shape.ports,
        efficiency=eff or DEFAULT_EFFICIENCY,
        efficiency_default=eff is None,
        latency_us=lat,
        hop_ns=model.hop_latency_ns if model else None,
        protocol=model.protocol if model else "ethernet",
        nic_vendor=nic.vendor if nic else "",
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


def bw_check(r: Rates, tol: float, pred: Prediction, lanes: int = 1) -> Check:
    """ib_write_bw: line rate x RDMA efficiency x the analyzer's fraction; pass within ``tol``.

    A bonded NIC (RoCE LAG) is measured whole: ``lanes`` ports, one QP on each (``-q``).
    """
    line = r.port_gbps * lanes * r.efficiency.value
    what = (
        f"{r.port_gbps} Gb/s"
        if lanes == 1
        else (f"{lanes} x {r.port_gbps} Gb/s bonded NIC ({lanes} QPs, one per port)")
    )
    reason = (
        f"{what} x {_fmt(r.efficiency.value)} RDMA efficiency "
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


#: per-hop latency taken as normal when the switch's catalog entry has no measured figure
TYPICAL_HOP_NS = Sourced(
    value=560,
    source="vendor: Asterfusion CX732Q-N test report: 560 ns added per switch hop (400G RoCE)",
)


def lat_check(r: Rates, hops: int) -> Check:
    """ib_write_lat: NIC-to-NIC latency plus ``hops`` switch hops; pass under 1 us per hop.

    The expected value is what normal looks like (the switch's measured hop latency, else the
    typical 560 ns of a 400G switch), apart from the pass bound (1 us per hop).
    """
    base = r.latency_us.value
    bound = base + hops * HOP_BOUND_US
    hop = r.hop_ns or TYPICAL_HOP_NS
    expected = base + hops * hop.value / 1000
    why = f"{_fmt(base)} us NIC to NIC + {hops} x {_fmt(hop.value)} ns per switch hop"
    if r.hop_ns is None:
        why += f" (typical: {_source_tag(hop)}; no figure for this switch)"
    reason = f"{why} ({_source_tag(r.latency_us)}); pass <= {_fmt(base)} + {hops} x 1 us"
    return Check("lat_typical_us", round(expected, 2), round(bound, 2), "us", "lower", reason)


def nccl_efficiency(op: str, nodes: int) -> Sourced:
    """NCCL's measured share of the RDMA rate: two-node figure, or the 8-node one beyond two."""
    if op == "all_reduce" and nodes > 2:
        return NCCL_EFFICIENCY["all_reduce_multinode"]
    return NCCL_EFFICIENCY[op]


def nccl_check(
    r: Rates, g: int, op: str, nodes: int, pred: Prediction, per_rail: bool = False
) -> Check:
    """nccl-tests "Avg bus bandwidth" of ``op`` on ``nodes`` nodes of ``g`` GPUs each, in GB/s.

    Across nodes all-reduce busbw is bounded by the node's aggregate NIC rate (ports x line
    rate / 8 GB/s). All-to-all sends (n-1)/n of every rank's data, g(N-1)/n of it to other
    nodes, through the same aggregate: busbw = aggregate / g x ((n-1)/n) / ((N-1)/N). A run
    split per rail (NCCL_TESTS_SPLIT) has one GPU per node in each communicator, all running at
    once: each gets its share of the aggregate, aggregate / g.
    """
    node_gbps = r.ports * r.port_gbps
    eff = nccl_efficiency(op, nodes)
    if per_rail:
        base, what = node_gbps / g, f"{r.ports} x {r.port_gbps} Gb/s / {g} GPUs (one rail's share)"
    else:
        base, what = node_gbps, f"{r.ports} x {r.port_gbps} Gb/s per node"
    shape = ""
    if op == "alltoall":
        ranks = g * nodes
        factor = ((ranks - 1) / ranks) / ((nodes - 1) / nodes) / g
        shape = f" / {g} GPUs x {factor * g:.3f} ({ranks - 1}/{ranks} over {nodes - 1}/{nodes})"
    else:
        factor = 1.0
    gbytes = base * r.efficiency.value * eff.value * factor / 8
    reason = (
        f"{what} / 8 bits = {_fmt(base / 8)} GB/s x {_fmt(r.efficiency.value)} RDMA x "
        f"{eff.value:g} NCCL ({_source_tag(eff)}){shape} x {pred.mean:.2f} analyzer "
        f"({pred.why}) = {gbytes * pred.mean:.2f} GB/s; nccl-tests' Avg bus bandwidth must "
        f"reach {_fmt(100 * NCCL_MIN_BW_FACTOR)}% (its own NCCL_TESTS_MIN_BW rule)"
    )
    return Check(
        "avg_busbw_gbs",
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
