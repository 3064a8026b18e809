"""Grading firmware consistency: every device of one model on one version, outliers named.

The folder ``FW-FABRIC/`` holds what ``16_firmware.sh`` collected:

- InfiniBand: ``ibdiagnet2.db_csv`` of one ``ibdiagnet --get_cable_info`` run (switch and HCA
  firmware from ``NODES_INFO``, module firmware from ``CABLE_INFO``, ``field.parse_ibdiag_csv``);
- Ethernet: ``nodes/<node>-<device>.txt``, each ``ethtool -i`` of one back-end netdev
  (``driver:`` and ``firmware-version:`` lines, the same on mlx5, bnxt_en and AMD Pollara's
  ionic: Linux Documentation/networking/device_drivers/ethernet/pensando/ionic.rst shows
  ``ethtool -i`` giving ``firmware-version: 1.8.0-28``), and ``switches/<switch>.txt``, each
  the switch's ``show version`` (SONiC: ``SONiC Software Version:`` and ``HwSKU:`` lines,
  sonic-utilities doc/Command-Reference.md, "show version").

Devices are grouped by model (InfiniBand: the DeviceID General Info reports; NICs: the
driver; switches: the HwSKU; modules: the part number), and in each group the version most
devices run is the reference (on a tie, the newest). Every device on another version is an
outlier, named with its design name and, for a module, its cable id and labels. A file that
says ``railplan: not measured:`` (the tool was absent) leaves its devices unmeasured, never
failed; a check with no device measured at all is ``missing``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from railplan.field.common import read_text
from railplan.testplan.expectation import Expectation

Measured = tuple[float | None, str, str]
NOT_MEASURED = "railplan: not measured:"
#: (kind, model, version, name) of one device
Device = tuple[str, str, str, str]


def reference_version(versions: list[str]) -> str:
    """The version most devices run; on a tie the newest (numeric parts compared)."""
    counts = Counter(versions)
    return max(counts, key=lambda v: (counts[v], _version_key(v)))


def _version_key(v: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in re.split(r"[.\-_ ]", v))


def outliers(devices: list[Device], kind: str) -> tuple[int, list[str], int]:
    """(outliers, their descriptions, devices measured) among the devices of ``kind``."""
    groups: dict[str, list[Device]] = defaultdict(list)
    for d in devices:
        if d[0] == kind and d[2]:
            groups[d[1]].append(d)
    bad: list[str] = []
    for model in sorted(groups):
        members = groups[model]
        ref = reference_version([d[2] for d in members])
        for _, _, version, name in sorted(members, key=lambda d: d[3]):
            if version != ref:
                bad.append(f"{name} on {version}, not {ref} as the other {model} ({len(members)})")
    return len(bad), bad, sum(len(g) for g in groups.values())


def judge(
    exp: Expectation,
    files: list[Path],
    ib_where: Callable[[str, int], str],
    switch_name: Callable[[str], str],
    node_where: Callable[[str, str], str],
) -> Measured:
    """The expectation's count of firmware outliers, from whichever files the folder holds."""
    kind = {"fw_switch_outliers": "switch", "fw_nic_outliers": "nic",
            "fw_module_outliers": "module"}[exp.metric]  # fmt: skip
    by_name = {p.name: p for p in files}
    unmeasured = [p for p in files if read_text(p).startswith(NOT_MEASURED)]
    if "ibdiagnet2.db_csv" in by_name and by_name["ibdiagnet2.db_csv"] not in unmeasured:
        devices = _ib_devices(by_name["ibdiagnet2.db_csv"], ib_where, switch_name)
    else:
        devices = _ethernet_devices(files, unmeasured, switch_name, node_where)
    count, bad, measured = outliers(devices, kind)
    what = {"switch": "switches", "nic": "NIC ports", "module": "modules"}[kind]
    if not measured:
        why = "; ".join(read_text(p).splitlines()[0][len("railplan: ") :] for p in unmeasured[:2])
        return None, f"no {what} firmware version read" + (f" ({why})" if why else ""), "missing"
    detail = f"{measured} {what} measured"
    if unmeasured:
        detail += f" ({len(unmeasured)} output(s) not measured)"
    detail += (
        f"; {count} outlier(s): " + "; ".join(bad[:4]) if bad else "; all of a model on one version"
    )
    if len(bad) > 4:
        detail += f"; ... {len(bad) - 4} more"
    return float(count), detail, ""


def _ib_devices(
    path: Path, ib_where: Callable[[str, int], str], switch_name: Callable[[str], str]
) -> list[Device]:
    from railplan.field.parse_ibdiag_csv import cable_modules, node_firmware, parse_db_csv_file

    sections = parse_db_csv_file(path)
    out: list[Device] = []
    for n in node_firmware(sections):
        if n.switch:
            out.append(("switch", f"DeviceID {n.model}", n.version, switch_name(n.desc)))
        else:
            out.append(("nic", f"DeviceID {n.model}", n.version, ib_where(n.desc, 1)))
    for m in cable_modules(sections):
        if m.fw and m.pn:
            out.append(("module", m.pn, m.fw, f"{ib_where(m.desc, m.port)} SN {m.sn or '?'}"))
    return out


def _ethernet_devices(
    files: list[Path],
    unmeasured: list[Path],
    switch_name: Callable[[str], str],
    node_where: Callable[[str, str], str],
) -> list[Device]:
    out: list[Device] = []
    for p in files:
        if p in unmeasured:
            continue
        text = read_text(p)
        if p.parent.name == "switches":
            sw = _line(text, "SONiC Software Version") or _line(text, "Version")
            model = _line(text, "HwSKU") or _line(text, "Platform") or "switch"
            out.append(("switch", model, sw, switch_name(p.stem)))
        elif p.parent.name == "nodes" and "-" in p.stem:
            node, dev = p.stem.rsplit("-", 1)
            out.append(("nic", _line(text, "driver") or "NIC",
                        _line(text, "firmware-version"), node_where(node, dev)))  # fmt: skip
    return out


def _line(text: str, key: str) -> str:
    """The value of ``key: value`` in a tool's output ('' when absent)."""
    for line in text.splitlines():
        k, sep, v = line.partition(":")
        if sep and k.strip().lower() == key.lower():
            return v.strip()
    return ""


__all__ = ["judge", "outliers", "reference_version"]
