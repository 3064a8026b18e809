"""The acceptance test plan of a design: what to run on which nodes and ports, and what must come out.

Sections follow DOMAIN.md section 6: node checks, the as-built cabling check, per-link RDMA for
every path class, pair tests that exercise every switch-to-switch link, and NCCL collectives.
Every expected number is derived here from the design: the NIC line rate, the catalog's sourced
RDMA efficiency, and the collision analyzer's prediction for the pattern the test runs.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from railplan.analysis.collisions import analyze
from railplan.catalog import Catalog, Sourced
from railplan.model import Design, Link, design_to_json
from railplan.routing import effective_policy, paths
from railplan.solve import pair_cover

Progress = Callable[[str, int, int], None]

#: used when the NIC's catalog entry has no measured figure (same source as cx7-400g)
DEFAULT_EFFICIENCY = Sourced(
    value=0.98,
    source="vendor: Asterfusion CX732Q-N test report (seed 000): ib_write_bw 391.96 of 400 Gb/s",
)
DEFAULT_LATENCY_US = Sourced(
    value=1.95,
    source="vendor: Asterfusion CX732Q-N test report (seed 000): NIC back to back 1.95 us",
)
#: DOMAIN.md 6: a switch hop adds well under 1 us; the pass bound per hop
HOP_BOUND_US = 1.0
#: NCCL bus bandwidth over the ib_write_bw rate, measured two-node on the seed 000 testbed
NCCL_EFFICIENCY = {
    "all_reduce": Sourced(
        value=0.944,
        source="vendor: seed 000: two-node ring all-reduce busbw 369.92 Gb/s vs ib_write_bw "
        "391.96 Gb/s",
    ),
    "alltoall": Sourced(
        value=0.864,
        source="vendor: seed 000: two-node all-to-all busbw 79.40 GB/s vs 91.87 GB/s NIC-bound "
        "model at 391.96 Gb/s",
    ),
}
#: nccl-tests fails a run whose average bus bandwidth is below 0.9 x NCCL_TESTS_MIN_BW
NCCL_MIN_BW_FACTOR = 0.9
SECTIONS = (
    ("node", "Node checks"),
    ("cabling", "As-built cabling check"),
    ("rdma", "Per-link RDMA"),
    ("pairs", "Pair tests"),
    ("nccl", "NCCL collectives"),
)


@dataclass(frozen=True, slots=True)
class TestPlanOptions:
    """Site facts the design does not hold, and how strict the plan is."""

    #: distinct partners per node in the pair tests (seed 004: several, to tell node from fabric)
    partners: int = 2
    #: RDMA device of each node port (default: mlx5_<port> for NVIDIA NICs, bnxt_re<port> else)
    devices: tuple[str, ...] = ()
    #: RoCE GID index of every device (RoCE v2 with IPv4 is index 3 on a default mlx5 table)
    gid_index: int = 3
    mtu: int = 4096
    lossless_priority: int = 3
    #: RDMA bandwidth passes at >= (1 - tolerance) x expected
    bw_tolerance: float = 0.05
    nccl_min_bytes: str = "1G"
    nccl_max_bytes: str = "8G"
    solver_time_s: float = 10.0
    revision: str = "draft"


@dataclass(frozen=True, slots=True)
class Check:
    """One number a test must produce: pass when the measured value meets ``threshold``."""

    metric: str
    expected: float
    threshold: float
    unit: str
    #: "higher" (value >= threshold), "lower" (value <= threshold) or "equal"
    better: str
    reason: str
    #: a parameter of the metric: the MTU of ports_mtu, the Gb/s of ports_at_rate
    target: float | None = None


@dataclass(frozen=True, slots=True)
class PlanTest:
    """One test: who runs what, the numbers it must produce, and the cables and ports it uses."""

    id: str
    kind: str
    title: str
    nodes: tuple[str, ...]
    command: tuple[str, ...]
    checks: tuple[Check, ...]
    env: tuple[tuple[str, str], ...] = ()
    #: cable ids with their switch port (``NL000001@p0-rail-all:P1``) or link groups (``up:<sw>``)
    refs: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    #: node port each node of ``nodes`` uses, when the test pins one (RDMA tests)
    ports: tuple[int, ...] = ()
    #: pair tests of one round run at the same time
    round: int = 0


@dataclass(frozen=True, slots=True)
class Section:
    key: str
    title: str
    intro: str
    tests: tuple[PlanTest, ...]


@dataclass(frozen=True, slots=True)
class Coverage:
    """What the pair tests exercise, re-derived from the chosen pairs."""

    inter_switch_links: int
    covered_links: int
    uncovered: tuple[str, ...]
    nodes: int
    nodes_paired: int
    pairs: int
    rounds: int
    lower_bound: int
    solver: str
    solver_bound: int
    #: True when routing fixes each flow's link (deterministic, one link per group)
    exact: bool
    note: str
    #: rail-crossing RDMA probes added for links no same-rail pair can reach
    probes: int = 0
    #: distinct partners each node gets (the option, capped at nodes - 1)
    partners: int = 0


@dataclass(frozen=True, slots=True)
class TestPlan:
    design: str
    design_hash: str
    revision: str
    topology: str
    protocol: str
    line_rate_gbps: int
    efficiency: Sourced
    sections: tuple[Section, ...]
    coverage: Coverage
    #: link group (``up:<switch>`` or ``ll:<a>|<b>``) -> cable ids in it
    link_groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    devices: tuple[str, ...] = ()
    options: TestPlanOptions = field(default_factory=TestPlanOptions)

    def tests(self) -> Iterator[PlanTest]:
        for section in self.sections:
            yield from section.tests

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)


def design_hash(design: Design) -> str:
    """First 12 hex digits of the SHA-256 of the design's JSON: names a revision on paper."""
    return hashlib.sha256(design_to_json(design).encode("utf-8")).hexdigest()[:12]


