"""The cage at each end of a link: which device, cage and slot, its form factor and maker."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import ItemsView, Iterator, Mapping, Sequence, ValuesView
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from railplan.catalog import Catalog
from railplan.design.memo import by_identity
from railplan.design.types import Design

if TYPE_CHECKING:
    import numpy as np

    from railplan.design.link_table import EndArrays, LinkTable


class _CageEndFields(NamedTuple):
    device: str
    cage: int
    slot: int
    form_factor: str
    ports_per_cage: int
    #: maker of the cage's equipment (switch vendor, or the node's NIC vendor); "" unknown
    vendor: str
    #: electrical lane rates the cage runs (Gb/s); empty when the catalog does not say
    lanes: tuple[int, ...]
    #: (device, cage): the cage this end plugs into, built once (media look it up per link)
    key: tuple[str, int]


class CageEnd(_CageEndFields):
    """One end of a link: the device, which cage (port // ports_per_cage) and slot in it.

    An immutable record built for every link end (786,432 of them at 131,072 GPUs), so it is
    a named tuple, which builds in a third of the time of a frozen dataclass; ``key`` is
    derived from the device and cage, so two ends are equal exactly when their fields are.
    """

    __slots__ = ()
    #: ``end[CageEnd.SHAPE]`` is (form_factor, ports_per_cage, vendor): what the media rules
    #: read of an end besides its place, as one slice of the tuple
    SHAPE = slice(3, 6)

    def __new__(
        cls,
        device: str,
        cage: int,
        slot: int,
        form_factor: str,
        ports_per_cage: int = 1,
        vendor: str = "",
        lanes: tuple[int, ...] = (),
    ) -> CageEnd:
        fields = (device, cage, slot, form_factor, ports_per_cage, vendor, lanes, (device, cage))
        return tuple.__new__(cls, fields)

    def __getnewargs__(self) -> tuple[object, ...]:  # pickled and copied without ``key``
        return tuple(self)[:7]

    def _replace(self, **changes: object) -> CageEnd:
        """A copy with fields changed, ``key`` derived anew (a named tuple's own ``_replace``
        would copy the old one)."""
        if "key" in changes:
            raise ValueError("key is derived from device and cage; change those")
        fields = dict(zip(self._fields[:7], self[:7], strict=True), **changes)
        return CageEnd(**fields)  # type: ignore[arg-type]

    def name(self) -> str:
        return f"cage {self.cage + 1} of {self.device}"


#: the last few results of ``link_ends``, keyed by the objects they were computed from (a laid
#: out design shares its links and switches with the design it was made from)
_CACHE: dict[tuple[int, ...], tuple[tuple[object, ...], LinkEnds]] = {}
#: records a ``LinkEnds`` makes one by one, at least, before it makes them all in one pass: a
#: record alone costs some five times its share of the pass, so past an eighth of the links (or
#: this many) the pass is cheaper; a caller known to read every link asks ``every_end`` first
BULK_AFTER = 4096


def link_ends(design: Design, catalog: Catalog) -> LinkEnds:
    """The cage ends of every link: nodes from the node shape, attached devices from their
    record (one port per cage), switches from their model and the port's speed section."""
    held = (design.links, design.switches, design.devices, catalog, design.shape)
    return by_identity(_CACHE, held, lambda: _link_ends(design, catalog))


def _link_ends(design: Design, catalog: Catalog) -> LinkEnds:
    from railplan.design.link_table import link_table  # numpy loads here

    return LinkEnds(link_table(design, catalog))


V = TypeVar("V")


class _ByLinkRow(Mapping[str, V]):
    """A mapping of link id to a value kept per link-table row: keyed, ordered and sized as
    the table's ``row`` (the dict it stands for); its items and values are ``every()``'s."""

    _table: LinkTable

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.row)

    def __len__(self) -> int:
        return len(self._table.row)

    def __contains__(self, link_id: object) -> bool:
        return link_id in self._table.row

    def items(self) -> ItemsView[str, V]:
        return self.every().items()

    def values(self) -> ValuesView[V]:
        return self.every().values()

    @abstractmethod
    def every(self) -> dict[str, V]:
        """Every link's value by id, as one dict made once (callers only read it)."""


