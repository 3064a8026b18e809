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
  ``busbw_gbytes``), ``peak_busbw_gbs``, ``avg_busbw_gbs`` (the "Avg bus bandwidth" footer:
  the figure nccl-tests itself compares with 0.9 x NCCL_TESTS_MIN_BW in src/common.cu, and
  the one the railplan test plan asks for), ``algbw_gbs`` (GB/s). An output that is not the
  test's own run is an ``error`` naming the mismatch, never a pass or a fail: another
  collective (an all_gather_perf output under an all-reduce test), ranks on a host the design
  does not hold, or on other nodes than the test's. A run with
  ``#wrong`` > 0, out-of-bounds values or NCCL failures fails whatever its bandwidth;
- NCCL_DEBUG=INFO log: ``gdrdma`` (1 when every inter-node channel is ``NET/.../GDRDMA``),
  ``net_channels_without_gdrdma`` (count);
- perftest: ``bw_avg_gbps``, ``bw_peak_gbps`` (Gb/s, largest message), ``lat_typical_us``,
  ``lat_avg_us``, ``lat_min_us``, ``lat_max_us``, ``lat_p99_us``, ``lat_p999_us`` (us, smallest
  message);
- ``lspci -vvv``: ``acs_srcvalid_on`` (alias ``acs_enabled``: devices with ``SrcValid+``),
  ``pcie_below_nominal`` (NICs and GPUs whose LnkSta is below LnkCap: NIC width or speed, GPU
  width);
- ``lsmod``: ``nvidia_peermem`` (1 when loaded);
- ``ibstat``: ``ports_active``, ``ports_down``, ``ports_at_rate`` (at ``target`` or the
  design's port speed), ``min_rate_gbps``; ``ibv_devinfo``: ``ports_mtu`` (``target`` or 4096);
- ``nvidia-smi topo -m`` (``topo.txt``): ``nics_near_gpu`` (back-end NICs at PIX/PXB from the
  GPU their rail pairs them with; the detail names each other NIC and its path, e.g. SYS);
- link quality (``LQ-<id>/``: ``start.epoch``/``finish.epoch`` and ibdiagnet's
  ``ibdiagnet2.net_dump_ext``, ``ethtool-<device>-start|finish.txt`` or SONiC
  ``fec-stats-start|finish.txt``): ``lq_ports_over_ber`` (ports above the BER limit ``target``),
  ``lq_ports_with_errors`` (ports whose uncorrectable-error counters grew), ``lq_soak_s``
  (seconds between the snapshots); the detail names each bad port's cable;
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
scripts write: ``NODE-<node>/{lspci,lsmod,ibstat,ibv_devinfo,roce,topo}.txt``, ``<rdma test>.txt``,
``<nccl test>/nccl.log``, ``asbuilt/...`` named by the manifest; folders that no test id
names (``servers/``, ``summary/``) are ignored. A test with no file is ``missing``; a file that
cannot be parsed makes its test ``error`` (the message names file and line), and grading goes
on; an empty as-built file is skipped.

Rails
-----

After grading, ``field.rails`` reads the single-rail tests (per-link ib_write_bw/lat, pinned
to one node port each end) and the devices each per-port node check found wrong, and names
every rail with failed evidence: its node port, device, switch, the failed tests and the
cables (id, both labels) of the failed ports (``GradeReport.rails``, ``rail_faults`` in JSON,
``rail fault:`` lines of ``railplan grade``). A port wrong on every node of one rail is the
rail's fault, so those node checks do not make node faults in the diagnosis.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.field.common import FieldInputError, ParseError, read_data
from railplan.field.diagnose import Diagnosis, PairResult, diagnose
from railplan.field.measure import Measure
from railplan.field.names import NameMap
from railplan.field.rails import RailFault, explained_checks, rail_faults
from railplan.testplan.assemble import build_testplan
from railplan.testplan.expectation import (
    GPU_PAIR_METRICS,
    METRICS,
    NODE_CHECK_METRICS,
    PAIR_METRICS,
    Expectation,
    MetricSpec,
    convert,
    expectation_from_dict,
)
from railplan.testplan.expectation import expectations as plan_expectations

STATUSES = ("pass", "fail", "missing", "error", "skipped")


def load_expectations(path: str | Path) -> list[Expectation]:
    """Expectations from a JSON or YAML file: a list, or a mapping with ``expectations``."""
    name = Path(path).name
    data = read_data(path)
    if isinstance(data, dict):
        data = data.get("expectations", data.get("tests"))
    if not isinstance(data, list):
        raise FieldInputError(f"{name}: expected a list of expectations (or an 'expectations' key)")
    return [expectation_from_dict(item, f"{name}: entry {i + 1}: ") for i, item in enumerate(data)]


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
    #: rails the failed single-rail tests and per-port node checks point at (``field.rails``)
    rails: tuple[RailFault, ...] = ()

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
            "rail_faults": [f.to_json() for f in self.rails],
            "unmatched_files": list(self.unmatched),
        }


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


