"""Reading test outputs: each file parsed once, turned into the number an expectation asks for."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from railplan.design import Design
from railplan.field.common import read_text
from railplan.field.names import NameMap
from railplan.testplan.expectation import (
    METRICS,
    Expectation,
)

#: the first words of a file the node probe wrote for a tool that is not installed
NOT_MEASURED = "railplan: not measured:"
#: the sources the node probe writes (a file per tool)
PROBE_SOURCES = frozenset(
    {
        "acs",
        "pcie",
        "peermem",
        "rocm_peer",
        "ibstat",
        "ibv_devinfo",
        "roce",
        "topo",
        "ibdiag",
        "dcgm",
    }
)


class Measure:
    """Reads each file once per parser and turns it into the figure an expectation asks for."""

    def __init__(self, design: Design, names: NameMap) -> None:
        self.design = design
        self.names = names
        self.cache: dict[tuple[str, Path], Any] = {}
        self.cache_devices: dict[str, tuple[str, ...]] = {}
        self.linkq: Any = None
        #: (test id, metric) -> the RDMA devices a per-port node check found wrong, so that the
        #: grader can tie them to node ports and rails (``field.rails``)
        self.bad_devices: dict[tuple[str, str], tuple[str, ...]] = {}

    def parsed(self, kind: str, path: Path, parse: Callable[[Path], Any]) -> Any:
        key = (kind, path)
        if key not in self.cache:
            self.cache[key] = parse(path)
        return self.cache[key]

    def __call__(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """(value in the metric's unit, detail, status override or "")."""
        source = METRICS[exp.metric].source
        picked = _pick(files, source)
        for path in picked if source in PROBE_SOURCES else ():
            # the node probe found the tool absent: not measured, not failed
            head = read_text(path)[:200]
            if head.startswith(NOT_MEASURED):
                return None, head.splitlines()[0][len("railplan: ") :], "missing"
        return getattr(self, f"_m_{source}")(exp, picked)

    # nccl-tests
    def _m_nccl(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.field.parse_nccl import parse_nccl_file

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
            if mismatch := self._nccl_mismatch(exp, result):
                return value, f"{path.name}: {mismatch}", "error"
            if problems:
                return value, f"{path.name}: " + "; ".join(problems[:3]), "fail"
            if exp.curve and exp.metric == "avg_busbw_gbs":
                return _judge_curve(exp, result, value, path.name)
            return value, f"{path.name}: {result.collective or 'nccl-tests'}", ""
        if errors:
            return None, "the run failed: " + "; ".join(errors[:3]), "fail"
        return None, "no nccl-tests output", "missing"

    def _nccl_mismatch(self, exp: Expectation, result: Any) -> str:
        """Why an nccl-tests output is not the run this test asked for ('' when it is): another
        collective, or ranks on hosts outside the design or outside the test's nodes."""
        want = _collective(exp.kind)
        got = _collective(result.collective)
        if want and got and want != got:
            return (
                f"is a {result.collective} run, not the {want} this test asks for: "
                "filed under the wrong test"
            )
        if not result.hosts:
            return ""
        mapped = {h: self.names.device(h) for h in result.hosts}
        outside = sorted(h for h, d in mapped.items() if d is None or not self.names.is_node(d))
        if outside:
            return f"ran on host(s) not in the design: {', '.join(outside[:6])}"
        ran = {d for d in mapped.values() if d}
        if exp.nodes and ran != set(exp.nodes):
            return (
                f"ran on {', '.join(sorted(ran)[:6])}, but the test is for "
                f"{', '.join(sorted(exp.nodes)[:6])}"
            )
        return ""

    def _m_nccl_log(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.field.parse_nccl import parse_nccl_log_file

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
        from railplan.field.parse_perftest import parse_perftest_file

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

    def _m_perftest_min(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """Burn-in: the slowest device's ib_write_bw (one ``<device>.txt`` per device), named
        with its node port, rail and cable."""
        from railplan.field.parse_perftest import parse_perftest_file

        rates: dict[str, float] = {}
        for path in files:
            value = self.parsed("perftest", path, parse_perftest_file).metric("bw_avg_gbps")
            if value is not None:
                rates[path.stem] = value
        wanted = tuple(dict.fromkeys(exp.devices)) or tuple(rates)
        absent = [d for d in wanted if d not in rates]
        if not rates:
            return None, "no ib_write_bw result from any device", "missing"
        dev = min(rates, key=lambda d: (rates[d], d))
        detail = f"slowest {dev} {rates[dev]:g} Gb/s of {len(rates)} device(s)"
        where = self._device_place(exp, dev)
        if where:
            detail += f" ({where})"
        if absent:
            return rates[dev], detail + f"; no result from {', '.join(absent[:6])}", "fail"
        return rates[dev], detail, ""

    def _device_place(self, exp: Expectation, dev: str) -> str:
        """``node port 3, rail 3, cable C00004`` of an RDMA device on the test's first node."""
        if not exp.nodes or dev not in exp.devices:
            return ""
        node = exp.nodes[0]
        ports = [p for p, d in enumerate(exp.devices) if d == dev]
        shape = self.design.shape
        link_of = {
            (lk.a_device, lk.a_port): lk.id for lk in self.design.links if lk.kind == "node-leaf"
        }
        cable_of = {c.link_id: c.id for c in self.design.cables}
        cables = [cable_of.get(link_of.get((node, p), ""), "") for p in ports]
        rails = sorted({shape.port_rail[p] for p in ports if p < len(shape.port_rail)})
        text = f"{node} port {', '.join(map(str, ports))}, rail {', '.join(map(str, rails))}"
        named = [c for c in cables if c]
        return text + (f", cable {', '.join(named)}" if named else "")

    def _m_ibdiag(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """ibdiagnet's errors: every ``-E-`` line of its ``ibdiagnet2.log`` (routing validation
        with credit-loop detection, fat-tree validation)."""
        logs = [p for p in files if p.name.endswith(".log")] or files
        errors: list[str] = []
        seen = False
        for path in logs:
            text = read_text(path)
            seen = seen or "-I-" in text or "-E-" in text or "-W-" in text
            errors += [ln.strip() for ln in text.splitlines() if ln.lstrip().startswith("-E-")]
        if not seen:
            return None, "no ibdiagnet -I-/-W-/-E- lines: is it ibdiagnet2.log?", "error"
        detail = f"{len(errors)} ibdiagnet error(s)" + (
            f": {'; '.join(errors[:3])}" if errors else ""
        )
        return float(len(errors)), detail, ""

    def _m_dcgm(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """``dcgmi diag`` result rows: the tests whose result is Fail."""
        rows = [ln for p in files for ln in read_text(p).splitlines() if ln.startswith("|")]
        results = []
        for ln in rows:
            cells = [c.strip() for c in ln.strip("|").split("|")]
            if len(cells) >= 2 and re.match(r"(Pass|Fail|Warn|Skip)\b", cells[1]):
                results.append((cells[0], cells[1]))
        if not results:
            return None, "no dcgmi diag result rows (Pass/Fail/Warn/Skip)", "error"
        failed = [f"{name}: {res}" for name, res in results if res.startswith("Fail")]
        detail = f"{len(results) - len(failed)} of {len(results)} tests without Fail"
        if failed:
            detail += "; " + "; ".join(failed[:4])
        return float(len(failed)), detail, ""

    # node checks
    def _m_acs(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.field.parse_node import parse_lspci_acs_file

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

    def _m_pcie(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """NICs and GPUs whose PCIe link trained below what it can (lspci LnkSta < LnkCap)."""
        from railplan.field.parse_node import parse_lspci_links_file

        links = [x for p in files for x in self.parsed("pcie", p, parse_lspci_links_file)]
        if not links:
            return None, "no LnkCap/LnkSta of a NIC or GPU in lspci -vvv: not measured", "missing"
        below = [x for x in links if x.below]
        nics = sum(1 for x in links if x.kind == "nic")
        detail = f"{len(below)} of {len(links)} links below nominal ({nics} NIC, {len(links) - nics} GPU)"
        if below:
            detail += ": " + ", ".join(x.text() for x in below[:4])
        return float(len(below)), detail, ""

    def _m_peermem(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.field.parse_node import modules_loaded

        if (count := _bare_count(files)) is not None:
            return min(count, 1.0), "count given by the run (grep -c)", ""
        loaded = any("nvidia_peermem" in modules_loaded(read_text(p)) for p in files)
        return (
            (1.0 if loaded else 0.0),
            "nvidia_peermem " + ("loaded" if loaded else "not loaded"),
            "",
        )

    def _m_rocm_peer(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """AMD: amdgpu loaded and its amdkfd peer-memory client found (the probe's
        ``peer_memory.txt``: ``amdgpu=N``, ``peer_client=<path>|kallsyms:...|none``)."""
        values: dict[str, str] = {}
        for path in files:
            for line in read_text(path).splitlines():
                key, _, value = line.partition("=")
                if key.strip() in ("amdgpu", "peer_client"):
                    values[key.strip()] = value.strip()
        if "amdgpu" not in values or "peer_client" not in values:
            return None, "no amdgpu= / peer_client= lines (peer_memory.txt)", "missing"
        loaded = values["amdgpu"].isdigit() and int(values["amdgpu"]) >= 1
        client = values["peer_client"]
        ok = loaded and client != "none"
        detail = ("amdgpu loaded" if loaded else "amdgpu not loaded") + (
            f"; amdkfd peer-memory client at {client}"
            if client != "none"
            else "; no amdkfd peer-memory client (RCCL's test in net_ib.cc finds none)"
        )
        return (1.0 if ok else 0.0), detail, ""

    def _m_ibstat(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.field.parse_node import parse_ibstat_file

        ports = [p for path in files for p in self.parsed("ibstat", path, parse_ibstat_file)]
        rate = exp.target or float(self.design.shape.port_speed_gbps)
        active = [p for p in ports if p.active]
        at_rate = [p for p in active if p.rate_gbps is not None and abs(p.rate_gbps - rate) < 0.5]
        down = [f"{p.ca}/{p.port}" for p in ports if not p.active]
        slow = [p for p in active if p not in at_rate]
        detail = f"{len(active)}/{len(ports)} ports Active, {len(at_rate)} at {rate:g} Gb/s"
        if down:
            detail += f"; not active: {', '.join(down[:6])}"
        if slow and exp.metric in ("ports_at_rate", "min_rate_gbps"):
            detail += "; at another rate: " + ", ".join(
                f"{p.ca} {p.rate_gbps:g}" if p.rate_gbps is not None else f"{p.ca} ?"
                for p in slow[:6]
            )
        wrong = {
            "ports_active": [p.ca for p in ports if not p.active],
            "ports_down": [p.ca for p in ports if not p.active],
            "ports_at_rate": [p.ca for p in ports if p not in at_rate],
            "min_rate_gbps": [p.ca for p in ports if p not in at_rate],
        }[exp.metric]
        self.bad_devices[exp.test_id, exp.metric] = tuple(dict.fromkeys(wrong))
        value = {
            "ports_active": float(len(active)),
            "ports_down": float(len(down)),
            "ports_at_rate": float(len(at_rate)),
            "min_rate_gbps": min((p.rate_gbps or 0.0) if p.active else 0.0 for p in ports),
        }[exp.metric]
        return value, detail, ""

    def _m_ibv_devinfo(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.field.parse_node import parse_ibv_devinfo_file

        ports = [p for path in files for p in self.parsed("ibv", path, parse_ibv_devinfo_file)]
        mtu = exp.target or 4096
        good = [p for p in ports if p[2] == mtu]
        self.bad_devices[exp.test_id, exp.metric] = tuple(
            dict.fromkeys(p[0] for p in ports if p[2] != mtu)
        )
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
        key = {"gid_roce_v2": "", "pfc_lossless": "pfc", "ecn_enabled": "ecn"}[exp.metric]
        unread = [ln.split()[0] for ln in lines if key and re.search(rf"\b{key}=na\b", ln)]
        if unread:  # the vendor's tool was absent: not measured, never a pass or a zero
            return None, f"{key.upper()} not measured on {', '.join(unread[:6])} (na)", "missing"
        good = [ln for ln in lines if test(ln)]
        bad = [ln.split()[0] for ln in lines if not test(ln)]
        self.bad_devices[exp.test_id, exp.metric] = tuple(dict.fromkeys(bad))
        detail = f"{len(good)}/{len(lines)} devices" + (
            f"; not: {', '.join(bad[:6])}" if bad else ""
        )
        return float(len(good)), detail, ""

    def _m_topo(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """Back-end NICs at PIX/PXB from their rail's GPU in ``nvidia-smi topo -m``."""
        from railplan.catalog import load_catalog
        from railplan.field.parse_topo import (
            PCI_AFFINITY_HEAD,
            affinity_faults,
            nic_faults,
            parse_pci_affinity_file,
            parse_topo_file,
        )
        from railplan.testplan.context import device_names
        from railplan.testplan.model import TestPlanOptions

        files = [p for p in files if "topo" in p.name.lower()]
        if not files:
            return None, "no nvidia-smi topo -m output (topo.txt)", "missing"
        amd = read_text(files[0]).startswith(PCI_AFFINITY_HEAD)
        if exp.devices:  # the plan's own names (testplan --devices), one per port or bonded NIC
            devices = tuple(dict.fromkeys(exp.devices))
        else:
            if "devices" not in self.cache_devices:
                # no names given: the design's RDMA devices by their default names
                names = device_names(self.design, load_catalog(), TestPlanOptions())
                self.cache_devices["devices"] = tuple(dict.fromkeys(names))
            devices = self.cache_devices["devices"]
        if amd:  # an AMD node: the probe compared sysfs PCIe paths (``render.scripts_gpu``)
            rows = self.parsed("topo_pci", files[0], parse_pci_affinity_file)
            faults = affinity_faults(rows, devices)
            where = "under their rail GPU's PCIe root port"
        else:
            matrix = self.parsed("topo", files[0], parse_topo_file)
            faults = nic_faults(matrix, devices, self.design.shape.gpus)
            where = "at PIX/PXB from their rail's GPU"
        near = len(devices) - len(faults)
        detail = f"{near}/{len(devices)} NICs {where}"
        return float(near), detail + ("; " + "; ".join(faults[:4]) if faults else ""), ""

    def _m_linkq(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """Link quality: BER and error-counter growth over the soak (``railplan.field.linkq``)."""
        from railplan.field.linkq import LinkQuality

        if self.linkq is None:
            self.linkq = LinkQuality(self.design, self.names)
        return self.linkq(exp, files)

    def _m_firmware(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        """Firmware consistency of switches, NICs and modules (``railplan.field.firmware``)."""
        from railplan.field.firmware import judge
        from railplan.field.linkq import LinkQuality

        if self.linkq is None:
            self.linkq = LinkQuality(self.design, self.names)
        lq = self.linkq
        return judge(exp, files, lambda d, p: lq._ib_where(d, p, exp.devices), lq.switch_name,
                     lambda n, d: lq._ib_where(f"{n} {d}", 1, exp.devices))  # fmt: skip

    # cabling
    def _m_cabling(self, exp: Expectation, files: list[Path]) -> tuple[float | None, str, str]:
        from railplan.field.asbuilt import compare
        from railplan.field.parse_ib import parse_iblinkinfo_file, parse_ibnetdiscover_file

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


def _judge_curve(exp: Expectation, result: Any, value: float, name: str) -> tuple[float, str, str]:
    """The run judged on its own sizes against the plan's predicted curve (``nccl_judge``)."""
    from railplan.field.nccl_judge import judge_curve

    rows = [(r.size, r.busbw) for r in result.rows if r.busbw is not None and r.size > 0]
    status, detail = judge_curve(exp.curve, rows, value)
    return value, f"{name}: {result.collective or 'nccl-tests'}, {detail}", status


def _collective(name: str) -> str:
    """``all_reduce_perf``, ``AllReduce``, ``nccl_all_reduce``, ``pair`` -> ``all_reduce``."""
    key = name.lower().replace("_perf", "").replace("nccl_", "").replace("ladder_", "")
    key = key.replace("_", "")
    if key == "pair":
        return "all_reduce"
    known = {"allreduce": "all_reduce", "allgather": "all_gather", "alltoall": "alltoall",
             "reducescatter": "reduce_scatter", "broadcast": "broadcast", "reduce": "reduce",
             "sendrecv": "sendrecv", "gather": "gather", "scatter": "scatter", "hypercube": "hypercube"}  # fmt: skip
    return known.get(key, "")


def _lldp(path: Path, device: str | None) -> Any:
    from railplan.field.parse_lldp import parse_lldp_file

    return parse_lldp_file(path, device)


_KEYWORDS = {
    "acs": ("lspci", "acs"),
    "pcie": ("lspci", "pcie"),
    "peermem": ("lsmod", "peermem", "modules"),
    "ibstat": ("ibstat",),
    "ibv_devinfo": ("ibv_devinfo", "devinfo", "mtu"),
    "roce": ("roce", "qos"),
    "topo": ("topo",),
    "rocm_peer": ("peer_memory",),
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
