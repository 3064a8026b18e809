"""What a test must measure: one ``Expectation`` per number, with its metric, unit and threshold.

The test plan makes them (``expectations(plan)``: every check of every test); ``railplan.field``
grades measured results against them. An expectation names its test, nodes, metric (``METRICS``:
where the number is read from, its unit and which way is better), expected value and pass
threshold, and optionally ``better``, ``reason``, ``links`` (link or cable ids the test
exercises; ``CABLE@switch:port`` is accepted), ``ports`` (one node port per node when the test
pins them), ``target`` (MTU for ``ports_mtu``, Gb/s for ``ports_at_rate``, the BER limit of
``lq_ports_over_ber``), ``scope`` (the switch a cabling or link-quality check is about) and
``devices`` (the RDMA device of each node port, in port order, as the plan named them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from railplan.errors import FieldInputError
from railplan.testplan.model import TestPlan

#: most digits a threshold may have, in any integer notation (a float is at most 10^308)
MAX_DIGITS = 40

BETTER = ("higher", "lower", "equal")


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """Where a metric is read from, in which unit, and which way is better."""

    source: str
    unit: str
    better: str


METRICS: dict[str, MetricSpec] = {
    "busbw_gbs": MetricSpec("nccl", "GB/s", "higher"),
    "peak_busbw_gbs": MetricSpec("nccl", "GB/s", "higher"),
    "avg_busbw_gbs": MetricSpec("nccl", "GB/s", "higher"),
    "algbw_gbs": MetricSpec("nccl", "GB/s", "higher"),
    "gdrdma": MetricSpec("nccl_log", "count", "higher"),
    "net_channels_without_gdrdma": MetricSpec("nccl_log", "count", "lower"),
    "bw_avg_gbps": MetricSpec("perftest", "Gb/s", "higher"),
    "bw_peak_gbps": MetricSpec("perftest", "Gb/s", "higher"),
    "bw_min_gbps": MetricSpec("perftest_min", "Gb/s", "higher"),
    "lat_typical_us": MetricSpec("perftest", "us", "lower"),
    "lat_avg_us": MetricSpec("perftest", "us", "lower"),
    "lat_min_us": MetricSpec("perftest", "us", "lower"),
    "lat_max_us": MetricSpec("perftest", "us", "lower"),
    "lat_p99_us": MetricSpec("perftest", "us", "lower"),
    "lat_p999_us": MetricSpec("perftest", "us", "lower"),
    "acs_srcvalid_on": MetricSpec("acs", "count", "lower"),
    "pcie_below_nominal": MetricSpec("pcie", "count", "lower"),
    "nvidia_peermem": MetricSpec("peermem", "count", "higher"),
    "rocm_peer_memory": MetricSpec("rocm_peer", "count", "higher"),
    "ports_active": MetricSpec("ibstat", "count", "higher"),
    "ports_down": MetricSpec("ibstat", "count", "lower"),
    "ports_at_rate": MetricSpec("ibstat", "count", "higher"),
    "min_rate_gbps": MetricSpec("ibstat", "Gb/s", "higher"),
    "ports_mtu": MetricSpec("ibv_devinfo", "count", "higher"),
    "gid_roce_v2": MetricSpec("roce", "count", "higher"),
    "pfc_lossless": MetricSpec("roce", "count", "higher"),
    "ecn_enabled": MetricSpec("roce", "count", "higher"),
    "nics_near_gpu": MetricSpec("topo", "count", "higher"),
    "ports_expected": MetricSpec("cabling", "count", "higher"),
    "miswired": MetricSpec("cabling", "count", "lower"),
    "missing": MetricSpec("cabling", "count", "lower"),
    "extra": MetricSpec("cabling", "count", "lower"),
    "below_rate": MetricSpec("cabling", "count", "lower"),
    "lq_ports_over_ber": MetricSpec("linkq", "count", "lower"),
    "ib_diag_errors": MetricSpec("ibdiag", "count", "lower"),
    "dcgm_failed_tests": MetricSpec("dcgm", "count", "lower"),
    "lq_ports_with_errors": MetricSpec("linkq", "count", "lower"),
    "lq_soak_s": MetricSpec("linkq", "count", "higher"),
    "lq_ports_over_effective_ber": MetricSpec("linkq", "count", "lower"),
    "lq_link_downs": MetricSpec("linkq", "count", "lower"),
    "lq_modules_out_of_limits": MetricSpec("linkq", "count", "lower"),
    "fw_switch_outliers": MetricSpec("firmware", "count", "lower"),
    "fw_nic_outliers": MetricSpec("firmware", "count", "lower"),
    "fw_module_outliers": MetricSpec("firmware", "count", "lower"),
}
ALIASES = {
    "busbw_gbytes": "busbw_gbs",
    "acs_enabled": "acs_srcvalid_on",
    "nvidia_peermem_loaded": "nvidia_peermem",
    "unexpected": "extra",
    "wrong_speed": "below_rate",
}
#: metrics a test plan may ask for that railplan does not read yet
UNREAD: frozenset[str] = frozenset()

_UNITS = {
    "GB/s": ("GB/s", "GBps", "GByte/s", "GBytes/s", "GB/sec"),
    "Gb/s": ("Gb/s", "Gbps", "Gbit/s", "Gbits/s", "Gb/sec", "gb/s", "gbps"),
    "MB/s": ("MB/s", "MBps", "MB/sec"),
    "us": ("us", "usec", "µs", "μs", "microseconds"),
    "ms": ("ms", "msec"),
    "ns": ("ns", "nsec"),
}
_UNIT_OF = {alias: unit for unit, aliases in _UNITS.items() for alias in aliases}
_BANDWIDTH = frozenset({"GB/s", "Gb/s", "MB/s"})
_FACTOR = {"GB/s": 8e9, "Gb/s": 1e9, "MB/s": 8e6, "us": 1.0, "ms": 1000.0, "ns": 0.001}
#: pair tests: the bandwidth metrics diagnose reads
PAIR_METRICS = frozenset(
    {"busbw_gbs", "peak_busbw_gbs", "avg_busbw_gbs", "algbw_gbs", "bw_avg_gbps", "bw_peak_gbps"}
)
GPU_PAIR_METRICS = frozenset({"busbw_gbs", "peak_busbw_gbs", "avg_busbw_gbs", "algbw_gbs"})
NODE_CHECK_METRICS = frozenset(
    {"acs_srcvalid_on", "pcie_below_nominal", "nvidia_peermem", "rocm_peer_memory", "gdrdma"}
    | {"net_channels_without_gdrdma"}
    | {"ports_active", "ports_down", "ports_at_rate", "min_rate_gbps", "ports_mtu"}
    | {"gid_roce_v2", "pfc_lossless", "ecn_enabled", "nics_near_gpu"}
)


def _finite_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def canonical_unit(unit: str) -> str:
    """``Gbps`` -> ``Gb/s``, ``usec`` -> ``us``; any other label (devices, ports) -> ``count``."""
    key = unit.strip()
    return _UNIT_OF.get(key) or _UNIT_OF.get(key.lower(), "count")


def _family(unit: str) -> str:
    return "bandwidth" if unit in _BANDWIDTH else "time" if unit in ("us", "ms", "ns") else "count"


def convert(value: float, unit: str, to: str) -> float:
    """Convert between GB/s, Gb/s, MB/s or between us, ms, ns; counts pass unchanged."""
    if unit == to or unit == "count" or to == "count":
        return value
    return value * _FACTOR[unit] / _FACTOR[to]


@dataclass(frozen=True)
class Expectation:
    """One number one test must produce (see the module docstring for the contract)."""

    test_id: str
    kind: str
    nodes: tuple[str, ...]
    metric: str
    expected: float
    threshold: float
    unit: str
    better: str = ""
    reason: str = ""
    links: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    target: float | None = None
    scope: str = ""
    #: RDMA devices of the node ports, in port order (node checks and link quality)
    devices: tuple[str, ...] = ()
    #: NCCL checks: the predicted curve (alpha_us, bus GB/s, bus factor), see ``perf_model``
    curve: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(str(n) for n in self.nodes))
        object.__setattr__(self, "links", tuple(str(x).split("@", 1)[0] for x in self.links))
        object.__setattr__(self, "ports", tuple(int(p) for p in self.ports))
        object.__setattr__(self, "devices", tuple(str(d) for d in self.devices))
        curve = tuple(self.curve or ())
        if curve and (len(curve) != 3 or not all(_finite_number(x) for x in curve)):
            raise FieldInputError(
                f"expectation {self.test_id!r}: curve must be three numbers "
                "(alpha_us, bus GB/s, bus factor)"
            )
        object.__setattr__(self, "curve", tuple(float(x) for x in curve))
        where = f"expectation {self.test_id!r}"
        if not str(self.test_id).strip():
            raise FieldInputError("an expectation has an empty test_id")
        metric = ALIASES.get(self.metric, self.metric)
        if metric not in METRICS and metric not in UNREAD:
            known = ", ".join(sorted(METRICS))
            raise FieldInputError(
                f"{where}: metric {self.metric!r} is not one railplan grades ({known})"
            )
        object.__setattr__(self, "metric", metric)
        for name in ("expected", "threshold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise FieldInputError(f"{where}: {name} must be a number, not {value!r}")
            if isinstance(value, int) and abs(value) > 10**MAX_DIGITS:  # any notation
                raise FieldInputError(f"{where}: {name} has more than {MAX_DIGITS} digits")
            if not math.isfinite(value):
                raise FieldInputError(f"{where}: {name} must be finite")
            object.__setattr__(self, name, float(value))
        if self.better and self.better not in BETTER:
            raise FieldInputError(f"{where}: better must be one of {', '.join(BETTER)}")
        spec = METRICS.get(metric)
        fits = not spec or spec.unit == "count" or not self.unit.strip()
        if not fits and spec and _family(canonical_unit(self.unit)) != _family(spec.unit):
            raise FieldInputError(
                f"{where}: unit {self.unit!r} does not fit metric {metric} ({spec.unit})"
            )

    @property
    def grade_unit(self) -> str:
        """The unit results are reported in: the expectation's own, else the metric's."""
        spec = METRICS.get(self.metric)
        if spec is None or spec.unit == "count":
            return self.unit.strip() or "count"
        return canonical_unit(self.unit) if self.unit.strip() else spec.unit

    @property
    def direction(self) -> str:
        if self.better:
            return self.better
        spec = METRICS.get(self.metric)
        return spec.better if spec else "higher"

    def passes(self, value: float) -> bool:
        if self.direction == "lower":
            return value <= self.threshold + 1e-9
        if self.direction == "equal":
            return abs(value - self.threshold) <= 1e-9 * max(1.0, abs(self.threshold))
        return value >= self.threshold - 1e-9


def expectation_from_dict(data: Any, where: str = "") -> Expectation:
    """An Expectation from a mapping (extra keys are ignored; ``id`` works for ``test_id``)."""
    if not isinstance(data, dict):
        raise FieldInputError(f"{where}an expectation must be a mapping, not {type(data).__name__}")
    row = dict(data)
    if "test_id" not in row and "id" in row:
        row["test_id"] = row["id"]
    names = {f.name for f in fields(Expectation)}
    missing = [n for n in ("test_id", "metric", "expected", "threshold") if n not in row]
    if missing:
        raise FieldInputError(f"{where}an expectation lacks {', '.join(missing)}")
    row.setdefault("kind", "")
    row.setdefault("nodes", ())
    row.setdefault("unit", "")
    args = {k: v for k, v in row.items() if k in names}
    for key in ("nodes", "links", "ports", "devices", "curve"):
        if isinstance(args.get(key), str):
            args[key] = (args[key],)
        if args.get(key) is None:
            args[key] = ()
    try:
        return Expectation(**args)
    except (TypeError, ValueError) as exc:
        raise FieldInputError(f"{where}expectation {row.get('test_id')!r}: {exc}") from None


def expectations(plan: TestPlan) -> list[Expectation]:
    """The plan as Expectation rows: one per check of every test, with its ports and target."""
    out = []
    for test in plan.tests():
        links = tuple(r for r in test.refs if not r.startswith(("up:", "ll:")))
        scope = test.id[4:] if test.kind == "cabling" else ""
        if test.kind == "linkq" and not test.nodes:
            scope = test.id[3:]  # a switch's link-quality test: LQ-<switch>
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
                    devices=test.devices
                    if test.kind in ("node", "linkq", "burnin", "firmware")
                    else (),
                    curve=check.curve,
                )
            )
    return out
