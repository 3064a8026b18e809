"""The cage at each end of a link: which device, cage and slot, its form factor and maker."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from railplan.catalog import Catalog
from railplan.design.memo import by_identity
from railplan.design.types import Design


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
_CACHE: dict[tuple[int, ...], tuple[tuple[object, ...], dict[str, tuple[CageEnd, CageEnd]]]] = {}


def link_ends(design: Design, catalog: Catalog) -> dict[str, tuple[CageEnd, CageEnd]]:
    """The cage ends of every link: nodes from the node shape, attached devices from their
    record (one port per cage), switches from their model and the port's speed section."""
    held = (design.links, design.switches, design.devices, catalog, design.shape)
    return by_identity(_CACHE, held, lambda: _link_ends(design, catalog))


def _link_ends(design: Design, catalog: Catalog) -> dict[str, tuple[CageEnd, CageEnd]]:
    switches = design.switch_by_id()
    devices = design.device_by_id()
    shape = design.shape
    nic = catalog.nics.get(shape.nic_model)
    node_vendor = nic.vendor if nic else ""
    node_lanes = nic.lane_gbps if nic else ()
    model_of: dict[str, tuple[str, str, tuple[int, ...]]] = {}
    # per port layout, the (cage, slot, ports per cage) of every port, shared by the devices
    # that have that layout; per device, its layout's table and what its cages are
    layouts: dict[tuple[object, ...], list[tuple[int, int, int]]] = {}
    known: dict[str, tuple[list[tuple[int, int, int]], str, str, tuple[int, ...]]] = {}

    def table(
        layout: tuple[object, ...], ports: int, cage_of: Callable[[int], tuple[int, int, int]]
    ) -> list[tuple[int, int, int]]:
        hit = layouts.get(layout)
        if hit is None:
            hit = layouts[layout] = [cage_of(p) for p in range(ports)]
        return hit

    def describe(device: str) -> tuple[list[tuple[int, int, int]], str, str, tuple[int, ...]]:
        sw = switches.get(device)
        if sw is not None:
            if sw.model not in model_of:
                m = catalog.switch(sw.model)
                model_of[sw.model] = (m.form_factor, m.vendor, m.lane_gbps)
            ff, vendor, lanes = model_of[sw.model]
            layout = ("switch", sw.up_from_port, sw.ports_per_cage, sw.up_ports_per_cage)
            return table((*layout, sw.radix), sw.radix, sw.cage_of), ff, vendor, lanes
        dev = devices.get(device)
        if dev is not None:  # its maker is not in the catalog: any qualified part fits
            return table(("device", dev.ports), dev.ports, _one_per_cage), dev.form_factor, "", ()
        ppc = shape.ports_per_cage
        cages = table(("node", ppc, shape.ports), shape.ports, lambda p: (p // ppc, p % ppc, ppc))
        return cages, shape.form_factor, node_vendor, node_lanes

    def end(device: str, port: int) -> CageEnd:
        held = known.get(device)
        if held is None:
            held = known[device] = describe(device)
        cages, ff, vendor, lanes = held
        if 0 <= port < len(cages):
            cage, slot, ppc = cages[port]
        else:  # a port the device does not have (a broken design.json): as its rule says
            sw = switches.get(device)
            if sw is not None:
                cage, slot, ppc = sw.cage_of(port)
            elif device in devices:
                cage, slot, ppc = _one_per_cage(port)
            else:
                ppc = shape.ports_per_cage
                cage, slot = port // ppc, port % ppc
        return CageEnd(device, cage, slot, ff, ppc, vendor, lanes)

    return {
        link.id: (end(link.a_device, link.a_port), end(link.b_device, link.b_port))
        for link in design.links
    }


def _one_per_cage(port: int) -> tuple[int, int, int]:
    return port, 0, 1


_PROTOCOLS: dict[tuple[int, ...], tuple[tuple[object, ...], dict[str, str]]] = {}


def link_protocols(design: Design, catalog: Catalog) -> dict[str, str]:
    """The protocol of every link: the one its switches run ("" for a link between two nodes).

    Remembered like ``link_ends`` (by the objects it reads); callers only read the answer."""
    held = (design.links, design.switches, catalog)
    return by_identity(_PROTOCOLS, held, lambda: _link_protocols(design, catalog))


def _link_protocols(design: Design, catalog: Catalog) -> dict[str, str]:
    switches = design.switch_by_id()
    protocol_of = {m: catalog.switch(m).protocol for m in {sw.model for sw in design.switches}}
    out: dict[str, str] = {}
    for link in design.links:
        sw = switches.get(link.b_device) or switches.get(link.a_device)
        out[link.id] = protocol_of[sw.model] if sw is not None else ""
    return out
