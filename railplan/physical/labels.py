"""What a cable end's label and colour read: device abbreviations, port names, TIA-598 colours."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from operator import attrgetter
from typing import NamedTuple, Protocol

import numpy as np

from railplan.array_groups import object_array
from railplan.design import Design, Link, Switch
from railplan.design.link_table import LinkColumns
from railplan.design.port_names import PortNames
from railplan.spec.labels import LabelTemplate

#: label fields read off one cable end; the others (cable, link, plane, rail) are the cable's
END_FIELDS = frozenset({"rack", "u", "device", "port"})

#: TIA-598 fibre colour order, used for rails (or planes)
TIA_598 = (
    "blue",
    "orange",
    "green",
    "brown",
    "slate",
    "white",
    "red",
    "black",
    "yellow",
    "violet",
    "rose",
    "aqua",
)
#: label abbreviation of each word in a device name, with its meaning for the legend; the
#: numbers of the name are kept (leading zeros dropped), so a label's P0-LF-SU2-R0 is the device
#: named p0-leaf-su02-r0 and P0-SP-14 is p0-spine-14
WORD_ABBREVIATIONS = {
    "node": ("N", "GPU node"),
    "p": ("P", "plane"),
    "leaf": ("LF", "leaf switch"),
    "leafa": ("LA", "Matrix leaf, group A"),
    "leafb": ("LB", "Matrix leaf, group B"),
    "spine": ("SP", "spine switch"),
    "core": ("CR", "core switch"),
    "tor": ("TR", "top-of-rack switch"),
    "rail": ("RL", "rail switch"),
    "su": ("SU", "scalable unit"),
    "r": ("R", "rail"),
    "rk": ("RK", "rack"),
    "pod": ("PD", "pod"),
}
_TOKEN = re.compile(r"[A-Za-z]+|\d+|[^A-Za-z\d]+")


def short_name(name: str) -> str:
    """A device name as labels print it: each word abbreviated, every number kept.

    ``node0004`` -> ``N4``, ``p0-spine-14`` -> ``P0-SP-14``, ``p0-leaf-su02-r0`` ->
    ``P0-LF-SU2-R0``, ``p0-leafB-01`` -> ``P0-LB-1``; a word without an abbreviation is printed
    in capitals. Numbers lose only their leading zeros, so a label's numbers are the name's.
    """
    out = []
    tokens = _TOKEN.findall(name)
    for i, tok in enumerate(tokens):
        if tok.isdigit():
            out.append(str(int(tok)))
        elif tok.isalpha():
            abbr = WORD_ABBREVIATIONS.get(tok.lower(), (tok.upper(), ""))[0]
            # a word glued to the number before it keeps a separator: rk001a -> RK1-A
            if i and tokens[i - 1].isdigit():
                out.append("-")
            out.append(abbr)
        else:
            out.append(tok)
    return "".join(out)


def short_names(design: Design) -> dict[str, str]:
    """Label name of every node, switch and attached device (``short_name``); a device whose
    short name another device already has keeps its full name in capitals."""
    ids = [n.id for n in design.nodes] + [s.id for s in design.switches]
    ids += [d.id for d in design.devices]
    short = {i: short_name(i) for i in ids}
    seen: dict[str, int] = {}
    for value in short.values():
        seen[value] = seen.get(value, 0) + 1
    return {i: (v if seen[v] == 1 else i.upper()) for i, v in short.items()}


def label_legend(design: Design) -> list[tuple[str, str]]:
    """(abbreviation, meaning) of every word the design's labels abbreviate, in legend order."""
    names = [n.id for n in design.nodes] + [s.id for s in design.switches]
    names += [d.id for d in design.devices]
    words = {tok.lower() for name in names for tok in _TOKEN.findall(name) if tok.isalpha()}
    return [(abbr, what) for word, (abbr, what) in WORD_ABBREVIATIONS.items() if word in words]


def port_label(design: Design, device: str, port: int, switches: Mapping[str, Switch]) -> str:
    """Front-panel port name on a switch (``P17``, ``P9/2``), NIC port name on a node."""
    return design.port_name(device, port, switches)


class _Spot(Protocol):
    """Where a device sits, as a label reads it."""

    @property
    def rack(self) -> str: ...
    @property
    def u(self) -> int: ...


