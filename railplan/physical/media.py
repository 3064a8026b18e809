"""Media per cable: the cheapest catalog cable and optics whose reach covers the routed length.

Three calls, from cheap to exact:

- ``select(catalog, speed_gbps=, a_form_factor=, b_form_factor=, length_m=, ...)`` prices one
  link in the usual context of its cages (a twin-port cage full, its links to other cages);
- ``cost_table`` / ``cost_steps`` give that price as a function of length (placement);
- ``assign_design(design, catalog, lengths)`` (or ``assign_cages(catalog, runs)``) decides the
  media of every link at once, cage by cage. Links tied together by multi-port cages (a
  twin-port OSFP carries two links) form one *component* and get one decision: the same
  optical interface, so the same fibre type, on every link of a twin-port module (mixed types
  are refused), one module per cage, and every cable of the component at its longest routed
  length, rounded up to a stocked length (NVIDIA: both fibres of a twin-port module should be
  about the same length). Use ``MediaChoice.stocked_length_m`` as the cable's length.

Options a component can take (every catalog part that fits is priced; the cheapest wins, ties
go to DAC, ACC, AEC, AOC, fibre in that order, then by id):

- a straight built-in cable (DAC/ACC/AEC/AOC) when its links all run between the same two
  cages, slot for slot (one link between single-port cages, or two parallel links between two
  twin-port cages); straight copper is lane-transparent downward: a 2 x 400G twin-port DAC
  carries 2 x 400G or 4 x 200G, but never a link faster than its ``speed_gbps`` (no 1 x 800G);
- a 1:N splitter cable when one N-port cage fans out to N single-port cages;
- optics: a module per cage (ports = the cage's ports, same interface at both ends of a link),
  a straight fibre cord per connector pair, or a 1:N splitter fibre where one connector carries
  N ports and each far module one;
- optics through the fibre plant (``plant_plans``): a breakout harness from each module to a
  patch panel in its rack and a trunk position or patch cord between the panels, where both
  ends fan out (no cord joins the modules) or where it is cheaper.

Only parts that list the link's protocol and are qualified for the equipment at their ends
(a part naming a vendor goes only into that vendor's cages) are billed.

Costs and power are per link: a module serving two links counts half on each, a splitter
cable serving two links half on each.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from railplan.catalog import Catalog
from railplan.design.ends import CageEnd, link_ends
from railplan.errors import InfeasibleError
from railplan.physical.media_assign import (
    FIX_HINT,
    Assignment,
    LinkRun,
    assign_cages,
    check_length,
    component_shape,
    components,
    describe,
    design_runs,
    unreachable,
)
from railplan.physical.media_design import assign_design
from railplan.physical.media_plans import (
    Component,
    MediaChoice,
    Plan,
    catalog_index,
    cheapest,
    per_link_choices,
    plans_for,
)

#: cost a placement objective sees for a link nothing in the catalog reaches at that length
UNREACHABLE_USD = 10_000_000.0

__all__ = [
    "FIX_HINT",
    "Assignment",
    "CageEnd",
    "LinkRun",
    "MediaChoice",
    "assign_cages",
    "assign_design",
    "component_shape",
    "components",
    "design_runs",
    "link_ends",
]


# -- one link in its usual context ------------------------------------------------------------


def _typical(
    speed: int,
    a_ff: str,
    a_ppc: int,
    b_ff: str,
    b_ppc: int,
    breakout: int,
    parallel: bool,
    protocol: str = "",
) -> Component:
    """The component a link usually sits in, given its cages (run 0 is the link asked about)."""
    if a_ppc < 1 or b_ppc < 1:
        raise InfeasibleError("ports per cage must be at least 1")
    big, small = max(a_ppc, b_ppc), min(a_ppc, b_ppc)
    fits = {1, big // small} if big % small == 0 else {1}
    if breakout not in fits:
        raise InfeasibleError(
            f"breakout {breakout} does not fit cages of {a_ppc} and {b_ppc} ports; use "
            + " or ".join(str(f) for f in sorted(fits))
        )
    if breakout > 1:  # the cage's links fan out to separate cages
        parallel = False
    if a_ppc == 1 and b_ppc == 1:
        return Component(speed, ((a_ff, 1), (b_ff, 1)), ((0, 0, 1, 0),), protocol=protocol)
    if a_ppc == b_ppc and parallel:
        runs = tuple((0, s, 1, s) for s in range(a_ppc))
        return Component(speed, ((a_ff, a_ppc), (b_ff, b_ppc)), runs, protocol=protocol)
    if b_ppc == 1:  # a end fans out to single-port cages
        cages = ((a_ff, a_ppc), *tuple((b_ff, 1) for _ in range(a_ppc)))
        return Component(
            speed, cages, tuple((0, s, 1 + s, 0) for s in range(a_ppc)), protocol=protocol
        )
    if a_ppc == 1:
        cages = ((b_ff, b_ppc), *tuple((a_ff, 1) for _ in range(b_ppc)))
        runs = tuple((1 + s, 0, 0, s) for s in range(b_ppc))
        return Component(speed, cages, runs, protocol=protocol)
    # grid: b_ppc a-cages each with a_ppc links, one to each of a_ppc b-cages
    cages = tuple((a_ff, a_ppc) for _ in range(b_ppc)) + tuple((b_ff, b_ppc) for _ in range(a_ppc))
    runs = tuple((i, j, b_ppc + j, i) for i in range(b_ppc) for j in range(a_ppc))
    return Component(speed, cages, runs, protocol=protocol)


def select(
    catalog: Catalog,
    *,
    speed_gbps: int,
    a_form_factor: str,
    b_form_factor: str,
    length_m: float,
    a_ports_per_cage: int = 1,
    b_ports_per_cage: int = 1,
    breakout: int = 1,
    parallel: bool = False,
    protocol: str = "",
) -> MediaChoice:
    """The cheapest media for one link of ``length_m`` (routed), per link.

    Cages with several ports are assumed full: a twin-port cage facing single-port cages fans
    out (splitter cable or a twin-port module with a fibre per link); two multi-port cages face
    each other with a module each and a fibre per link, unless ``parallel`` says every link on
    them runs between the same two cages (then one twin-port cable may carry them). ``breakout``
    is inferred from the cages; 1 or their port ratio are accepted. Raises InfeasibleError
    naming the length when nothing reaches it.
    """
    check_length(length_m)
    comp, plans, what = _class_plans(
        catalog,
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
        protocol,
    )
    best = cheapest(plans, length_m, len(comp.runs))
    if best is None:
        raise InfeasibleError(unreachable(plans, length_m, what))
    return per_link_choices(comp, best)[0]


def _class_plans(
    catalog: Catalog,
    speed_gbps: int,
    a_form_factor: str,
    a_ports_per_cage: int,
    b_form_factor: str,
    b_ports_per_cage: int,
    breakout: int,
    parallel: bool,
    protocol: str = "",
) -> tuple[Component, tuple[Plan, ...], str]:
    """One link class: its typical component, every way to cable it, and how to name it."""
    comp = _typical(
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
        protocol,
    )
    what = describe(speed_gbps, a_form_factor, a_ports_per_cage, b_form_factor, b_ports_per_cage)
    return comp, plans_for(catalog_index(catalog), comp), what


def cost_table(
    catalog: Catalog,
    *,
    speed_gbps: int,
    a_form_factor: str,
    b_form_factor: str,
    lengths_m: Iterable[float],
    a_ports_per_cage: int = 1,
    b_ports_per_cage: int = 1,
    breakout: int = 1,
    parallel: bool = False,
    protocol: str = "",
) -> list[float]:
    """Per-link cost at each length (``math.inf`` where nothing reaches), as ``select`` prices it."""
    comp, plans, what = _class_plans(
        catalog,
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
        protocol,
    )
    if not plans:
        raise InfeasibleError(unreachable(plans, 0.0, what))
    out = []
    for length in lengths_m:
        best = cheapest(plans, length, len(comp.runs))
        out.append(per_link_choices(comp, best)[0].cost_usd if best else math.inf)
    return out


def cost_steps(
    catalog: Catalog,
    *,
    speed_gbps: int,
    a_form_factor: str,
    b_form_factor: str,
    a_ports_per_cage: int = 1,
    b_ports_per_cage: int = 1,
    breakout: int = 1,
    parallel: bool = False,
    protocol: str = "",
) -> list[tuple[float, float]]:
    """Per-link cost as a step function: ``[(up_to_length_m, cost_usd), ...]``, increasing.

    A link of length L costs the first step whose length is >= L; past the last step nothing
    in the catalog reaches.
    """
    comp, plans, _ = _class_plans(
        catalog,
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
        protocol,
    )
    marks = sorted(
        {s for p in plans for inst in p.instances for part in inst.parts for s in part.lengths_m}
        | {s for p in plans if p.plant for c in p.plant.carriages for s in c.lengths_m}
        | {p.reach_m for p in plans if math.isfinite(p.reach_m)}
    )
    steps: list[tuple[float, float]] = []
    for mark in marks:
        best = cheapest(plans, mark, len(comp.runs))
        if best is None:
            continue
        cost = per_link_choices(comp, best)[0].cost_usd
        if steps and math.isclose(steps[-1][1], cost):
            steps[-1] = (mark, cost)
        else:
            steps.append((mark, cost))
    return steps