# -- the fabric seen from the test plan ---------------------------------------------------------


Flow = tuple[str, int, str, int]  # (node, port, node, port)


class Fabric:
    """Where node ports land, which cable is which, and which link groups a flow may cross."""

    def __init__(self, design: Design) -> None:
        self.design = design
        self.switches = design.switch_by_id()
        self.cable_of: dict[str, str] = {c.link_id: c.id for c in design.cables}
        self.port_link: dict[tuple[str, int], Link] = {}
        self.up: dict[str, set[str]] = defaultdict(set)
        self.groups: dict[str, list[Link]] = defaultdict(list)
        self.inter: list[Link] = []
        self.direct: dict[tuple[str, str], str] = {}
        self.switch_links: dict[str, list[tuple[int, Link]]] = defaultdict(list)
        for link in design.links:
            if link.kind == "node-leaf":
                self.port_link[(link.a_device, link.a_port)] = link
                self.switch_links[link.b_device].append((link.b_port, link))
                continue
            self.inter.append(link)
            self.switch_links[link.a_device].append((link.a_port, link))
            self.switch_links[link.b_device].append((link.b_port, link))
            if link.kind == "leaf-leaf":
                key = f"ll:{link.a_device}|{link.b_device}"
                self.direct[(link.a_device, link.b_device)] = key
                self.direct[(link.b_device, link.a_device)] = key
            else:
                key = f"up:{link.a_device}"
                self.up[link.a_device].add(link.b_device)
            self.groups[key].append(link)
        self._cones: dict[str, list[frozenset[str]]] = {}
        self._elems: dict[tuple[str, str], tuple[str, frozenset[str]]] = {}
        self._flow_links: dict[Flow, frozenset[str]] = {}
        self.link_by_id = {lk.id: lk for lk in self.inter}
        self.policy = effective_policy(design)
        #: static routing: coverage counts the very links each flow takes (routing.paths)
        self.exact = self.policy in ("deterministic", "dmodk") and bool(self.inter)

    def universe(self) -> list[str]:
        """What coverage counts: link groups (hashed or adaptive routing) or link ids (static)."""
        return sorted(self.link_by_id) if self.exact else sorted(self.groups)

    def element_ref(self, element: str) -> str:
        """A link group's name, or a link's cable id with the port at its a end."""
        if element in self.groups:
            return element
        link = self.link_by_id[element]
        sw = self.switches[link.a_device]
        return f"{self.cable(link)}@{sw.id}:{sw.port_name(link.a_port)}"

    def element_links(self, element: str) -> list[Link]:
        return self.groups[element] if element in self.groups else [self.link_by_id[element]]

    def flow_elements(self, flow: Flow) -> frozenset[str]:
        """The link groups a flow may cross, or under static routing the links it does cross."""
        a, pa, b, pb = flow
        if not self.exact:
            return self.path(self.leaf(a, pa), self.leaf(b, pb))[1]
        if flow not in self._flow_links:
            hops = {h for p in paths(self.design, a, pa, b, pb, self.policy) for h in p.links}
            self._flow_links[flow] = frozenset(hops & self.link_by_id.keys())
        return self._flow_links[flow]

    def pair_elements(self, u: str, v: str) -> frozenset[str]:
        out: set[str] = set()
        for flow in self.flows(u, v):
            out |= self.flow_elements(flow)
        return frozenset(out)

    def cable(self, link: Link) -> str:
        return self.cable_of.get(link.id, link.id)

    def leaf(self, node: str, port: int) -> str:
        return self.port_link[(node, port)].b_device

    def node_ports(self) -> list[int]:
        return list(range(self.design.shape.ports))

    def is_a_port(self, node: str, port: int) -> bool:
        return self.switches[self.leaf(node, port)].role == "leaf-a"

    def flows(self, u: str, v: str) -> list[Flow]:
        """The NIC-to-NIC flows a two-node test makes: same port both ends, or A to B (Matrix)."""
        shape = self.design.shape
        if self.design.topology != "matrix":
            return [(u, p, v, p) for p in self.node_ports()]
        out: list[Flow] = []
        for src, dst in ((u, v), (v, u)):
            for pa in self.node_ports():
                if not self.is_a_port(src, pa):
                    continue
                pb = next(
                    p
                    for p in self.node_ports()
                    if not self.is_a_port(dst, p)
                    and shape.port_plane[p] == shape.port_plane[pa]
                    and shape.port_rail[p] == shape.port_rail[pa]
                )
                out.append((src, pa, dst, pb))
        return out

    def _cone(self, leaf: str) -> list[frozenset[str]]:
        if leaf not in self._cones:
            levels = [frozenset([leaf])]
            while True:
                nxt = frozenset(s for sw in levels[-1] for s in self.up.get(sw, ()))
                if not nxt:
                    break
                levels.append(nxt)
            self._cones[leaf] = levels
        return self._cones[leaf]

    def path(self, x: str, y: str) -> tuple[str, frozenset[str]]:
        """Path class between two leaves and the link groups its (equal-cost) paths cross."""
        key = (x, y) if x <= y else (y, x)
        if key in self._elems:
            return self._elems[key]
        if x == y:
            out: tuple[str, frozenset[str]] = ("same-leaf", frozenset())
        elif (x, y) in self.direct:
            out = ("a-to-b", frozenset([self.direct[(x, y)]]))
        else:
            cx, cy = self._cone(x), self._cone(y)
            out = ("unreachable", frozenset())
            for t in range(1, min(len(cx), len(cy))):
                common = cx[t] & cy[t]
                if common:
                    role = self.switches[min(common)].role
                    below = {s for lvl in (*cx[:t], *cy[:t]) for s in lvl}
                    out = (f"via-{role}", frozenset(f"up:{s}" for s in below if s in self.up))
                    break
        self._elems[key] = out
        return out

    def switch_hops(self, cls: str) -> int:
        """Switches a flow of this path class crosses."""
        if cls == "same-leaf":
            return 1
        if cls == "a-to-b":
            return 2
        return {"via-spine": 3, "via-core": 5}.get(cls, 3)

    def pair_groups(self, u: str, v: str) -> frozenset[str]:
        out: set[str] = set()
        for a, pa, b, pb in self.flows(u, v):
            out |= self.path(self.leaf(a, pa), self.leaf(b, pb))[1]
        return frozenset(out)

    def pair_class(self, u: str, v: str) -> str:
        order = ("same-leaf", "a-to-b", "via-spine", "via-core")
        classes = {
            self.path(self.leaf(a, pa), self.leaf(b, pb))[0] for a, pa, b, pb in self.flows(u, v)
        }
        return max(classes, key=lambda c: (order.index(c) if c in order else len(order), c))

    def signature(self, node: str) -> tuple[str, ...]:
        return tuple(self.leaf(node, p) for p in self.node_ports())


