"""The links of a design as arrays: device index, port, cage, slot and cage shape of each end,
one row per link (in ``design.links`` order), built once per design from the devices' port
layouts (what ``link_ends`` turns into ``CageEnd`` records)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from operator import attrgetter

import numpy as np

from railplan.array_groups import numbers_of, object_array, sort_groups
from railplan.catalog import Catalog
from railplan.design.memo import by_identity
from railplan.design.types import Design, Link

_A_DEVICE, _B_DEVICE = attrgetter("a_device"), attrgetter("b_device")
_A_PORT, _B_PORT, _ID = attrgetter("a_port"), attrgetter("b_port"), attrgetter("id")
#: (form factor, ports per cage, maker, lane rates) of a cage, as ``CageEnd`` has them
Shape = tuple[str, int, str, tuple[int, ...]]
#: (cage, slot, ports per cage) of a port
Place = tuple[int, int, int]


@dataclass(frozen=True)
class EndArrays:
    """One end (a or b) of every link: its device's index in ``LinkTable.devices``, port,
    cage, slot in the cage, ports per cage, ``cage_key``, a number naming the (device, cage)
    the end plugs into (equal exactly when the cages are), and the cage's ``shape``."""

    device: np.ndarray
    port: np.ndarray
    cage: np.ndarray
    slot: np.ndarray
    ports_per_cage: np.ndarray
    cage_key: np.ndarray
    #: what the media rules read of the end's cage: an index into ``LinkTable.shapes``
    shape: np.ndarray


@dataclass(frozen=True)
class LinkTable:
    """Row ``i`` is ``design.links[i]``; ``row`` gives a link id's row."""

    ids: tuple[str, ...]
    devices: tuple[str, ...]
    row: dict[str, int]
    a: EndArrays
    b: EndArrays
    shapes: tuple[Shape, ...] = ()

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class LinkColumns:
    """What the links themselves say, one row per link (in ``links`` order): ids, the devices
    they join (each once, a ends' first), each end's device (an index into ``devices``) and
    port; what the catalog does not enter, so the cabling reads it without one."""

    links: tuple[Link, ...]
    ids: tuple[str, ...]
    devices: tuple[str, ...]
    a_device: np.ndarray
    a_port: np.ndarray
    b_device: np.ndarray
    b_port: np.ndarray

    @cached_property
    def id_array(self) -> np.ndarray:
        """``ids`` as an object array (a permutation of the links reads their ids from it)."""
        return object_array(self.ids)

    @cached_property
    def plane(self) -> np.ndarray:
        return np.fromiter(map(_PLANE, self.links), np.int64, len(self.links))

    @cached_property
    def rail(self) -> np.ndarray:
        return np.fromiter(map(_RAIL, self.links), np.int64, len(self.links))


_PLANE, _RAIL = attrgetter("plane"), attrgetter("rail")
_COLUMNS: dict[tuple[int, ...], tuple[tuple[object, ...], LinkColumns]] = {}


def link_columns(links: tuple[Link, ...]) -> LinkColumns:
    """The links' ``LinkColumns``, remembered by the very tuple of links they were read from."""
    return by_identity(_COLUMNS, (links,), lambda: _link_columns(links))


def _link_columns(links: tuple[Link, ...]) -> LinkColumns:
    n = len(links)
    devices = tuple(dict.fromkeys(chain(map(_A_DEVICE, links), map(_B_DEVICE, links))))
    index = dict(zip(devices, range(len(devices)), strict=True))
    a_device, b_device = (
        np.fromiter(map(index.__getitem__, map(of, links)), np.int64, n)
        for of in (_A_DEVICE, _B_DEVICE)
    )
    a_port, b_port = (np.fromiter(map(of, links), np.int64, n) for of in (_A_PORT, _B_PORT))
    ids = tuple(map(_ID, links))
    return LinkColumns(links, ids, devices, a_device, a_port, b_device, b_port)


_CACHE: dict[tuple[int, ...], tuple[tuple[object, ...], LinkTable]] = {}


def link_table(design: Design, catalog: Catalog) -> LinkTable:
    """The design's links as arrays, remembered by the objects it reads (as ``link_ends``)."""
    held = (design.links, design.switches, design.devices, catalog, design.shape)
    return by_identity(_CACHE, held, lambda: _link_table(design, catalog))


