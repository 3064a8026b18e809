"""Burn-in: every node sends to its partner in a shift permutation on every port at once.

Node i runs ib_write_bw to node (i + n/2) mod n on each of its back-end ports together, for
``options.burnin_s`` seconds, so every node cable carries traffic both ways (each node sends once
and receives once) and the shift by half the nodes takes most of it across the upper tiers.
``options.burnin_load`` caps each stream at that share of the line rate with perftest's software
rate limiter (``--rate_limit`` Gb/s, ``--rate_limit_type SW``; perftest README, "Rate
Limiter"), 1.0 leaving it unlimited. The expectation of each port is the line rate x the wire
payload share x the collision analyzer's share for the permutation (``traffic.patterns``
``permutation`` with this shift), capped at the load; the grader reads the slowest port of each
node (``bw_min_gbps``) and names its device, node port, rail and cable.
"""

from __future__ import annotations

from railplan.testplan.context import PlanContext
from railplan.testplan.model import Check, PlanTest, Section

#: first TCP port of the burn-in's perftest servers; device k listens on BURNIN_TCP + k
BURNIN_TCP = 18600


def burnin_shift(nodes: int) -> int:
    """The permutation's shift: half the nodes (at least 1)."""
    return max(1, nodes // 2)


def burnin_section(ctx: PlanContext) -> Section:
    """One test per node: its slowest port over the burn-in must reach the threshold."""
    o, r = ctx.options, ctx.rates
    nodes = [n.id for n in ctx.design.nodes]
    n = len(nodes)
    if n < 2:
        return Section("burnin", "Burn-in", "Burn-in needs at least two nodes.", ())
    shift = burnin_shift(n)
    pred = ctx.predictor.pattern("permutation", shift=shift)
    devices = tuple(dict.fromkeys(ctx.devices))
    lanes = len(ctx.devices) // len(devices)
    line = r.port_gbps * lanes
    share = min(pred.mean, o.burnin_load)
    worst = min(pred.worst, o.burnin_load)
    expected = line * r.efficiency.value * share
    threshold = line * r.efficiency.value * worst * (1 - o.bw_tolerance)
    reason = (
        f"{line} Gb/s x {r.efficiency.value:.4f} wire payload x {share:.2f} (analyzer: "
        f"{pred.why}, shift {shift} of {n} nodes; load cap {o.burnin_load:g}) = {expected:.1f} "
        f"Gb/s on every port for {o.burnin_s} s; the slowest port passes at "
        f"{100 * (1 - o.bw_tolerance):g}% of the worst share"
    )
    check = Check("bw_min_gbps", round(expected, 2), round(threshold, 2), "Gb/s", "higher", reason)
    flags = f" -D {o.burnin_s}" + ctx.gid_flag() + (f" -q {lanes}" if lanes > 1 else "")
    if o.burnin_load < 1:
        flags += f" --rate_limit={line * o.burnin_load:g} --rate_units=g --rate_limit_type=SW"
    tests = []
    for i, u in enumerate(nodes):
        v = nodes[(i + shift) % n]
        dev = devices[0]
        command = (
            f"{v}$ ib_write_bw -d {dev} -F --report_gbits{flags} -p {BURNIN_TCP}",
            f"{u}$ ib_write_bw -d {dev} -F --report_gbits{flags} -p {BURNIN_TCP} {v}",
            f"# the same on every device at once: {', '.join(devices)} (device k on TCP port "
            f"{BURNIN_TCP}+k)",
        )
        ports = range(len(ctx.devices))
        refs = tuple(dict.fromkeys([*(ctx.node_ref(u, p) for p in ports),
                                    *(ctx.node_ref(v, p) for p in ports)]))  # fmt: skip
        tests.append(
            PlanTest(
                id=f"BURN-{u}",
                kind="burnin",
                title=f"{u} -> {v}: ib_write_bw on all {len(devices)} devices for {o.burnin_s} s",
                nodes=(u, v),
                command=command,
                checks=(check,),
                refs=refs,
                devices=ctx.devices,
                tcp_port=BURNIN_TCP,
                qps=lanes,
            )
        )
    intro = (
        f"Burn-in: each node sends to the node {shift} places on (a shift permutation of all "
        f"{n} nodes) with ib_write_bw on every back-end device at once for {o.burnin_s} s"
        + (f", each stream capped at {o.burnin_load:.0%} of line rate" if o.burnin_load < 1 else "")
        + ", so every node cable is busy both ways and the shift carries the traffic across "
        "the upper tiers. Run it between the link-quality start and finish snapshots: the soak "
        "then judges BER under load. The grader judges each node's slowest port and names its "
        "device, rail and cable."
    )
    return Section("burnin", "Burn-in", intro, tuple(tests))


__all__ = ["BURNIN_TCP", "burnin_section", "burnin_shift"]
