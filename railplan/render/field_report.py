"""Markdown reports of the as-built check and of graded results (the PDF renderer can reuse them).

Every value from outside (capture names, messages quoting them, file names) goes through
``railplan.safe_text.markdown``: no HTML tag, link or emphasis is made from a name.
"""

from __future__ import annotations

from collections.abc import Sequence

from railplan.field.asbuilt import AsBuiltReport
from railplan.field.grade import GradeReport
from railplan.safe_text import markdown

#: fabric suspects listed in the Markdown report (the JSON has them all)
SUSPECT_ROWS = 25


def _cell(text: object) -> str:
    return markdown(text)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown pipe table (cells escaped); empty rows give just the header."""
    out = ["| " + " | ".join(_cell(h) for h in header) + " |"]
    out.append("|" + "|".join("---" for _ in header) + "|")
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def asbuilt_markdown(report: AsBuiltReport) -> str:
    """The as-built check: verdict, counts, one row per finding, then warnings."""
    lines = [f"# As-built cabling check: {markdown(report.design)}", ""]
    verdict = "PASS: the cabling matches the plan" if report.ok else "FAIL: fix the cables below"
    lines += [f"**{verdict}**", "", markdown(report.summary_line()), ""]
    counts = report.counts()
    lines += [table(["status", "links"], [(k, v) for k, v in counts.items()]), ""]
    if report.findings:
        lines += ["## Findings", ""]
        lines += [table(report.summary_header, report.summary_rows()), ""]
    warnings = [*report.warnings, *([report.dropped] if report.dropped else [])]
    if warnings:
        lines += ["## Warnings", ""] + [f"- {markdown(w)}" for w in warnings] + [""]
    if report.inputs:
        lines += ["## Inputs", ""] + [f"- {markdown(p)}" for p in report.inputs] + [""]
    return "\n".join(lines)


def grade_markdown(report: GradeReport) -> str:
    """Graded results: verdict, status counts, failures first, diagnosis, then every test."""
    counts = report.counts()
    lines = [f"# Acceptance test results: {markdown(report.design)}", ""]
    verdict = "PASS" if report.ok else "FAIL"
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
    lines += [f"**{verdict}**: {summary or 'no expectations'} ({len(report.results)} checks)", ""]
    failed = report.failed()
    if failed:
        lines += ["## Failures", ""]
        rows = [
            (r.test_id, " ".join(r.nodes), r.metric, _num(r.measured), r.status, r.detail)
            for r in failed
        ]
        lines += [table(["test", "nodes", "metric", "measured", "status", "detail"], rows), ""]
    d = report.diagnosis
    if d.node_faults or d.suspects or d.next_tests or d.notes:
        lines += ["## Diagnosis", ""]
        if d.node_faults:
            lines += (
                ["### Node faults", ""] + [f"- {markdown(f.message)}" for f in d.node_faults] + [""]
            )
        if d.suspects:
            lines += ["### Fabric suspects", ""]
            lines.append(
                "Links every unexplained slow pair may cross and no fast pair must cross, most "
                "likely first."
            )
            lines.append("")
            rows2: list[tuple[object, ...]] = [
                (s.label, s.a, s.b, s.slow_pairs, s.fast_pairs_may_cross)
                for s in d.suspects[:SUSPECT_ROWS]
            ]
            if len(d.suspects) > SUSPECT_ROWS:
                rows2.append((f"... {len(d.suspects) - SUSPECT_ROWS} more", "", "", "", ""))
            lines += [
                table(
                    ["cable", "a end", "b end", "slow pairs", "fast pairs that may cross"], rows2
                ),
                "",
            ]
        if d.next_tests:
            lines += ["### Next test", ""] + [f"- {markdown(t)}" for t in d.next_tests] + [""]
        if d.notes:
            lines += [f"> {markdown(n)}" for n in d.notes] + [""]
    lines += ["## All results", "", table(report.summary_header, report.summary_rows()), ""]
    if report.unmatched:
        lines += (
            ["## Files no test claims", ""] + [f"- {markdown(u)}" for u in report.unmatched] + [""]
        )
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


__all__ = ["asbuilt_markdown", "grade_markdown", "table"]


def report_markdown(report: AsBuiltReport | GradeReport) -> str:
    """The Markdown of an as-built or a grade report."""
    if isinstance(report, AsBuiltReport):
        return asbuilt_markdown(report)
    return grade_markdown(report)
