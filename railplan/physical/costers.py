"""What a placement objective pays per link at a routed length: media cost, power or metres."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol, cast

import numpy as np

from railplan.catalog import LENGTH_EPS_M, Catalog
from railplan.design import Design, Link
from railplan.design.ends import every_end
from railplan.errors import InfeasibleError, SpecError
from railplan.physical import media
from railplan.physical.media_design import shape_of, structure
from railplan.physical.media_plans import Component, Plan, catalog_index, cheapest, plans_for

OBJECTIVES = ("cost", "power", "length")


class LinkCoster(Protocol):
    """Prices a link at a routed length: ``key`` groups links that price alike.

    ``costs(key, lengths_m)`` prices a whole array of lengths at once (what placement uses);
    ``cost`` is the same figure for one length.
    """

    def key(self, link: Link) -> Hashable: ...

    def cost(self, key: Hashable, length_m: float, link: Link) -> float: ...

    def costs(self, key: Hashable, lengths_m: np.ndarray) -> np.ndarray: ...


def breakpoints_m(plans: tuple[Plan, ...]) -> list[float]:
    """Lengths where the cheapest media can change: every stocked length and every reach.

    A part covers a routed length up to its next stocked length and a plan up to its reach
    (``Cable.stocked``, ``LENGTH_EPS_M``), so the cheapest price is a step function constant
    on ``(mark_i, mark_i+1]``: pricing each mark once prices every length.
    """
    marks = {
        s for p in plans for inst in p.instances for part in inst.parts for s in part.lengths_m
    }
    marks |= {p.reach_m for p in plans if np.isfinite(p.reach_m)}
    return sorted(marks)


class StepPrices:
    """A step function of length from its marks: the value at the first mark covering a length."""

    def __init__(self, marks: list[float], values: list[float], beyond: float) -> None:
        self.marks = np.asarray(marks, dtype=float)
        self.values = np.asarray([*values, beyond], dtype=float)
        self._starts = _starts(self.marks)

    def __call__(self, lengths_m: np.ndarray) -> np.ndarray:
        return self.values[self.index(lengths_m)]

    def index(self, lengths_m: np.ndarray) -> np.ndarray:
        """The step of each length: ``searchsorted(marks, lengths_m - LENGTH_EPS_M)``."""
        if self._starts is None:
            return np.searchsorted(self.marks, np.asarray(lengths_m, dtype=float) - LENGTH_EPS_M)
        return np.searchsorted(self._starts, np.asarray(lengths_m, dtype=float), side="right")


def _starts(marks: np.ndarray) -> np.ndarray | None:
    """For each mark m the least float length x with ``x - LENGTH_EPS_M > m`` (as rounded), so
    a length's step is a search of the lengths themselves, with no shifted copy of them; the
    float subtraction is monotone, so this counts exactly the marks it passes. None for marks
    that are not finite."""
    if not np.isfinite(marks).all():
        return None
    starts = np.empty(len(marks))
    for i, m in enumerate(marks.tolist()):
        x = m + LENGTH_EPS_M
        while x - LENGTH_EPS_M > m:
            x = np.nextafter(x, -np.inf)
        while not x - LENGTH_EPS_M > m:
            x = np.nextafter(x, np.inf)
        starts[i] = x
    return starts


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
        struct = structure(design, catalog)
        self._struct = struct
        self._links = design.links
        #: the shape of each distinct component; a link's key is its shape's index
        self.shapes: list[Component] = []
        #: the key of every run (the design's links, in order)
        self._run_key = [0] * len(struct.runs)
        number: dict[int, int] = {}  # the structure's shape number -> key
        for g, members in enumerate(struct.groups):
            k = number.get(struct.shape_ids[g])
            if k is None:
                comp = shape_of(struct, g)  # raises for a shape no part can take
                k = number[struct.shape_ids[g]] = len(self.shapes)
                self.shapes.append(comp)
            for i in members:
                self._run_key[i] = k
        self._key: dict[str, int] | None = None
        self._memo: dict[tuple[int, float], float] = {}
        self._steps: dict[int, StepPrices] = {}

    def key(self, link: Link) -> Hashable:
        if self._key is None:
            runs = self._struct.runs
            self._key = {run.link_id: self._run_key[i] for i, run in enumerate(runs)}
        return self._key[link.id]

    def keys(self, links: Sequence[Link]) -> list[Hashable]:
        """``key`` of every link, in one pass (the design's own links: as the runs hold them)."""
        if links is self._links:
            return list(self._run_key)
        return [self.key(link) for link in links]

    def cost(self, key: Hashable, length_m: float, link: Link | None = None) -> float:
        assert isinstance(key, int)
        comp = self.shapes[key]
        memo = (key, round(length_m, 6))
        hit = self._memo.get(memo)
        if hit is None:
            best = cheapest(plans_for(self._idx, comp), length_m, len(comp.runs))
            if best is None:
                hit = media.UNREACHABLE_USD
            else:
                hit = (best.power_w if self._power else best.cost_usd) / len(comp.runs)
            self._memo[memo] = hit
        return hit

    def costs(self, key: Hashable, lengths_m: np.ndarray) -> np.ndarray:
        return self.steps(key)(lengths_m)

    def steps(self, key: Hashable) -> StepPrices:
        """The price of ``key`` as a step function of length (what ``costs`` evaluates)."""
        assert isinstance(key, int)
        steps = self._steps.get(key)
        if steps is None:
            marks = breakpoints_m(plans_for(self._idx, self.shapes[key]))
            steps = StepPrices(marks, [self.cost(key, m) for m in marks], media.UNREACHABLE_USD)
            self._steps[key] = steps
        return steps

    def dearest_usd(self) -> float | None:
        """The highest price of any link quoted so far that some catalog part reaches (below
        ``media.UNREACHABLE_USD``, the price of a length nothing reaches); None before any."""
        quoted = [v for s in self._steps.values() for v in s.values.tolist()]
        reachable = [v for v in [*quoted, *self._memo.values()] if v < media.UNREACHABLE_USD]
        return max(reachable) if reachable else None


def dearest_usd(coster: LinkCoster) -> float | None:
    """``DesignCoster.dearest_usd`` of a design coster; None for any other coster."""
    return coster.dearest_usd() if isinstance(coster, DesignCoster) else None


class LengthCoster:
    """Placement objective: total routed cable length (metres)."""

    def key(self, link: Link) -> Hashable:
        return "m"

    def cost(self, key: Hashable, length_m: float, link: Link | None = None) -> float:
        return length_m

    def costs(self, key: Hashable, lengths_m: np.ndarray) -> np.ndarray:
        return np.asarray(lengths_m, dtype=float)


class PowerCoster:
    """Placement objective: media power (W) of each link at its length, per ``media.select``."""

    #: lengths are priced on this grid (catalog lengths and reaches lie on it), once per step
    GRID_M = 0.05

    def __init__(self, design: Design, catalog: Catalog) -> None:
        self.catalog = catalog
        self.ends = every_end(media.link_ends(design, catalog))  # read for every link
        self._memo: dict[tuple[Hashable, float], float] = {}

    def key(self, link: Link) -> Hashable:
        a, b = self.ends[link.id]
        return (link.rate_gbps, a.form_factor, a.ports_per_cage, b.form_factor, b.ports_per_cage)

    def cost(self, key: Hashable, length_m: float, link: Link | None = None) -> float:
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

    def costs(self, key: Hashable, lengths_m: np.ndarray) -> np.ndarray:
        # the first grid step covering a length within LENGTH_EPS_M, as Cable.stocked does
        steps = np.ceil((np.asarray(lengths_m) - LENGTH_EPS_M) / self.GRID_M - 1e-9)
        grid = np.round(np.maximum(steps, 0) * self.GRID_M, 3)
        values, inverse = np.unique(grid, return_inverse=True)
        out = np.empty(len(values))
        for i, q in enumerate(values.tolist()):
            hit = self._memo.get((key, q))
            if hit is None:
                hit = self._memo[(key, q)] = self.cost(key, q)
            out[i] = hit
        return out[inverse.reshape(np.shape(lengths_m))]


def coster_for(design: Design, catalog: Catalog, objective: str) -> LinkCoster:
    if objective == "cost":
        return DesignCoster(design, catalog)
    if objective == "power":
        return PowerCoster(design, catalog)
    if objective == "length":
        return LengthCoster()
    raise SpecError(f"objective {objective!r} is not one of {', '.join(OBJECTIVES)}")
