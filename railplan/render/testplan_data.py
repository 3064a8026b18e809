"""The test plan as data (YAML, JSON) for tools and as plain text for review and golden files."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import yaml

from railplan.testplan import Check, PlanTest, TestPlan, expectations

FORMAT_VERSION = 1

try:  # libyaml's emitter is an order of magnitude faster on 16k-GPU plans
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Dumper = yaml.SafeDumper


def _check(c: Check) -> dict[str, Any]:
    out: dict[str, Any] = {
        "metric": c.metric,
        "expected": c.expected,
        "threshold": c.threshold,
        "unit": c.unit,
        "better": c.better,
        "reason": c.reason,
    }
    if c.target is not None:
        out["target"] = c.target
    if c.curve:
        out["curve"] = list(c.curve)
    return out


def _test(t: PlanTest) -> dict[str, Any]:
    out: dict[str, Any] = {"id": t.id, "kind": t.kind, "title": t.title, "nodes": list(t.nodes)}
    if t.ports:
        out["ports"] = list(t.ports)
    if t.devices:
        out["devices"] = list(t.devices)
    if t.round:
        out["round"] = t.round
    out["command"] = list(t.command)
    if t.env:
        out["env"] = dict(t.env)
    out["checks"] = [_check(c) for c in t.checks]
    out["refs"] = list(t.refs)
    return out


def plan_to_dict(plan: TestPlan) -> dict[str, Any]:
    """Plain data: the whole plan, its coverage, link groups and the grader's expectations."""
    c = plan.coverage
    o = plan.options
    return {
        "format": FORMAT_VERSION,
        "design": plan.design,
        "design_hash": plan.design_hash,
        "revision": plan.revision,
        "topology": plan.topology,
        "protocol": plan.protocol,
        "line_rate_gbps": plan.line_rate_gbps,
        "rdma_efficiency": {"value": plan.efficiency.value, "source": plan.efficiency.source},
        "devices": list(plan.devices),
        "options": {
            "partners": o.partners,
            "gid_index": o.gid_index,
            "mtu": o.mtu,
            "lossless_priority": o.lossless_priority,
            "bw_tolerance": o.bw_tolerance,
            "nccl_bytes": [o.nccl_min_bytes, o.nccl_max_bytes],
        },
        "coverage": {
            "inter_switch_links": c.inter_switch_links,
            "covered_links": c.covered_links,
            "uncovered": list(c.uncovered),
            "nodes": c.nodes,
            "nodes_paired": c.nodes_paired,
            "partners": c.partners,
            "pairs": c.pairs,
            "rounds": c.rounds,
            "probes": c.probes,
            "pair_lower_bound": c.lower_bound,
            "solver": c.solver,
            "solver_bound": c.solver_bound,
            "exact": c.exact,
            "note": c.note,
        },
        "sections": [
            {"key": s.key, "title": s.title, "intro": s.intro, "tests": [_test(t) for t in s.tests]}
            for s in plan.sections
        ],
        "link_groups": {g: list(ids) for g, ids in plan.link_groups.items()},
        "expectations": [_expectation(e) for e in expectations(plan)],
    }


def _expectation(e: Any) -> dict[str, Any]:
    out = {
        "test_id": e.test_id,
        "kind": e.kind,
        "nodes": list(e.nodes),
        "metric": e.metric,
        "expected": e.expected,
        "threshold": e.threshold,
        "unit": e.unit,
        "better": e.better,
    }
    if e.ports:
        out["ports"] = list(e.ports)
    if e.target is not None:
        out["target"] = e.target
    if e.scope:
        out["scope"] = e.scope
    if e.devices:
        out["devices"] = list(e.devices)
    if e.curve:
        out["curve"] = list(e.curve)
    return out


def plan_to_json(plan: TestPlan) -> str:
    return json.dumps(plan_to_dict(plan), indent=1, sort_keys=False) + "\n"


def plan_to_yaml(plan: TestPlan) -> str:
    return yaml.dump(
        plan_to_dict(plan), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=100
    )


# -- plain text ----------------------------------------------------------------------------------


def _num(x: float) -> str:
    return f"{x:g}"


def check_line(c: Check) -> str:
    """``avg_busbw_gbs: expect 370.05 GB/s, pass >= 333.04 GB/s``."""
    op = {"higher": ">=", "lower": "<=", "equal": "=="}[c.better]
    unit = f" {c.unit}" if c.unit in ("GB/s", "Gb/s", "us") else ""
    return f"{c.metric}: expect {_num(c.expected)} {c.unit}, pass {op} {_num(c.threshold)}{unit}"


def _wrap(text: str, indent: str) -> list[str]:
    wrapped = textwrap.wrap(
        text, 96, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
    )
    return wrapped or [indent]


def plan_to_text(plan: TestPlan, max_refs: int = 12) -> str:
    """The plan as text: every test with commands, expectations, reasons and references."""
    c = plan.coverage
    lines = [
        f"ACCEPTANCE TEST PLAN  {plan.design}  design {plan.design_hash}  revision {plan.revision}",
        f"topology {plan.topology}, {plan.protocol}, {plan.line_rate_gbps} Gb/s ports, "
        f"RDMA efficiency {_num(plan.efficiency.value)} ({plan.efficiency.source})",
        f"devices {' '.join(plan.devices)}",
        f"coverage: {c.covered_links}/{c.inter_switch_links} switch-to-switch links, "
        f"{c.nodes_paired}/{c.nodes} nodes in {c.pairs} pairs ({c.rounds} rounds, "
        f"lower bound {c.lower_bound}, {c.solver}), {c.probes} rail-crossing probes",
        f"  {c.note}",
    ]
    if c.uncovered:
        lines.append(f"  NOT COVERED: {', '.join(c.uncovered[:max_refs])}")
    for n, section in enumerate(plan.sections, start=1):
        lines += ["", f"{n}. {section.title.upper()} ({len(section.tests)} tests)"]
        lines += _wrap(section.intro, "   ")
        for t in section.tests:
            lines += ["", f"   {t.id}  [{t.kind}]  {t.title}"]
            if t.nodes:
                lines.append(f"     nodes: {' '.join(t.nodes)}")
            for cmd in t.command:
                lines.append(f"     $ {cmd}")
            for ch in t.checks:
                lines.append(f"     {check_line(ch)}")
                lines += _wrap(ch.reason, "         ")
            if t.refs:
                more = f" (+{len(t.refs) - max_refs} more)" if len(t.refs) > max_refs else ""
                lines += _wrap("refs: " + ", ".join(t.refs[:max_refs]) + more, "     ")
    return "\n".join(lines) + "\n"
