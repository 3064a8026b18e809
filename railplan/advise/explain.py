"""Why this one: the ``recommend --json`` object and the sentences the command prints."""

from __future__ import annotations

from typing import Any

from railplan.advise.evaluate import Evaluation
from railplan.advise.requirements import AT_LEAST, failed, judge
from railplan.advise.search import Recommendation
from railplan.spec.requirements import RequirementsSpec

#: figures compared between two designs, with how they are printed
COMPARED = ("pairs_full", "alltoall", "pd", "worst_failure", "max_hops", "max_power_w")


def figures_json(ev: Evaluation) -> dict[str, Any]:
    sw = ev.summary.get("switches", {})
    return {
        "design": ev.candidate.label,
        "candidate": ev.candidate.as_dict(),
        "cost_usd": ev.cost_usd,
        "power_w": ev.power_w,
        "switches": sw,
        "tiers": ev.summary.get("tiers"),
        "links": ev.summary.get("links"),
        "figures": {k: v for k, v in ev.figures.items() if k not in ("budget_usd",)},
        "traffic": ev.traffic,
        "meets_requirements": ev.meets,
    }


def differences(a: Evaluation, b: Evaluation) -> dict[str, Any]:
    """What differs from ``a`` to ``b``: cost, switches, and each figure that is not equal."""
    out: dict[str, Any] = {
        "cost_usd": round(b.cost_usd - a.cost_usd, 2),
        "cost_pct": round(100 * (b.cost_usd - a.cost_usd) / a.cost_usd, 1) if a.cost_usd else 0.0,
    }
    sa, sb = a.summary.get("switches", {}), b.summary.get("switches", {})
    if sa.get("total") != sb.get("total"):
        out["switches"] = {"from": sa.get("total"), "to": sb.get("total")}
    for key in COMPARED:
        va, vb = a.figures.get(key), b.figures.get(key)
        if va is not None and vb is not None and abs(float(va) - float(vb)) > 1e-9:
            out[key] = {"from": va, "to": vb}
    return out


def difference_sentence(diff: dict[str, Any], base: str, other: str) -> str:
    parts = []
    for key, d in diff.items():
        if key in ("cost_usd", "cost_pct"):
            continue
        parts.append(f"{key} {_v(d['to'])} vs {_v(d['from'])}")
    more = diff["cost_usd"]
    word = "more" if more >= 0 else "less"
    head = f"{other} costs ${abs(more):,.0f} {word} ({diff['cost_pct']:+.1f}%) than {base}"
    return head + ("; it differs in " + ", ".join(parts) if parts else "; the figures are equal")


def _v(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
    return str(v)


def allowed_by(ev: Evaluation, defaults: RequirementsSpec) -> list[str]:
    """The default requirements ``ev`` fails: the stated ones that let it win."""
    return [
        f"{v.key}: it has {_v(v.value)}, the default wants "
        f"{'>=' if v.key in AT_LEAST else '<='} {_v(v.wanted)}"
        for v in failed(judge(defaults, ev.figures))
        if v.key not in ("budget_usd", "max_power_w")
    ]


def reference(rec: Recommendation, family: str = "roft") -> Evaluation | None:
    """The family's reference point the search evaluated (1:1, one plane, whole SUs)."""
    refs = [
        e
        for e in rec.evaluated
        if e.candidate.family == family
        and e.candidate.oversubscription == "1:1"
        and e.candidate.planes == 1
        and e.candidate.whole_su
        and e.candidate.su_nodes is None
    ]
    return min(refs, key=lambda e: (e.cost_usd, e.candidate.label)) if refs else None


def recommendation_json(rec: Recommendation) -> dict[str, Any]:
    """``recommended`` (the ``plan --json`` object plus ``requirements_met``), ``frontier``,
    ``rejected``, the requirements in force and the search's counts."""
    best = rec.recommended
    out: dict[str, Any] = {
        "requirements": rec.requirements.stated(),
        "requirements_given": list(rec.overridden),
        "recommended": None,
        "why": why(rec),
    }
    if best is not None:
        out["recommended"] = {
            **best.summary,
            "candidate": best.candidate.as_dict(),
            "design": best.candidate.label,
            "figures": {k: v for k, v in best.figures.items() if k != "budget_usd"},
            "traffic": best.traffic,
            "requirements_met": {v.key: v.as_dict() for v in best.verdicts},
        }
    frontier = []
    for ev in rec.frontier:
        item = figures_json(ev)
        item["recommended"] = best is not None and ev.candidate == best.candidate
        if best is not None and not item["recommended"]:
            item["vs_recommended"] = differences(best, ev)
        item["reason"] = "" if item["recommended"] else _lost(ev, best)
        frontier.append(item)
    out["frontier"] = frontier
    out["rejected"] = [
        {
            "family": r["family"],
            "model": r["model"],
            "design": r["candidate"].label if r["candidate"] is not None else None,
            "reason": r["reason"],
        }
        for r in rec.rejected
    ]
    out["search"] = dict(rec.stats)
    return out


def _lost(ev: Evaluation, best: Evaluation | None) -> str:
    from railplan.advise.search import lost_reason

    return lost_reason(ev, best)


def why(rec: Recommendation) -> list[str]:
    """The sentences that explain the answer: what it is, what it meets, what the ROFT
    reference would cost, which stated requirement let it win."""
    best = rec.recommended
    if best is None:
        closest = sorted(rec.evaluated, key=lambda e: (len(failed(e.verdicts)), e.cost_usd))
        lines = ["no candidate meets every requirement"]
        if closest:
            lines.append(f"closest: {closest[0].candidate.label}, which {_lost(closest[0], None)}")
        return lines
    lines = [
        f"recommended: {best.candidate.label} at ${best.cost_usd:,.0f} and "
        f"{best.power_w / 1000:,.1f} kW: the cheapest of {rec.stats.get('candidates', 0)} "
        "candidates that meets every requirement"
    ]
    met = ", ".join(v.sentence() for v in best.verdicts)
    lines.append(f"it meets {met}")
    ref = reference(rec)
    if ref is not None and ref.candidate != best.candidate:
        lines.append(
            difference_sentence(
                differences(best, ref),
                "the recommendation",
                f"the ROFT reference ({ref.candidate.label})",
            )
        )
    if rec.overridden:
        allowed = allowed_by(best, rec.baseline or RequirementsSpec())
        if allowed:
            lines.append(
                "the stated requirements allowed it; under the defaults it fails "
                + "; ".join(allowed)
            )
    return lines