class _Layouts:
    """Each device's port layout (the place of every port, shared by the devices laid out
    alike) and the form factor, maker and lanes of its cages: switches from their model and
    cage sections, attached devices one port per cage, anything else as a node."""

    def __init__(self, design: Design, catalog: Catalog) -> None:
        self.switches = design.switch_by_id()
        self.devices = design.device_by_id()
        self.shape = design.shape
        nic = catalog.nics.get(self.shape.nic_model)
        self.node_kind = (
            self.shape.form_factor,
            nic.vendor if nic else "",
            nic.lane_gbps if nic else (),
        )
        self.catalog = catalog
        self.models: dict[str, tuple[str, str, tuple[int, ...]]] = {}
        self.layouts: dict[tuple[object, ...], int] = {}
        self.places: list[list[Place]] = []

    def _layout(self, key: tuple[object, ...], ports: int, place: Callable[[int], Place]) -> int:
        number = self.layouts.get(key)
        if number is None:
            number = self.layouts[key] = len(self.places)
            self.places.append([place(p) for p in range(ports)])
        return number

    def describe(self, device: str) -> tuple[int, tuple[str, str, tuple[int, ...]]]:
        """The device's layout number and (form factor, maker, lanes) of its cages."""
        sw = self.switches.get(device)
        if sw is not None:
            kind = self.models.get(sw.model)
            if kind is None:
                m = self.catalog.switch(sw.model)
                kind = self.models[sw.model] = (m.form_factor, m.vendor, m.lane_gbps)
            key = ("switch", sw.up_from_port, sw.ports_per_cage, sw.up_ports_per_cage, sw.radix)
            return self._layout(key, sw.radix, sw.cage_of), kind
        dev = self.devices.get(device)
        if dev is not None:  # its maker is not in the catalog: any qualified part fits
            return self._layout(("device", dev.ports), dev.ports, _one_per_cage), (
                dev.form_factor,
                "",
                (),
            )
        ppc, ports = self.shape.ports_per_cage, self.shape.ports
        number = self._layout(("node", ppc, ports), ports, lambda p: (p // ppc, p % ppc, ppc))
        return number, self.node_kind

    def outside(self, device: str, port: int) -> Place:
        """The place of a port the device does not have (a broken design.json), by its rule."""
        sw = self.switches.get(device)
        if sw is not None:
            return sw.cage_of(port)
        if device in self.devices:
            return _one_per_cage(port)
        ppc = self.shape.ports_per_cage
        return port // ppc, port % ppc, ppc


def _one_per_cage(port: int) -> Place:
    return port, 0, 1


def _link_table(design: Design, catalog: Catalog) -> LinkTable:
    columns = link_columns(design.links)
    n, ids, devices = len(columns.ids), columns.ids, columns.devices
    layouts = _Layouts(design, catalog)
    kinds: dict[tuple[str, str, tuple[int, ...]], int] = {}
    layout_of, kind_of = [], []
    for name in devices:
        number, kind = layouts.describe(name)
        layout_of.append(number)
        kind_of.append(kinds.setdefault(kind, len(kinds)))
    places = layouts.places
    size = np.fromiter(map(len, places), np.int64, len(places))
    start = np.cumsum(size) - size
    # every layout's places end to end, and one row more (read for a port outside them all)
    flat = np.array([*(p for table in places for p in table), (0, 0, 1)], np.int64)
    layout = np.array(layout_of, np.int64)
    sides = []
    for device, port in ((columns.a_device, columns.a_port), (columns.b_device, columns.b_port)):
        lay = layout[device]
        inside = (port >= 0) & (port < size[lay])
        cage, slot, ppc = flat[start[lay] + np.where(inside, port, 0)].T.copy()
        for i in np.flatnonzero(~inside).tolist():
            cage[i], slot[i], ppc[i] = layouts.outside(devices[device[i]], int(port[i]))
        sides.append((device, port, cage, slot, ppc))
    # a cage's key: its device's index times the span of cage numbers, plus the cage's place
    # in that span (a broken design.json may name a port, so a cage, below 0)
    low = min((int(s[2].min()) for s in sides if n), default=0)
    width = 1 + max((int(s[2].max()) for s in sides if n), default=0) - low
    # a cage's shape: its device's kind of cage with its ports per cage
    kind_code = np.array(kind_of, np.int64)
    ppc_all = np.concatenate([s[4] for s in sides])
    ppc_low = int(ppc_all.min(initial=0))
    span = int(ppc_all.max(initial=0)) + 1 - ppc_low
    both = np.concatenate([kind_code[s[0]] for s in sides]) * span + (ppc_all - ppc_low)
    order, starts = sort_groups(both)
    code = numbers_of(order, starts)
    listed = list(kinds)
    shapes = tuple(
        (listed[v // span][0], v % span + ppc_low, listed[v // span][1], listed[v // span][2])
        for v in both[order[starts]].tolist()
    )
    a, b = (
        EndArrays(*s, s[0] * width + (s[2] - low), c)
        for s, c in zip(sides, (code[:n], code[n:]), strict=True)
    )
    return LinkTable(ids, devices, dict(zip(ids, range(n), strict=True)), a, b, shapes)
