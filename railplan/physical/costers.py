"""What a placement objective pays per link at a routed length: media cost, power or metres."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol, cast

from railplan.catalog import Catalog
from railplan.design import Design, Link
from railplan.errors import InfeasibleError, SpecError
from railplan.physical import media
from railplan.physical.media_plans import Component, catalog_index, cheapest, plans_for

OBJECTIVES = ("cost", "power", "length")


class LinkCoster(Protocol):
    """Prices a link at a routed length: ``key`` groups links that price alike."""

    def key(self, link: Link) -> Hashable: ...

    def cost(self, key: Hashable, length_m: float, link: Link) -> float: ...


class DesignCoster:
    """Prices links of a design by length for a placement objective.

    ``key(link)`` is the shape of the link's component (links in alike components price
    alike); ``cost(key, length_m, link)`` is the component's cheapest cost at that length
    divided over its links (``objective="power"``: the power of that cheapest media), or
    media.UNREACHABLE_USD when nothing in the catalog reaches.
    """

    def __init__(self, design: Design, catalog: Catalog, objective: str = "cost") -> None:
        if objective not in ("cost", "power"):
            raise ValueError(f"objective {objective!r} is not cost or power")
        self._power = objective == "power"
        self._idx = catalog_index(catalog)
        runs = media.design_runs(design, catalog)
        self._key: dict[str, Component] = {}
        for members in media.components(runs):
            comp = media.component_shape(runs, members, "")
            for i in members:
                self._key[runs[i].link_id] = comp
        self._memo: dict[tuple[Component, float], float] = {}

    def key(self, link: Link) -> Hashable:
        return self._key[link.id]

    def cost(self, key: Hashable, length_m: float, link: Link) -> float:
        assert isinstance(key, Component)
        memo = (key, round(length_m, 6))
        hit = self._memo.get(memo)
        if hit is None:
            best = cheapest(plans_for(self._idx, key), length_m)
            if best is None:
                hit = media.UNREACHABLE_USD
            else:
                hit = (best.power_w if self._power else best.cost_usd) / len(key.runs)
            self._memo[memo] = hit
        return hit


class LengthCoster:
    """Placement objective: total routed cable length (metres)."""

    def key(self, link: Link) -> Hashable:
        return "m"

    def cost(self, key: Hashable, length_m: float, link: Link) -> float:
        return length_m


class PowerCoster:
    """Placement objective: media power (W) of each link at its length, per ``media.select``."""

    def __init__(self, design: Design, catalog: Catalog) -> None:
        self.catalog = catalog
        self.ends = media.link_ends(design, catalog)

    def key(self, link: Link) -> Hashable:
        a, b = self.ends[link.id]
        return (link.rate_gbps, a.form_factor, a.ports_per_cage, b.form_factor, b.ports_per_cage)

    def cost(self, key: Hashable, length_m: float, link: Link) -> float:
        speed, a_ff, a_ppc, b_ff, b_ppc = cast(tuple[int, str, int, str, int], key)
        try:
            choice = media.select(
                self.catalog,
                speed_gbps=speed,
                a_form_factor=a_ff,
                b_form_factor=b_ff,
                length_m=length_m,
                a_ports_per_cage=a_ppc,
                b_ports_per_cage=b_ppc,
            )
        except InfeasibleError:
            return media.UNREACHABLE_USD
        return choice.power_w


def coster_for(design: Design, catalog: Catalog, objective: str) -> LinkCoster:
    if objective == "cost":
        return DesignCoster(design, catalog)
    if objective == "power":
        return PowerCoster(design, catalog)
    if objective == "length":
        return LengthCoster()
    raise SpecError(f"objective {objective!r} is not one of {', '.join(OBJECTIVES)}")
