"""Fabric-level checks on InfiniBand: ibdiagnet's routing validation (credit loops) and fat-tree.

One run of ``ibdiagnet -r`` from any node: the NVIDIA ibdiagnet User Manual ("Routing
Validation") has it validate unicast (static and adaptive) and multicast routing, scan the
multicast tables for loops and apply its credit-loop detection algorithm. On a fat-tree (a
``fat-tree`` or rail-optimized ``roft`` design: every leaf reaches every spine) ``--ft`` adds its
Fat-Tree topology validation (same manual, "Fat-Tree Topology Validation": tree levels,
connectivity groups, invalid links, written to ``ibdiagnet2.fat_tree``), which reports a link
that breaks the tree as ``-E- Invalid link between connectivity group ...``. Every ``-E-`` line
ibdiagnet writes to ``ibdiagnet2.log`` is an error: the check passes on none. Port speed and
width against the plan are the cabling check's (``iblinkinfo``, ``below_rate``); the PCIe links
of NICs and GPUs are the node checks' (``pcie_below_nominal``).
"""

from __future__ import annotations

from railplan.testplan.context import PlanContext
from railplan.testplan.expected import same_check
from railplan.testplan.firmware import firmware_test
from railplan.testplan.model import PlanTest, Section

#: topology families whose InfiniBand fabric is a fat-tree (leaf-spine(-core) Clos)
FAT_TREES = ("fat-tree", "roft")


def fabric_section(ctx: PlanContext) -> Section:
    """Fabric-wide tests: ibdiagnet's routing (and, on a fat-tree, fat-tree) validation on
    InfiniBand, and on every fabric the firmware of every switch, NIC and module
    (``testplan.firmware``)."""
    firmware, firmware_intro = firmware_test(ctx)
    if ctx.roce:
        return Section("fabric", "Fabric checks", firmware_intro, (firmware,))
    design = ctx.design
    fat_tree = design.topology in FAT_TREES and any(s.role == "spine" for s in design.switches)
    flags = "-r --ft" if fat_tree else "-r"
    what = "routing (credit loops) and fat-tree" if fat_tree else "routing (credit loops)"
    check = same_check(
        "ib_diag_errors", 0, "errors", "lower",
        f"ibdiagnet {flags}: no -E- line in ibdiagnet2.log from its {what} validation (NVIDIA "
        "ibdiagnet User Manual, Routing Validation" + (", Fat-Tree Topology Validation" if
        fat_tree else "") + "); a credit loop can deadlock the fabric under load",
    )  # fmt: skip
    test = PlanTest(
        id="FABRIC-IB",
        kind="fabric",
        title=f"ibdiagnet {flags}: {what} validation of the whole fabric",
        nodes=(),
        command=(f"ibdiagnet {flags} -o results/FABRIC-IB   # once, from any node",),
        checks=(check,),
    )
    intro = (
        f"Run once from any node after the subnet manager has routed the fabric: ibdiagnet "
        f"{flags} validates the routing tables (unicast and multicast, credit-loop detection)"
        + (" and that the topology is a properly connected fat-tree" if fat_tree else "")
        + ". Any error it reports fails the check; its log names the switch GUIDs and ports. "
        + firmware_intro
    )
    return Section("fabric", "Fabric checks", intro, (test, firmware))


__all__ = ["FAT_TREES", "fabric_section"]
