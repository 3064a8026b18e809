"""GraphViz DOT of the fabric: every device for small designs, aggregated bundles for large ones."""

from __future__ import annotations

from collections import Counter, defaultdict

from railplan.design import Design, Node, Switch

#: above this many devices the drawing groups nodes per SU and switches per tier block
DETAIL_LIMIT = 200
TIER_NAMES = {0: "nodes", 1: "leaves", 2: "spines", 3: "cores"}
COLOURS = {0: "#9e9e9e", 1: "#2196f3", 2: "#ff9800", 3: "#4caf50"}


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _node_group(node: Node, aggregate: bool) -> str:
    return f"nodes SU{node.su + 1}" if aggregate else node.id


def _switch_group(sw: Switch, aggregate: bool) -> str:
    if not aggregate:
        return sw.id
    where = f"p{sw.plane}"
    if sw.tier == 1:
        where += f" SU{sw.su + 1}" if sw.su >= 0 else ""
    elif sw.pod >= 0:
        where += f" pod{sw.pod + 1}"
    return f"{sw.role} {where}"


def render(design: Design, detail_limit: int = DETAIL_LIMIT) -> str:
    """DOT text, tiers bottom to top; an edge per device (or group) pair labelled with its
    link count when several links run in parallel."""
    aggregate = len(design.nodes) + len(design.switches) > detail_limit
    group: dict[str, str] = {}
    tier: dict[str, int] = {}
    size: Counter[str] = Counter()
    for node in design.nodes:
        g = _node_group(node, aggregate)
        group[node.id], tier[g] = g, 0
        size[g] += 1
    for sw in design.switches:
        g = _switch_group(sw, aggregate)
        group[sw.id], tier[g] = g, sw.tier
        size[g] += 1
    for dev in design.devices:  # attached devices (fabric managers, ...) beside the nodes
        group[dev.id], tier[dev.id] = dev.id, 0
        size[dev.id] += 1
    bundles: Counter[tuple[str, str]] = Counter()
    for lk in design.links:
        bundles[(group[lk.a_device], group[lk.b_device])] += 1
    lines = [
        f"graph {_q(design.name)} {{",
        "  rankdir=BT;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=8];',
        f"  label={_q(f'{design.name}: {design.topology}, {design.gpus} GPUs')};",
    ]
    by_tier: dict[int, list[str]] = defaultdict(list)
    for g in tier:
        by_tier[tier[g]].append(g)
    for t in sorted(by_tier):
        members = sorted(by_tier[t])
        lines.append(f"  subgraph {_q(f'tier{t}')} {{")
        lines.append("    rank=same;")
        for g in members:
            label = f"{g}\\n{size[g]} devices" if aggregate and size[g] > 1 else g
            lines.append(
                f"    {_q(g)} [label={_q(label)}, fillcolor={_q(COLOURS.get(t, '#ffffff'))}];"
            )
        lines.append("  }")
    for (a, b), count in sorted(bundles.items()):
        attrs = (
            f" [label={_q(f'x{count}')}, penwidth={min(6, 1 + count // 16)}]" if count > 1 else ""
        )
        lines.append(f"  {_q(a)} -- {_q(b)}{attrs};")
    lines.append("}")
    return "\n".join(lines) + "\n"
