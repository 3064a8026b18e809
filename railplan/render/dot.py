"""GraphViz DOT of the fabric, built with the ``graphviz`` package (it quotes every name).

Tiers are ranks from the nodes at the bottom to the cores at the top; a tier too wide for a
page is drawn as groups (see ``fabric_graph``), and parallel links as one bundled edge with
their count, so a 1k to 16k GPU design reads on one page. The drawing needs only the wiring:
no racks, placement or cables.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import graphviz

from railplan.design import Design
from railplan.render.fabric_graph import MAX_PER_RANK, fabric_graph

COLOURS = {0: "#e0e0e0", 1: "#90caf9", 2: "#ffcc80", 3: "#a5d6a7"}
#: bundles between two tiers up to which each edge carries its link count (more would crowd)
MAX_LABELLED = 16


def render(design: Design, max_per_rank: int = MAX_PER_RANK) -> str:
    """DOT source text; the same design gives the same bytes."""
    graph = fabric_graph(design, max_per_rank)
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
