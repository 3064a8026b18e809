"""Parse ``ethtool -m`` module diagnostics and judge them against the module's own thresholds.

A pluggable module with digital diagnostics (SFF-8472 for SFP, SFF-8636 for QSFP, CMIS for
QSFP-DD/OSFP) stores its alarm and warning thresholds in its own memory map, and ``ethtool -m``
prints them beside the readings (ethtool ``sff-common.c``/``qsfp.c``: "Module temperature",
"Module temperature high alarm threshold", "Rcvr signal avg optical power (Channel 1)" (older
ethtool: without the space), "Laser rx power high alarm threshold", all in
"<mW> mW / <dBm> dBm" or "<C> degrees C / <F> degrees F"). Judging a module against the
thresholds it reports is the vendor-neutral rule: no datasheet is needed, and every vendor's
module carries its own limits. A reading outside an alarm threshold is a finding; outside a
warning threshold only a warning. A module without thresholds (a copper DAC has no
diagnostics) is not judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from railplan.field.common import no_huge_numbers, read_text

_TEMP = re.compile(
    r"^\s*Module temperature(?: (high|low) (alarm|warning) threshold)?\s*:\s*(-?[\d.]+) degrees C"
)
_RX = re.compile(
    r"^\s*(?:Rcvr signal avg optical power|Receiver signal average optical power|"
    r"Receiver signal OMA|Rcvr signal OMA)\s*(?:\(Chan(?:nel)? (\d+)\))?\s*:\s*([\d.]+) mW"
)
_RX_LIMIT = re.compile(r"^\s*Laser rx power (high|low) (alarm|warning) threshold\s*:\s*([\d.]+) mW")


@dataclass(frozen=True, slots=True)
class ModuleReading:
    """One module's temperature and per-lane RX power with its own thresholds."""

    temperature_c: float | None
    #: (high alarm, low alarm, high warning, low warning); None when not printed
    temp_limits: tuple[float | None, float | None, float | None, float | None]
    rx_mw: tuple[float, ...]
    rx_limits: tuple[float | None, float | None, float | None, float | None]

    @property
    def judged(self) -> bool:
        """Whether the module reported both readings and thresholds (a DAC does not)."""
        return self.temperature_c is not None and any(x is not None for x in self.temp_limits)

    def findings(self) -> tuple[list[str], list[str]]:
        """(alarms, warnings): readings outside the module's alarm / warning thresholds."""
        alarms: list[str] = []
        warnings: list[str] = []
        t = self.temperature_c
        hi, lo, hw, lw = self.temp_limits
        if t is not None and _implemented(hi, lo):
            if (hi is not None and t > hi) or (lo is not None and t < lo):
                alarms.append(f"temperature {t:g} C outside its alarm range {_range(lo, hi, 'C')}")
            elif (hw is not None and t > hw) or (lw is not None and t < lw):
                warnings.append(
                    f"temperature {t:g} C outside its warning range {_range(lw, hw, 'C')}"
                )
        hi, lo, hw, lw = self.rx_limits
        for lane, p in enumerate(self.rx_mw if _implemented(hi, lo) else (), 1):
            if (hi is not None and p > hi) or (lo is not None and p < lo):
                alarms.append(f"lane {lane} RX {_dbm(p)} outside its alarm range "
                              f"{_dbm(lo)}..{_dbm(hi)}")  # fmt: skip
            elif (hw is not None and p > hw) or (lw is not None and p < lw):
                warnings.append(f"lane {lane} RX {_dbm(p)} outside its warning range "
                                f"{_dbm(lw)}..{_dbm(hw)}")  # fmt: skip
        return alarms, warnings


def _implemented(hi: float | None, lo: float | None) -> bool:
    """A threshold pair the module implements: a module without them prints zeros."""
    return hi is not None and lo is not None and hi > lo


def _range(lo: float | None, hi: float | None, unit: str) -> str:
    return f"{'-' if lo is None else f'{lo:g}'}..{'-' if hi is None else f'{hi:g}'} {unit}"


