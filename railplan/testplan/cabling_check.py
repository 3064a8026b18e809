"""The as-built cabling check: every switch's neighbours against the cable schedule."""

from __future__ import annotations

from railplan.testplan.context import PlanContext
from railplan.testplan.expected import same_check
from railplan.testplan.model import PlanTest, Section


def cabling_section(ctx: PlanContext) -> Section:
    """One test per switch: its cabled ports, named by cable label, against its neighbours."""
    fab = ctx.fabric
    tests = []
    if ctx.roce:
        command = (
            "show lldp table                                   # on the switch (SONiC)",
            "lldpcli -f json0 show neighbors details           # on each node (lldpd)",
        )
        tool = "LLDP"
    else:
        command = (
            "ibnetdiscover > ibnetdiscover.txt                 # once, from any node",
            "iblinkinfo --switches-only                        # link state and speed",
        )
        tool = "InfiniBand discovery"
    faults = (
        same_check("miswired", 0, "links", "lower",
              "a neighbour other than the planned device and port is a miswired cable"),
        same_check("missing", 0, "links", "lower",
              "a planned port without a neighbour is a missing or dead cable"),
        same_check("extra", 0, "links", "lower",
              "a neighbour on a port the plan leaves free is an extra cable"),
    )  # fmt: skip
    for sw in ctx.design.switches:
        ports = sorted(fab.switch_links.get(sw.id, []), key=lambda pl: pl[0])
        refs = tuple(f"{fab.cable(link)}@{sw.id}:{sw.port_name(p)}" for p, link in ports)
        n = len(refs)
        checks = (
            same_check("ports_expected", n, "ports", "equal", f"the plan cables {n} ports of {sw.id}"),
            *faults,
            same_check("below_rate", 0, "links", "lower",
                  f"every link must come up at {sw.port_speed_gbps} Gb/s"),
        )  # fmt: skip
        tests.append(
            PlanTest(
                id=f"CAB-{sw.id}",
                kind="cabling",
                title=f"{sw.id} ({sw.role}): {n} cabled ports match the cable schedule",
                nodes=(),
                command=command,
                checks=checks,
                refs=refs,
            )
        )
    intro = (
        f"Compare the {tool} neighbours of every switch with the cable schedule; every "
        "miswired, missing or extra link is named by its cable label. The cabling sheets list "
        "the expected neighbour of each port."
    )
    return Section("cabling", "As-built cabling check", intro, tuple(tests))
