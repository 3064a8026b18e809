"""Overhead trays: racks dropped onto tray segments (shapely) and a rack-to-rack run table.

Every rack drops onto its nearest tray segment. A run between two racks either stays on a
segment they share or leaves each rack's segment through one of its two end points, so the
shortest run is a closed form over four numbers per rack (the drop, the segment and the
distance to each end) and one table of shortest distances between tray points. That table is
the Manhattan distance for ``rows`` routing (every tray is axis-parallel and every row's tray
meets every cross tray) and comes from Dijkstra over the points (networkx) for a given tray
graph. The full tray graph, racks included, is built with networkx only when asked for.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import shapely
from shapely.geometry import LineString, Point

from railplan.design import Rack
from railplan.errors import SpecError
from railplan.spec import LayoutSpec

if TYPE_CHECKING:
    import networkx as nx

Points = dict[str, tuple[float, float]]
#: entries of one block of rows of ``runs_m`` (1 MB per array: its passes stay in cache)
RUNS_BLOCK = 1 << 17


def row_trays(racks: Sequence[Rack], layout: LayoutSpec) -> tuple[Points, list[tuple[str, str]]]:
    """Tray points and segments for ``rows`` routing: a tray above each row's centre line,
    joined by cross trays just beyond both ends of the longest row (and across the middle)."""
    trays = layout.trays
    rows = sorted({r.row for r in racks})
    longest = max((r.position + 1 for r in racks), default=1) * layout.rack_width_m
    x_left = -trays.end_clearance_m
    x_right = longest + trays.end_clearance_m
    xs = {"L": x_left, "R": x_right}
    if trays.cross_trays == "ends-and-middle":
        xs["M"] = longest / 2
    points: Points = {}
    segments: list[tuple[str, str]] = []
    y_of = {r.row: r.y_m + layout.rack_depth_m / 2 for r in racks}
    for row in rows:
        names = [f"{side}{row}" for side in sorted(xs, key=lambda s: xs[s])]
        for name in names:
            points[name] = (xs[name[0]], y_of[row])
        segments += list(itertools.pairwise(names))
    for side in xs:
        segments += [(f"{side}{a}", f"{side}{b}") for a, b in itertools.pairwise(rows)]
    return points, segments


def given_trays(layout: LayoutSpec) -> tuple[Points, list[tuple[str, str]]]:
    """The points and segments of ``layout.trays`` (``graph`` routing), checked."""
    trays = layout.trays
    points: Points = {}
    for i, pt in enumerate(trays.points):
        if pt.id in points:
            raise SpecError(f"layout.trays.points.{i}: point id {pt.id!r} is used twice")
        points[pt.id] = (pt.x_m, pt.y_m)
    if not trays.segments:
        raise SpecError("layout.trays.segments: routing graph needs at least one tray segment")
    for i, (a, b) in enumerate(trays.segments):
        for end in (a, b):
            if end not in points:
                raise SpecError(
                    f"layout.trays.segments.{i}: unknown point {end!r}; define it under points"
                )
        if points[a] == points[b]:
            raise SpecError(f"layout.trays.segments.{i}: {a} and {b} are the same spot")
    return points, list(trays.segments)


@dataclass(frozen=True)
class TrayTable:
    """Horizontal tray run between racks, by rack index: ``runs_m(a, b)`` for index arrays.

    Per rack: its drop (rack top centre to the tray), its segment, the run along the tray to
    each end point of that segment, and those end points; ``between`` holds the shortest run
    between any two tray points (``inf`` when no tray joins them).
    """

    index: dict[str, int]
    drop_m: np.ndarray
    segment: np.ndarray
    along_m: np.ndarray
    ends: np.ndarray
    to_end_m: np.ndarray
    between: np.ndarray

    def runs_m(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Table ``len(a) x len(b)`` of runs from rack top to rack top (0 within a rack).

        Each entry is ``min(along, (between + to_end_a) + to_end_b over both ends of each)``
        (``along`` on a shared segment only), then ``+ drop_a + drop_b``, in that order: the
        same floats as ``run_m``. Racks on one segment share its ends, so ``between`` is read
        per segment pair; the min over a's two ends is taken before ``+ to_end_b`` (exact:
        float addition is monotone) and the table is filled in blocks of rows that stay in
        cache; the few pairs on one segment are then done entry by entry.
        """
        a, b = np.asarray(a, dtype=np.intp), np.asarray(b, dtype=np.intp)
        seg_a, seg_b = self.segment[a], self.segment[b]
        ends_a, in_a = _segment_ends(self.ends[a], seg_a)
        ends_b, in_b = _segment_ends(self.ends[b], seg_b)
        to_a, to_b = self.to_end_m[a], self.to_end_m[b]
        drop_a, drop_b = self.drop_m[a], self.drop_m[b]
        # between[x][y][i, j]: from end x of a's segment i to end y of b's segment j
        between = [
            [self.between[np.ix_(ends_a[:, x], ends_b[:, y])] for y in (0, 1)] for x in (0, 1)
        ]
        to_b_y = [np.ascontiguousarray(to_b[:, y]) for y in (0, 1)]
        out = np.empty((len(a), len(b)))
        step = max(1, RUNS_BLOCK // max(1, len(b)))
        for start in range(0, len(a), step):
            rows = slice(start, start + step)
            block, seg = out[rows], in_a[rows]
            for y in (0, 1):
                via = between[0][y].take(seg, axis=0)
                via += to_a[rows, 0, None]
                other = between[1][y].take(seg, axis=0)
                other += to_a[rows, 1, None]
                np.minimum(via, other, out=via)
                run = via.take(in_b, axis=1)
                run += to_b_y[y]
                if y == 0:
                    block[...] = run
                else:
                    np.minimum(block, run, out=block)
            block += drop_a[rows, None]
            block += drop_b
        i, j = _same_segment(seg_a, seg_b)
        if len(i):
            out[i, j] = self._pairs_m(a[i], b[j])
        return out

    def _pairs_m(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``run_m`` of each pair ``(a[k], b[k])`` of racks on one segment, with arrays."""
        ends, to_end = self.ends, self.to_end_m
        best = np.abs(self.along_m[a] - self.along_m[b])
        for x in (0, 1):
            for y in (0, 1):
                via = self.between[ends[a, x], ends[b, y]] + to_end[a, x]
                np.minimum(best, via + to_end[b, y], out=best)
        best += self.drop_m[a]
        best += self.drop_m[b]
        best[a == b] = 0.0
        return best

    def run_m(self, a: int, b: int) -> float:
        """One run (``inf`` when no tray joins the two racks), in plain floats."""
        if a == b:
            return 0.0
        ends, to_end, between = self.ends, self.to_end_m, self.between
        best = float("inf")
        if self.segment[a] == self.segment[b]:
            best = abs(float(self.along_m[a]) - float(self.along_m[b]))
        for x in (0, 1):
            for y in (0, 1):
                via = float(to_end[a, x]) + float(between[ends[a, x], ends[b, y]])
                best = min(best, via + float(to_end[b, y]))
        return float(self.drop_m[a]) + best + float(self.drop_m[b])


def _segment_ends(ends: np.ndarray, segment: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The end points of each distinct segment (those of any rack on it) and each rack's
    segment among them."""
    distinct, inverse = np.unique(segment, return_inverse=True)
    inverse = inverse.reshape(-1)
    first = np.empty(len(distinct), dtype=np.intp)
    first[inverse] = np.arange(len(segment))
    return ends[first].reshape(-1, 2), inverse


def _same_segment(seg_a: np.ndarray, seg_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(i, j)`` with ``seg_a[i] == seg_b[j]``, row by row."""
    order = np.argsort(seg_b, kind="stable")
    sorted_b = seg_b[order]
    lo = np.searchsorted(sorted_b, seg_a, side="left")
    count = np.searchsorted(sorted_b, seg_a, side="right") - lo
    i = np.repeat(np.arange(len(seg_a)), count)
    start = np.repeat(lo - (np.cumsum(count) - count), count)
    return i, order[start + np.arange(len(i))]


@dataclass(frozen=True)
class TrayNetwork:
    """Each segment's chain of graph nodes (points and rack drops) with the run between each
    two, each rack's drop node and drop, and the run table."""

    edges: list[tuple[str, str, float]]
    nodes: list[str]
    drop_node: dict[str, str]
    drop_m: dict[str, float]
    table: TrayTable

    def graph(self) -> nx.Graph:
        """The tray graph, racks included (edge attribute ``length``, metres)."""
        import networkx as nx

        graph = nx.Graph()
        graph.add_nodes_from(self.nodes)
        for a, b, length in self.edges:
            graph.add_edge(a, b, length=length)
        return graph


def tray_network(racks: Sequence[Rack], layout: LayoutSpec) -> TrayNetwork:
    """The tray graph with every rack dropped onto its nearest tray segment (shapely)."""
    if layout.trays.routing == "rows":
        points, segments = row_trays(racks, layout)
    else:
        points, segments = given_trays(layout)
    lines = [LineString([points[a], points[b]]) for a, b in segments]
    tree = shapely.STRtree(lines)
    exits = [Point(r.x_m + layout.rack_width_m / 2, r.y_m + layout.rack_depth_m / 2) for r in racks]
    nearest = tree.query_nearest(exits, all_matches=False) if exits else [[], []]
    on_segment: dict[int, list[tuple[float, str]]] = {i: [] for i in range(len(lines))}
    drop_node: dict[str, str] = {}
    drop_m: dict[str, float] = {}
    segment_of: dict[str, int] = {}
    for rack_index, seg in zip(nearest[0], nearest[1], strict=True):
        rack = racks[int(rack_index)]
        line = lines[int(seg)]
        exit_point = exits[int(rack_index)]
        on_segment[int(seg)].append((float(line.project(exit_point)), rack.id))
        drop_node[rack.id] = f"rack:{rack.id}"
        drop_m[rack.id] = round(float(line.distance(exit_point)), 6)
        segment_of[rack.id] = int(seg)
    edges: list[tuple[str, str, float]] = []
    along: dict[str, float] = {}
    seg_len: list[float] = []
    for i, (a, b) in enumerate(segments):
        chain = [(0.0, f"pt:{a}")]
        chain += [(t, f"rack:{rid}") for t, rid in sorted(on_segment[i])]
        chain.append((float(lines[i].length), f"pt:{b}"))
        run = 0.0
        for (t0, n0), (t1, n1) in itertools.pairwise(chain):
            edges.append((n0, n1, round(t1 - t0, 6)))
            run += round(t1 - t0, 6)
            if n1.startswith("rack:"):
                along[n1[5:]] = run
        seg_len.append(run)
    names = list(points)
    point_ix = {name: i for i, name in enumerate(names)}
    if layout.trays.routing == "rows":
        xy = np.array([points[p] for p in names], dtype=float).reshape(-1, 2)
        between = np.abs(xy[:, None, 0] - xy[None, :, 0]) + np.abs(xy[:, None, 1] - xy[None, :, 1])
    else:
        between = _point_distances(names, segments, seg_len)
    ids = [r.id for r in racks]
    seg = np.array([segment_of[r] for r in ids], dtype=np.intp)
    pos = np.array([along[r] for r in ids], dtype=float)
    ends = np.array([[point_ix[segments[s][0]], point_ix[segments[s][1]]] for s in seg.tolist()])
    lengths = np.array(seg_len, dtype=float)
    table = TrayTable(
        index={r: i for i, r in enumerate(ids)},
        drop_m=np.array([drop_m[r] for r in ids], dtype=float),
        segment=seg,
        along_m=pos,
        ends=ends.reshape(-1, 2).astype(np.intp),
        to_end_m=np.stack([pos, lengths[seg] - pos], axis=1) if ids else np.zeros((0, 2)),
        between=between,
    )
    return TrayNetwork(edges, [f"pt:{name}" for name in points], drop_node, drop_m, table)


def _point_distances(
    names: Sequence[str], segments: Sequence[tuple[str, str]], lengths: Sequence[float]
) -> np.ndarray:
    """Shortest tray run between every two points of a given graph (Dijkstra, networkx)."""
    import networkx as nx

    skeleton = nx.Graph()
    skeleton.add_nodes_from(names)
    for (a, b), length in zip(segments, lengths, strict=True):
        if not skeleton.has_edge(a, b) or skeleton[a][b]["length"] > length:
            skeleton.add_edge(a, b, length=length)
    ix = {name: i for i, name in enumerate(names)}
    out = np.full((len(names), len(names)), np.inf)
    for source, dist in nx.all_pairs_dijkstra_path_length(skeleton, weight="length"):
        for target, d in dist.items():
            out[ix[source], ix[target]] = d
    return out
