"""The links of a design as arrays: device index, port, cage and slot of each end, one row per
link (in ``design.links`` order), built once per design from ``link_ends``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter

import numpy as np

from railplan.catalog import Catalog
from railplan.design.ends import CageEnd, link_ends
from railplan.design.memo import by_identity
from railplan.design.types import Design

_A_DEVICE, _B_DEVICE = attrgetter("a_device"), attrgetter("b_device")
_A_PORT, _B_PORT, _ID = attrgetter("a_port"), attrgetter("b_port"), attrgetter("id")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_CAGE, _SLOT, _PPC = itemgetter(1), itemgetter(2), itemgetter(4)


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
    #: (form factor, ports per cage, maker, lane rates) of a cage, as ``CageEnd`` has them
    shapes: tuple[tuple[str, int, str, tuple[int, ...]], ...] = ()

    def __len__(self) -> int:
        return len(self.ids)


_CACHE: dict[tuple[int, ...], tuple[tuple[object, ...], LinkTable]] = {}


def link_table(design: Design, catalog: Catalog) -> LinkTable:
    """The design's links as arrays, remembered like ``link_ends`` (by the objects it reads)."""
    held = (design.links, design.switches, design.devices, catalog, design.shape)
    return by_identity(_CACHE, held, lambda: _link_table(design, catalog))


def _link_table(design: Design, catalog: Catalog) -> LinkTable:
    links = design.links
    n = len(links)
    ends = link_ends(design, catalog)
    ids = tuple(map(_ID, links))
    devices = tuple(dict.fromkeys(chain(map(_A_DEVICE, links), map(_B_DEVICE, links))))
    index = {d: i for i, d in enumerate(devices)}
    pairs = list(map(ends.__getitem__, ids))
    cage_lists = []
    for pick, dev_of, port_of in ((_FIRST, _A_DEVICE, _A_PORT), (_SECOND, _B_DEVICE, _B_PORT)):
        side = list(map(pick, pairs))
        cage_lists.append(
            (
                np.fromiter(map(index.__getitem__, map(dev_of, links)), np.int64, n),
                np.fromiter(map(port_of, links), np.int64, n),
                np.fromiter(map(_CAGE, side), np.int64, n),
                np.fromiter(map(_SLOT, side), np.int64, n),
                np.fromiter(map(_PPC, side), np.int64, n),
            )
        )
    # a cage's key: its device's index times the span of cage numbers, plus the cage's place
    # in that span (a broken design.json may name a port, so a cage, below 0)
    low = min((int(c[2].min()) for c in cage_lists if n), default=0)
    width = 1 + max((int(c[2].max()) for c in cage_lists if n), default=0) - low
    shapes, codes = _shapes(pairs, len(devices), cage_lists)
    a, b = (
        EndArrays(*c, c[0] * width + (c[2] - low), code)
        for c, code in zip(cage_lists, codes, strict=True)
    )
    return LinkTable(ids, devices, dict(zip(ids, range(n), strict=True)), a, b, shapes)


def _shapes(
    pairs: list[tuple[CageEnd, CageEnd]], count: int, cage_lists: Sequence[tuple[np.ndarray, ...]]
) -> tuple[tuple[tuple[str, int, str, tuple[int, ...]], ...], list[np.ndarray]]:
    """Every cage shape and each end's: a device's form factor, maker and lanes are one for
    all its cages (``link_ends`` reads them off the device), so they are read at each device's
    first end and paired with the end's ports per cage."""
    n = len(pairs)
    device = np.concatenate([c[0] for c in cage_lists])
    ppc = np.concatenate([c[4] for c in cage_lists])
    first = np.full(count, 2 * n, np.int64)
    np.minimum.at(first, device, np.arange(2 * n))
    kinds: dict[tuple[str, str, tuple[int, ...]], int] = {}
    of_device = np.fromiter(
        (
            kinds.setdefault((e.form_factor, e.vendor, e.lanes), len(kinds))
            for e in (pairs[i % n][i // n] for i in first.tolist())
        ),
        np.int64,
        count,
    )
    low = int(ppc.min(initial=0))
    per_device = of_device[device] * (int(ppc.max(initial=0)) + 1 - low) + (ppc - low)
    order = np.argsort(per_device, kind="stable")
    new = np.ones(len(order), bool)
    new[1:] = per_device[order][1:] != per_device[order][:-1]
    code = np.empty(len(order), np.int64)
    code[order] = np.cumsum(new) - 1
    shapes = []
    for i in order[new].tolist():
        e = pairs[i % n][i // n]
        shapes.append((e.form_factor, e.ports_per_cage, e.vendor, e.lanes))
    return tuple(shapes), [code[:n], code[n:]]
