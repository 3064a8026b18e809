"""The acceptance test plan of a design: what to run on which nodes and ports, and what must come out.

Sections, in the order a crew runs them: node checks (``node_checks``), the as-built cabling check
(``cabling``), link quality (``link_quality``: BER, FEC and symbol-error counters read before and
after the soak the following sections make), per-link RDMA for every path class (``rdma``), pair tests that exercise every
switch-to-switch link (``coverage`` chooses them, ``pairs`` writes them) and NCCL collectives
(``nccl``); ``build`` puts them together. Every expected number is derived from the design
(``expected``): the NIC line rate, the performance model (``perf_model``: wire framing, NCCL's
alpha-beta terms, switch datasheet latency), and the collision analyzer's prediction for the
pattern the test runs (``prediction``).
"""

from __future__ import annotations

from railplan.testplan.assemble import build_testplan
from railplan.testplan.expectation import Expectation, expectations
from railplan.testplan.model import Check, PlanTest, Section, TestPlan, TestPlanOptions, design_hash

__all__ = [
    "Check",
    "Expectation",
    "PlanTest",
    "Section",
    "TestPlan",
    "TestPlanOptions",
    "build_testplan",
    "design_hash",
    "expectations",
]
