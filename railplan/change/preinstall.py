"""What to install on day one so later phases only add: the choice per item class, priced.

For every phase but the last and every item class, two choices are set side by side:

- **spine and core switches** (with the ports they keep free for later phases): *pre-install*
  the upper tiers the final design needs for this phase's leaves (the phase cut from the final
  design), or *buy later*: plan the phase on its own, which is smaller now but re-cables when
  the next phase arrives (the moves are counted by ``change.align`` with their proved bound);
- **fibre plant** (trunks, panels, cassettes): pre-install all the final design's, or only what
  this phase's links ride;
- **network rack positions**: stand every network rack of the final layout now, or only those
  this phase fills (racks carry no catalog price: counted, not priced);
- **tray capacity**: the trays are sized for the final design's cables either way (railplan
  does not model tray fill); the share this phase lays is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.change.grow import PhasedGrowth
from railplan.design import Design
from railplan.physical.bom import bom

PLANT_KINDS = ("harness", "trunk", "panel", "cassette")


@dataclass(frozen=True, slots=True)
class Choice:
    """One item class of one phase: what pre-installing costs now, what buying later costs."""

    phase: str
    item: str
    pre_install: str
    pre_install_usd: float | None
    buy_later: str
    buy_later_usd: float | None
    #: installed cables the next phase must move or take out under each choice
    moves_pre_install: int
    moves_buy_later: int | None
    #: proved fewest moves under buy-later (None when not computed)
    moves_lower_bound: int | None = None


def _upper_cost(design: Design, catalog: Catalog) -> tuple[int, float, int]:
    """Spine and core switches, their price, and their ports no link uses (kept for later)."""
    upper = [s for s in design.switches if s.tier >= 2]
    used: dict[str, int] = {}
    for lk in design.links:
        for dev in (lk.a_device, lk.b_device):
            used[dev] = used.get(dev, 0) + 1
    free = sum(s.radix - used.get(s.id, 0) for s in upper)
    price = sum(catalog.switch(s.model).price_usd.value for s in upper)
    return len(upper), round(price, 2), free


def _plant_cost(design: Design, catalog: Catalog) -> float:
    lines = bom(design, catalog).lines
    return round(sum(ln.total_usd for ln in lines if ln.kind in PLANT_KINDS), 2)


def choices(
    phased: PhasedGrowth,
    catalog: Catalog,
    alone: dict[str, Design] | None = None,
    alone_moves: dict[str, tuple[int, int]] | None = None,
) -> list[Choice]:
    """The pre-install choices of every phase but the last.

    ``alone`` maps a phase name to that phase planned on its own (laid out) and
    ``alone_moves`` to (moves, lower bound) when it grows into the next phase; phases without
    them get the switch class without a buy-later figure.
    """
    out: list[Choice] = []
    final = phased.plan.final
    final_racks = sum(1 for r in final.racks if r.kind == "network")
    final_plant = _plant_cost(final, catalog)
    phases = phased.plan.phases
    for ph in phases[:-1]:
        d = ph.design
        n, price, free = _upper_cost(d, catalog)
        own = (alone or {}).get(ph.name)
        moves = (alone_moves or {}).get(ph.name)
        if own is not None:
            n2, price2, _ = _upper_cost(own, catalog)
            later = f"{n2} switches (phase sized alone)"
            later_usd: float | None = price2
        else:
            later, later_usd = "not computed", None
        out.append(
            Choice(
                ph.name,
                "spine and core switches",
                f"{n} switches, {free} ports free for later",
                price,
                later,
                later_usd,
                0,
                moves[0] if moves else None,
                moves[1] if moves else None,
            )
        )
        plant_now = _plant_cost(d, catalog)
        out.append(
            Choice(
                ph.name,
                "fibre plant (trunks, panels, cassettes)",
                "the final design's plant",
                final_plant,
                "this phase's links only",
                plant_now,
                0,
                0,
            )
        )
        racks_now = len(
            {p.rack for p in d.placements} & {r.id for r in final.racks if r.kind == "network"}
        )
        out.append(
            Choice(
                ph.name,
                "network rack positions",
                f"all {final_racks} network racks",
                None,
                f"{racks_now} network racks",
                None,
                0,
                0,
            )
        )
        out.append(
            Choice(
                ph.name,
                "tray capacity",
                f"sized for {len(final.cables)} cables",
                None,
                f"{len(d.cables)} cables now",
                None,
                0,
                0,
            )
        )
    return out


def phase_capex(design: Design, catalog: Catalog) -> float:
    """What installing ``design`` costs (its bill's total)."""
    return bom(design, catalog).totals.cost_usd
