"""Builds the acceptance test plan of a design, section by section."""

from __future__ import annotations

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.testplan.burnin import burnin_section
from railplan.testplan.cabling_check import cabling_section
from railplan.testplan.context import PlanContext, device_names
from railplan.testplan.coverage import choose_pairs
from railplan.testplan.dcgm import dcgm_section
from railplan.testplan.expected import rates
from railplan.testplan.fabric import Fabric
from railplan.testplan.fabric_checks import fabric_section
from railplan.testplan.ladder import ladder_section
from railplan.testplan.link_quality import linkq_section
from railplan.testplan.model import Progress, TestPlan, TestPlanOptions, design_hash
from railplan.testplan.nccl import nccl_section
from railplan.testplan.node_checks import node_section
from railplan.testplan.pairs import pairs_section
from railplan.testplan.prediction import Predictor
from railplan.testplan.rdma import rdma_section, representatives


def build_testplan(
    design: Design,
    catalog: Catalog,
    options: TestPlanOptions | None = None,
    progress: Progress | None = None,
) -> TestPlan:
    """The acceptance test plan of ``design``, sections in the order a crew runs them."""
    options = options or TestPlanOptions()
    fabric = Fabric(design)
    r = rates(design, catalog, options.mtu)
    devices = device_names(design, catalog, options)
    ctx = PlanContext(design, fabric, r, devices, options, Predictor(design))
    steps = ("node checks", "cabling", "link quality", "pair cover", "rdma", "pairs", "nccl")

    def step(i: int) -> None:
        if progress:
            progress("test plan: " + steps[min(i, len(steps) - 1)], i, len(steps))

    step(0)
    node = node_section(ctx)
    step(1)
    cabling = cabling_section(ctx)
    fabric_checks = fabric_section(ctx)
    step(2)
    linkq = linkq_section(ctx)
    step(3)
    chosen = choose_pairs(ctx, None)
    reps = representatives(ctx)
    step(4)
    rdma = rdma_section(ctx, reps, chosen.probes)
    step(5)
    pairs = pairs_section(ctx, chosen)
    step(6)
    nccl = nccl_section(ctx, reps)
    extra = []
    if options.ladder:
        extra.append(ladder_section(ctx, reps))
    if options.burnin_s > 0:
        extra.append(burnin_section(ctx))
    if options.dcgm:
        extra.append(dcgm_section(ctx))
    if progress:
        progress("test plan", len(steps), len(steps))
    groups = {
        g: tuple(fabric.cable(lk) for lk in links) for g, links in sorted(fabric.groups.items())
    }
    return TestPlan(
        design=design.name,
        design_hash=design_hash(design),
        revision=options.revision,
        topology=design.topology,
        protocol=r.protocol,
        line_rate_gbps=r.port_gbps,
        efficiency=r.efficiency,
        sections=(node, cabling, fabric_checks, linkq, rdma, pairs, nccl, *extra),
        coverage=chosen.coverage,
        link_groups=groups,
        devices=devices,
        options=options,
        nic_vendor=r.nic_vendor,
        gpu_vendor=r.gpu_vendor,
    )
