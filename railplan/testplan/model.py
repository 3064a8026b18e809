"""The test plan as data: options, checks, tests, sections, coverage and the plan itself."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from railplan.catalog import Sourced
from railplan.design import Design, design_to_json

#: progress callback: (stage, done, total)
Progress = Callable[[str, int, int], None]
#: section keys and titles, in the order a crew runs them (node checks first, NCCL last)
SECTIONS = (
    ("node", "Node checks"),
    ("cabling", "As-built cabling check"),
    ("fabric", "Fabric checks"),
    ("linkq", "Link quality"),
    ("rdma", "Per-link RDMA"),
    ("pairs", "Pair tests"),
    ("nccl", "NCCL collectives"),
    ("ladder", "Scale ladder"),
    ("burnin", "Burn-in"),
    ("dcgm", "DCGM diagnostics"),
)


@dataclass(frozen=True, slots=True)
class TestPlanOptions:
    """Site facts the design does not hold, and how strict the plan is."""

    #: distinct partners per node in the pair tests (several tell a node fault from a fabric fault)
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
    #: add the scale ladder (node, pair, rail, SU, pod, fabric x four collectives)
    ladder: bool = False
    #: burn-in seconds (0: no burn-in stage) and each stream's share of line rate (1: unlimited)
    burnin_s: int = 0
    burnin_load: float = 1.0
    #: add DCGM diagnostics per phase (dcgmi diag -r 1 with the node checks, -r 3 with burn-in)
    dcgm: bool = False
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
    #: NCCL checks: the predicted curve (alpha_us, bus GB/s at the worst share, bus factor)
    #: the grader rebuilds each size's prediction from (``perf_model.curve_busbw``)
    curve: tuple[float, ...] = ()


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
    #: TCP port of the perftest server (``-p``): distinct for servers on one node in one round
    tcp_port: int = 0
    #: queue pairs of an ib_write_bw run (``-q``): one per member port of a bonded NIC
    qps: int = 1


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
    #: the NIC vendor (catalog): the node checks use its tools (``render.scripts_vendor``)
    nic_vendor: str = ""
    #: the GPU vendor (``nvidia`` or ``amd``): the node checks and collectives use its tools
    gpu_vendor: str = "nvidia"

    def tests(self) -> Iterator[PlanTest]:
        for section in self.sections:
            yield from section.tests

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)


def design_hash(design: Design) -> str:
    """First 12 hex digits of the SHA-256 of the design's JSON: names a revision on paper."""
    return hashlib.sha256(design_to_json(design).encode("utf-8")).hexdigest()[:12]
