"""The TUI is a shell over the library: its numbers and messages are the CLI's (run_test pilots)."""

from __future__ import annotations

import asyncio
import functools
import io
import json
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select, Static

import railplan
from railplan.design.summary import plan_summary
from railplan.pipeline.build import build
from railplan.pipeline.layout import complete
from railplan.tui.app import RailplanApp
from railplan.tui.exports import FILES
from railplan.tui.form import SpecForm
from railplan.tui.formspec import form_data, form_message, form_spec, form_values, spec_base
from railplan.tui.views import COMPARE_ROWS, tiers_line, total_line

from .conftest import EXAMPLES

SIZE = (100, 32)


def sync(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async pilot test with asyncio (no pytest async plugin needed)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def screen_text(app: RailplanApp) -> str:
    """What the terminal shows, as plain text."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), record=True, color_system=None
    )
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


def status(app: RailplanApp) -> str:
    content = app.query_one("#status", Static).content
    return getattr(content, "plain", str(content))


async def settle(app: RailplanApp, pilot: Pilot[Any], done: bool = False) -> None:
    """Wait until the latest edit's plan (or its error) is on screen; ``done``: every stage."""
    await pilot.pause(app.debounce + 0.03)
    deadline = time.monotonic() + 600  # a loaded CI machine: wait for the work, never race it
    while time.monotonic() < deadline:
        await pilot.pause(0.01)
        out = app.outcome
        shown = app.shown == app.generation and (out is None or out.summary or out.error)
        if shown and (not done or out is None or out.done):
            break
    await pilot.pause()


async def type_into(pilot: Pilot[Any], field: str, text: str) -> None:
    """Focus a form field, select its text and type over it (keys only, like a user)."""
    app = pilot.app
    widget = app.query_one(f"#f-{field}", Input)
    widget.focus()
    await pilot.pause()
    await pilot.press("end", "shift+home")
    await pilot.press(*(list(text) or ["backspace"]))


async def choose(pilot: Pilot[Any], field: str, value: str) -> None:
    """Open a select with Enter, walk to ``value`` with the arrow keys, Enter."""
    select = pilot.app.query_one(f"#f-{field}", Select)
    values = [v for _, v in select._options]
    select.focus()
    await pilot.press("enter")
    await pilot.pause()
    here = values.index(select.value)
    there = values.index(value)
    key = "down" if there > here else "up"
    await pilot.press(*([key] * abs(there - here)), "enter")
    assert select.value == value


def cli_json(cli: Any, *args: str) -> dict[str, Any]:
    """``railplan plan ARGS --json``, run in-process (before or after the app runs)."""
    result = cli("plan", *args, "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)


#: what ``railplan plan --json`` adds to the plan summary when it lays out and bills
BILL_KEYS = ("bom", "totals", "bom_notes", "solver")


def counts(cli_out: dict[str, Any]) -> dict[str, Any]:
    """The plan summary part of ``railplan plan --json`` (without bill and solver keys)."""
    return {k: v for k, v in cli_out.items() if k not in BILL_KEYS}


def cli_error(cli: Any, *args: str) -> str:
    """The CLI's message for bad input, without its ``railplan: error:`` and where prefixes."""
    result = cli("plan", *args)
    assert result.code == 2
    line = result.err.strip().removeprefix("railplan: error: ")
    return line.removeprefix("flags: ")


SMALL = {"cluster": {"gpus": 64, "node": "hgx-h100-8x400g"}, "fabric": {"switches": ["qm9700"]}}


def app(start: dict[str, Any] | None = None, **kwargs: Any) -> RailplanApp:
    """The TUI started on a small cluster (fast stages), debounce short for tests."""
    spec = railplan.spec_from_dict(start or SMALL)
    return RailplanApp(spec, debounce=0.02, **kwargs)


# -- acceptance: type a cluster, switch topology, the counts are `railplan plan --json`'s ------


@sync
async def test_typed_cluster_and_topology_switch_show_the_cli_counts(cli, catalog):
    flags = ("--gpus", "512", "--node", "dgx-h100", "--switch", "qm9700")
    roft = cli_json(cli, *flags, "--topology", "roft")
    matrix = cli_json(cli, *flags, "--topology", "matrix", "--no-layout")
    assert matrix["switches"] != roft["switches"]
    more = ("--gpus", "256", "--node", "dgx-h100", "--planes", "2", "--topology", "fat-tree")
    expected = cli_json(cli, *more, "--no-layout")
    tui = app()
    async with tui.run_test(size=SIZE) as pilot:
        await type_into(pilot, "gpus", "512")
        await choose(pilot, "node", "dgx-h100")
        await settle(tui, pilot, done=True)
        out = tui.outcome
        assert out is not None and out.summary == counts(roft)
        assert out.totals == roft["totals"]  # the bill on the solved placement, as the CLI's
        shown = screen_text(tui)
        assert tiers_line(roft) in shown and total_line(roft) in shown
        assert f"${roft['totals']['cost_usd']:,.0f}" in shown

        await choose(pilot, "topology", "matrix")
        await settle(tui, pilot)
        assert tui.outcome.summary == counts(matrix)
        shown = screen_text(tui)
        assert tiers_line(matrix) in shown and total_line(matrix) in shown
        assert tiers_line(roft) not in shown

        # several switch models allowed: the CLI's choice, the CLI's counts
        await type_into(pilot, "gpus", "256")
        await type_into(pilot, "planes", "2")
        await choose(pilot, "switch", "auto")
        await choose(pilot, "topology", "fat-tree")
        await settle(tui, pilot)
        spec = railplan.spec_from_dict(tui.spec_data())
        assert spec.cluster.gpus == 256 and spec.fabric.planes == 2
        assert spec.fabric.topology == "fat-tree" and spec.fabric.switches is None
        assert tui.outcome.summary == counts(expected)
        assert tiers_line(expected) in screen_text(tui)


# -- acceptance: an invalid value shows the CLI's message, and no crash -------------------------


INVALID = [
    ("gpus", "100", ("--gpus", "100", "--node", "hgx-h100-8x400g")),
    ("gpus", "0", ("--gpus", "0", "--node", "hgx-h100-8x400g")),
    (
        "oversubscription",
        "1:3",
        ("--gpus", "64", "--node", "hgx-h100-8x400g", "--oversubscription", "1:3"),
    ),
    ("planes", "3", ("--gpus", "64", "--node", "hgx-h100-8x400g", "--planes", "3")),
    (
        "nodes_per_rack",
        "x",
        ("--gpus", "64", "--node", "hgx-h100-8x400g", "--set", "layout.nodes_per_rack=x"),
    ),
]
FIXED = {"gpus": "64", "oversubscription": "1:1", "planes": "1", "nodes_per_rack": "4"}


@sync
async def test_invalid_values_show_the_cli_message(cli):
    expected = [cli_error(cli, *flags) for _, _, flags in INVALID]
    tui = app()
    async with tui.run_test(size=SIZE) as pilot:
        await settle(tui, pilot)
        for (field, text, _), message in zip(INVALID, expected, strict=True):
            await type_into(pilot, field, text)
            await settle(tui, pilot)
            assert status(tui) == form_message(message), field  # the CLI's, in the form's words
            assert tui.query_one(f"#row-{field}").has_class("-invalid")
            # fix it: the message goes, the design comes back
            await type_into(pilot, field, FIXED[field])
            await settle(tui, pilot)
            assert tui.outcome is not None and tui.outcome.summary is not None
            assert tui.outcome.error == "" and message not in status(tui)
            assert not tui.query_one(f"#row-{field}").has_class("-invalid")


@sync
async def test_infeasible_cluster_shows_the_planner_reason(cli):
    # beyond 8 planes of 32-port switches: no candidate holds it, so the refusal is immediate
    # (with qm9700 the advisor first evaluates the multi-plane designs that do hold it)
    flags = ("--gpus", "131072", "--node", "hgx-h100-8x400g", "--switch", "cx732q-n")
    # the CLI's advisor refuses for every candidate it tries (tests/test_recommend_refusal.py);
    # the form plans the field rule, a ROFT here, and shows the planner's reason for it
    assert "hold at most" in cli_error(cli, *flags)
    expected = cli_error(cli, *flags, "--topology", "roft")
    assert "holds at most" in expected
    tui = app()
    async with tui.run_test(size=SIZE) as pilot:
        await choose(pilot, "switch", "cx732q-n")
        await type_into(pilot, "gpus", "131072")
        await settle(tui, pilot)
        assert status(tui) == form_message(expected)
        assert tui.query_one("#row-gpus").has_class("-invalid")


# -- compare view ----------------------------------------------------------------------------


@sync
async def test_compare_all_lists_every_family_and_marks_the_recommended(cli):
    result = cli(
        "compare", "--gpus", "256", "--node", "hgx-h100-8x400g", "--switch", "qm9700", "--json"
    )
    assert result.code == 0, result.err
    listed = json.loads(result.out)
    by_family = {d["topology"]: d for d in listed["designs"]}
    reasons = {d["topology"]: d["reason"] for d in listed["infeasible"]}
    tui = app()
    async with tui.run_test(size=SIZE) as pilot:
        await type_into(pilot, "gpus", "256")
        await choose(pilot, "topology", "compare")
        await settle(tui, pilot, done=True)
        out = tui.outcome
        assert out is not None and out.done
        table = tui.query_one("#compare-table", DataTable)
        families = [str(c.key.value) for c in table.ordered_columns][1:]
        assert sorted(families) == sorted(["roft", "matrix", "fat-tree", "rail-only"])
        for row in out.rows:
            if row.family in reasons:
                assert row.summary is None and row.reason == reasons[row.family]
                continue
            cli_row = by_family[row.family]
            assert row.summary == {k: v for k, v in cli_row.items() if k in row.summary}
            assert row.max_hops == cli_row["max_hops"]
            assert row.inter_switch_links == cli_row["inter_switch_links"]
            assert row.totals == cli_row["totals"]  # solved placement, as railplan compare
            assert row.collisions == cli_row["traffic"]
            column = list(table.get_column(row.family))
            total = str(column[COMPARE_ROWS.index("switches")])
            assert total == str(cli_row["switches"]["total"])
        meeting = [
            d
            for d in listed["designs"]
            if d["traffic"]["pairs"]["fraction_full"] >= 1.0
            and d["traffic"]["alltoall"]["collective_fraction"] >= 0.9
        ]
        best = min(meeting, key=lambda d: d["totals"]["cost_usd"])["topology"]
        assert out.recommended == best and out.summary is not None
        assert families[0] == best  # first, so a narrow terminal shows it
        # comparing never swaps the design being edited: the spec's own family is on show (a
        # spec leaving the topology to railplan: the recommended one), and Save writes it
        own = railplan.spec_from_dict(tui.spec_data()).fabric.topology
        assert out.summary["topology"] == (best if own == "auto" else own)
        labels = {str(c.key.value): str(c.label) for c in table.ordered_columns}
        assert labels[best] == f"* {best}"
        assert all(not labels[f].startswith("*") for f in families if f != best)
        # Enter on a family's column plans that family alone
        table.focus()
        table.move_cursor(column=1 + families.index("fat-tree"))
        await pilot.press("enter")
        await settle(tui, pilot)
        assert tui.query_one("#f-topology", Select).value == "fat-tree"
        assert tui.outcome.summary["topology"] == "fat-tree"


# -- acceptance: exporting writes the files -----------------------------------------------------


@sync
async def test_export_writes_the_files(tmp_path: Path, monkeypatch, catalog):
    monkeypatch.chdir(tmp_path)
    tui = app()
    async with tui.run_test(size=SIZE) as pilot:
        await type_into(pilot, "gpus", "64")
        await settle(tui, pilot, done=True)
        await pilot.press("f7")
        await pilot.pause()
        await pilot.press("end", "shift+home", *"out", "enter")
        for _ in range(3000):
            await pilot.pause(0.01)
            if not tui.screen.running:  # type: ignore[attr-defined]
                break
        folder = tmp_path / "out"
        assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)
        spec = railplan.load_spec(folder / "spec.yaml")
        design = railplan.design_from_json((folder / "design.json").read_text())
        assert railplan.check(design) == [] and design.cables
        assert plan_summary(design) == plan_summary(railplan.plan(spec, catalog))
        assert tui.outcome is not None and plan_summary(design) == tui.outcome.summary
        assert (folder / "cables.csv").read_text().count("\n") == len(design.cables) + 1
        for pdf in ("sheets.pdf", "testplan.pdf"):
            assert (folder / pdf).read_bytes().startswith(b"%PDF")
        assert f"wrote {len(FILES)} file(s)" in str(
            tui.screen.query_one("#dialog-message", Static).content
        )
        await pilot.press("escape")


@sync
async def test_save_spec_then_load_specs_good_and_bad(tmp_path: Path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "example.yaml").write_text((EXAMPLES / "h100-1k.yaml").read_text())
    (tmp_path / "broken.yaml").write_text("cluster:\n  gpus: [1, 2\n")
    (tmp_path / "unknown.yaml").write_text("cluster:\n  gpus: 64\n  node: dgx-z9\n")
    expected = {p: cli_error(cli, p) for p in ("broken.yaml", "unknown.yaml")}
    example = plan_summary(railplan.plan(railplan.load_spec(EXAMPLES / "h100-1k.yaml")))
    tui = app()
    async with tui.run_test(size=SIZE) as pilot:
        await type_into(pilot, "gpus", "512")
        await type_into(pilot, "nodes_per_rack", "2")
        await settle(tui, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("end", "shift+home", *"mine.yaml", "enter")
        await pilot.pause()
        saved = railplan.load_spec(tmp_path / "mine.yaml")
        assert saved.cluster.gpus == 512 and saved.layout.nodes_per_rack == 2

        await pilot.press("ctrl+o")
        await pilot.pause()
        await pilot.press(*"example.yaml", "enter")
        await settle(tui, pilot)
        assert tui.query_one("#f-switch", Select).value == "qm9700"
        assert tui.query_one("#f-name", Input).value == "h100-1k"
        assert tui.outcome is not None and tui.outcome.summary == example

        await pilot.press("ctrl+o")
        await pilot.pause()
        await pilot.press(*"broken.yaml", "enter")
        await pilot.pause()
        message = tui.screen.query_one("#dialog-message", Static).content
        assert expected["broken.yaml"] in str(message)  # the dialog stays open with the message
        await pilot.press("end", "shift+home", *"unknown.yaml", "enter")
        await settle(tui, pilot)
        assert tui.query_one("#f-node", Select).value == "dgx-z9"
        # the loaded file is now the form: the CLI's refusal without the file, the field marked
        assert status(tui) == form_message(expected["unknown.yaml"].removeprefix("unknown.yaml: "))
        assert tui.query_one("#row-node").has_class("-invalid")


# -- drill-down screens --------------------------------------------------------------------------


@sync
async def test_drill_down_screens_open_filter_and_close(catalog):
    tui = app()
    async with tui.run_test(size=SIZE) as pilot:
        await settle(tui, pilot, done=True)
        out = tui.outcome
        assert out is not None and out.bom is not None and out.shown is not None
        assert out.shown.placement == "solved"
        spec = railplan.spec_from_dict(tui.spec_data())
        design = build(spec, catalog, layout=False).design
        cables = complete(design, spec, catalog)[0].cables
        for key, title in (
            ("f2", "Bill of materials"),
            ("f4", "Hottest links"),
            ("f5", "Topology"),
            ("f3", "Cable schedule"),
        ):
            await pilot.press(key)
            await pilot.pause()
            await tui.workers.wait_for_complete()
            await pilot.pause()
            assert title in screen_text(tui)
            if key == "f3":
                break
            if key == "f2":
                table = tui.screen.query_one(DataTable)
                assert table.row_count == len(out.bom.lines)
            if key == "f5":
                text = screen_text(tui)
                assert "plane 0" in text and "node-leaf" in text
            await pilot.press("escape")
            await pilot.pause()
            assert tui.query_one("#form", SpecForm)
        # the cable schedule: every cable, narrowed by typing
        table = tui.screen.query_one(DataTable)
        assert table.row_count == len(cables)
        first = str(table.get_row_at(0)[0])
        await pilot.press(*first)
        await pilot.pause()
        assert table.row_count == 1
        await pilot.press("escape", "f1")
        await pilot.pause()
        assert "railplan TUI" in screen_text(tui)


# -- the form is the spec: every example survives a round trip through its fields -----------


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_form_fields_round_trip_every_example(example: Path):
    spec = railplan.load_spec(example)
    base = spec_base(spec)
    assert form_spec(base, form_values(base)) == spec
    # a custom node described field by field is what `--set cluster.*=...` gives
    custom = dict(form_values(base), node="custom", gpus_per_node="8", nics_per_node="4")
    custom.update(ports_per_nic="2", port_speed_gbps="200", nic="auto")
    data = form_data(base, custom)
    assert data["cluster"] == {
        "gpus": spec.cluster.gpus,
        "gpus_per_node": 8,
        "nics_per_node": 4,
        "ports_per_nic": 2,
        "port_speed_gbps": 200,
    }


# -- acceptance: the core imports no textual ----------------------------------------------------


def test_core_and_cli_import_no_textual():
    code = (
        "import sys, importlib, railplan, railplan.design.summary; "
        "importlib.import_module('railplan.cli.app')._load_commands(); "
        "import railplan.tui.compute, railplan.tui.formspec, railplan.tui.views; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tui_command_is_registered(cli):
    result = cli("tui", "--help")
    assert result.code == 0 and "SPEC" in result.out.upper()
    missing = cli("tui", "no-such-spec.yaml")
    assert missing.code == 2
    assert missing.err.strip() == "railplan: error: spec file no-such-spec.yaml does not exist"
