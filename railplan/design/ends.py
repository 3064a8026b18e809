"""The cage at each end of a link: which device, cage and slot, and the cage's form factor."""

from __future__ import annotations

from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.design.types import Design


@dataclass(frozen=True, slots=True)
class CageEnd:
    """One end of a link: the device, which cage (port // ports_per_cage) and slot in it."""

    device: str
    cage: int
    slot: int
    form_factor: str
    ports_per_cage: int = 1

    @property
    def key(self) -> tuple[str, int]:
        return (self.device, self.cage)

    def name(self) -> str:
        return f"cage {self.cage + 1} of {self.device}"


def link_ends(design: Design, catalog: Catalog) -> dict[str, tuple[CageEnd, CageEnd]]:
    """The cage ends of every link: nodes from the node shape, attached devices from their
    record (one port per cage), switches from their model and the port's speed section."""
    switches = design.switch_by_id()
    devices = design.device_by_id()
    shape = design.shape
    ff_of: dict[str, str] = {}
    out = {}
    for link in design.links:
        ends = []
        for device, port in ((link.a_device, link.a_port), (link.b_device, link.b_port)):
            sw = switches.get(device)
            dev = devices.get(device)
            if sw is not None:
                if sw.model not in ff_of:
                    ff_of[sw.model] = catalog.switch(sw.model).form_factor
                cage, slot, ppc = sw.cage_of(port)
                ends.append(CageEnd(device, cage, slot, ff_of[sw.model], ppc))
            elif dev is not None:
                ends.append(CageEnd(device, port, 0, dev.form_factor, 1))
            else:
                ppc = shape.ports_per_cage
                ends.append(CageEnd(device, port // ppc, port % ppc, shape.form_factor, ppc))
        out[link.id] = (ends[0], ends[1])
    return out