class EndLabels:
    """``labels(device, port)``: what a template of the end's own fields renders for that end,
    read from a table of the device's labels built on first use (each device's rack, U and
    name rendered once, its port names put in between); ``columns`` reads many ends at once."""

    def __init__(
        self,
        template: LabelTemplate,
        names: Mapping[str, str],
        where: Mapping[str, _Spot],
        port_of: PortNames,
    ) -> None:
        self._template = template
        self._names = names
        self._where = where
        self._port_of = port_of
        self._of_device: dict[str, list[str]] = {}
        self._ports = [spec for _, name, spec in template.pieces if name == "port"]
        self._around: dict[str, tuple[str, str]] = {}
        self._formats = _around_formats(template)
        self._held: tuple[Sequence[str], _DeviceColumns] | None = None

    def _fixed(self, device: str) -> dict[str, object]:
        p = self._where[device]
        return {"rack": p.rack, "u": p.u, "device": self._names[device]}

    def _around_port(self, device: str) -> tuple[str, str]:
        """What a template of one port field renders before and after the port's name."""
        around = self._around.get(device)
        if around is None:
            fixed = self._fixed(device)
            head, tail = self._formats
            around = self._around[device] = (head.format_map(fixed), tail.format_map(fixed))
        return around

    def _render(self, device: str, port_names: list[str]) -> list[str]:
        if len(self._ports) != 1:  # no port field, or several: the template rendered port by port
            fixed = self._fixed(device)
            return [self._template.render(**fixed, port=n) for n in port_names]
        (before, after), spec = self._around_port(device), self._ports[0]
        if spec:
            return [before + format(n, spec) + after for n in port_names]
        return [before + n + after for n in port_names]

    def table(self, device: str) -> list[str]:
        """The label of each of ``device``'s ports, by port number."""
        table = self._of_device.get(device)
        if table is None:
            table = self._of_device[device] = self._render(device, self._port_of.table(device))
        return table

    def __call__(self, device: str, port: int) -> str:
        table = self.table(device)
        if 0 <= port < len(table):
            return table[port]
        return self._render(device, [self._port_of(device, port)])[0]

    def columns(self, devices: Sequence[str], device: np.ndarray, port: np.ndarray) -> list[str]:
        """The labels of the ends at ``device`` (indices into ``devices``) and ``port``: the
        devices' tables laid end to end and read by index, a port outside its table named one
        by one.

        A template of one port field is read in two columns joined in C: what it renders
        before the port (and after it) by device, and the port's name from the tables of
        port names (one per layout, shared by the devices laid out alike)."""
        if len(self._ports) == 1:
            return self._joined(devices, device, port)
        tables = [self.table(d) for d in devices]
        count = np.fromiter(map(len, tables), np.int64, len(tables))
        offset = np.cumsum(count) - count
        flat = np.empty(int(count.sum()) + 1, dtype=object)
        flat[:-1] = list(chain.from_iterable(tables))
        inside = (port >= 0) & (port < count[device])
        out = flat[np.where(inside, offset[device] + port, len(flat) - 1)]
        for i in np.flatnonzero(~inside).tolist():
            out[i] = self(devices[device[i]], int(port[i]))
        return out.tolist()

    def _joined(self, devices: Sequence[str], device: np.ndarray, port: np.ndarray) -> list[str]:
        of = self._device_columns(devices)
        inside = (port >= 0) & (port < of.ports[device])
        names = of.names[np.where(inside, of.offset[device] + port, len(of.names) - 1)]
        for i in np.flatnonzero(~inside).tolist():  # named as ``PortNames`` names it
            names[i] = self._port_of(devices[device[i]], int(port[i]))
        spec = self._ports[0]
        port_names = names.tolist()
        if spec:
            port_names = [format(n, spec) for n in port_names]
        # before + name (+ after): the same concatenation ``_render`` makes, end by end in C
        out = list(map(str.__add__, of.heads[device].tolist(), port_names))
        if of.tails is not None:
            out = list(map(str.__add__, out, of.tails[device].tolist()))
        return out

    def _device_columns(self, devices: Sequence[str]) -> _DeviceColumns:
        """``_DeviceColumns`` of ``devices``, remembered for the last tuple of devices asked
        (the b ends are read after the a ends)."""
        if self._held is not None and self._held[0] is devices:
            return self._held[1]
        tables, heads, tails = [], [], []
        for d in devices:  # what ``table`` reads, device by device
            tables.append(self._port_of.table(d))
            head, tail = self._around_port(d)
            heads.append(head)
            tails.append(tail)
        distinct = {id(t): t for t in tables}  # port names: each layout's table once
        sizes = [len(t) for t in distinct.values()]
        start = dict(zip(distinct, np.cumsum([0, *sizes]).tolist()[:-1], strict=True))
        names = np.empty(sum(sizes) + 1, dtype=object)
        names[:-1] = list(chain.from_iterable(distinct.values()))
        out = _DeviceColumns(
            offset=np.fromiter(map(start.__getitem__, map(id, tables)), np.int64, len(tables)),
            ports=np.fromiter(map(len, tables), np.int64, len(tables)),
            names=names,
            heads=object_array(heads),
            tails=object_array(tails) if any(tails) else None,
        )
        if isinstance(devices, tuple):  # what cannot change under it
            self._held = (devices, out)
        return out


