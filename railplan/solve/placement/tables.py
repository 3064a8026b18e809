"""Cable cost tables of a placement: each group in each rack, each pair of groups in two racks.

Built with array arithmetic over rack positions: one tray-run table per rack pair (the floor's
``tray_table_m``), links counted per (group, node end, price key) or (group pair, price key)
with ``np.unique``, and every length priced through the coster's ``costs`` (a step function
of length), never link by link.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.design.link_table import link_columns
from railplan.physical.costers import DesignCoster, LinkCoster
from railplan.physical.floor import Floor, node_slots, switch_units, tor_slots
from railplan.solve.placement.groups import Group, usable_units

CENTS = 100
#: cost entry of a rack a group may not use
UNUSED = 2**40
#: entries of one block of the length arrays: the fixed-cost pass makes several passes over a
#: block, ~2 MB of each array stays in cache between them (4M entries: ~25% slower at 131k)
BLOCK = 1 << 18
#: entries per run of a group's rows above which each run is summed alone (~1.5 us a call)
RUN_SUM_ENTRIES = 1 << 10


@dataclass
class CostTables:
    """Cable cost (integer cents) of every group in every network rack, and of group pairs.

    ``fixed[g, r]``: group g's links to nodes (and per-rack ToRs) with g in rack r, ``UNUSED``
    where r is not one of its candidate racks. Pair ``e`` joins groups ``pair_a[e]`` and
    ``pair_b[e]``: ``matrices[pair_m[e]][ra, rb]`` prices all their links with a in ra and b in
    rb (symmetric; pairs with the same bundle of links share one matrix). ``partners`` lists
    each group's (partner, matrix) pairs.
    """

    racks: list[str]
    ids: list[str]
    candidates: dict[str, list[int]]
    fixed: np.ndarray
    pair_a: np.ndarray
    pair_b: np.ndarray
    pair_m: np.ndarray
    matrices: np.ndarray
    partners: list[tuple[np.ndarray, np.ndarray]]
    #: matrix of each pair, by (a, b) with a < b
    pair_of: dict[tuple[int, int], int]

    @property
    def n_racks(self) -> int:
        return len(self.racks)

    @cached_property
    def partners_by_matrix(self) -> list[list[tuple[np.ndarray | slice, int]]]:
        """``partners`` split by matrix: each group's (partners, matrix) for every matrix its
        pairs use, so a move adds one matrix row to all of them (there are few matrices); an
        evenly stepped run of partners as a slice (a view: updated in place, no gather)."""
        out: list[list[tuple[np.ndarray | slice, int]]] = [[] for _ in self.partners]
        if not len(self.pair_a):
            return out
        me = np.r_[self.pair_a, self.pair_b]
        other = np.r_[self.pair_b, self.pair_a]
        mats = np.r_[self.pair_m, self.pair_m]
        order = np.lexsort((other, mats, me))
        me, other, mats = me[order], other[order], mats[order]
        # one run per (group, matrix), partners increasing; a run steps evenly when no step
        # inside it differs from the one before
        starts = np.flatnonzero(np.r_[True, (me[1:] != me[:-1]) | (mats[1:] != mats[:-1])])
        stops = np.r_[starts[1:], len(me)]
        steps = np.diff(other)
        turns = np.r_[0, np.cumsum(steps[1:] != steps[:-1])]  # turns[i]: changes up to step i
        for g, m, s, e in zip(
            me[starts].tolist(), mats[starts].tolist(), starts.tolist(), stops.tolist(), strict=True
        ):
            lo, hi = int(other[s]), int(other[e - 1])
            if e - s == 1:
                out[g].append((slice(lo, lo + 1), m))
            elif steps[s] > 0 and turns[e - 2] == turns[s]:
                out[g].append((slice(lo, hi + 1, int(steps[s])), m))
            else:
                out[g].append((other[s:e], m))
        return out


def as_slice(ids: np.ndarray) -> np.ndarray | slice:
    """``ids`` as a slice (a view when indexing) when they step up evenly (consecutive, or
    every k-th as a core's partners are), else as they are."""
    if len(ids) == 1:
        return slice(int(ids[0]), int(ids[0]) + 1)
    if len(ids):
        step = int(ids[1] - ids[0])
        if step > 0 and (np.diff(ids) == step).all():
            return slice(int(ids[0]), int(ids[-1]) + 1, step)
    return ids


def estimated_height_m(floor: Floor, groups: Sequence[Group]) -> float:
    """Port height assumed for a switch before its U is known: racks are stacked from the top,
    so the middle of an average rack's stack."""
    usable = usable_units(floor)
    fill = sum(g.units for g in groups) / max(1, len(floor.network_racks))
    return floor.port_height_m(max(1, round(usable - min(usable, fill) / 2)), 1)


def _cents(coster: LinkCoster, key: Hashable, lengths_m: np.ndarray, links: int = 1) -> np.ndarray:
    """What ``links`` links of ``key`` cost at each length, in integer cents."""
    if isinstance(coster, DesignCoster):
        # a step function: round its few values to cents (and times links) once, then look
        # each length's up
        steps = coster.steps(key)
        table = np.rint(steps.values * CENTS).astype(np.int64) * links
        return table.take(steps.index(lengths_m))  # take: ~1.5x the fancy-index gather
    cents = np.rint(coster.costs(key, lengths_m) * CENTS).astype(np.int64)
    if links != 1:
        cents *= links
    return cents


def _node_ends(
    design: Design, floor: Floor, catalog: Catalog
) -> tuple[dict[str, int], list[str], np.ndarray]:
    """An end id per node and per-rack ToR, the rack of each end id and its port height."""
    spots: dict[tuple[str, float], int] = {}
    end_of: dict[str, int] = {}
    for node, (rack, u) in node_slots(design, floor).items():
        spot = (rack, floor.port_height_m(u, floor.layout.node_height_u))
        end_of[node] = spots.setdefault(spot, len(spots))
    switches = design.switch_by_id()
    for sw_id, (rack, u) in tor_slots(design, floor, catalog).items():
        spot = (rack, floor.port_height_m(u, switch_units(switches[sw_id], catalog)))
        end_of[sw_id] = spots.setdefault(spot, len(spots))
    racks = [rack for rack, _ in spots]
    heights = np.array([h for _, h in spots], dtype=float)
    return end_of, racks, heights


def cost_tables(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    groups: Sequence[Group],
    coster: LinkCoster,
    candidates: dict[str, list[int]],
) -> CostTables:
    racks = list(floor.network_racks)
    n, n_groups = len(racks), len(groups)
    end_of, end_racks, end_heights = _node_ends(design, floor, catalog)
    node_rows, pair_rows, key_list = _link_rows(design, groups, end_of, coster)
    tray = floor.layout.trays.height_m
    h_sw = estimated_height_m(floor, groups)
    fixed = _fixed_costs(
        floor, coster, key_list, node_rows, end_racks, end_heights, racks, n_groups, tray, h_sw
    )
    lengths = floor.tray_table_m(racks, racks) + (2 * (tray - h_sw) + floor.layout.slack_m)
    np.fill_diagonal(lengths, floor.layout.slack_m)  # same rack: both at the assumed height
    pair_a, pair_b, pair_m, matrices = _pair_costs(coster, key_list, pair_rows, lengths, fixed)
    masks: dict[int, np.ndarray] = {}  # by the list's id: groups mostly share one list
    for i, g in enumerate(groups):
        allowed = candidates[g.id]
        mask = masks.get(id(allowed))
        if mask is None:
            mask = masks[id(allowed)] = np.full(n, True)
            mask[allowed] = False
        if mask.any():
            fixed[i, mask] = UNUSED
    return CostTables(
        racks=racks,
        ids=[g.id for g in groups],
        candidates=candidates,
        fixed=fixed,
        pair_a=pair_a,
        pair_b=pair_b,
        pair_m=pair_m,
        matrices=matrices,
        partners=_partner_lists(n_groups, pair_a, pair_b, pair_m),
        pair_of=dict(
            zip(zip(pair_a.tolist(), pair_b.tolist(), strict=True), pair_m.tolist(), strict=True)
        ),
    )


def _link_rows(
    design: Design, groups: Sequence[Group], end_of: dict[str, int], coster: LinkCoster
) -> tuple[np.ndarray, np.ndarray, list[Hashable]]:
    """Links counted by (group, node end, key) and by (group, group, key), and the keys.

    Array lookups over the links' columns; the counting sorts int codes (``_counted``).
    """
    ids = [n.id for n in design.nodes] + [d.id for d in design.devices]
    devices = {dev: i for i, dev in enumerate(ids + [s.id for s in design.switches])}
    group_of = np.full(len(devices), -1, dtype=np.int64)
    for i, g in enumerate(groups):
        group_of[[devices[m] for m in g.members]] = i
    end_ix = np.full(len(devices), -1, dtype=np.int64)
    for dev, e in end_of.items():
        end_ix[devices[dev]] = e
    links = design.links
    # the links' device columns (read once per design; the coster has them already), each
    # of their devices renumbered as here
    columns = link_columns(links)
    renumber = np.fromiter(map(devices.__getitem__, columns.devices), np.int64)
    a, b = renumber[columns.a_device], renumber[columns.b_device]
    bulk = getattr(coster, "keys", None)  # a coster may key every link in one pass
    per_link = bulk(links) if bulk is not None else [coster.key(lk) for lk in links]
    ints = np.array(per_link) if per_link and type(per_link[0]) is int else None
    if ints is not None and ints.ndim == 1 and ints.dtype.kind in "iu":
        values, inverse = np.unique(ints, return_inverse=True)
        keys: dict[Hashable, int] = {int(v): i for i, v in enumerate(values.tolist())}
        k = inverse.astype(np.int64).reshape(-1)
    else:
        keys = {}
        k = np.array([keys.setdefault(x, len(keys)) for x in per_link], dtype=np.int64)
    ga, gb = group_of[a], group_of[b]
    to_node = (ga < 0) != (gb < 0)
    group = np.where(ga >= 0, ga, gb)[to_node]
    end = np.where(ga >= 0, end_ix[b], end_ix[a])[to_node]
    node_rows = np.stack([group, end, k[to_node]], axis=1)
    both = (ga >= 0) & (gb >= 0)
    lo, hi = np.minimum(ga, gb)[both], np.maximum(ga, gb)[both]
    pair_rows = np.stack([lo, hi, k[both]], axis=1)
    return node_rows, pair_rows, list(keys)


def _counted(rows: np.ndarray, sizes: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows (sorted) of three small non-negative ints, and how often each occurs."""
    if not len(rows):
        return rows.reshape(0, 3), np.zeros(0, dtype=np.int64)
    _, n1, n2 = sizes
    code = (rows[:, 0] * n1 + rows[:, 1]) * n2 + rows[:, 2]
    # np.unique's sort, but stable: the links come in runs already in order, which it
    # merges instead of sorting afresh (~5x at 131k)
    code.sort(kind="stable")
    first = np.r_[True, code[1:] != code[:-1]]
    codes, counts = code[first], np.diff(np.r_[np.flatnonzero(first), len(code)])
    out = np.stack([codes // (n1 * n2), (codes // n2) % n1, codes % n2], axis=1)
    return out, counts


def _fixed_costs(
    floor: Floor,
    coster: LinkCoster,
    keys: list[Hashable],
    node_rows: np.ndarray,
    end_racks: list[str],
    end_heights: np.ndarray,
    racks: list[str],
    n_groups: int,
    tray: float,
    h_sw: float,
) -> np.ndarray:
    """Each group's links to node-side ends, priced with the group in every network rack."""
    n = len(racks)
    fixed = np.zeros((n_groups, n), dtype=np.int64)
    if not len(node_rows):
        return fixed
    if (node_rows[:, 1] < 0).any():
        raise ValueError("a link joins a placed switch to a device that is neither node nor ToR")
    rows, counts = _counted(node_rows, (n_groups, len(end_racks), len(keys)))
    rows, counts, same = _alike_groups(rows, counts)
    ends = np.unique(rows[:, 1])
    spot_racks = sorted({end_racks[e] for e in ends.tolist()})
    runs = floor.tray_table_m(spot_racks, racks)
    run_row = {r: i for i, r in enumerate(spot_racks)}
    end_row = np.zeros(len(end_racks), dtype=np.intp)
    for e in ends.tolist():
        end_row[e] = run_row[end_racks[e]]
    lift = (tray - h_sw) + floor.layout.slack_m
    step = max(1, BLOCK // max(1, n))
    for start in range(0, len(rows), step):
        block, c = rows[start : start + step], counts[start : start + step]
        lengths = runs.take(end_row[block[:, 1]], axis=0).astype(float, copy=False)
        lengths += ((tray - end_heights[block[:, 1]]) + lift)[:, None]
        kinds = np.unique(block[:, 2]).tolist()
        if len(kinds) == 1 and (c == c[0]).all():  # one key, as many links to every end
            cents = _cents(coster, keys[kinds[0]], lengths, int(c[0]))
        elif len(kinds) == 1:
            cents = _cents(coster, keys[kinds[0]], lengths)
            cents *= c[:, None]
        else:
            cents = np.empty(lengths.shape, dtype=np.int64)
            for k in kinds:
                sel = block[:, 2] == k
                cents[sel] = _cents(coster, keys[k], lengths[sel])
            cents *= c[:, None]
        # rows are sorted by group: sum each group's run of rows
        starts = np.flatnonzero(np.r_[True, block[1:, 0] != block[:-1, 0]])
        if len(starts) * RUN_SUM_ENTRIES <= cents.size:
            # long runs: one sum each (add.reduceat down the rows costs ~2 ns an entry)
            stops = [*starts[1:].tolist(), len(block)]
            for g, s, e in zip(block[starts, 0].tolist(), starts.tolist(), stops, strict=True):
                fixed[g] += cents[s:e].sum(axis=0)
        else:
            fixed[block[starts, 0]] += np.add.reduceat(cents, starts, axis=0)
    if len(same):
        fixed[same[:, 0]] = fixed[same[:, 1]]
    return fixed


def _alike_groups(
    rows: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of groups whose links to node-side ends are unlike any earlier group's, and
    (group, earlier group with the same ends, keys and counts) for the others, whose fixed
    costs are then the same integers (every rail's leaf of one SU reaches the same nodes)."""
    starts = np.flatnonzero(np.r_[True, rows[1:, 0] != rows[:-1, 0]])
    stops = [*starts[1:].tolist(), len(rows)]
    first: dict[bytes, int] = {}
    keep = np.zeros(len(rows), dtype=bool)
    same: list[tuple[int, int]] = []
    tail, c = np.ascontiguousarray(rows[:, 1:]), np.ascontiguousarray(counts)
    for g, s, e in zip(rows[starts, 0].tolist(), starts.tolist(), stops, strict=True):
        rep = first.setdefault(tail[s:e].tobytes() + c[s:e].tobytes(), g)
        if rep == g:
            keep[s:e] = True
        else:
            same.append((g, rep))
    return rows[keep], counts[keep], np.array(same, dtype=np.intp).reshape(-1, 2)


def _pair_costs(
    coster: LinkCoster,
    keys: list[Hashable],
    pair_rows: np.ndarray,
    lengths: np.ndarray,
    fixed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One matrix per distinct bundle of links between two groups; links within one group
    (both ends in its rack) go to its fixed costs."""
    n = lengths.shape[0]
    empty = np.zeros(0, dtype=np.intp)
    if not len(pair_rows):
        return empty, empty, empty, np.zeros((0, n, n), dtype=np.int64)
    n_groups = fixed.shape[0]
    rows, counts = _counted(pair_rows, (n_groups, n_groups, len(keys)))
    new_pair = np.r_[True, np.any(rows[1:, :2] != rows[:-1, :2], axis=1)]
    pair_a, pair_b = rows[new_pair, 0], rows[new_pair, 1]
    # each pair's bundle: its links of each key (a row per pair, a column per key); the
    # distinct bundles numbered in the order they first occur
    bundle = np.zeros((len(pair_a), len(keys)), dtype=np.int64)
    bundle[np.cumsum(new_pair) - 1, rows[:, 2]] = counts
    distinct, first, inverse = np.unique(bundle, axis=0, return_index=True, return_inverse=True)
    by_first = np.argsort(first)
    number = np.empty(len(first), dtype=np.intp)
    number[by_first] = np.arange(len(first))
    pair_m = number[inverse.reshape(-1)]
    per_key: dict[int, np.ndarray] = {}
    matrices: list[np.ndarray] = []
    for links in distinct[by_first].tolist():
        matrix = np.zeros((n, n), dtype=np.int64)
        for k, c in enumerate(links):
            if c:
                if k not in per_key:
                    per_key[k] = _cents(coster, keys[k], lengths)
                matrix += c * per_key[k]
        matrices.append(matrix)
    within = pair_a == pair_b
    if within.any():
        diagonals = np.stack([np.diagonal(m) for m in matrices])
        np.add.at(fixed, pair_a[within], diagonals[pair_m[within]])
    apart = ~within
    return (
        pair_a[apart].astype(np.intp),
        pair_b[apart].astype(np.intp),
        pair_m[apart],
        np.stack(matrices),
    )


def _partner_lists(
    n_groups: int, pair_a: np.ndarray, pair_b: np.ndarray, pair_m: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each group's partners and the matrix of each pair, in partner order."""
    me = np.r_[pair_a, pair_b]
    other = np.r_[pair_b, pair_a]
    mats = np.r_[pair_m, pair_m]
    order = np.lexsort((other, me))
    me, other, mats = me[order], other[order], mats[order]
    bounds = np.searchsorted(me, np.arange(n_groups + 1))
    return [
        (other[bounds[g] : bounds[g + 1]], mats[bounds[g] : bounds[g + 1]]) for g in range(n_groups)
    ]


def placement_cost(tables: CostTables, at: np.ndarray) -> int:
    """Estimated cable cost (cents) of a complete group placement (rack index per group)."""
    total = int(tables.fixed[np.arange(len(at)), at].sum())
    if len(tables.pair_m):
        total += int(tables.matrices[tables.pair_m, at[tables.pair_a], at[tables.pair_b]].sum())
    return total


def cost_rows(tables: CostTables, at: np.ndarray) -> np.ndarray:
    """``rows[g, r]``: what group g costs in rack r given where every placed partner is
    (``at[p] < 0``: not placed, costs nothing yet); links to nodes included."""
    rows = tables.fixed.astype(np.float64)
    n_groups, n = rows.shape
    for m in range(len(tables.matrices)):
        sel = tables.pair_m == m
        counts = np.zeros((n_groups, n))
        placed_any = False
        for mine, theirs in ((tables.pair_a[sel], tables.pair_b[sel]),
                             (tables.pair_b[sel], tables.pair_a[sel])):  # fmt: skip
            placed = at[theirs] >= 0
            np.add.at(counts, (mine[placed], at[theirs[placed]]), 1.0)
            placed_any |= bool(placed.any())
        # exact: every entry is an integer number of cents far below 2**53 (and with no
        # partner placed the product is all zeros: the empty state skips it)
        if placed_any:
            rows += counts @ tables.matrices[m].astype(np.float64)
    return np.rint(rows).astype(np.int64)
