"""Grade acceptance-test results against the plan's expectations, then diagnose the failures.

Input contract
--------------

The test plan hands the grader a list of ``Expectation``: one number one test must produce.

``Expectation(test_id, kind, nodes, metric, expected, threshold, unit)``, with optional
``better`` ("higher": pass when value >= threshold, "lower": <=, "equal": ==; default: the
metric's own direction), ``reason``, ``links`` (link or cable ids the test exercises; a
``CABLE@switch:port`` reference is accepted), ``ports`` (one node port per node, when the test
pins them), ``target`` (a parameter of the metric: MTU for ``ports_mtu``, Gb/s for
``ports_at_rate``) and ``scope`` (the switch a cabling check is about). Several expectations
may share a test id (one run, several numbers). ``load_expectations`` reads them from JSON or
YAML (a list, or ``{"expectations": [...]}``); ``expectations_from_plan`` converts a
``railplan.testplan`` plan (its tests' ``checks``).

Metrics (``METRICS``), the output each is read from, and its unit:

- nccl-tests text or ``-J`` JSON: ``busbw_gbs`` (bus bandwidth at the largest size; alias
  ``busbw_gbytes``), ``peak_busbw_gbs``, ``avg_busbw_gbs``, ``algbw_gbs`` (GB/s). A run with
  ``#wrong`` > 0, out-of-bounds values or NCCL failures fails whatever its bandwidth;
- NCCL_DEBUG=INFO log: ``gdrdma`` (1 when every inter-node channel is ``NET/.../GDRDMA``),
  ``net_channels_without_gdrdma`` (count);
- perftest: ``bw_avg_gbps``, ``bw_peak_gbps`` (Gb/s, largest message), ``lat_typical_us``,
  ``lat_avg_us``, ``lat_min_us``, ``lat_max_us``, ``lat_p99_us``, ``lat_p999_us`` (us, smallest
  message);
- ``lspci -vvv``: ``acs_srcvalid_on`` (alias ``acs_enabled``: devices with ``SrcValid+``);
- ``lsmod``: ``nvidia_peermem`` (1 when loaded);
- ``ibstat``: ``ports_active``, ``ports_down``, ``ports_at_rate`` (at ``target`` or the
  design's port speed), ``min_rate_gbps``; ``ibv_devinfo``: ``ports_mtu`` (``target`` or 4096);
- ``roce.txt`` (one line per device, ``DEV netdev=IF gidN=TYPE pfc=0|1 ecn=0|1``, as
  railplan's node probe writes it): ``gid_roce_v2``, ``pfc_lossless``, ``ecn_enabled``;
- LLDP / ibnetdiscover / iblinkinfo (the as-built check, scoped to one switch):
  ``ports_expected`` (planned ports seen right), ``miswired``, ``missing``, ``extra``,
  ``below_rate``.

A file that holds only a number (the output of ``grep -c``) is taken as the measured count of
the ACS and nvidia_peermem checks.

Results folder convention
-------------------------

``RESULTS_DIR/<test_id>.<ext>`` (any extension, e.g. ``PAIR-0001.txt``, ``PAIR-0001.json``;
nccl-tests' ``-J`` renaming to ``<file>.0`` is fine) or a folder ``RESULTS_DIR/<test_id>/``
holding the outputs of that test; inside it, files are picked by name when the name says
which tool wrote them (``lspci``/``acs``, ``lsmod``/``peermem``, ``ibstat``, ``ibv_devinfo``/
``mtu``, ``nccl``/``.log``). An optional ``RESULTS_DIR/manifest.yaml`` (or ``.json``) maps test
ids to files, ``{"files": {"PAIR-0001": "logs/run7.txt"}}``, and may carry the plan's
``expectations`` and a ``names`` entry (the site name map for LLDP; ``names.yaml`` in the
folder is found without it); without expectations ``grade(design, None, RESULTS_DIR)`` grades against the
design's default test plan (``railplan.testplan``). This is the layout the generated test
scripts write: ``NODE-<node>/{lspci,lsmod,ibstat,ibv_devinfo,roce}.txt``, ``<rdma test>.txt``,
``<nccl test>/nccl.log``, ``asbuilt/...`` named by the manifest; folders that no test id
names (``servers/``, ``summary/``) are ignored. A test with no file is ``missing``; a file that
cannot be parsed makes its test ``error`` (the message names file and line), and grading goes
on; an empty as-built file is skipped.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from railplan.loop._common import LoopError, ParseError, read_text
from railplan.loop.diagnose import Diagnosis, PairResult, diagnose
from railplan.loop.names import NameMap
from railplan.model import Design

BETTER = ("higher", "lower", "equal")
STATUSES = ("pass", "fail", "missing", "error", "skipped")


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
    "lat_typical_us": MetricSpec("perftest", "us", "lower"),
    "lat_avg_us": MetricSpec("perftest", "us", "lower"),
    "lat_min_us": MetricSpec("perftest", "us", "lower"),
    "lat_max_us": MetricSpec("perftest", "us", "lower"),
    "lat_p99_us": MetricSpec("perftest", "us", "lower"),
    "lat_p999_us": MetricSpec("perftest", "us", "lower"),
    "acs_srcvalid_on": MetricSpec("acs", "count", "lower"),
    "nvidia_peermem": MetricSpec("peermem", "count", "higher"),
    "ports_active": MetricSpec("ibstat", "count", "higher"),
    "ports_down": MetricSpec("ibstat", "count", "lower"),
    "ports_at_rate": MetricSpec("ibstat", "count", "higher"),
    "min_rate_gbps": MetricSpec("ibstat", "Gb/s", "higher"),
    "ports_mtu": MetricSpec("ibv_devinfo", "count", "higher"),
    "gid_roce_v2": MetricSpec("roce", "count", "higher"),
    "pfc_lossless": MetricSpec("roce", "count", "higher"),
    "ecn_enabled": MetricSpec("roce", "count", "higher"),
    "ports_expected": MetricSpec("cabling", "count", "higher"),
    "miswired": MetricSpec("cabling", "count", "lower"),
    "missing": MetricSpec("cabling", "count", "lower"),
    "extra": MetricSpec("cabling", "count", "lower"),
    "below_rate": MetricSpec("cabling", "count", "lower"),
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
    {"acs_srcvalid_on", "nvidia_peermem", "gdrdma", "net_channels_without_gdrdma"}
    | {"ports_active", "ports_down", "ports_at_rate", "min_rate_gbps", "ports_mtu"}
    | {"gid_roce_v2", "pfc_lossless", "ecn_enabled"}
)


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(str(n) for n in self.nodes))
        object.__setattr__(self, "links", tuple(str(x).split("@", 1)[0] for x in self.links))
        object.__setattr__(self, "ports", tuple(int(p) for p in self.ports))
        where = f"expectation {self.test_id!r}"
        if not str(self.test_id).strip():
            raise LoopError("an expectation has an empty test_id")
        metric = ALIASES.get(self.metric, self.metric)
        if metric not in METRICS and metric not in UNREAD:
            known = ", ".join(sorted(METRICS))
            raise LoopError(f"{where}: metric {self.metric!r} is not one railplan grades ({known})")
        object.__setattr__(self, "metric", metric)
        for name in ("expected", "threshold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise LoopError(f"{where}: {name} must be a number, not {value!r}")
            if not math.isfinite(value):
                raise LoopError(f"{where}: {name} must be finite")
            object.__setattr__(self, name, float(value))
        if self.better and self.better not in BETTER:
            raise LoopError(f"{where}: better must be one of {', '.join(BETTER)}")
        spec = METRICS.get(metric)
        fits = not spec or spec.unit == "count" or not self.unit.strip()
        if not fits and spec and _family(canonical_unit(self.unit)) != _family(spec.unit):
            raise LoopError(
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
        raise LoopError(f"{where}an expectation must be a mapping, not {type(data).__name__}")
    row = dict(data)
    if "test_id" not in row and "id" in row:
        row["test_id"] = row["id"]
    names = {f.name for f in fields(Expectation)}
    missing = [n for n in ("test_id", "metric", "expected", "threshold") if n not in row]
    if missing:
        raise LoopError(f"{where}an expectation lacks {', '.join(missing)}")
    row.setdefault("kind", "")
    row.setdefault("nodes", ())
    row.setdefault("unit", "")
    args = {k: v for k, v in row.items() if k in names}
    for key in ("nodes", "links", "ports"):
        if isinstance(args.get(key), str):
            args[key] = (args[key],)
        if args.get(key) is None:
            args[key] = ()
    try:
        return Expectation(**args)
    except (TypeError, ValueError) as exc:
        raise LoopError(f"{where}expectation {row.get('test_id')!r}: {exc}") from None


def load_expectations(path: str | Path) -> list[Expectation]:
    """Expectations from a JSON or YAML file: a list, or a mapping with ``expectations``."""
    name = Path(path).name
    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise LoopError(f"{name}{line}: not valid YAML or JSON") from None
    if isinstance(data, dict):
        data = data.get("expectations", data.get("tests"))
    if not isinstance(data, list):
        raise LoopError(f"{name}: expected a list of expectations (or an 'expectations' key)")
    return [expectation_from_dict(item, f"{name}: entry {i + 1}: ") for i, item in enumerate(data)]


def expectations_from_plan(plan: Any) -> list[Expectation]:
    """Expectations of a ``railplan.testplan`` plan: every check of every test."""
    out = []
    for test in plan.tests():
        refs = tuple(
            str(r) for r in getattr(test, "refs", ()) if not str(r).startswith(("up:", "ll:"))
        )
        scope = ""
        if getattr(test, "kind", "") == "cabling" and str(test.id).startswith("CAB-"):
            scope = str(test.id)[4:]
        for check in test.checks:
            out.append(
                Expectation(
                    test_id=test.id,
                    kind=test.kind,
                    nodes=tuple(test.nodes),
                    metric=check.metric,
                    expected=check.expected,
                    threshold=check.threshold,
                    unit=check.unit,
                    better=getattr(check, "better", ""),
                    reason=getattr(check, "reason", ""),
                    links=refs,
                    scope=scope,
                )
            )
    return out


# -- results -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GradeResult:
    """The verdict on one expectation."""

    test_id: str
    kind: str
    nodes: tuple[str, ...]
    metric: str
    unit: str
    expected: float
    threshold: float
    better: str
    measured: float | None
    status: str
    detail: str = ""
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class GradeReport:
    design: str
    results_dir: str
    results: tuple[GradeResult, ...]
    diagnosis: Diagnosis
    unmatched: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(r.status in ("pass", "skipped") for r in self.results)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for r in self.results:
            out[r.status] += 1
        return out

    def failed(self) -> tuple[GradeResult, ...]:
        return tuple(r for r in self.results if r.status not in ("pass", "skipped"))

    #: column names of ``summary_rows``
    summary_header = ("test", "nodes", "metric", "measured", "pass if", "unit", "status")

    def summary_rows(self) -> list[tuple[str, str, str, str, str, str, str]]:
        """(test, nodes, metric, measured, threshold, unit, status) per expectation."""
        rows = []
        for r in self.results:
            sign = {"higher": ">=", "lower": "<=", "equal": "=="}[r.better]
            measured = "-" if r.measured is None else f"{r.measured:.4g}"
            rows.append(
                (
                    r.test_id,
                    " ".join(r.nodes),
                    r.metric,
                    measured,
                    f"{sign} {r.threshold:g}",
                    r.unit,
                    r.status,
                )
            )
        return rows

    def to_json(self) -> dict[str, Any]:
        return {
            "design": self.design,
            "results_dir": self.results_dir,
            "ok": self.ok,
            "counts": self.counts(),
            "results": [
                {f.name: _plain(getattr(r, f.name)) for f in fields(GradeResult)}
                for r in self.results
            ],
            "diagnosis": self.diagnosis.to_json(),
            "unmatched_files": list(self.unmatched),
        }

    def to_markdown(self) -> str:
        from railplan.loop.report import grade_markdown

        return grade_markdown(self)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


MANIFESTS = ("manifest.yaml", "manifest.yml", "manifest.json")
NAME_MAP_FILES = ("names.yaml", "names.yml", "names.json")


def read_manifest(results_dir: Path) -> dict[str, Any]:
    for name in MANIFESTS:
        path = results_dir / name
        if path.is_file():
            try:
                data = yaml.safe_load(read_text(path)) or {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                line = f" line {mark.line + 1}" if mark else ""
                raise LoopError(f"{name}{line}: not valid YAML or JSON") from None
            if not isinstance(data, dict):
                raise LoopError(f"{name}: a manifest is a mapping with 'files' and 'expectations'")
            return data
    return {}


def find_results(
    results_dir: Path, test_ids: Iterable[str], manifest: dict[str, Any]
) -> tuple[dict[str, list[Path]], list[Path]]:
    """Files of each test id, and the files no test claims."""
    ids = sorted(set(test_ids), key=len, reverse=True)
    found: dict[str, list[Path]] = defaultdict(list)
    claimed: set[Path] = set()
    files = manifest.get("files") or {}
    if not isinstance(files, dict):
        raise LoopError("manifest: 'files' must map test ids to file names")
    for tid, names in files.items():
        for name in [names] if isinstance(names, str) else list(names or []):
            path = results_dir / str(name)
            if not path.is_file():
                raise LoopError(f"manifest: {tid}: {name} does not exist in {results_dir}")
            found[str(tid)].append(path)
            claimed.add(path)
    unmatched = []
    for entry in sorted(results_dir.iterdir()):
        skip = entry.name.startswith(".") or entry.name in (*MANIFESTS, *NAME_MAP_FILES)
        if skip or entry in claimed:
            continue
        tid = next((t for t in ids if entry.name == t or entry.name.startswith(t + ".")), None)
        if tid is None:
            if entry.is_file():
                unmatched.append(entry)
            continue
        if entry.is_dir():
            found[tid].extend(sorted(p for p in entry.rglob("*") if p.is_file()))
        else:
            found[tid].append(entry)
    return found, unmatched


# -- measuring -----------------------------------------------------------------------------------


class _Measure:
    """Reads each file once per parser and turns it into the figure an expectation asks for."""

    def __init__(self, design: Design, names: NameMap) -> None:
        self.design = design
        self.names = names
        self.cache: dict[tuple[str, Path], Any] = {}

    def parsed(self, kind: str, path: Path, parse: Callable[[Path], Any]) -> Any:
        key = (kind, path)
        if key not in self.cache:
            self.cache[key] = parse(path)
        return self.cache[key]

    def __call__(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """(value in the metric's unit, detail, status override or "")."""
        source = METRICS[exp.metric].source
        return getattr(self, f"_m_{source}")(exp, _pick(files, source))

    # nccl-tests
    def _m_nccl(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.loop.parse_nccl import parse_nccl_file

        ordered = sorted(files, key=lambda p: (".json" not in p.name, p.name))
        errors: list[str] = []
        for path in ordered:
            result = self.parsed("nccl", path, parse_nccl_file)
            if result.errors and not result.rows:
                errors.extend(result.errors)
                continue
            value = result.metric(exp.metric)
            problems = [f"{result.wrong:g} wrong values"] if result.wrong else []
            if result.out_of_bounds:
                problems.append(f"{result.out_of_bounds} out-of-bounds values")
            problems += list(result.errors)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                return None, f"{path.name}: no usable bus bandwidth", "error"
            if problems:
                return value, f"{path.name}: " + "; ".join(problems[:3]), "fail"
            return value, f"{path.name}: {result.collective or 'nccl-tests'}", ""
        if errors:
            return None, "the run failed: " + "; ".join(errors[:3]), "fail"
        return None, "no nccl-tests output", "missing"

    def _m_nccl_log(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.loop.parse_nccl import parse_nccl_log_file

        channels = []
        disabled: list[str] = []
        for path in files:
            log = self.parsed("nccl_log", path, parse_nccl_log_file)
            channels.extend(log.channels)
            disabled.extend(log.gdr_disabled)
        if not channels:
            return (
                None,
                "no NCCL INFO 'Channel ... via NET/' lines: run with NCCL_DEBUG=INFO",
                "error",
            )
        without = [c for c in channels if not c.gdrdma]
        detail = f"{len(channels) - len(without)}/{len(channels)} inter-node channels use GDRDMA"
        if without:
            hosts = sorted({c.host for c in without if c.host})
            detail += f"; without: {without[0].transport}" + (
                f" on {', '.join(hosts)}" if hosts else ""
            )
        if disabled:
            detail += f"; {disabled[0]}"
        if exp.metric == "gdrdma":
            return (0.0 if without else 1.0), detail, ""
        return float(len(without)), detail, ""

    # perftest
    def _m_perftest(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.loop.parse_perftest import parse_perftest_file

        errors: list[str] = []
        for path in files:
            result = self.parsed("perftest", path, parse_perftest_file)
            value = result.metric(exp.metric)
            if value is not None:
                return (
                    value,
                    f"{path.name}: {result.title or 'perftest'} on {result.device or '?'}",
                    "",
                )
            errors.extend(result.errors)
        if errors:
            return None, "the run failed: " + "; ".join(errors[:2]), "fail"
        return None, "no perftest rows for this metric (bandwidth vs latency output?)", "error"

    # node checks
    def _m_acs(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.loop.parse_node import parse_lspci_acs_file

        if (count := _bare_count(files)) is not None:
            return count, "count given by the run (grep -c)", ""
        enabled: list[str] = []
        total = denied = 0
        for path in files:
            report = self.parsed("acs", path, parse_lspci_acs_file)
            total += len(report.controls)
            denied += report.access_denied
            enabled.extend(c.device or f"{path.name} line {c.line}" for c in report.enabled)
        if not total:
            if denied:
                return None, "lspci hid the capabilities (<access denied>): run it as root", "error"
            return 0.0, "no ACSCtl lines: no device with ACS control", ""
        detail = f"{len(enabled)} of {total} ACS-capable devices have SrcValid+"
        if enabled:
            detail += ": " + ", ".join(enabled[:6])
        return float(len(enabled)), detail, ""

    def _m_peermem(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.loop.parse_node import modules_loaded

        if (count := _bare_count(files)) is not None:
            return min(count, 1.0), "count given by the run (grep -c)", ""
        loaded = any("nvidia_peermem" in modules_loaded(read_text(p)) for p in files)
        return (
            (1.0 if loaded else 0.0),
            "nvidia_peermem " + ("loaded" if loaded else "not loaded"),
            "",
        )

    def _m_ibstat(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.loop.parse_node import parse_ibstat_file

        ports = [p for path in files for p in self.parsed("ibstat", path, parse_ibstat_file)]
        rate = exp.target or float(self.design.shape.port_speed_gbps)
        active = [p for p in ports if p.active]
        at_rate = [p for p in active if p.rate_gbps is not None and abs(p.rate_gbps - rate) < 0.5]
        down = [f"{p.ca}/{p.port}" for p in ports if not p.active]
        detail = f"{len(active)}/{len(ports)} ports Active, {len(at_rate)} at {rate:g} Gb/s"
        if down:
            detail += f"; not active: {', '.join(down[:6])}"
        value = {
            "ports_active": float(len(active)),
            "ports_down": float(len(down)),
            "ports_at_rate": float(len(at_rate)),
            "min_rate_gbps": min((p.rate_gbps or 0.0) if p.active else 0.0 for p in ports),
        }[exp.metric]
        return value, detail, ""

    def _m_ibv_devinfo(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.loop.parse_node import parse_ibv_devinfo_file

        ports = [p for path in files for p in self.parsed("ibv", path, parse_ibv_devinfo_file)]
        mtu = exp.target or 4096
        good = [p for p in ports if p[2] == mtu]
        return float(len(good)), f"{len(good)}/{len(ports)} ports at active MTU {mtu:g}", ""

    def _m_roce(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        lines = [ln for p in files for ln in read_text(p).splitlines() if "netdev=" in ln]
        if not lines:
            return None, "no 'DEV netdev=... gidN=... pfc=... ecn=...' lines (roce.txt)", "missing"
        test = {
            "gid_roce_v2": lambda ln: re.search(r"\bgid\d+=RoCE v2\b", ln),
            "pfc_lossless": lambda ln: re.search(r"\bpfc=1\b", ln),
            "ecn_enabled": lambda ln: re.search(r"\becn=1\b", ln),
        }[exp.metric]
        good = [ln for ln in lines if test(ln)]
        bad = [ln.split()[0] for ln in lines if not test(ln)]
        detail = f"{len(good)}/{len(lines)} devices" + (
            f"; not: {', '.join(bad[:6])}" if bad else ""
        )
        return float(len(good)), detail, ""

    # cabling
    def _m_cabling(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.loop.asbuilt import compare
        from railplan.loop.parse_ib import parse_iblinkinfo_file, parse_ibnetdiscover_file

        scope = exp.scope or (exp.nodes[0] if exp.nodes else "")
        names = self.names
        parsed = []
        for path in files:
            head = read_text(path)[:4096]
            if not head.strip():
                continue  # the tool wrote nothing (not installed, switch unreachable)
            if re.search(r'^(Switch|Ca)\s+\d+\s+"[SH]-', head, re.M) or "vendid=" in head:
                parsed.append(self.parsed("ibnd", path, parse_ibnetdiscover_file))
            elif "==(" in head:
                parsed.append(self.parsed("ibli", path, parse_iblinkinfo_file))
            else:
                device = scope if names.device(path.stem) is None and scope else None
                parsed.append(self.parsed(f"lldp:{device}", path, partial(_lldp, device=device)))
        if not parsed:
            return (
                None,
                "every as-built file is empty: collect LLDP or ibnetdiscover output",
                "error",
            )
        report = compare(self.design, parsed, names, [str(p) for p in files])
        mine = [c for c in report.links if not scope or scope in (c.a.split()[0], c.b.split()[0])]
        extra = [
            u for u in report.unexpected if not scope or scope in (u.a.split()[0], u.b.split()[0])
        ]
        value = {
            "ports_expected": sum(1 for c in mine if c.status in ("ok", "wrong_speed")),
            "miswired": sum(1 for c in mine if c.status in ("miswired", "swapped")),
            "missing": sum(1 for c in mine if c.status == "missing"),
            "extra": len(extra),
            "below_rate": sum(1 for c in mine if c.status == "wrong_speed"),
        }[exp.metric]
        bad = [c.detail for c in mine if c.status not in ("ok", "unverified")]
        detail = f"{len(mine)} planned links at {scope or 'all switches'}"
        if bad:
            detail += "; " + bad[0]
        return float(value), detail, ""


def _lldp(path: Path, device: str | None) -> Any:
    from railplan.loop.parse_lldp import parse_lldp_file

    return parse_lldp_file(path, device)


_KEYWORDS = {
    "acs": ("lspci", "acs"),
    "peermem": ("lsmod", "peermem", "modules"),
    "ibstat": ("ibstat",),
    "ibv_devinfo": ("ibv_devinfo", "devinfo", "mtu"),
    "roce": ("roce", "qos"),
    "nccl_log": ("nccl", ".log", "debug"),
}


def _pick(files: list[Path], source: str) -> list[Path]:
    """The files a source reads: those named for it when any are, else all of them."""
    words = _KEYWORDS.get(source)
    if not words or len(files) < 2:
        return files
    named = [p for p in files if any(w in p.name.lower() for w in words)]
    return named or files


def _bare_count(files: list[Path]) -> float | None:
    if len(files) != 1:
        return None
    text = read_text(files[0]).strip()
    return float(text) if re.fullmatch(r"\d+", text) else None


# -- grading -------------------------------------------------------------------------------------


def grade(
    design: Design,
    expectations: Sequence[Expectation] | None,
    results_dir: str | Path,
    names: str | Path | NameMap | None = None,
) -> GradeReport:
    """Grade every expectation against the outputs in ``results_dir``, then diagnose.

    ``names`` is the site name map the cabling checks read LLDP with (default: the manifest's
    ``names`` entry, else ``names.yaml``/``names.yml``/``names.json`` in ``results_dir``).
    """
    folder = Path(results_dir)
    if not folder.is_dir():
        raise LoopError(f"results folder {folder} does not exist")
    manifest = read_manifest(folder)
    if expectations is None:
        expectations = _default_expectations(design, manifest, folder)
    found, unmatched = find_results(folder, (e.test_id for e in expectations), manifest)
    measure = _Measure(design, _names(design, names, manifest, folder))
    results = [_grade_one(e, found.get(e.test_id, []), measure, folder) for e in expectations]
    return GradeReport(
        design=design.name,
        results_dir=str(folder),
        results=tuple(results),
        diagnosis=_diagnose(design, expectations, results),
        unmatched=tuple(str(p.relative_to(folder)) for p in unmatched),
    )


def _names(
    design: Design, names: str | Path | NameMap | None, manifest: dict[str, Any], folder: Path
) -> NameMap:
    if isinstance(names, NameMap):
        return names
    path: str | Path | None = names
    if path is None and isinstance(manifest.get("names"), str):
        path = folder / manifest["names"]
    if path is None:
        path = next((folder / n for n in NAME_MAP_FILES if (folder / n).is_file()), None)
    return NameMap.load(design, path)


def _default_expectations(
    design: Design, manifest: dict[str, Any], folder: Path
) -> list[Expectation]:
    """The manifest's expectations, else those of the design's default test plan."""
    raw = manifest.get("expectations")
    if isinstance(raw, list):
        return [expectation_from_dict(e, f"manifest: entry {i + 1}: ") for i, e in enumerate(raw)]
    try:
        from railplan.catalog import load_catalog
        from railplan.testplan import build_testplan
    except ImportError:  # pragma: no cover - the test plan module is part of railplan
        raise LoopError(
            f"no expectations given and {folder} has no manifest with 'expectations'"
        ) from None
    return expectations_from_plan(build_testplan(design, load_catalog()))


def _grade_one(exp: Expectation, files: list[Path], measure: _Measure, folder: Path) -> GradeResult:
    better = exp.direction
    spec = METRICS.get(exp.metric)
    unit = exp.grade_unit
    names = tuple(str(p.relative_to(folder)) for p in files)

    def result(status: str, detail: str, value: float | None = None) -> GradeResult:
        return GradeResult(
            exp.test_id,
            exp.kind,
            exp.nodes,
            exp.metric,
            unit,
            exp.expected,
            exp.threshold,
            better,
            value,
            status,
            detail,
            names,
        )

    if spec is None:
        return result("skipped", f"railplan does not read {exp.metric} yet; check it by hand")
    if not files:
        return result("missing", f"no result file for {exp.test_id} in {folder}")
    try:
        value, detail, override = measure(exp, files)
    except ParseError as exc:
        return result("error", str(exc))
    except LoopError as exc:
        return result("error", str(exc))
    if value is not None and spec.unit != "count":
        value = convert(value, spec.unit, unit)
    if override in ("missing", "error") or value is None:
        return result(override or "error", detail, value)
    if override == "fail":
        return result("fail", detail, value)
    return result("pass" if exp.passes(value) else "fail", detail, value)


def _diagnose(
    design: Design, expectations: Sequence[Expectation], results: Sequence[GradeResult]
) -> Diagnosis:
    nodes = {n.id for n in design.nodes}
    link_port = {}
    cable_link = {c.id: c.link_id for c in design.cables}
    for lk in design.links:
        if lk.kind == "node-leaf":
            link_port[lk.id] = (lk.a_device, lk.a_port)
    slow_by_test: dict[str, bool] = {}
    pair_exp: dict[str, Expectation] = {}
    failed: dict[str, list[str]] = defaultdict(list)
    for exp, res in zip(expectations, results, strict=True):
        if res.status not in ("pass", "fail"):
            continue
        if exp.metric in PAIR_METRICS and len(exp.nodes) == 2 and set(exp.nodes) <= nodes:
            slow_by_test[exp.test_id] = slow_by_test.get(exp.test_id, False) or res.status == "fail"
            pair_exp[exp.test_id] = exp
        elif exp.metric in NODE_CHECK_METRICS and len(exp.nodes) == 1 and res.status == "fail":
            failed[exp.nodes[0]].append(f"{exp.test_id}:{exp.metric}")
    pairs = []
    for tid, slow in slow_by_test.items():
        exp = pair_exp[tid]
        u, v = exp.nodes[0], exp.nodes[1]
        ports = _pinned_ports(exp, link_port, cable_link)
        gpu = exp.metric in GPU_PAIR_METRICS
        pairs.append(PairResult(tid, (u, v), slow, ports, gpu))
    return diagnose(design, pairs, failed)


def _pinned_ports(
    exp: Expectation, link_port: dict[str, tuple[str, int]], cable_link: dict[str, str]
) -> tuple[tuple[int, int], ...]:
    u, v = exp.nodes[0], exp.nodes[1]
    if len(exp.ports) == 2:
        return ((exp.ports[0], exp.ports[1]),)
    mine: dict[str, list[int]] = defaultdict(list)
    for ref in exp.links:
        end = link_port.get(cable_link.get(ref, ref))
        if end and end[0] in (u, v):
            mine[end[0]].append(end[1])
    if len(mine[u]) == 1 and len(mine[v]) == 1:
        return ((mine[u][0], mine[v][0]),)
    return ()


__all__ = [
    "METRICS",
    "Expectation",
    "GradeReport",
    "GradeResult",
    "MetricSpec",
    "expectation_from_dict",
    "expectations_from_plan",
    "find_results",
    "grade",
    "load_expectations",
]
