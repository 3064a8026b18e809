"""Reserved leaf ports: how many node slots an SU keeps, its spare nodes, attached devices.

Three kinds, as operators publish them:

- ports kept free on every leaf (``per: leaf``, ``attach: none``);
- hot-spare nodes on every leaf (``attach: spare-nodes``): Alibaba HPN keeps "128 active + 8
  backup 200Gbps downstream ports" per ToR for backup hosts (Alibaba HPN, SIGCOMM 2024, 5.1);
- ports per plane taken from free node slots (``per: plane``), left free or cabled to a device:
  the NVIDIA DGX SuperPOD H100 reference architecture removes one DGX so that UFM can connect
  ("a DGX system must be removed to accommodate for UFM connectivity", Table 4 footnote).

A node slot of an SU offers ``ports_per_rail`` ports on each of its ``rails`` leaves, so a
per-plane reservation of ``count`` ports takes ceil(count / (rails x ports_per_rail)) slots.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from railplan.errors import InfeasibleError, SpecError
from railplan.spec import Spec


@dataclass(frozen=True)
class SlotAsk:
    """A per-plane reservation: ``count`` ports from ``slots`` node slots, cabled or free."""

    purpose: str
    count: int
    slots: int
    cabled: bool
    form_factor: str

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.purpose.lower()).strip("-")


@dataclass(frozen=True)
class Reserved:
    """What the spec's reserved ports take from each leaf and each SU."""

    free_per_leaf: int
    spares_per_su: int
    asks: tuple[SlotAsk, ...]
    ports_per_rail: int

    @property
    def per_leaf(self) -> int:
        """Down ports every leaf keeps from the active nodes."""
        return self.free_per_leaf + self.spares_per_su * self.ports_per_rail

    @property
    def slots(self) -> int:
        return sum(a.slots for a in self.asks)

    def su_active(self, leaf_down: int) -> int:
        """Active nodes one SU holds once the per-leaf reservations are taken."""
        return (leaf_down - self.per_leaf) // self.ports_per_rail

    def sus(self, n_nodes: int, su_active: int) -> int:
        """SUs for the nodes plus the reserved slots, all of a plane's slots in its last SU."""
        if self.slots > su_active:
            raise InfeasibleError(
                f"fabric.reserved_ports: {self.slots} node slots of reserved ports do not fit "
                f"one scalable unit of {su_active} nodes; reserve fewer ports per plane"
            )
        sus = max(1, math.ceil(n_nodes / su_active))
        free = sus * su_active - n_nodes
        return sus if self.slots <= free else sus + 1

    def notes(self, su_active: int, sus: int, n_nodes: int) -> tuple[str, ...]:
        out = []
        if self.free_per_leaf:
            out.append(f"{self.free_per_leaf} port(s) per leaf kept free (reserved)")
        if self.spares_per_su:
            out.append(
                f"{self.spares_per_su} spare node(s) per scalable unit on reserved leaf ports"
            )
        for ask in self.asks:
            what = "cabled to" if ask.cabled else "kept free for"
            out.append(
                f"{ask.count} port(s) per plane {what} {ask.purpose}, from {ask.slots} node "
                f"slot(s) of scalable unit {sus}"
            )
        base = max(1, math.ceil(n_nodes / su_active))
        if self.asks and sus > base:
            fewer = self.slots - (base * su_active - n_nodes)
            out.append(
                f"reserved node slots opened scalable unit {sus}; plan {fewer} fewer node(s) "
                "to keep them in the last full one"
            )
        return tuple(out)


def reserve(spec: Spec, rails: int, ports_per_rail: int) -> Reserved:
    """The spec's reserved ports for leaves of ``rails`` rails (ROFT)."""
    free = spares = 0
    asks = []
    for r in spec.fabric.reserved_ports:
        if r.per == "leaf" and r.attach == "none":
            free += r.count
        elif r.attach == "spare-nodes":
            if r.count % ports_per_rail:
                raise SpecError(
                    f"fabric.reserved_ports: {r.count} spare-node ports per leaf do not split "
                    f"into whole nodes of {ports_per_rail} port(s) per leaf; use a multiple"
                )
            spares += r.count // ports_per_rail
        else:
            slots = math.ceil(r.count / (rails * ports_per_rail))
            asks.append(SlotAsk(r.purpose, r.count, slots, r.attach == "device", r.form_factor))
    slugs = [a.slug for a in asks if a.cabled]
    if len(set(slugs)) != len(slugs):
        raise SpecError("fabric.reserved_ports: give each attached device its own purpose")
    return Reserved(free, spares, tuple(asks), ports_per_rail)


def refuse_reserved(spec: Spec, family: str) -> None:
    """Families without scalable units of rail leaves do not plan reserved ports."""
    if spec.fabric.reserved_ports:
        raise SpecError(
            f"fabric.reserved_ports: reserved leaf ports are planned for topology roft, not "
            f"{family}; leave reserved_ports out or use topology roft"
        )
