"""Grading link quality: counter growth over the soak, judged per port and named by cable.

The results layout is the one ``50_link_quality.sh`` writes under ``results/LQ-<id>/``:
``start.epoch`` and ``finish.epoch`` (``date +%s`` when each snapshot was taken), and

- InfiniBand (``LQ-FABRIC``): ``finish/ibdiagnet2.net_dump_ext`` (counters cleared at start)
  and ``finish/ibqueryerrors.txt`` (error counters since the clear: link-downs);
- Ethernet node (``LQ-<node>``): ``ethtool-<device>-start.txt`` / ``-finish.txt`` per device;
- Ethernet switch (``LQ-<switch>``): ``fec-stats-start.txt`` / ``fec-stats-finish.txt``.

Every figure is the change between the two snapshots, so counts left from cabling or from a
reboot are not held against a cable. A port is named by its design cable id when the name map
resolves it (``node0003 mlx5_2`` -> ``node0003 nic2`` -> its cable).
"""

from __future__ import annotations

from pathlib import Path

from railplan.design import Design
from railplan.field.common import ParseError, read_text
from railplan.field.names import Endpoint, NameMap, split_ib_description
from railplan.field.parse_linkq import (
    parse_ethtool_stats_file,
    parse_fec_stats_file,
    parse_ibqueryerrors_file,
    parse_net_dump_ext_file,
)
from railplan.testplan.expectation import Expectation
from railplan.testplan.link_quality import (
    ETH_CORRECTED_COUNTER,
    ETH_ERROR_COUNTERS,
    ETH_LINK_DOWN_COUNTER,
    ETH_PRE_FEC_BER_LIMIT,
    ib_ber_lines,
)

#: seconds in the 24 h a link-down rate is given per
DAY_S = 86400

Measured = tuple[float | None, str, str]