# -- expected values ---------------------------------------------------------------------------


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
    """``vendor, seed 000``: the kind of source and the seed document it cites, if any."""
    kind = src.source.split(":", 1)[0].strip()
    seed = re.search(r"seed \d+", src.source)
    return f"{kind}, {seed.group(0)}" if seed else kind


@dataclass(frozen=True, slots=True)
class Prediction:
    """Fraction of line rate the analyzer predicts: mean and worst over hash draws."""

    mean: float
    worst: float
    why: str


#: hash draws per prediction under ECMP (QP numbers differ from run to run)
HASH_DRAWS = 4
#: all-to-all expectations span at most this many nodes (a job on the first nodes)
ALLTOALL_NODES = 128


class Predictor:
    """The collision analyzer's prediction for a pattern on this design (cached)."""

    def __init__(self, design: Design) -> None:
        self.design = design
        self.policy = effective_policy(design)
        self.draws = HASH_DRAWS if self.policy == "ecmp" else 1

    def _why(self, what: str, mean: float, worst: float) -> str:
        how = f"{self.policy}, {self.draws} hash draws" if self.draws > 1 else self.policy
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


# -- the plan ----------------------------------------------------------------------------------


def device_names(design: Design, catalog: Catalog, options: TestPlanOptions) -> tuple[str, ...]:
    """RDMA device of each node port: the options' list, else by NIC vendor and port index."""
    ports = design.shape.ports
    if options.devices:
        if len(options.devices) != ports:
            from railplan.errors import SpecError

            raise SpecError(
                f"devices: give one RDMA device per node port ({ports}), got {len(options.devices)}"
            )
        return tuple(options.devices)
    nic = catalog.nics.get(design.shape.nic_model)
    prefix = "bnxt_re" if nic is not None and nic.vendor.lower() == "broadcom" else "mlx5_"
    return tuple(f"{prefix}{p}" for p in range(ports))


@dataclass
class _Ctx:
    design: Design
    fabric: Fabric
    rates: Rates
    devices: tuple[str, ...]
    options: TestPlanOptions
    predictor: Predictor

    @property
    def roce(self) -> bool:
        return self.rates.protocol == "ethernet"

    def gid_flag(self) -> str:
        return f" -x {self.options.gid_index}" if self.roce else ""

    def hca_list(self) -> str:
        return "=" + ",".join(dict.fromkeys(self.devices))

    def node_ref(self, node: str, port: int) -> str:
        link = self.fabric.port_link[(node, port)]
        sw = self.fabric.switches[link.b_device]
        return f"{self.fabric.cable(link)}@{sw.id}:{sw.port_name(link.b_port)}"


def _same(metric: str, value: float, unit: str, better: str, reason: str, **kw: Any) -> Check:
    """A check whose pass threshold is its expected value (counts, flags)."""
    return Check(metric, value, value, unit, better, reason, **kw)


