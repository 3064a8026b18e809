"""A design's links tied by shared multi-port cages, and each group's shape, over arrays.

``components`` and ``component_shape`` (``media_assign``) walk runs one by one; at 393,216
links that walk is most of the cage structure's time. Here the groups are the connected
components of the graph of links and multi-port cages (scipy's ``connected_components``, for
designs large enough to repay its import),
and a group's shape is computed once per distinct *signature*: the numbers a shape is made of
(speed, protocol, each cage's shape in order of first appearance, each link's cages and slots).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from railplan.array_groups import group_numbers, numbers_of, sort_groups, string_codes
from railplan.design.link_table import LinkTable
from railplan.errors import InfeasibleError
from railplan.physical.media_assign import LinkRun, component_shape, components, run_columns
from railplan.physical.media_types import Component

#: links from which ``cage_groups`` asks scipy (whose import costs a quarter of a second and
#: 20 MB: more than the walk takes below this)
SCIPY_FROM_LINKS = 20_000


def cage_groups(table: LinkTable, runs: Sequence[LinkRun]) -> list[tuple[int, ...]]:
    """The rows tied together by sharing a multi-port cage, in order of their first row, each
    in row order: what ``media_assign.components`` gives for the table's ``runs`` (which it
    walks for a design of fewer than ``SCIPY_FROM_LINKS`` links)."""
    n = len(table)
    if n < SCIPY_FROM_LINKS:
        return [tuple(m) for m in components(runs)]
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rows = np.concatenate((np.arange(n), np.arange(n)))
    keys = np.concatenate((table.a.cage_key, table.b.cage_key))
    multi = np.concatenate((table.a.ports_per_cage > 1, table.b.ports_per_cage > 1))
    rows, keys = rows[multi], keys[multi]
    cage = group_numbers(keys)
    size = n + (int(cage.max()) + 1 if len(cage) else 0)
    graph = coo_matrix((np.ones(len(rows), np.int8), (rows, n + cage)), shape=(size, size))
    _, label = connected_components(graph.tocsr(), directed=False)
    label = label[:n]
    by_label, starts = sort_groups(label)  # rows of a group together, in row order
    ends = np.r_[starts[1:], n]
    members = by_label.tolist()
    by_first = np.argsort(by_label[starts])  # groups in order of their first row
    return [
        tuple(members[s:e])
        for s, e in zip(starts[by_first].tolist(), ends[by_first].tolist(), strict=True)
    ]


def group_shapes(
    table: LinkTable, runs: Sequence[LinkRun], groups: Sequence[tuple[int, ...]]
) -> list[Component | InfeasibleError]:
    """``component_shape(runs, members, "")`` of every group (or the error it raises), worked
    out once per signature; groups of one signature share the shape object."""
    if not groups:
        return []
    n = len(table)
    size = np.fromiter(map(len, groups), np.int64, len(groups))
    member = np.fromiter((i for g in groups for i in g), np.int64, n)
    group = np.repeat(np.arange(len(groups)), size)
    # ends in the order a shape meets them: a then b of each member, member by member
    key = np.empty(2 * n, np.int64)
    key[0::2], key[1::2] = table.a.cage_key[member], table.b.cage_key[member]
    shape = np.empty(2 * n, np.int64)
    shape[0::2], shape[1::2] = table.a.shape[member], table.b.shape[member]
    end_group = np.repeat(group, 2)
    # a cage's number in its group: the rank of its first end among the group's cages
    by_cage, starts = sort_groups(end_group, key)
    cage_of_end = numbers_of(by_cage, starts)
    first_end = by_cage[starts]  # each cage's first end, cages by (group, key)
    cage_group = end_group[first_end]
    by_first, _ = sort_groups(cage_group, first_end)
    cages = np.bincount(cage_group, minlength=len(groups))
    cage_start = np.cumsum(cages) - cages
    local = np.empty(len(first_end), np.int64)
    local[by_first] = np.arange(len(first_end)) - cage_start[cage_group[by_first]]
    end_local = local[cage_of_end]
    slot = np.empty(2 * n, np.int64)
    slot[0::2], slot[1::2] = table.a.slot[member], table.b.slot[member]
    speeds, protocols = run_columns(runs)
    speed = np.asarray(speeds, np.int64)[member]
    protocol = string_codes(protocols)[member]
    # per group: members, cages, lowest and highest speed, lowest and highest protocol; the
    # cages' shapes in their order; each member's (a cage, a slot, b cage, b slot)
    firsts = np.cumsum(size) - size
    head = np.stack(
        (
            size,
            cages,
            np.minimum.reduceat(speed, firsts),
            np.maximum.reduceat(speed, firsts),
            np.minimum.reduceat(protocol, firsts),
            np.maximum.reduceat(protocol, firsts),
        ),
        axis=1,
    )
    width = 6 + cages + 4 * size
    offset = np.cumsum(width) - width
    flat = np.empty(int(width.sum()), np.int64)
    flat[(offset[:, None] + np.arange(6)).ravel()] = head.ravel()
    flat[offset[cage_group] + 6 + local] = shape[first_end]
    place = np.arange(n) - np.repeat(firsts, size)
    at = offset[group] + 6 + cages[group] + 4 * place
    flat[at], flat[at + 1] = end_local[0::2], slot[0::2]
    flat[at + 2], flat[at + 3] = end_local[1::2], slot[1::2]
    data = flat.tobytes()
    bounds = (np.r_[offset, len(flat)] * 8).tolist()
    seen: dict[bytes, Component | InfeasibleError] = {}
    out: list[Component | InfeasibleError] = []
    for g, members in enumerate(groups):
        sig = data[bounds[g] : bounds[g + 1]]
        hit = seen.get(sig)
        if hit is None or isinstance(hit, InfeasibleError):  # an error names its own links
            try:
                hit = component_shape(runs, members, "")
            except InfeasibleError as exc:
                hit = exc
            seen[sig] = hit
        out.append(hit)
    return out
