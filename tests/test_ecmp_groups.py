"""The bulk equal-cost groups (traffic/ecmp_groups.py) against a switch-by-switch reference:
the same distances, groups, numbering and members on every family, intact and failed."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

from railplan.design import Design
from railplan.pipeline.plan import plan
from railplan.spec import spec_from_dict
from railplan.traffic import ecmp_groups
from railplan.traffic.ecmp_groups import UNREACHABLE, equal_cost_groups, leaf_distances
from railplan.traffic.failures import fail
from railplan.traffic.index import FabricIndex

CASES = (
    ("roft", 512, "hgx-h100-8x400g", "cx732q-n", 1),
    ("roft", 2048, "hgx-h100-8x400g", "cx732q-n", 1),  # 3 tiers
    ("roft", 1024, "dgx-h100", "qm9700", 2),
    ("fat-tree", 1024, "dgx-h100", "qm9700", 1),
    ("rail-only", 512, "dgx-h100", "sn5600", 1),
    ("matrix", 1024, "dgx-h100", "cx864e-n", 1),
    ("single-switch", 64, "dgx-h100", "qm9700", 1),
)


@cache
def planned(topology: str, gpus: int, node: str, switch: str, planes: int) -> Design:
    spec = {
        "cluster": {"gpus": gpus, "node": node},
        "fabric": {"topology": topology, "switches": [switch], "planes": planes},
    }
    return plan(spec_from_dict(spec))


def reference(ix: FabricIndex) -> tuple[np.ndarray, ...]:
    """The groups switch by switch: one breadth-first search per leaf, each switch's next-hop
    sets numbered in byte order, members the bundles interleaved link by link."""
    sw = np.nonzero(ix.dl_from[0::2] >= 0)[0]
    a, b = ix.dl_from[2 * sw], ix.dl_to[2 * sw]
    graph = coo_matrix((np.ones(sw.size), (a, b)), shape=(ix.n_switches,) * 2).tocsr()
    d = shortest_path(graph, directed=False, unweighted=True, indices=ix.col_leaf)
    d[~np.isfinite(d)] = UNREACHABLE
    dist = d.T.astype(np.int16)
    out = np.concatenate([2 * sw, 2 * sw + 1])
    group_of = np.full(dist.shape, -1, dtype=np.int32)
    start, size, nbrs, members = [], [], [], []
    for s in range(ix.n_switches):
        mine = sorted((int(ix.dl_to[dl]), int(dl)) for dl in out if ix.dl_from[dl] == s)
        neighbours = sorted({t for t, _ in mine})
        bundle = {t: [dl for u, dl in mine if u == t] for t in neighbours}
        sets: dict[bytes, list[int]] = {}
        for c in range(dist.shape[1]):
            ds = int(dist[s, c])
            if not 0 < ds < UNREACHABLE:
                continue
            hit = [int(dist[t, c]) == ds - 1 for t in neighbours]
            if any(hit):
                sets.setdefault(np.packbits(hit).tobytes(), []).append(c)
        for key in sorted(sets):
            bits = np.unpackbits(np.frombuffer(key, np.uint8))[: len(neighbours)]
            chosen = [t for t, h in zip(neighbours, bits, strict=True) if h]
            width = max(len(bundle[t]) for t in chosen)
            seq = [bundle[t][r] for r in range(width) for t in chosen if r < len(bundle[t])]
            group_of[s, sets[key]] = len(start)
            start.append(sum(size))
            size.append(len(seq))
            nbrs.append(len(chosen))
            members.extend(seq)
    as64 = [np.asarray(x, dtype=np.int64) for x in (start, size, nbrs, members)]
    return (dist, group_of, *as64)


def bulk(ix: FabricIndex) -> tuple[np.ndarray, ...]:
    return (ix.dist, ix.group_of, ix.g_start, ix.g_size, ix.g_nbrs, ix.g_members)


def same(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...]) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[4]}p")
def test_groups_match_the_reference(case: tuple[str, int, str, str, int]) -> None:
    ix = FabricIndex(planned(*case))
    assert ix.g_size.size > 0 or case[0] in ("single-switch", "rail-only")
    same(bulk(ix), reference(ix))


@settings(max_examples=25, deadline=None)
@given(
    case=st.sampled_from(CASES[:6]), seed=st.integers(0, 2**32 - 1), k=st.sampled_from([1, 3, 12])
)
def test_groups_match_the_reference_after_failures(
    case: tuple[str, int, str, str, int], seed: int, k: int
) -> None:
    """Failed switches and links break twin classes and leave lonely leaves: still the same."""
    design = planned(*case)
    rng = np.random.default_rng(seed)
    ids = [s.id for s in design.switches] + [lk.id for lk in design.links if lk.kind != "node-leaf"]
    broken, _ = fail(design, [ids[i] for i in rng.choice(len(ids), min(k, len(ids)), False)])
    ix = FabricIndex(broken, design)
    same(bulk(ix), reference(ix))


def test_small_chunks_give_the_same_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Groups are numbered across chunks of switches exactly as in one pass."""
    ix = FabricIndex(planned(*CASES[1]))
    whole = bulk(ix)
    monkeypatch.setattr(ecmp_groups, "_CHUNK_CELLS", 1)
    sw = np.nonzero(ix.dl_from[0::2] >= 0)[0]
    out = np.concatenate([2 * sw, 2 * sw + 1])
    order = np.lexsort((out, ix.dl_to[out], ix.dl_from[out]))
    out = out[order]
    got = equal_cost_groups(ix.dist, out, ix.dl_from[out], ix.dl_to[out], ix.n_switches)
    same((ix.dist, *got), whole)


def test_twin_leaves_distances() -> None:
    """Two leaves under the same two spines are twins (one search): 0 to itself, 2 to its
    twin; a leaf with no neighbour reaches only itself."""
    # switches: 0, 1 leaves under spines 2, 3; 4 a lonely leaf
    graph = coo_matrix((np.ones(4), ([0, 0, 1, 1], [2, 3, 2, 3])), shape=(5, 5)).tocsr()
    dist = leaf_distances(graph, np.array([0, 1, 4]))
    assert dist.tolist() == [
        [0, 2, 1, 1, UNREACHABLE],
        [2, 0, 1, 1, UNREACHABLE],
        [UNREACHABLE, UNREACHABLE, UNREACHABLE, UNREACHABLE, 0],
    ]