def _node_section(ctx: _Ctx) -> Section:
    shape, opts = ctx.design.shape, ctx.options
    n = shape.ports
    rate = ctx.rates.port_gbps
    prio = opts.lossless_priority
    checks = [
        _same("acs_srcvalid_on", 0, "devices", "lower",
              "PCIe ACS must be off (ACSCtl SrcValid-) or GPU-NIC traffic detours via the CPU"),
        _same("nvidia_peermem", 1, "loaded", "higher",
              "GPUDirect RDMA needs the nvidia_peermem module, else NCCL loses /GDRDMA"),
        _same("ports_active", n, "ports", "equal",
              f"all {n} back-end ports of the design are cabled, so all must be Active"),
        _same("ports_at_rate", n, "ports", "equal",
              f"the design runs every port at {rate} Gb/s", target=rate),
        _same("ports_mtu", n, "ports", "equal",
              f"active MTU {opts.mtu} on every port (the RDMA MTU the plan assumes)",
              target=opts.mtu),
    ]  # fmt: skip
    if ctx.roce:
        checks += [
            _same("gid_roce_v2", n, "ports", "equal",
                  f"GID index {opts.gid_index} must be RoCE v2 with an address on every port"),
            _same("pfc_lossless", n, "ports", "equal",
                  f"PFC on priority {prio}, the lossless RoCE class"),
            _same("ecn_enabled", n, "ports", "equal",
                  f"ECN (DCQCN) enabled on priority {prio}"),
        ]  # fmt: skip
    dev0 = ctx.devices[0]
    command = [
        "sudo lspci -vvv | grep -c 'ACSCtl:.*SrcValid+'",
        "lsmod | grep -c '^nvidia_peermem'",
        f"ibstat {dev0}   # State: Active, Rate: {rate}; repeat for each device",
        f"ibv_devinfo -d {dev0} | grep active_mtu",
    ]
    if ctx.roce:
        command += [
            f"cat /sys/class/infiniband/{dev0}/ports/1/gid_attrs/types/{opts.gid_index}",
            f"mlnx_qos -i $(ibdev2netdev | awk '$1==\"{dev0}\"{{print $5}}')",
        ]
    tests = tuple(
        PlanTest(
            id=f"NODE-{node.id}",
            kind="node",
            title=f"{node.id}: ACS, GPUDirect RDMA, {n} ports at {rate}G/MTU {opts.mtu}",
            nodes=(node.id,),
            command=tuple(command),
            checks=tuple(checks),
            refs=tuple(ctx.node_ref(node.id, p) for p in range(n)),
            devices=ctx.devices,
        )
        for node in ctx.design.nodes
    )
    intro = (
        "Run on every node before any fabric test. A node failing here explains any slow "
        "result it takes part in (seed 004: ACS on halves bandwidth). Devices "
        f"{', '.join(ctx.devices)} are node ports 0..{n - 1}; confirm with ibdev2netdev."
    )
    return Section("node", "Node checks", intro, tests)


def _cabling_section(ctx: _Ctx) -> Section:
    fab = ctx.fabric
    tests = []
    if ctx.roce:
        command = (
            "show lldp table                                   # on the switch (SONiC)",
            "lldpcli -f json0 show neighbors details           # on each node (lldpd)",
        )
        tool = "LLDP"
    else:
        command = (
            "ibnetdiscover > ibnetdiscover.txt                 # once, from any node",
            "iblinkinfo --switches-only                        # link state and speed",
        )
        tool = "InfiniBand discovery"
    faults = (
        _same("miswired", 0, "links", "lower",
              "a neighbour other than the planned device and port is a miswired cable"),
        _same("missing", 0, "links", "lower",
              "a planned port without a neighbour is a missing or dead cable"),
        _same("extra", 0, "links", "lower",
              "a neighbour on a port the plan leaves free is an extra cable"),
    )  # fmt: skip
    for sw in ctx.design.switches:
        ports = sorted(fab.switch_links.get(sw.id, []), key=lambda pl: pl[0])
        refs = tuple(f"{fab.cable(link)}@{sw.id}:{sw.port_name(p)}" for p, link in ports)
        n = len(refs)
        checks = (
            _same("ports_expected", n, "ports", "equal", f"the plan cables {n} ports of {sw.id}"),
            *faults,
            _same("below_rate", 0, "links", "lower",
                  f"every link must come up at {sw.port_speed_gbps} Gb/s"),
        )  # fmt: skip
        tests.append(
            PlanTest(
                id=f"CAB-{sw.id}",
                kind="cabling",
                title=f"{sw.id} ({sw.role}): {n} cabled ports match the cable schedule",
                nodes=(),
                command=command,
                checks=checks,
                refs=refs,
            )
        )
    intro = (
        f"Compare the {tool} neighbours of every switch with the cable schedule; every "
        "miswired, missing or extra link is named by its cable label. The cabling sheets list "
        "the expected neighbour of each port."
    )
    return Section("cabling", "As-built cabling check", intro, tuple(tests))