class LinkQuality:
    """Reads one link-quality test's folder and returns (value, detail, status override)."""

    def __init__(self, design: Design, names: NameMap) -> None:
        self.design = design
        self.names = names
        self.cable_at: dict[tuple[str, int], str] = {}
        #: cable id -> its two printed labels (the cabling sheets' ends A and B)
        self.labels: dict[str, tuple[str, str]] = {}
        cable_of = {c.link_id: c.id for c in design.cables}
        for c in design.cables:
            self.labels[c.id] = (c.label_a, c.label_b)
        for lk in design.links:
            cable = cable_of.get(lk.id, lk.id)
            self.cable_at[(lk.a_device, lk.a_port)] = cable
            self.cable_at[(lk.b_device, lk.b_port)] = cable

    def __call__(self, exp: Expectation, files: list[Path]) -> Measured:
        soak = _soak_s(files)
        if exp.metric == "lq_soak_s":
            if soak is None:
                return (
                    None,
                    "no start.epoch and finish.epoch: run start, soak, then finish",
                    "missing",
                )
            return float(soak), f"{soak} s between the start and finish snapshots", ""
        if soak is None or soak <= 0:
            return None, "no start.epoch and finish.epoch: the soak is unknown", "missing"
        by_name = {p.name: p for p in files}
        ib = "ibdiagnet2.net_dump_ext" in by_name or exp.test_id == "LQ-FABRIC"
        if exp.metric == "lq_modules_out_of_limits" and ib:
            return self._ib_modules(exp, by_name)
        if exp.metric == "lq_link_downs" and "ibqueryerrors.txt" in by_name:
            return self._ib_link_downs(exp, by_name["ibqueryerrors.txt"], soak)
        if exp.metric == "lq_link_downs" and "ibdiagnet2.net_dump_ext" in by_name:
            return (
                None,
                "no ibqueryerrors.txt in the finish snapshot: link-downs not measured",
                "missing",
            )
        if "ibdiagnet2.net_dump_ext" in by_name:
            return self._ib(exp, by_name["ibdiagnet2.net_dump_ext"])
        if exp.scope:
            return self._switch(exp, by_name)
        return self._node(exp, by_name, soak)

    # InfiniBand ---------------------------------------------------------------------------
    def _ib(self, exp: Expectation, path: Path) -> Measured:
        ports = parse_net_dump_ext_file(path)
        lines = ib_ber_lines(float(self.design.shape.port_speed_gbps))
        bad, warned = [], []
        for p in ports:
            where = self._ib_where(p.desc, p.port, exp.devices)
            if exp.metric in ("lq_ports_over_ber", "lq_ports_over_effective_ber"):
                symbol = exp.metric == "lq_ports_over_ber"
                value = p.symbol_ber if symbol else p.effective_ber
                limit = exp.target or (lines.symbol_error if symbol else lines.effective_error)
                warning = limit / 10 if exp.target else (
                    lines.symbol_warning if symbol else lines.effective_warning)  # fmt: skip
                name = "Symbol" if symbol else "Effective"
                if value is not None and value > limit:
                    bad.append(f"{where} {name} BER {value:.1e} > error line {limit:.0e} "
                               f"(effective {_e(p.effective_ber)}, symbol {_e(p.symbol_ber)}, "
                               f"raw {_e(p.raw_ber)})")  # fmt: skip
                elif value is not None and value > warning:
                    warned.append(f"{where} {name} BER {value:.1e} > warning {warning:.0e}")
            elif p.symbol_errors:
                bad.append(f"{where} {p.symbol_errors} symbol errors "
                           f"({p.effective_errors} effective)")  # fmt: skip
        value, detail, status = _result(bad, f"{len(ports)} ports in {path.name}")
        if warned:
            detail += f"; {len(warned)} warning: " + "; ".join(warned[:3])
        return value, detail, status

    def _ib_link_downs(self, exp: Expectation, path: Path, soak: int) -> Measured:
        """Ports whose LinkDownedCounter grew since the clear at start, with the rate per 24 h."""
        allowed = exp.target or 0
        bad = []
        ports = parse_ibqueryerrors_file(path)
        for p in ports:
            downs = p.counters.get("LinkDownedCounter", 0)
            if downs > allowed:
                per_day = downs * DAY_S / soak
                bad.append(f"{self._ib_where(p.desc, p.port, exp.devices)} {downs} link-down(s) "
                           f"in {soak / 3600:.1f} h ({per_day:.1f} per 24 h)")  # fmt: skip
        return _result(bad, f"{len(ports)} ports with error counters in {path.name}")

    def _ib_modules(self, exp: Expectation, files: dict[str, Path]) -> Measured:
        """Modules outside their own thresholds or with an alarm flag set, from ibdiagnet's
        cable info (``ibdiagnet2.db_csv`` CABLE_INFO, else ``ibdiagnet2.cables``)."""
        from railplan.field.parse_ibdiag_csv import (
            cable_modules,
            parse_cables_text,
            parse_db_csv_file,
        )

        path = files.get("ibdiagnet2.db_csv") or files.get("ibdiagnet2.cables")
        mlxlink = sorted(n for n in files if n.startswith("mlxlink-") and n.endswith(".txt"))
        if path is None and mlxlink:
            return self._mlxlink_modules(exp, [files[n] for n in mlxlink])
        if path is None:
            return (None, "no ibdiagnet2.db_csv or ibdiagnet2.cables from ibdiagnet "
                    "--get_cable_info: module readings not measured", "missing")  # fmt: skip
        head = read_text(path)
        if head.startswith("railplan: not measured:"):
            return None, head.splitlines()[0][len("railplan: ") :], "missing"
        if path.name.endswith(".db_csv"):
            modules = cable_modules(parse_db_csv_file(path))
        else:
            modules = parse_cables_text(head, str(path))
        judged = [m for m in modules if m.judged]
        bad = []
        for m in judged:
            found = m.findings()
            if found:
                where = self._ib_where(m.desc, m.port, exp.devices)
                bad.append(f"{where} module {m.pn or '?'} SN {m.sn or '?'}: " + "; ".join(found))
        return _result(bad, f"{len(judged)} of {len(modules)} modules in {path.name} with "
                            "thresholds or alarm flags")  # fmt: skip

    def _mlxlink_modules(self, exp: Expectation, paths: list[Path]) -> Measured:
        """``mlxlink -m`` outputs collected by hand, one ``mlxlink-<node>-<device>.txt`` per
        HCA port: each module against the alarm thresholds mlxlink prints beside its value."""
        from railplan.field.parse_module import parse_mlxlink_module

        bad, judged = [], 0
        for path in paths:
            reading = parse_mlxlink_module(read_text(path), str(path))
            if not reading.judged:
                continue
            judged += 1
            node, _, dev = path.stem[len("mlxlink-") :].rpartition("-")
            alarms, _warnings = reading.findings()
            if alarms:
                bad.append(
                    f"{self._ib_where(f'{node} {dev}', 1, exp.devices)} " + "; ".join(alarms)
                )
        return _result(bad, f"{judged} of {len(paths)} mlxlink -m outputs with thresholds")

    def switch_name(self, desc: str) -> str:
        """A switch's design id for its IB node description or site name (else the name)."""
        host, _ = split_ib_description(desc)
        found = self.names.device(host) or self.names.device(desc)
        return found or f"{host or desc} (not in the design)"

    def _ib_where(self, desc: str, port: int, devices: tuple[str, ...]) -> str:
        """``cable C00017 (node0003 nic2)`` for ``node0003 mlx5_2`` port 1 (the plan's device
        names first, then mlx5_<k>), ``cable C01234 (leaf P9/2)`` for a switch's port 18."""
        host, hca = split_ib_description(desc)
        end = None
        if hca:
            node = self.names.device(host)
            if node is not None and hca in devices and port == 1:
                end = Endpoint(node, devices.index(hca))
            else:
                end = self.names.endpoint(
                    desc, [f"{hca}:{port}", hca] if port == 1 else [f"{hca}:{port}"]
                )
        else:
            end = self.names.endpoint(desc, [str(port)])
        return self._where(end, f"{desc} port {port}")

    # Ethernet node ------------------------------------------------------------------------
    def _modules(self, exp: Expectation, files: dict[str, Path]) -> Measured:
        """Ports whose module reads outside its own alarm thresholds (``ethtool -m``)."""
        from railplan.field.parse_module import parse_ethtool_module_file

        node = exp.nodes[0] if exp.nodes else ""
        devices = list(dict.fromkeys(exp.devices)) or self._default_devices()
        bad: list[str] = []
        warned: list[str] = []
        judged = 0
        for dev in devices:
            path = files.get(f"module-{dev}.txt")
            if path is None:
                return None, f"no ethtool -m output for {dev} (module-{dev}.txt)", "missing"
            reading = parse_ethtool_module_file(path)
            if not reading.judged:
                continue
            judged += 1
            port = next((p for p, x in enumerate(exp.devices or devices) if x == dev), 0)
            where = self._where(Endpoint(node, port), f"{node} {dev}")
            alarms, warnings = reading.findings()
            if alarms:
                bad.append(f"{where} " + "; ".join(alarms))
            warned += [f"{where} {w}" for w in warnings]
        value, detail, status = _result(
            bad, f"{judged} of {len(devices)} modules of {node} with diagnostics"
        )
        if warned:
            detail += f"; {len(warned)} warning: " + "; ".join(warned[:3])
        return value, detail, status

    def _node(self, exp: Expectation, files: dict[str, Path], soak: int) -> Measured:
        if exp.metric == "lq_modules_out_of_limits":
            return self._modules(exp, files)
        node = exp.nodes[0] if exp.nodes else ""
        devices = list(dict.fromkeys(exp.devices)) or self._default_devices()
        ports_of = {d: [p for p, x in enumerate(exp.devices or devices) if x == d] for d in devices}
        rate_bps = float(self.design.shape.port_speed_gbps) * 1e9
        bad: list[str] = []
        for dev in devices:
            start, finish = (
                files.get(f"ethtool-{dev}-start.txt"),
                files.get(f"ethtool-{dev}-finish.txt"),
            )
            if start is None or finish is None:
                return (
                    None,
                    f"no ethtool -S start and finish for {dev} (ethtool-{dev}-*.txt)",
                    "error",
                )
            before = parse_ethtool_stats_file(start)
            after = parse_ethtool_stats_file(finish)
            grew = {k: after.get(k, 0) - before.get(k, 0) for k in after}
            ports = ports_of[dev] or [0]
            where = self._where(Endpoint(node, ports[0]), f"{node} {dev}")
            if exp.metric == "lq_ports_over_ber":
                if ETH_CORRECTED_COUNTER not in after:
                    return (
                        None,
                        f"{finish.name}: no {ETH_CORRECTED_COUNTER} (not an mlx5 NIC?)",
                        "error",
                    )
                bits = grew.get("rx_bits_phy") or rate_bps * len(ports) * soak
                ber = max(grew[ETH_CORRECTED_COUNTER], 0) / bits
                if ber > (exp.target or ETH_PRE_FEC_BER_LIMIT):
                    bad.append(
                        f"{where} pre-FEC BER {ber:.1e} ({grew[ETH_CORRECTED_COUNTER]} corrected bits)"
                    )
            elif exp.metric == "lq_link_downs":
                downs = grew.get(ETH_LINK_DOWN_COUNTER, 0)
                if downs > (exp.target or 0):
                    bad.append(f"{where} {downs} link-down(s) in {soak / 3600:.1f} h "
                               f"({downs * DAY_S / soak:.1f} per 24 h)")  # fmt: skip
            else:
                errors = {k: grew[k] for k in ETH_ERROR_COUNTERS if grew.get(k, 0) > 0}
                if errors:
                    bad.append(f"{where} " + ", ".join(f"{k} +{v}" for k, v in errors.items()))
        return _result(bad, f"{len(devices)} ports of {node} over {soak} s")

    def _default_devices(self) -> list[str]:
        from railplan.catalog import load_catalog
        from railplan.testplan.context import device_names
        from railplan.testplan.model import TestPlanOptions

        return list(dict.fromkeys(device_names(self.design, load_catalog(), TestPlanOptions())))

    # Ethernet switch ----------------------------------------------------------------------
    def _switch(self, exp: Expectation, files: dict[str, Path]) -> Measured:
        start, finish = files.get("fec-stats-start.txt"), files.get("fec-stats-finish.txt")
        if start is None or finish is None:
            return None, "no fec-stats-start.txt and fec-stats-finish.txt", "error"
        before, after = parse_fec_stats_file(start), parse_fec_stats_file(finish)
        switch = exp.scope
        bad = []
        for iface, row in after.items():
            old = before.get(iface)
            grew = (row.uncorrectable or 0) - ((old.uncorrectable or 0) if old else 0)
            if grew > 0:
                port = self.names.port(switch, iface)
                end = Endpoint(switch, port) if port is not None else None
                bad.append(f"{self._where(end, f'{switch} {iface}')} FEC_UNCORR +{grew}")
        return _result(bad, f"{len(after)} interfaces of {switch}")

    def _where(self, end: Endpoint | None, fallback: str) -> str:
        """``cable NL000012 (node0003 nic2)``, or the site name when the design has no such port."""
        if end is None:
            return f"{fallback} (not in the design)"
        cable = self.cable_at.get((end.device, end.port))
        shown = self.names.display(end)
        if not cable:
            return f"{shown} (no cable in the design)"
        a, b = self.labels.get(cable, ("", ""))
        labels = f" [{a} | {b}]" if a or b else ""
        return f"cable {cable}{labels} ({shown})"


def _result(bad: list[str], what: str) -> Measured:
    detail = what + (f"; {len(bad)} bad: " + "; ".join(bad[:4]) if bad else "; all clean")
    if len(bad) > 4:
        detail += f"; ... {len(bad) - 4} more"
    return float(len(bad)), detail, ""


def _e(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1e}"


def _soak_s(files: list[Path]) -> int | None:
    stamps = {}
    for p in files:
        if p.name in ("start.epoch", "finish.epoch"):
            text = read_text(p).strip()
            if not text.isdecimal() or len(text) > 12:  # 'date +%s' has 10 digits until 2286
                raise ParseError(str(p), 1, "expected the seconds of 'date +%s'", text)
            stamps[p.name] = int(text)
    if len(stamps) < 2:
        return None
    return stamps["finish.epoch"] - stamps["start.epoch"]