class _DeviceColumns(NamedTuple):
    """Per device: where its port names start in ``names`` (the layouts' tables end to end,
    and one more element) and how many ``ports`` it has; what the template renders before its port,
    and after it (None: nothing)."""

    offset: np.ndarray
    ports: np.ndarray
    names: np.ndarray
    heads: np.ndarray
    tails: np.ndarray | None


def _around_formats(template: LabelTemplate) -> tuple[str, str]:
    """The ``str.format`` text of what ``template`` renders before its port field and after
    it: its pieces, literal braces doubled, each field ``format(value, spec)`` as
    ``str.format`` renders it."""
    out = ["", ""]
    side = 0
    for literal, name, spec in template.pieces:
        out[side] += literal.replace("{", "{{").replace("}", "}}")
        if name == "port":
            side = 1
        elif name:
            out[side] += "{" + name + (":" + spec if spec else "") + "}"
    return out[0], out[1]


def end_labeller(
    template: LabelTemplate,
    names: Mapping[str, str],
    where: Mapping[str, _Spot],
    port_of: PortNames,
) -> EndLabels | None:
    """The end labels of ``template`` (``EndLabels``), or None when it reads the cable or the
    link (``END_FIELDS``): those labels are rendered end by end. ``where`` gives each device's
    ``.rack`` and ``.u``; ``names`` its label name; ``port_of`` its port names."""
    if any(name and name not in END_FIELDS for _, name, _ in template.pieces):
        return None
    return EndLabels(template, names, where, port_of)


def link_colours(links: Sequence[Link], switches: Mapping[str, Switch], by: str) -> list[str]:
    """TIA-598 colour of each link: by rail (the link's, else its a end's switch's) when ``by``
    is "rail" and there is one, else by plane; over arrays of the links' rails and planes."""
    n = len(links)
    rail = np.fromiter(map(_RAIL, links), np.int64, n)
    plane = np.fromiter(map(_PLANE, links), np.int64, n)
    lower = np.fromiter(map(_rail_of(switches), map(_A_DEVICE, links)), np.int64, n)
    return _colours(rail, plane, lower, by)


def colours_at(
    columns: LinkColumns, rows: np.ndarray, switches: Mapping[str, Switch], by: str
) -> list[str]:
    """``link_colours`` of the links at ``rows`` of ``columns``: each device's switch rail
    looked up once and read at the links' a ends by index."""
    rail_of = np.fromiter(map(_rail_of(switches), columns.devices), np.int64, len(columns.devices))
    a_device = columns.a_device[rows]
    return _colours(columns.rail[rows], columns.plane[rows], rail_of[a_device], by)


def _rail_of(switches: Mapping[str, Switch]) -> Callable[[str], int]:
    """A device's switch's rail, -1 for a device that is not a switch."""

    def rail(device: str) -> int:
        sw = switches.get(device)
        return sw.rail if sw is not None else -1

    return rail


def _colours(rail: np.ndarray, plane: np.ndarray, lower: np.ndarray, by: str) -> list[str]:
    rail = np.where(rail < 0, lower, rail)
    pick = np.where((rail >= 0) & (by == "rail"), rail, plane) % len(TIA_598)
    return np.array(TIA_598, dtype=object)[pick].tolist()


_RAIL, _PLANE, _A_DEVICE = attrgetter("rail"), attrgetter("plane"), attrgetter("a_device")