def _representatives(ctx: _Ctx) -> list[tuple[str, str, str]]:
    """One node pair per path class: (class, u, v), starting from the first node."""
    nodes = ctx.design.nodes
    if len(nodes) < 2:
        return []
    u = nodes[0].id
    found: dict[str, str] = {}
    for v in nodes[1:]:
        found.setdefault(ctx.fabric.pair_class(u, v.id), v.id)
    return sorted(((c, u, v) for c, v in found.items()), key=lambda t: _class_rank(t[0]))


def _class_rank(cls: str) -> tuple[int, str]:
    order = ("same-leaf", "a-to-b", "via-spine", "via-core")
    return (order.index(cls) if cls in order else len(order), cls)


ALONE = Prediction(1.0, 1.0, "one flow alone on its path")


def _bw_check(ctx: _Ctx, pred: Prediction) -> Check:
    r = ctx.rates
    line = r.port_gbps * r.efficiency.value
    tol = ctx.options.bw_tolerance
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


def _lat_check(ctx: _Ctx, hops: int) -> Check:
    r = ctx.rates
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


def _rdma_pair(
    ctx: _Ctx, tid: str, flow: Flow, cls: str, what: str, rnd: int = 0
) -> list[PlanTest]:
    """ib_write_bw and ib_write_lat for one flow: server on the destination, then the client."""
    fab = ctx.fabric
    src, ps, dst, pd = flow
    dev_s, dev_d = ctx.devices[ps], ctx.devices[pd]
    refs = (ctx.node_ref(src, ps), ctx.node_ref(dst, pd))
    groups = tuple(fab.element_ref(e) for e in sorted(fab.flow_elements(flow)))
    hops = fab.switch_hops(cls)
    bw = f"-F --report_gbits{ctx.gid_flag()} -D 10"
    lat = f"-F{ctx.gid_flag()} -n 10000"
    out = [
        PlanTest(
            id=f"BW-{tid}",
            kind="rdma_bw",
            title=f"ib_write_bw {src}:{dev_s} -> {dst}:{dev_d} ({what}, {hops} switch hop(s))",
            nodes=(dst, src),
            command=(
                f"{dst}$ ib_write_bw -d {dev_d} {bw}",
                f"{src}$ ib_write_bw -d {dev_s} {bw} {dst}",
            ),
            checks=(_bw_check(ctx, ALONE),),
            refs=refs + groups,
            devices=(dev_d, dev_s),
            ports=(pd, ps),
            round=rnd,
        )
    ]
    if not tid.startswith("xrail"):
        out.append(
            PlanTest(
                id=f"LAT-{tid}",
                kind="rdma_lat",
                title=f"ib_write_lat {src}:{dev_s} -> {dst}:{dev_d} ({what})",
                nodes=(dst, src),
                command=(
                    f"{dst}$ ib_write_lat -d {dev_d} {lat}",
                    f"{src}$ ib_write_lat -d {dev_s} {lat} {dst}",
                ),
                checks=(_lat_check(ctx, hops),),
                refs=refs + groups,
                devices=(dev_d, dev_s),
                ports=(pd, ps),
            )
        )
    return out


def _rdma_section(ctx: _Ctx, reps: list[tuple[str, str, str]], probes: list[Flow]) -> Section:
    tests: list[PlanTest] = []
    shape = ctx.design.shape
    for cls, u, v in reps:
        for flow in ctx.fabric.flows(u, v):
            src, ps, _, pd = flow
            name = shape.port_name(ps)
            if ps != pd:
                name += "-ab" if src == u else "-ba"
            tests += _rdma_pair(ctx, f"{cls}-{name}", flow, cls, cls)
    # probes that share no NIC port and no link run together, round by round
    busy = [
        {f"{src}:{ps}", f"{dst}:{pd}", *ctx.fabric.flow_elements((src, ps, dst, pd))}
        for src, ps, dst, pd in probes
    ]
    rounds = _schedule(busy)
    width = max(3, len(str(len(probes))))
    for i, (flow, rnd) in enumerate(zip(probes, rounds, strict=True), start=1):
        src, ps, dst, pd = flow
        cls = ctx.fabric.path(ctx.fabric.leaf(src, ps), ctx.fabric.leaf(dst, pd))[0]
        what = f"rail-crossing probe, {cls}"
        tests += _rdma_pair(ctx, f"xrail-{i:0{width}d}", flow, cls, what, rnd)
    classes = ", ".join(f"{c} ({u} - {v})" for c, u, v in reps) or "none (one node)"
    intro = (
        "ib_write_bw and ib_write_lat between the two ends of every path class, one NIC port "
        f"at a time (start the server, then the client). Path classes: {classes}."
    )
    if probes:
        intro += (
            f" {len(probes)} rail-crossing probe(s) (NIC k to NIC j) exercise links that "
            "same-rail traffic never takes (NCCL keeps traffic on its rail); they run in "
            f"{max(rounds)} round(s) of probes that share no port and no link."
        )
    return Section("rdma", "Per-link RDMA", intro, tuple(tests))


def _nccl_check(ctx: _Ctx, op: str, nodes: int, pred: Prediction, per_rail: bool = False) -> Check:
    r = ctx.rates
    g = ctx.design.shape.gpus
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


