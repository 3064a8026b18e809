"""Whether every cable of a design keeps the cable rules, decided over arrays of the cables.

``cables._check_cables`` walks the cables one by one and says what is wrong; at 393,216 cables
that walk is seconds of Python for a design that is almost always sound. ``sound`` asks the
walk's questions of every cable at once: its link known, its length a length, the length
within the limit of its *kind* (parts, protocol, plant or not, the shapes of its two cages:
``limit`` is worked out once per kind, as the walk does), and one module named per cage. Only
when it cannot say yes does the walk run, to name what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from operator import attrgetter

import numpy as np

from railplan.array_groups import numbers_of, sort_groups, string_codes
from railplan.catalog import Catalog
from railplan.design import Design
from railplan.design.cable_rows import cable_rows
from railplan.design.ends import LinkProtocols, protocol_column
from railplan.design.link_table import link_table

_LENGTH, _MEDIA = attrgetter("length_m"), attrgetter("media")
_NAMES = (attrgetter("transceiver_a"), attrgetter("transceiver_b"))


def sound(
    design: Design,
    catalog: Catalog,
    protocols: Mapping[str, str],
    plant_links: Collection[str],
    limit: Callable[[int], float],
) -> bool:
    """True when the walk would find no cable breaking a rule of its own and no cage given two
    modules; False when it might (then walk). ``limit(i)`` is the length up to which cable
    ``design.cables[i]`` and every cable of its kind break no rule (``_clean_up_to``)."""
    cables = design.cables
    n = len(cables)
    table = link_table(design, catalog)
    rows = cable_rows(design, catalog)
    if n and rows.min() < 0:
        return False  # a cable of an unknown link
    length = np.fromiter(map(_LENGTH, cables), float, n)
    if not ((length > 0) & (length < 1e6)).all():
        return False
    values = list(map(_MEDIA, cables)) + list(map(_NAMES[0], cables)) + list(map(_NAMES[1], cables))
    code_of = {v: i for i, v in enumerate(sorted(set(values)))}
    code = np.fromiter(map(code_of.__getitem__, values), np.int64, 3 * n)
    by_row = (  # the protocol of each row, as a number
        protocols.codes
        if isinstance(protocols, LinkProtocols) and len(table.row) == len(table.ids)
        else string_codes(protocol_column(protocols, table.ids))
    )
    plant = np.zeros(n, np.int64)
    if plant_links:  # a cable's link is in the plant when its row is a plant link's
        in_plant = np.zeros(len(table), np.int64)
        known = [r for r in map(table.row.get, plant_links) if r is not None]
        in_plant[np.array(known, np.int64)] = 1
        plant = in_plant[rows]
    kinds = (
        code[:n],
        code[n : 2 * n],
        code[2 * n :],
        by_row[rows],
        plant,
        table.a.shape[rows],
        table.b.shape[rows],
    )
    order, starts = sort_groups(*kinds)
    kind = numbers_of(order, starts)
    limits = np.array([limit(int(i)) for i in order[starts].tolist()], float)
    if not (length <= limits[kind]).all():
        return False
    # one module per cage: the ends that name one, grouped by cage, name the same
    key = np.concatenate((table.a.cage_key[rows], table.b.cage_key[rows]))
    named = np.concatenate((code[n : 2 * n], code[2 * n :]))
    keep = named != code_of.get("", -1)
    key, named = key[keep], named[keep]
    by_cage = np.lexsort((named, key))
    same_cage = key[by_cage][1:] == key[by_cage][:-1]
    return not (same_cage & (named[by_cage][1:] != named[by_cage][:-1])).any()
