"""Slurm ``topology.conf`` for the topology/block plugin (Slurm 23.11 on): blocks and BlockSizes.

Rules from Slurm's source (``src/plugins/topology/block/block_record.c``) and
``topology.conf(5)``: ``BlockName=`` lines in order, each with ``Nodes=`` (a hostlist);
``BlockSizes=`` lists the base block size in nodes, then larger sizes, each the base times a
power of two (at most 2^15), and every block should hold at least the base size. Slurm builds
the higher levels itself by joining consecutive blocks in the order they are listed (block i
starts an aggregate of 2^k blocks when i is a multiple of 2^k).

railplan's blocks are the leaf groups of ``design.hierarchy`` (an SU, a rack's ToRs, a Matrix
stripe set), listed in tree order so that consecutive blocks share their higher group; the base size
is the smallest block; a higher level of the design is given as a size only where each of its
groups holds the same power-of-two number of blocks, so Slurm's aggregates are exactly the
design's pods or spine groups. Any other level is left to Slurm (noted in the file).
"""

from __future__ import annotations

from railplan.design.hierarchy import Group, Hierarchy
from railplan.render.hostlist import compress
from railplan.render.slurm_tree import header

#: block levels Slurm accepts (block_record.c: block_level > 15 is refused)
MAX_LEVEL = 15


def ordered_blocks(h: Hierarchy) -> list[Group]:
    """The leaf groups depth first from the top level, so siblings are consecutive."""
    by_level = [{g.name: g for g in lv.groups} for lv in h.levels]

    def walk(level: int, group: Group) -> list[Group]:
        if level == 0:
            return [group]
        out: list[Group] = []
        for child in group.children:
            out.extend(walk(level - 1, by_level[level - 1][child]))
        return out

    top = len(h.levels) - 1
    return [b for g in h.levels[top].groups for b in walk(top, g)]


def block_sizes(h: Hierarchy) -> tuple[list[int], list[str]]:
    """BlockSizes (nodes) and a note per higher level that could not be given."""
    blocks = h.levels[0].groups
    base = min(len(b.nodes) for b in blocks)
    sizes, notes = [base], []
    leaf_of = h.levels[0].group_of()
    for lv in h.levels[1:]:
        counts = {len({leaf_of[n] for n in g.nodes}) for g in lv.groups}
        count = counts.pop() if len(counts) == 1 else 0
        level = count.bit_length() - 1
        if count >= 2 and count == 1 << level and level <= MAX_LEVEL and count * base > sizes[-1]:
            sizes.append(count * base)
        else:
            shown = "/".join(str(c) for c in sorted(counts | ({count} if count else set())))
            notes.append(
                f"level {lv.name} ({shown} blocks per group) is not a power of two of blocks; "
                "Slurm joins blocks in powers of two, so it is not given"
            )
    return sizes, notes


def render(h: Hierarchy, origin: str = "from the plan") -> str:
    """``topology.conf`` text for TopologyPlugin=topology/block."""
    lines = header(h, origin, "Slurm topology.conf for TopologyPlugin=topology/block")
    sizes, notes = block_sizes(h)
    lines += [f"# {note}" for note in notes]
    larger = [b.name for b in h.levels[0].groups if len(b.nodes) > sizes[0]]
    if larger:
        lines.append(
            f"# base block size = the smallest block's node count ({sizes[0]}); larger blocks: "
            f"{compress(larger)}"
        )
    for b in ordered_blocks(h):
        lines.append(f"BlockName={b.name} Nodes={compress(b.nodes)}")
    lines.append("BlockSizes=" + ",".join(str(s) for s in sizes))
    return "\n".join(lines) + "\n"