def _nccl_test(
    ctx: _Ctx,
    tid: str,
    op: str,
    title: str,
    nodes: Sequence[str],
    pred: Prediction,
    split: str | None = None,
    refs: tuple[str, ...] = (),
    rnd: int = 0,
    kind: str | None = None,
) -> PlanTest:
    check = _nccl_check(ctx, op, len(nodes), pred, bool(split))
    env = [("NCCL_DEBUG", "INFO"), ("NCCL_IB_HCA", ctx.hca_list())]
    if ctx.roce:
        env.append(("NCCL_IB_GID_INDEX", str(ctx.options.gid_index)))
    if len(nodes) == 2:
        env.append(("NCCL_ALGO", "Ring"))
    if split:
        env.append(("NCCL_TESTS_SPLIT", split))
    # nccl-tests fails below 0.9 x NCCL_TESTS_MIN_BW: set it so that point is our threshold
    env.append(("NCCL_TESTS_MIN_BW", f"{check.threshold / NCCL_MIN_BW_FACTOR:.2f}"))
    g, o = ctx.design.shape.gpus, ctx.options
    hosts = (
        f"-H {','.join(f'{n}:{g}' for n in nodes)}" if len(nodes) <= 4 else "--hostfile $HOSTFILE"
    )
    binary = "all_reduce_perf" if op == "all_reduce" else "alltoall_perf"
    command = (
        f"mpirun -np {g * len(nodes)} {hosts} --bind-to numa "
        + " ".join(f"-x {k}={v}" if " " not in v else f'-x {k}="{v}"' for k, v in env)
        + f" {binary} -b {o.nccl_min_bytes} -e {o.nccl_max_bytes} -f 2 -g 1"
    )
    return PlanTest(
        id=tid,
        kind=kind or f"nccl_{op}",
        title=title,
        nodes=tuple(nodes),
        command=(command,),
        checks=(check, GDR_CHECK),
        env=tuple(env),
        refs=refs,
        devices=ctx.devices,
        round=rnd,
    )


# -- pair selection, coverage, rounds ----------------------------------------------------------


