"""Fewest node pairs that exercise every switch-to-switch link group and give every node partners.

The problem is posed on node *classes* (nodes whose ports land on the same leaves are
interchangeable for coverage), so its size grows with the number of leaves, not of nodes:

- ``y[j]`` = how many node pairs to draw from candidate class pair ``j`` (an integer);
- cover: every element (a group of inter-switch links) lies on some chosen candidate's paths;
- partners: class ``c`` receives at least ``partners x size(c)`` pair ends, so that every node
  of it can get that many distinct partners;
- minimise the number of pairs; then, keeping that number, the link groups they cross (fewer
  busy uplinks per test round).

The answer is a count per candidate; :func:`instantiate` turns counts into node pairs and the
caller re-derives coverage from those pairs without trusting the solver.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model


@dataclass(frozen=True, slots=True)
class CoverProblem:
    """Classes of interchangeable nodes, candidate class pairs and the elements each covers."""

    class_sizes: tuple[int, ...]
    #: candidate class pairs (c, d) with c <= d
    candidates: tuple[tuple[int, int], ...]
    #: element ids (0 .. elements-1) each candidate covers
    covers: tuple[frozenset[int], ...]
    elements: int
    #: distinct partners every node needs (capped by the caller at nodes - 1)
    partners: int = 1


@dataclass(frozen=True, slots=True)
class CoverSolution:
    """Pairs per candidate and what the solver proved about them."""

    counts: tuple[int, ...]
    pairs: int
    #: best bound the solver proved (equal to ``pairs`` when optimal)
    bound: int
    #: closed-form lower bound: max(ceil(nodes x partners / 2), elements no pair shares)
    lower_bound: int
    status: str
    #: elements no candidate covers (the plan reports them; nothing can exercise them)
    uncoverable: tuple[int, ...] = ()

    @property
    def gap(self) -> float:
        return 0.0 if self.pairs == 0 else (self.pairs - self.bound) / self.pairs


def _capacity(problem: CoverProblem, j: int) -> int:
    c, d = problem.candidates[j]
    if c == d:
        n = problem.class_sizes[c]
        return n * (n - 1) // 2
    return problem.class_sizes[c] * problem.class_sizes[d]


def _rows(problem: CoverProblem) -> tuple[list[tuple[int, ...]], list[int]]:
    """Distinct cover rows (candidate index tuples) and the elements no candidate covers."""
    by_element: list[list[int]] = [[] for _ in range(problem.elements)]
    for j, cov in enumerate(problem.covers):
        for e in cov:
            by_element[e].append(j)
    rows = sorted({tuple(js) for js in by_element if js})
    missing = [e for e, js in enumerate(by_element) if not js]
    return rows, missing


def lower_bound(problem: CoverProblem) -> int:
    """Pairs needed for partners alone: every pair gives two node ends."""
    return math.ceil(sum(problem.class_sizes) * problem.partners / 2)


def greedy(problem: CoverProblem) -> list[int]:
    """A feasible answer without the solver: greedy set cover, then partner top-ups."""
    counts = [0] * len(problem.candidates)
    rows, _ = _rows(problem)
    uncovered = set(range(len(rows)))
    row_of: dict[int, list[int]] = {}
    for r, js in enumerate(rows):
        for j in js:
            row_of.setdefault(j, []).append(r)
    while uncovered:
        best = max(row_of, key=lambda j: (sum(r in uncovered for r in row_of[j]), -j))
        gain = [r for r in row_of[best] if r in uncovered]
        if not gain:
            break
        counts[best] += 1
        uncovered -= set(gain)
    need = [problem.partners * n for n in problem.class_sizes]
    for j, (c, d) in enumerate(problem.candidates):
        need[c] -= counts[j]
        need[d] -= counts[j]
    where = {cd: j for j, cd in enumerate(problem.candidates)}

    def add(j: int, k: int) -> None:
        c, d = problem.candidates[j]
        counts[j] += k
        need[c] -= k
        need[d] -= k

    # partners: pairs inside each class first (no uplink crossed), two ends per pair
    for c in range(len(need)):
        jc = where.get((c, c))
        if jc is not None and need[c] > 1:
            add(jc, min(need[c] // 2, _capacity(problem, jc) - counts[jc]))
    # odd leftovers: pair classes that each miss one end, then anything that still misses ends
    short = [c for c in range(len(need)) if need[c] > 0]
    for c in short:
        for d in short:
            jd = where.get((min(c, d), max(c, d)))
            if (
                c != d
                and jd is not None
                and need[c] > 0
                and need[d] > 0
                and counts[jd] < _capacity(problem, jd)
            ):
                add(jd, 1)
    for c in range(len(need)):
        for j, (a, b) in enumerate(problem.candidates):
            if need[c] <= 0:
                break
            if c in (a, b) and counts[j] < _capacity(problem, j):
                per = 2 if a == b else 1
                add(j, min(_capacity(problem, j) - counts[j], -(-need[c] // per)))
    return counts


def solve(problem: CoverProblem, time_limit_s: float = 10.0, seed: int = 0) -> CoverSolution:
    """Minimise pairs with CP-SAT (one worker, fixed seed: the same problem gives the same answer)."""
    rows, missing = _rows(problem)
    lb = lower_bound(problem)
    n = len(problem.candidates)
    if n == 0:
        return CoverSolution((), 0, 0, 0, "empty", tuple(missing))
    model = cp_model.CpModel()
    y = [model.new_int_var(0, _capacity(problem, j), f"y{j}") for j in range(n)]
    for js in rows:
        model.add(sum(y[j] for j in js) >= 1)
    ends: list[list[tuple[int, int]]] = [[] for _ in problem.class_sizes]
    for j, (c, d) in enumerate(problem.candidates):
        if c == d:
            ends[c].append((j, 2))
        else:
            ends[c].append((j, 1))
            ends[d].append((j, 1))
    for c, size in enumerate(problem.class_sizes):
        if ends[c] and size:
            model.add(sum(k * y[j] for j, k in ends[c]) >= problem.partners * size)
    model.add(sum(y) >= lb)
    hint = greedy(problem)
    for var, value in zip(y, hint, strict=True):
        model.add_hint(var, value)
    solver = cp_model.CpSolver()
    solver.parameters.catch_sigint_signal = False  # keep the caller's Ctrl-C handling
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    # phase 1: fewest pairs
    model.minimize(sum(y))
    # deterministic time, not wall time: the same problem gives the same answer on any machine
    solver.parameters.max_deterministic_time = time_limit_s / 2
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        # no answer in time: the greedy one, with the closed-form bound
        return CoverSolution(
            tuple(hint), sum(hint), lb, lb, "greedy (no answer in time)", tuple(missing)
        )
    pairs = int(solver.objective_value)
    bound = max(lb, math.ceil(solver.best_objective_bound - 1e-9))
    name = "optimal" if status == cp_model.OPTIMAL else "feasible"
    counts = [int(solver.value(v)) for v in y]
    # phase 2: as many pairs, crossing the fewest link groups (pairs inside a leaf give the
    # partners and few pairs load the uplinks, so the test rounds are short)
    model.clear_hints()
    for var, value in zip(y, counts, strict=True):
        model.add_hint(var, value)
    model.add(sum(y) == pairs)
    model.minimize(sum(len(c) * v for c, v in zip(problem.covers, y, strict=True)))
    solver.parameters.max_deterministic_time = min(0.1, time_limit_s / 20)
    if solver.solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        counts = [int(solver.value(v)) for v in y]
    return CoverSolution(
        counts=tuple(counts),
        pairs=pairs,
        bound=min(bound, pairs),
        lower_bound=lb,
        status=name,
        uncoverable=tuple(missing),
    )


def _circulant(size: int, count: int) -> list[tuple[int, int]]:
    """``count`` distinct pairs of ``range(size)``: (i, i+1) for every i, then (i, i+2), ...

    >>> _circulant(4, 5)
    [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]
    """
    out: list[tuple[int, int]] = []
    for k in range(1, size // 2 + 1):
        for i in range(size if 2 * k < size else size // 2):
            if len(out) == count:
                return out
            out.append((i, (i + k) % size))
    return out


def instantiate(
    classes: Sequence[Sequence[str]],
    candidates: Sequence[tuple[int, int]],
    counts: Sequence[int],
    partners: int,
) -> list[tuple[str, str]]:
    """Node pairs for the counts: least-partnered nodes first, no pair twice, then top-ups.

    Every node ends with at least ``partners`` distinct partners when the cluster allows it.

    >>> instantiate([["a", "b"], ["c"]], [(0, 1), (0, 0)], [1, 1], 1)
    [('a', 'b'), ('a', 'c')]
    """
    deg: dict[str, int] = {n: 0 for cls in classes for n in cls}
    rank = {n: i for i, n in enumerate(deg)}
    seen: set[tuple[str, str]] = set()
    pairs: list[tuple[str, str]] = []

    def key(u: str, v: str) -> tuple[str, str]:
        return (u, v) if rank[u] < rank[v] else (v, u)

    def add(u: str, v: str) -> None:
        p = key(u, v)
        seen.add(p)
        pairs.append(p)
        deg[u] += 1
        deg[v] += 1

    def pick(pool: Sequence[str], avoid: str | None) -> str | None:
        best = None
        for n in pool:
            if n == avoid or (avoid is not None and key(avoid, n) in seen):
                continue
            if best is None or (deg[n], rank[n]) < (deg[best], rank[best]):
                best = n
        return best

    for (c, d), count in zip(candidates, counts, strict=True):
        if c == d:  # inside a class first, on a circulant: offsets 1, 2, ... keep degrees even
            ring = list(classes[c])
            for i, j in _circulant(len(ring), count):
                add(ring[i], ring[j])
    for (c, d), count in zip(candidates, counts, strict=True):
        if c == d:
            continue
        for _ in range(count):
            u = pick(classes[c], None)
            v = pick(classes[d], u) if u is not None else None
            if u is None or v is None:
                break
            add(u, v)
    everyone = list(deg)
    want = min(partners, len(everyone) - 1)
    # move pair ends from a node with spare partners to a short node of its class: same
    # class, same leaves, so coverage does not change
    for members in classes:
        for b in [m for m in members if deg[m] < want]:
            for i, (x, y) in enumerate(pairs):
                if deg[b] >= want:
                    break
                for a, w in ((x, y), (y, x)):
                    if a in members and deg[a] > want and w != b and key(w, b) not in seen:
                        seen.discard(key(a, w))
                        pairs[i] = key(w, b)
                        seen.add(pairs[i])
                        deg[a] -= 1
                        deg[b] += 1
                        break
    # top up nodes still short of partners (rounding in the class-level counts)
    for node in everyone:
        while deg[node] < want:
            v = pick(everyone, node)
            if v is None:
                break
            add(node, v)
    return pairs
