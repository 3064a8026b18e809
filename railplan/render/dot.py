"""GraphViz DOT of the fabric, built with the ``graphviz`` package (it quotes every name).

Tiers are ranks from the nodes at the bottom to the cores at the top; a tier too wide for a
page is drawn as groups (see ``fabric_graph``), and parallel links as one bundled edge with
their count, so a 1k to 16k GPU design reads on one page. A Matrix is drawn left to right:
A leaves, nodes, B leaves, with its A-B links as one bundle node. The drawing needs only the wiring:
no racks, placement or cables.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict

import graphviz

from railplan.design import Design
from railplan.render.fabric_graph import MAX_PER_RANK, fabric_graph

COLOURS = {0: "#e0e0e0", 1: "#90caf9", 2: "#ffcc80", 3: "#a5d6a7"}
#: bundles between two tiers up to which each edge carries its link count (more would crowd)
MAX_LABELLED = 16


def _matrix_bundle(design: Design) -> str:
    """The A-B bundle node's label: leaves, links a pair and links, from the wiring."""
    role = {sw.id: sw.role for sw in design.switches}
    pairs: Counter[tuple[str, str]] = Counter()
    for lk in design.links:
        ends = {role.get(lk.a_device): lk.a_device, role.get(lk.b_device): lk.b_device}
        if set(ends) == {"leaf-a", "leaf-b"}:
            pairs[(ends["leaf-a"], ends["leaf-b"])] += 1
    a, b = len({p[0] for p in pairs}), len({p[1] for p in pairs})
    counts = sorted(set(pairs.values()))
    each = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
    kind = "complete bipartite" if len(pairs) == a * b else f"{len(pairs):,} leaf pairs"
    return (
        f"A-B bundle ({kind})\\n{a:,} A x {b:,} B leaves, {each} links a pair\\n"
        f"({sum(pairs.values()):,} links)"
    )


def _render_matrix(design: Design, dot: graphviz.Graph, max_per_rank: int) -> None:
    """A Matrix left to right: A leaves, the nodes, B leaves, each group a column in SU order;
    the A-B links as one bundle node atop the node column that every A box and every B box
    is joined to (a dashed edge as wide as its links), so no A-B edge crosses the nodes."""
    graph = fabric_graph(design, max_per_rank, per_role=True)
    dot.graph_attr["rankdir"] = "LR"
    column = {b.key: {"leaf-a": 0, "leaf-b": 2}.get(b.role, 1) for b in graph.boxes}
    hub = "a-b-bundle"
    for c in range(3):
        with dot.subgraph(name=f"rank{c}", graph_attr={"rank": "same"}) as sub:
            if c == 1:
                sub.node(hub, label=_matrix_bundle(design), style="rounded,dashed",
                         fillcolor="#ffffff")  # fmt: skip
            keys = [hub] if c == 1 else []
            for box in graph.boxes:
                if column[box.key] == c:
                    label = box.title if box.count == 1 else f"{box.title}\\n({box.count})"
                    sub.node(box.key, label=label, fillcolor=COLOURS.get(box.tier, "#ffffff"))
                    keys.append(box.key)
            for a, b in itertools.pairwise(keys):  # keep the column in SU order, bundle on top
                sub.edge(a, b, style="invis")
    to_hub: Counter[str] = Counter()
    node_edges = []
    for a, b, count in graph.bundles:
        if {column[a], column[b]} == {0, 2}:
            to_hub[a] += count
            to_hub[b] += count
        else:  # a node box and a leaf box: written left to right, A leaf or node first
            node_edges.append((a, b, count) if column[a] < column[b] else (b, a, count))
    labelled = len(node_edges) <= 2 * MAX_LABELLED
    for a, b, count in node_edges:
        attrs = {"penwidth": f"{1 + math.log2(count) / 2:.2f}"}
        if count > 1 and labelled:
            attrs["label"] = f"{count:,}"
        dot.edge(a, b, **attrs)
    for key in sorted(to_hub, key=lambda k: (column[k], k)):
        count = to_hub[key]
        # the bundle node's label gives the links a pair; these edges say which boxes join it
        attrs = {"penwidth": f"{1 + math.log2(count) / 2:.2f}", "style": "dashed"}
        a, b = (key, hub) if column[key] == 0 else (hub, key)
        dot.edge(a, b, **attrs)


def render(design: Design, max_per_rank: int = MAX_PER_RANK) -> str:
    """DOT source text; the same design gives the same bytes."""
    dot = graphviz.Graph(
        name=design.name,
        graph_attr={
            "rankdir": "BT",
            "label": f"{design.name}: {design.topology}, {design.gpus:,} GPUs, "
            f"{len(design.links):,} links",
            "labelloc": "t",
            "fontname": "Helvetica",
            "nodesep": "0.25",
            "ranksep": "1.2",
            "splines": "line",
        },
        node_attr={
            "shape": "box",
            "style": "rounded,filled",
            "fontname": "Helvetica",
            "fontsize": "10",
        },
        edge_attr={"fontname": "Helvetica", "fontsize": "8", "color": "#607d8b"},
    )
    if design.topology == "matrix":
        _render_matrix(design, dot, max_per_rank)
        return dot.source
    graph = fabric_graph(design, max_per_rank)
    ranks: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    for box in graph.boxes:
        label = box.title if box.count == 1 else f"{box.title}\n({box.count})"
        ranks[box.rank].append((box.key, label, COLOURS.get(box.tier, "#ffffff")))
    for rank in sorted(ranks):
        with dot.subgraph(name=f"rank{rank}", graph_attr={"rank": "same"}) as sub:
            for key, label, colour in ranks[rank]:
                sub.node(key, label=label.replace("\n", r"\n"), fillcolor=colour)
    tier = {box.key: box.rank for box in graph.boxes}
    between: Counter[tuple[int, int]] = Counter()
    for a, b, _ in graph.bundles:
        between[(min(tier[a], tier[b]), max(tier[a], tier[b]))] += 1
    for a, b, count in graph.bundles:
        attrs = {"penwidth": f"{1 + math.log2(count) / 2:.2f}"}
        pair = (min(tier[a], tier[b]), max(tier[a], tier[b]))
        if count > 1 and between[pair] <= MAX_LABELLED:
            attrs["label"] = f"{count:,}"
        dot.edge(a, b, **attrs)
    return dot.source