def _pair_problem(ctx: _Ctx) -> tuple[pair_cover.CoverProblem, list[list[str]], list[str]]:
    fab = ctx.fabric
    by_sig: dict[tuple[str, ...], list[str]] = {}
    for node in ctx.design.nodes:
        by_sig.setdefault(fab.signature(node.id), []).append(node.id)
    classes = list(by_sig.values())
    universe = sorted(fab.groups)
    index = {g: i for i, g in enumerate(universe)}
    k = len(classes)
    if k <= 96:
        cands = [(c, d) for c in range(k) for d in range(c, k)]
    else:  # many small classes (per-rack designs): each class with a few strided partners
        strides = sorted({1, 2, 3, k // 4, k // 3, k // 2} - {0})
        both = {(c, c) for c in range(k)}
        both |= {(min(c, (c + s) % k), max(c, (c + s) % k)) for c in range(k) for s in strides}
        cands = sorted(both)
    cands = [(c, d) for c, d in cands if c != d or len(classes[c]) > 1]
    covers = []
    for c, d in cands:
        u, v = classes[c][0], classes[d][-1 if c == d else 0]
        covers.append(frozenset(index[g] for g in fab.pair_groups(u, v)))
    problem = pair_cover.CoverProblem(
        class_sizes=tuple(len(c) for c in classes),
        candidates=tuple(cands),
        covers=tuple(covers),
        elements=len(universe),
        partners=max(0, min(ctx.options.partners, len(ctx.design.nodes) - 1)),
    )
    return problem, classes, universe


def _probes(ctx: _Ctx, missing: set[str]) -> list[Flow]:
    """Extra RDMA flows (NIC k to NIC j of another node) for what no pair test crosses."""
    fab = ctx.fabric
    by_leaf: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for (node, port), link in sorted(fab.port_link.items(), key=lambda kv: kv[1].id):
        by_leaf[link.b_device].append((node, port))
    if len(ctx.design.nodes) < 2:
        return []
    out: list[Flow] = []
    if fab.exact:
        return _probes_exact(ctx, missing, by_leaf)
    leaves = sorted(by_leaf)
    while missing:
        best, gain = None, frozenset[str]()
        for i, x in enumerate(leaves):
            for y in leaves[i + 1 :]:
                got = fab.path(x, y)[1] & missing
                if len(got) > len(gain):
                    best, gain = (x, y), got
        if best is None:
            break
        u, pu = by_leaf[best[0]][0]
        v, pv = next((n, p) for n, p in by_leaf[best[1]] if n != u)
        out.append((u, pu, v, pv))
        missing -= gain
    return out


#: routing.paths calls one probe search may spend per uncovered link
PROBE_BUDGET = 2000


def _probes_exact(
    ctx: _Ctx, missing: set[str], by_leaf: dict[str, list[tuple[str, int]]]
) -> list[Flow]:
    """Static routing: for each uncovered link, a flow whose route takes it (bounded search)."""
    fab = ctx.fabric
    below: dict[str, set[str]] = defaultdict(set)
    for lower, uppers in fab.up.items():
        for upper in uppers:
            below[upper].add(lower)

    def leaves_under(sw: str) -> list[str]:
        if sw in by_leaf:
            return [sw]
        return sorted({leaf for lower in below[sw] for leaf in leaves_under(lower)})

    ends = [e for leaf in sorted(by_leaf) for e in by_leaf[leaf]]
    out: list[Flow] = []
    for link_id in sorted(missing):
        if link_id not in missing:
            continue
        link = fab.link_by_id[link_id]
        dests = by_leaf.get(link.b_device) or ends
        budget, hit = PROBE_BUDGET, None
        for x in leaves_under(link.a_device):
            for u, pu in by_leaf[x][:1]:
                for v, pv in dests:
                    budget -= 1
                    flow = (u, pu, v, pv)
                    if v != u and link_id in fab.flow_elements(flow):
                        hit = flow
                        break
                    if budget <= 0:
                        break
                if hit or budget <= 0:
                    break
            if hit or budget <= 0:
                break
        if hit:
            out.append(hit)
            missing -= fab.flow_elements(hit)
    return out


def _schedule(busy: Sequence[set[str]]) -> list[int]:
    """Greedy colouring: round numbers (from 1) such that no two items of a round share a key.

    >>> _schedule([{"a", "b"}, {"b"}, {"c"}])
    [1, 2, 1]
    """
    taken: list[set[str]] = []
    out = [0] * len(busy)
    order = sorted(range(len(busy)), key=lambda i: (-len(busy[i]), i))
    for i in order:
        r = next((k for k, b in enumerate(taken) if not busy[i] & b), len(taken))
        if r == len(taken):
            taken.append(set())
        taken[r] |= busy[i]
        out[i] = r + 1
    return out


def _rounds(pairs: Sequence[tuple[str, str]], groups: Sequence[frozenset[str]]) -> list[int]:
    """Rounds of pairs that share no node and no link group, so each runs as if alone."""
    return _schedule([{*p, *g} for p, g in zip(pairs, groups, strict=True)])


@dataclass
class _Pairs:
    pairs: list[tuple[str, str]]
    groups: list[frozenset[str]]
    rounds: list[int]
    probes: list[Flow]
    coverage: Coverage
    partners: int


def _choose_pairs(ctx: _Ctx, progress: Progress | None) -> _Pairs:
    fab = ctx.fabric
    problem, classes, _ = _pair_problem(ctx)
    if progress:
        progress("pair cover", 0, 1)
    solution = pair_cover.solve(problem, ctx.options.solver_time_s)
    pairs = pair_cover.instantiate(classes, problem.candidates, solution.counts, problem.partners)
    if progress:
        progress("pair cover", 1, 1)
    # never trust the solver: coverage is re-derived from the pairs themselves
    universe = fab.universe()
    groups = [fab.pair_elements(u, v) for u, v in pairs]
    covered: set[str] = set().union(*groups) if groups else set()
    probes = _probes(ctx, set(universe) - covered)
    for flow in probes:
        covered |= fab.flow_elements(flow)
    uncovered = tuple(
        fab.cable(lk) for e in universe if e not in covered for lk in fab.element_links(e)
    )
    exact = fab.exact
    if not universe:
        note = "no switch-to-switch links: the pairs give every node partners"
    elif exact:
        note = f"{fab.policy} routing fixes each flow's path: the counted links are the ones used"
    else:
        note = (
            f"{fab.policy} routing: a test counts every link of the equal-cost paths it may "
            "take; the hash (or adaptive routing) picks among them, so confirm with switch "
            "port counters"
        )
    rounds = _rounds(pairs, groups)
    coverage = Coverage(
        inter_switch_links=len(fab.inter),
        covered_links=len(fab.inter) - len(uncovered),
        uncovered=uncovered,
        nodes=len(ctx.design.nodes),
        nodes_paired=len({n for p in pairs for n in p}),
        pairs=len(pairs),
        rounds=max(rounds, default=0),
        lower_bound=solution.lower_bound,
        solver=f"CP-SAT {solution.status}",
        solver_bound=solution.bound,
        exact=exact,
        note=note,
        probes=len(probes),
        partners=problem.partners,
    )
    return _Pairs(pairs, groups, rounds, probes, coverage, problem.partners)


def _pairs_section(ctx: _Ctx, chosen: _Pairs) -> Section:
    fab = ctx.fabric
    order = sorted(range(len(chosen.pairs)), key=lambda i: (chosen.rounds[i], i))
    ordered = [chosen.pairs[i] for i in order]
    predicted = ctx.predictor.pairs(ordered)
    tests = []
    for n, (i, pred) in enumerate(zip(order, predicted, strict=True), start=1):
        u, v = chosen.pairs[i]
        r = chosen.rounds[i]
        title = f"round {r}: {u} + {v} ({fab.pair_class(u, v)})"
        refs = tuple(fab.element_ref(e) for e in sorted(chosen.groups[i]))
        tests.append(_nccl_test(ctx, f"PAIR-{n:04d}", "all_reduce", title, (u, v), pred,
                                refs=refs, rnd=r, kind="pair"))  # fmt: skip
    c = chosen.coverage
    intro = (
        f"Two-node ring all-reduce on {c.pairs} node pairs in {c.rounds} round(s). The pairs of "
        "a round share no node and no link, so they run together and each behaves as if alone. "
        f"CP-SAT chose the fewest pairs that give every node {chosen.partners} partner(s) and "
        "cross every switch-to-switch link it can. A node slow with every partner is a node "
        "fault (ACS, GPUDirect); slow with only some partners, a fabric or routing fault."
    )
    return Section("pairs", "Pair tests", intro, tuple(tests))


def _nccl_section(ctx: _Ctx, reps: list[tuple[str, str, str]]) -> Section:
    fab, tests = ctx.fabric, []
    preds = ctx.predictor.pairs([(u, v) for _, u, v in reps])
    for (cls, u, v), pred in zip(reps, preds, strict=True):
        refs = tuple(fab.element_ref(e) for e in sorted(fab.pair_elements(u, v)))
        for op, tag in (("all_reduce", "AR"), ("alltoall", "A2A")):
            title = f"{op} {u} + {v} ({cls}), NCCL_ALGO=Ring"
            tests.append(
                _nccl_test(ctx, f"NCCL-{tag}-2N-{cls}", op, title, (u, v), pred, refs=refs)
            )
    nodes = [n.id for n in ctx.design.nodes]
    g = ctx.design.shape.gpus
    if len(nodes) >= 2:
        ring = ctx.predictor.pattern("ring")
        title = f"all_reduce on each rail alone (NCCL_TESTS_SPLIT=MOD {g}), {len(nodes)} nodes"
        tests.append(
            _nccl_test(ctx, "NCCL-AR-RAILS", "all_reduce", title, nodes, ring, split=f"MOD {g}")
        )
    if len(nodes) > 2:
        title = f"all_reduce across all {len(nodes)} nodes"
        tests.append(_nccl_test(ctx, "NCCL-AR-ALL", "all_reduce", title, nodes, ring))
        job = nodes[:ALLTOALL_NODES]
        a2a = ctx.predictor.pattern("alltoall", nodes=job)
        who = f"all {len(job)} nodes" if len(job) == len(nodes) else f"the first {len(job)} nodes"
        tests.append(
            _nccl_test(ctx, f"NCCL-A2A-{len(job)}N", "alltoall", f"alltoall across {who}", job, a2a)
        )
    intro = (
        "nccl-tests all_reduce_perf and alltoall_perf. Two-node runs use NCCL_ALGO=Ring (Tree on "
        "two nodes mostly measures NVLink); NCCL_TESTS_MIN_BW makes nccl-tests itself fail below "
        "the threshold; the log must show NET/IB/<n>/GDRDMA. Bus bandwidth = algbw x 2(n-1)/n "
        "for all-reduce and x (n-1)/n for all-to-all."
    )
    return Section("nccl", "NCCL collectives", intro, tuple(tests))


def build_testplan(
    design: Design,
    catalog: Catalog,
    options: TestPlanOptions | None = None,
    progress: Progress | None = None,
) -> TestPlan:
    """The acceptance test plan of ``design``, sections in DOMAIN.md section 6 order."""
    options = options or TestPlanOptions()
    fabric = Fabric(design)
    r = rates(design, catalog)
    devices = device_names(design, catalog, options)
    ctx = _Ctx(design, fabric, r, devices, options, Predictor(design))
    steps = ("node checks", "cabling", "pair cover", "rdma", "pairs", "nccl")

    def step(i: int) -> None:
        if progress:
            progress("test plan: " + steps[min(i, len(steps) - 1)], i, len(steps))

    step(0)
    node = _node_section(ctx)
    step(1)
    cabling = _cabling_section(ctx)
    step(2)
    chosen = _choose_pairs(ctx, None)
    reps = _representatives(ctx)
    step(3)
    rdma = _rdma_section(ctx, reps, chosen.probes)
    step(4)
    pairs = _pairs_section(ctx, chosen)
    step(5)
    nccl = _nccl_section(ctx, reps)
    if progress:
        progress("test plan", len(steps), len(steps))
    groups = {
        g: tuple(fabric.cable(lk) for lk in links) for g, links in sorted(fabric.groups.items())
    }
    return TestPlan(
        design=design.name,
        design_hash=design_hash(design),
        revision=options.revision,
        topology=design.topology,
        protocol=r.protocol,
        line_rate_gbps=r.port_gbps,
        efficiency=r.efficiency,
        sections=(node, cabling, rdma, pairs, nccl),
        coverage=chosen.coverage,
        link_groups=groups,
        devices=devices,
        options=options,
    )


def expectations(plan: TestPlan) -> list[Any]:
    """The plan as ``railplan.loop.grade.Expectation`` rows: one per check of every test."""
    from railplan.loop.grade import Expectation

    out = []
    for test in plan.tests():
        links = tuple(r for r in test.refs if not r.startswith(("up:", "ll:")))
        scope = test.id[4:] if test.kind == "cabling" else ""
        for check in test.checks:
            out.append(
                Expectation(
                    test_id=test.id,
                    kind=test.kind,
                    nodes=test.nodes,
                    metric=check.metric,
                    expected=check.expected,
                    threshold=check.threshold,
                    unit=check.unit,
                    better=check.better,
                    reason=check.reason,
                    links=links,
                    ports=test.ports,
                    target=check.target,
                    scope=scope,
                )
            )
    return out