class LinkEnds(_ByLinkRow[tuple[CageEnd, CageEnd]]):
    """Every link's (a, b) cage ends by link id, in link order, made as they are read.

    A 131,072-GPU job reads the ends of a few thousand links (its fibre plant, the cable
    check's first cable of each kind) of 393,216: those are made one by one from the design's
    ``link_table``; past ``BULK_AFTER`` of them every record is made at once (``every``), as
    a caller walking all links needs. A record is the same either way
    (``tests/test_link_ends_lazy.py``)."""

    def __init__(self, table: LinkTable) -> None:
        self._table = table
        self._made: dict[str, tuple[CageEnd, CageEnd]] = {}
        self._every: dict[str, tuple[CageEnd, CageEnd]] | None = None

    def __getitem__(self, link_id: str) -> tuple[CageEnd, CageEnd]:
        if self._every is not None:
            return self._every[link_id]
        pair = self._made.get(link_id)
        if pair is None:
            table = self._table
            row = table.row[link_id]  # KeyError for a link not in the design, as a dict
            pair = self._made[link_id] = (
                _record(table, table.a, row),
                _record(table, table.b, row),
            )
            if len(self._made) >= max(BULK_AFTER, len(table.ids) // 8):
                self.every()
        return pair

    def every(self) -> dict[str, tuple[CageEnd, CageEnd]]:
        """Every link's ends, made once in one pass (callers only read the dict)."""
        if self._every is None:
            self._every = _all_records(self._table)
        return self._every


def every_end(
    ends: Mapping[str, tuple[CageEnd, CageEnd]],
) -> Mapping[str, tuple[CageEnd, CageEnd]]:
    """``ends`` with every record made (one pass), for a caller about to read every link."""
    return ends.every() if isinstance(ends, LinkEnds) else ends


def _record(table: LinkTable, side: EndArrays, row: int) -> CageEnd:
    """One end's record, read off the table's columns (what ``_all_records`` makes for it)."""
    device = table.devices[int(side.device[row])]
    cage = int(side.cage[row])
    shape = table.shapes[int(side.shape[row])]
    fields = (
        device,
        cage,
        int(side.slot[row]),
        shape[0],
        int(side.ports_per_cage[row]),
        shape[2],
        shape[3],
        (device, cage),
    )
    return tuple.__new__(CageEnd, fields)


def _all_records(table: LinkTable) -> dict[str, tuple[CageEnd, CageEnd]]:
    """The records of the design's ``link_table``, each built from its columns in C (``zip``
    of the columns, ``tuple.__new__`` of each row: the key is the row's device and cage).

    The names a column reads (device; form factor, maker and lanes by shape) are taken from
    object arrays by index, which builds each list in C without a call per link."""
    from railplan.array_groups import object_array  # numpy loads here

    devices = object_array(table.devices)
    # form factor, maker and lanes by shape (a tuple of lanes stays one element)
    fields = [object_array([s[i] for s in table.shapes]) for i in (0, 2, 3)]

    def records(side: EndArrays) -> list[CageEnd]:
        device = devices[side.device].tolist()
        cage = side.cage.tolist()
        ff, vendor, lanes = (f[side.shape].tolist() for f in fields)
        rows = zip(
            device,
            cage,
            side.slot.tolist(),
            ff,
            side.ports_per_cage.tolist(),
            vendor,
            lanes,
            zip(device, cage, strict=True),
            strict=True,
        )
        return list(map(tuple.__new__, repeat(CageEnd), rows))

    return dict(zip(table.ids, zip(records(table.a), records(table.b), strict=True), strict=True))


_PROTOCOLS: dict[tuple[int, ...], tuple[tuple[object, ...], LinkProtocols]] = {}


def link_protocols(design: Design, catalog: Catalog) -> LinkProtocols:
    """The protocol of every link: the one its switches run ("" for a link between two nodes).

    Remembered like ``link_ends`` (by the objects it reads); callers only read the answer."""
    held = (design.links, design.switches, catalog)
    return by_identity(_PROTOCOLS, held, lambda: _link_protocols(design, catalog))


class LinkProtocols(_ByLinkRow[str]):
    """Every link's protocol by link id, in link order, kept as one number per link-table row
    (``codes``, indexing ``names``): a job reads a few links' protocols by id and the rest as
    a column (``column``, ``present``), so no dict of 393,216 entries is made."""

    def __init__(self, table: LinkTable, codes: np.ndarray, names: tuple[str, ...]) -> None:
        self._table, self.codes, self.names = table, codes, names
        self._every: dict[str, str] | None = None

    def __getitem__(self, link_id: str) -> str:
        return self.names[int(self.codes[self._table.row[link_id]])]

    def every(self) -> dict[str, str]:
        """Every link's protocol by id, made once (callers only read the dict)."""
        if self._every is None:
            self._every = dict(zip(self._table.ids, self.column(), strict=True))
        return self._every

    def column(self) -> list[str]:
        """The protocol of each link-table row, in row (link) order."""
        from railplan.array_groups import object_array

        return object_array(self.names)[self.codes].tolist()  # names read in C

    def present(self) -> set[str]:
        """The protocols some link runs."""
        import numpy as np

        return {self.names[c] for c in np.unique(self.codes).tolist()}


def protocol_column(protocols: Mapping[str, str], ids: Sequence[str]) -> list[str]:
    """The protocol of each link named in ``ids`` (a column when ``protocols`` is the
    ``LinkProtocols`` of those very links in their order)."""
    if (
        isinstance(protocols, LinkProtocols)
        and protocols._table.ids is ids
        and len(protocols._table.row) == len(ids)  # no id twice: each row is its id's
    ):
        return protocols.column()
    return list(map(protocols.__getitem__, ids))


def protocols_present(protocols: Mapping[str, str]) -> set[str]:
    """The protocols some link of ``protocols`` runs."""
    if isinstance(protocols, LinkProtocols):
        return protocols.present()
    return set(protocols.values())


def _link_protocols(design: Design, catalog: Catalog) -> LinkProtocols:
    """Over the link table: each device's protocol (its switch model's; none for a node or an
    attached device), read at the b end, else at the a end."""
    import numpy as np

    from railplan.design.link_table import link_table

    table = link_table(design, catalog)
    switches = design.switch_by_id()
    protocol_of = {m: catalog.switch(m).protocol for m in {sw.model for sw in design.switches}}
    names = ["", *sorted(set(protocol_of.values()))]
    code = {p: i for i, p in enumerate(names)}
    of_device = np.array(
        [
            code[protocol_of[sw.model]] if (sw := switches.get(d)) is not None else -1
            for d in table.devices
        ],
        np.int64,
    )
    at_b = of_device[table.b.device] if len(table) else np.zeros(0, np.int64)
    at_a = of_device[table.a.device] if len(table) else np.zeros(0, np.int64)
    picked = np.where(at_b >= 0, at_b, np.maximum(at_a, 0))
    picked.setflags(write=False)
    return LinkProtocols(table, picked, tuple(names))
