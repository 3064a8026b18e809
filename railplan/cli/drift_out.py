"""`asbuilt --since`: read the earlier capture, compare it with this one, print the drift."""

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from railplan.cli.common import print_json, write_atomic

if TYPE_CHECKING:
    from railplan.design import Design
    from railplan.field.drift import DriftReport


def since_drift(
    design: "Design",
    names: Path | None,
    lldp: list[Path],
    ibnetdiscover: Path | None,
    iblinkinfo: Path | None,
    since: list[Path] | None,
    since_ib: Path | None,
) -> "DriftReport":
    """The drift from the earlier capture (``since``) to this one."""
    from railplan.field.drift import drift, read_capture
    from railplan.field.names import NameMap

    name_map = NameMap.load(design, names)
    new = read_capture(design, name_map, lldp, ibnetdiscover, iblinkinfo)
    old = read_capture(design, name_map, since or [], since_ib)
    return drift(design, name_map, old, new)


def show_drift(result: Any, drift: "DriftReport", json_out: bool, report: Path | None) -> None:
    """Print the drift after the plan check (one JSON object holding both with --json)."""
    from railplan.cli.show import print_table, rows_table
    from railplan.render.change_report import drift_markdown, drift_rows

    if report is not None:
        from railplan.render.field_report import report_markdown

        write_atomic(report, report_markdown(result) + "\n" + drift_markdown(drift))
    if json_out:
        out = result.to_json()
        out["drift"] = drift.to_json()
        print_json(out)
        return
    header, rows = drift_rows(drift)
    if rows:
        print_table(rows_table("changes since the earlier capture", header, rows))
    typer.echo(drift.summary_line())
