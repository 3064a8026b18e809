"""DCGM diagnostics per phase: ``dcgmi diag -r 1`` with the node checks, ``-r 3`` with the burn-in.

NVIDIA's ``dcgmi diag`` reference: ``-r 1`` quick deployment checks (seconds), ``2`` medium
validation (about two minutes), ``3`` long hardware diagnostics (about 15 minutes), ``4``
extended; its DCGM Diagnostics guide sets level 1 as a readiness metric, level 2 as an
epilogue on failure, levels 3 and 4 for an administrator's validation. So the node-check phase
runs level 1 on every node and the burn-in phase (when the plan has one) level 3. railplan
reads the run's result table as ``| <test> | Pass|Fail|Warn|Skip ... |`` rows (not checked
against a real capture: none was available) and a test whose result is Fail fails the node. DCGM is NVIDIA's: on AMD GPUs the check is not measured (the ROCm Validation Suite is not
run by railplan).
"""

from __future__ import annotations

from railplan.testplan.context import PlanContext
from railplan.testplan.expected import same_check
from railplan.testplan.model import PlanTest, Section

#: (phase, run level): readiness with the node checks, long diagnostics with the burn-in
PHASES = (("node", 1), ("burnin", 3))


def dcgm_section(ctx: PlanContext) -> Section:
    """One test per node and phase (the burn-in phase only when the plan has a burn-in)."""
    amd = ctx.rates.gpu_vendor == "amd"
    phases = [(p, lvl) for p, lvl in PHASES if p == "node" or ctx.options.burnin_s > 0]
    tests = []
    for phase, level in phases:
        check = same_check(
            "dcgm_failed_tests", 0, "tests", "lower",
            f"dcgmi diag -r {level} ({'quick readiness' if level == 1 else 'long hardware'} "
            f"diagnostics, NVIDIA dcgmi diag reference) with the {phase} phase: no test Fail",
        )  # fmt: skip
        for node in ctx.design.nodes:
            tests.append(
                PlanTest(
                    id=f"DCGM-R{level}-{node.id}",
                    kind="dcgm",
                    title=f"{node.id}: dcgmi diag -r {level} ({phase} phase)",
                    nodes=(node.id,),
                    command=(f"dcgmi diag -r {level}   # every result Pass (Warn and Skip noted)",),
                    checks=(check,),
                )
            )
    intro = (
        "DCGM diagnostics by phase: dcgmi diag -r 1 (seconds) on every node with the node checks"
        + (", -r 3 (about 15 minutes, GPUs idle) after the burn-in" if len(phases) > 1 else "")
        + ". A test whose result is Fail fails its node."
        + (" These are AMD GPUs: DCGM does not apply, the check is not measured." if amd else "")
    )
    return Section("dcgm", "DCGM diagnostics", intro, tuple(tests))


__all__ = ["PHASES", "dcgm_section"]