MANIFESTS = ("manifest.yaml", "manifest.yml", "manifest.json")
NAME_MAP_FILES = ("names.yaml", "names.yml", "names.json")


def read_manifest(results_dir: Path) -> dict[str, Any]:
    for name in MANIFESTS:
        path = results_dir / name
        if path.is_file():
            data = read_data(path) or {}
            if not isinstance(data, dict):
                raise FieldInputError(
                    f"{name}: a manifest is a mapping with 'files' and 'expectations'"
                )
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
        raise FieldInputError("manifest: 'files' must map test ids to file names")
    for tid, names in files.items():
        for name in [names] if isinstance(names, str) else list(names or []):
            path = results_dir / str(name)
            if not path.is_file():
                raise FieldInputError(f"manifest: {tid}: {name} does not exist in {results_dir}")
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


# -- grading -------------------------------------------------------------------------------------


def grade(
    design: Design,
    expectations: Sequence[Expectation] | None,
    results_dir: str | Path,
    names: str | Path | NameMap | None = None,
    devices: tuple[str, ...] = (),
) -> GradeReport:
    """Grade every expectation against the outputs in ``results_dir``, then diagnose.

    ``names`` is the site name map the cabling checks read LLDP with (default: the manifest's
    ``names`` entry, else ``names.yaml``/``names.yml``/``names.json`` in ``results_dir``).
    ``devices`` names the RDMA device of each node port as ``railplan testplan --devices`` did,
    for the default plan's expectations (expectations from a plan file carry their own).
    """
    folder = Path(results_dir)
    if not folder.is_dir():
        raise FieldInputError(f"results folder {folder} does not exist")
    manifest = read_manifest(folder)
    if expectations is None:
        expectations = _default_expectations(design, manifest, folder, devices)
    found, unmatched = find_results(folder, (e.test_id for e in expectations), manifest)
    measure = Measure(design, _names(design, names, manifest, folder))
    results = [_grade_one(e, found.get(e.test_id, []), measure, folder) for e in expectations]
    rails = rail_faults(
        design, expectations, [(r.status, r.measured) for r in results], measure.bad_devices
    )
    rail_checks = explained_checks(rails, expectations, measure.bad_devices)
    return GradeReport(
        design=design.name,
        results_dir=str(folder),
        results=tuple(results),
        diagnosis=_diagnose(design, expectations, results, rail_checks),
        unmatched=tuple(str(p.relative_to(folder)) for p in unmatched),
        rails=rails,
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
    design: Design, manifest: dict[str, Any], folder: Path, devices: tuple[str, ...] = ()
) -> list[Expectation]:
    """The manifest's expectations, else those of the design's default test plan (with the
    RDMA device names ``devices`` when given)."""
    from railplan.testplan.model import TestPlanOptions

    raw = manifest.get("expectations")
    if isinstance(raw, list):
        return [expectation_from_dict(e, f"manifest: entry {i + 1}: ") for i, e in enumerate(raw)]
    options = TestPlanOptions(devices=tuple(devices))
    return plan_expectations(build_testplan(design, load_catalog(), options))


def _grade_one(exp: Expectation, files: list[Path], measure: Measure, folder: Path) -> GradeResult:
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
    except FieldInputError as exc:
        return result("error", str(exc))
    if value is not None and spec.unit != "count":
        value = convert(value, spec.unit, unit)
    if override in ("missing", "error") or value is None:
        return result(override or "error", detail, value)
    if override in ("fail", "pass"):  # "pass": judged on the run's own sizes (measure.py)
        return result(override, detail, value)
    return result("pass" if exp.passes(value) else "fail", detail, value)


def _diagnose(
    design: Design,
    expectations: Sequence[Expectation],
    results: Sequence[GradeResult],
    rail_checks: Container[tuple[str, str]] = (),
) -> Diagnosis:
    """Node faults and fabric suspects; ``rail_checks`` are node checks a rail-wide fault
    explains (a port of that rail wrong on every node is the rail's, not the node's)."""
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
        elif (
            exp.metric in NODE_CHECK_METRICS
            and len(exp.nodes) == 1
            and res.status == "fail"
            and (exp.test_id, exp.metric) not in rail_checks
        ):
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
    "find_results",
    "grade",
    "load_expectations",
]