def _dbm(mw: float | None) -> str:
    import math

    if mw is None:
        return "-"
    return "-inf dBm" if mw <= 0 else f"{10 * math.log10(mw):.2f} dBm"


def parse_ethtool_module(text: str, source: str = "ethtool -m") -> ModuleReading:
    """The temperature, per-lane RX power and their thresholds in ``ethtool -m`` output."""
    no_huge_numbers(text, source)
    temp: float | None = None
    tl: dict[tuple[str, str], float] = {}
    rl: dict[tuple[str, str], float] = {}
    rx: dict[int, float] = {}
    for line in text.splitlines():
        if m := _TEMP.match(line):
            if m.group(1):
                tl[(m.group(1), m.group(2))] = float(m.group(3))
            else:
                temp = float(m.group(3))
        elif m := _RX_LIMIT.match(line):
            rl[(m.group(1), m.group(2))] = float(m.group(3))
        elif m := _RX.match(line):
            rx[int(m.group(1) or 1)] = float(m.group(2))

    def limits(d: dict[tuple[str, str], float]) -> tuple[float | None, ...]:
        keys = (("high", "alarm"), ("low", "alarm"), ("high", "warning"), ("low", "warning"))
        return tuple(d.get(k) for k in keys)

    t4 = limits(tl)
    r4 = limits(rl)
    return ModuleReading(
        temp,
        (t4[0], t4[1], t4[2], t4[3]),
        tuple(rx[k] for k in sorted(rx)),
        (r4[0], r4[1], r4[2], r4[3]),
    )


def parse_ethtool_module_file(path: str | Path) -> ModuleReading:
    return parse_ethtool_module(read_text(path), str(path))


_MLXLINK = re.compile(
    r"^\s*(Temperature \[C\]|Rx Power Current \[dBm\])\s*:\s*([-\d.,]+)\s*"
    r"\[(-?[\d.]+)\.\.(-?[\d.]+)\]"
)


def parse_mlxlink_module(text: str, source: str = "mlxlink -m") -> ModuleReading:
    """The Module Info of ``mlxlink -m``: ``Temperature [C] : 54 [-5..75]`` and ``Rx Power
    Current [dBm] : 1.886,1.989,2.281,1.976 [-10.41..6]`` (the format as public mlxlink
    readers quote real output). The bracket is ``[low..high]`` of the module's thresholds, which
    mlxlink reads from the PDDR module info page (Mellanox/mstflint
    mlxlink/modules/mlxlink_commander.cpp, prepareDDMSection), whose fields are the module's
    *alarm* thresholds (mstflint tools_layouts/reg_access_switch_layouts.h: "Alarm high
    temperature threshold", "Alarm low RX Power threshold in dBm"). RX power in dBm is turned
    into mW so that the judgement is the same as ``ethtool -m``'s."""
    no_huge_numbers(text, source)
    temp: float | None = None
    tl: tuple[float | None, ...] = (None, None, None, None)
    rx: tuple[float, ...] = ()
    rl: tuple[float | None, ...] = (None, None, None, None)
    for line in text.splitlines():
        m = _MLXLINK.match(line)
        if not m:
            continue
        values = [float(v) for v in m.group(2).split(",") if v]
        lo, hi = float(m.group(3)), float(m.group(4))
        if m.group(1).startswith("Temperature"):
            temp, tl = values[0], (hi, lo, None, None)
        else:
            rx = tuple(10 ** (v / 10) for v in values)
            rl = (10 ** (hi / 10), 10 ** (lo / 10), None, None)
    return ModuleReading(temp, (tl[0], tl[1], tl[2], tl[3]), rx, (rl[0], rl[1], rl[2], rl[3]))


__all__ = [
    "ModuleReading",
    "parse_ethtool_module",
    "parse_ethtool_module_file",
    "parse_mlxlink_module",
]
