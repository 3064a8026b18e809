"""Per-link RDMA: ib_write_bw and ib_write_lat for every path class and rail-crossing probe."""

from __future__ import annotations

from railplan.testplan.context import PlanContext
from railplan.testplan.coverage import schedule
from railplan.testplan.expected import bw_check, lat_check
from railplan.testplan.fabric import Flow, class_rank
from railplan.testplan.model import Check, PlanTest, Section
from railplan.testplan.prediction import ALONE

#: perftest's default TCP port for the server/client handshake (perftest README: ``-p, --port``)
PERFTEST_PORT = 18515


def server_ports(servers: list[tuple[str, int]]) -> list[int]:
    """TCP port of each (server node, round): tests of round 0 run one at a time on the default
    port; in a later round the k-th server started on one node listens on default + k."""
    used: dict[tuple[str, int], int] = {}
    out = []
    for node, rnd in servers:
        k = used.get((node, rnd), 0) if rnd else 0
        used[(node, rnd)] = k + 1
        out.append(PERFTEST_PORT + k)
    return out


def representatives(ctx: PlanContext) -> list[tuple[str, str, str]]:
    """One node pair per path class: (class, u, v), starting from the first node."""
    nodes = ctx.design.nodes
    if len(nodes) < 2:
        return []
    u = nodes[0].id
    found: dict[str, str] = {}
    for v in nodes[1:]:
        found.setdefault(ctx.fabric.pair_class(u, v.id), v.id)
    return sorted(((c, u, v) for c, v in found.items()), key=lambda t: class_rank(t[0]))


def _rdma_pair(
    ctx: PlanContext, tid: str, flow: Flow, cls: str, what: str, rnd: int = 0, port: int = 0
) -> list[PlanTest]:
    """ib_write_bw and ib_write_lat for one flow: server on the destination, then the client.

    On bonded NICs the flow stands for its NICs: the test runs on the bond device with one QP
    per member port (``-q``) and names the cables of every member port at both ends.
    """
    fab = ctx.fabric
    src, ps, dst, pd = flow
    dev_s, dev_d = ctx.devices[ps], ctx.devices[pd]
    flows = ctx.member_flows(flow)
    lanes = [f[1] for f in flows]
    refs = tuple(
        dict.fromkeys(r for f in flows for r in (ctx.node_ref(src, f[1]), ctx.node_ref(dst, f[3])))
    )
    elements = sorted({e for f in flows for e in fab.flow_elements(f)})
    groups = tuple(fab.element_ref(e) for e in elements)
    hops = fab.switch_hops(cls)

    tcp = port or PERFTEST_PORT

    def ib_write(test: str, flags: str, about: str, check: Check, rnd: int = 0) -> PlanTest:
        tool = f"ib_write_{test}"
        flags += f" -p {tcp}"
        return PlanTest(
            id=f"{test.upper()}-{tid}",
            kind=f"rdma_{test}",
            title=f"{tool} {src}:{dev_s} -> {dst}:{dev_d} ({about})",
            nodes=(dst, src),
            command=(
                f"{dst}$ {tool} -d {dev_d} {flags}",
                f"{src}$ {tool} -d {dev_s} {flags} {dst}",
            ),
            checks=(check,),
            refs=refs + groups,
            devices=(dev_d, dev_s),
            ports=(pd, ps),
            round=rnd,
            tcp_port=tcp,
            qps=len(lanes) if test == "bw" else 1,
        )

    qps = f" -q {len(lanes)}" if len(lanes) > 1 else ""
    bw_flags = f"-F --report_gbits{ctx.gid_flag()} -D 10{qps}"
    bw = bw_check(ctx.rates, ctx.options.bw_tolerance, ALONE, len(lanes))
    out = [ib_write("bw", bw_flags, f"{what}, {hops} switch hop(s)", bw, rnd)]
    if not tid.startswith("xrail"):
        lat_flags = f"-F{ctx.gid_flag()} -n 10000"
        out.append(ib_write("lat", lat_flags, what, lat_check(ctx.rates, hops)))
    return out


def _one_per_device(ctx: PlanContext, flows: list[Flow]) -> list[Flow]:
    """Flows between distinct (node, RDMA device) pairs: a bonded NIC is tested once."""
    seen: dict[tuple[str, str, str, str], Flow] = {}
    for src, ps, dst, pd in flows:
        key = (src, ctx.devices[ps], dst, ctx.devices[pd])
        seen.setdefault(key, (src, ps, dst, pd))
    return list(seen.values())


def rdma_section(ctx: PlanContext, reps: list[tuple[str, str, str]], probes: list[Flow]) -> Section:
    """RDMA tests for one representative pair per path class, then the rail-crossing probes."""
    tests: list[PlanTest] = []
    shape = ctx.design.shape
    for cls, u, v in reps:
        for flow in _one_per_device(ctx, ctx.fabric.flows(u, v)):
            src, ps, _, pd = flow
            name = f"nic{shape.nic_of(ps)}" if ctx.bonded else shape.port_name(ps)
            if ps != pd:
                name += "-ab" if src == u else "-ba"
            tests += _rdma_pair(ctx, f"{cls}-{name}", flow, cls, cls)
    # probes that share no NIC port and no link run together, round by round
    probes = _one_per_device(ctx, probes)
    busy = [
        {x for f in ctx.member_flows(p) for x in (f"{f[0]}:{f[1]}", f"{f[2]}:{f[3]}")}
        | {e for f in ctx.member_flows(p) for e in ctx.fabric.flow_elements(f)}
        for p in probes
    ]
    rounds = schedule(busy)
    # the server runs on the destination: servers of one round on one node get distinct ports
    tcp = server_ports([(dst, rnd) for (_, _, dst, _), rnd in zip(probes, rounds, strict=True)])
    width = max(3, len(str(len(probes))))
    for i, (flow, rnd, port) in enumerate(zip(probes, rounds, tcp, strict=True), start=1):
        src, ps, dst, pd = flow
        cls = ctx.fabric.path(ctx.fabric.leaf(src, ps), ctx.fabric.leaf(dst, pd))[0]
        what = f"rail-crossing probe, {cls}"
        tests += _rdma_pair(ctx, f"xrail-{i:0{width}d}", flow, cls, what, rnd, port)
    classes = ", ".join(f"{c} ({u} - {v})" for c, u, v in reps) or "none (one node)"
    intro = (
        "ib_write_bw and ib_write_lat between the two ends of every path class, one NIC port "
        f"at a time (start the server, then the client). Path classes: {classes}."
    )
    if probes:
        intro += (
            f" {len(probes)} rail-crossing probe(s) (NIC k to NIC j) exercise links that "
            "same-rail traffic never takes (NCCL keeps traffic on its rail); they run in "
            f"{max(rounds)} round(s) of probes that share no port and no link. Servers "
            "started on one node in one round listen on distinct TCP ports (-p), counted up "
            f"from perftest's default {PERFTEST_PORT}."
        )
    return Section("rdma", "Per-link RDMA", intro, tuple(tests))
