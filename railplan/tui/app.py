"""The railplan TUI app: the spec form, live results from a worker, drill-downs and exports."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState, get_current_worker

from railplan.catalog import Catalog, load_catalog
from railplan.errors import RailplanError, SpecError
from railplan.spec import Spec
from railplan.tui.compute import Outcome, stages
from railplan.tui.form import SpecForm
from railplan.tui.formspec import (
    COMPARE,
    DEFAULT_VALUES,
    error_fields,
    form_data,
    form_spec,
    form_values,
    spec_base,
)
from railplan.tui.runner import ProcessRunner
from railplan.tui.style import CSS as STYLESHEET
from railplan.tui.views import compare_table, status_text, summary_table


class RailplanApp(App[None]):
    """Capture a cluster, see its fabric planned live, compare families, export the handouts."""

    TITLE = "railplan"
    CSS = STYLESHEET
    BINDINGS: ClassVar[list[BindingType]] = [
        # the footer fits 80 columns: F2-F5 share one entry (F1 lists each; every key works)
        Binding("f1", "help", "Help"),
        Binding("f2", "bom", "View", key_display="f2-f5"),
        Binding("f3", "cables", "Cables", show=False),
        Binding("f4", "links", "Links", show=False),
        Binding("f5", "topology", "Topo", show=False),
        Binding("f6", "toggle_compare", "Compare"),
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+o", "load", "Load"),
        Binding("f7", "export", "Export"),
        Binding("f8", "zoom", "Zoom"),
        Binding("escape", "to_form", "Form"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+g", "growth", "Growth", show=False),
    ]

    def __init__(
        self,
        spec: Spec | None = None,
        catalog: Catalog | None = None,
        spec_path: Path | None = None,
        debounce: float = 0.2,
        runner: Any = None,
        placement: str = "solve",
    ) -> None:
        super().__init__()
        self.runner = runner or ProcessRunner()
        self.catalog = catalog or load_catalog()
        self.base: dict[str, Any] = spec_base(spec) if spec is not None else {}
        self.initial = form_values(self.base) if spec is not None else dict(DEFAULT_VALUES)
        self.initial["placement"] = placement
        self.spec_path = spec_path
        self.debounce = debounce
        self.spec: Spec | None = None
        self.outcome: Outcome | None = None
        self.generation = 0
        #: the generation whose results are on screen (tests and the bench wait on it)
        self.shown = 0
        self._last_values: dict[str, str] | None = None
        self._timer: Timer | None = None
        self._pending = False

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield SpecForm(self.catalog, self.initial, id="form")
            with Vertical(id="results"):
                with TabbedContent(id="tabs", initial="tab-summary"):
                    with TabPane("Summary", id="tab-summary"), VerticalScroll():
                        yield Static(id="summary")
                    with TabPane("Compare", id="tab-compare"), VerticalScroll():
                        yield DataTable(id="compare-table", cursor_type="column", fixed_columns=1)
                        yield Static(id="compare-note")
                yield Static(id="status")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#form", SpecForm).border_title = "cluster"
        self.query_one("#results").border_title = "results"
        self.query_one("#f-gpus").focus()
        self.resubmit()

    # -- live refresh -----------------------------------------------------------------------
    @property
    def form(self) -> SpecForm:
        return self.query_one("#form", SpecForm)

    @property
    def compare_mode(self) -> bool:
        return (self._last_values or {}).get("topology") == COMPARE

    def on_spec_form_edited(self, _: SpecForm.Edited) -> None:
        self.resubmit()

    def resubmit(self, force: bool = False) -> None:
        """Validate the form now (the CLI's messages); plan it in a worker after a short pause."""
        values = self.form.values()
        if values == self._last_values and not force:
            return
        if not force and self._renamed(values):
            return
        was_compare = self.compare_mode
        self._last_values = values
        self.generation += 1
        if self._timer is not None:
            self._timer.stop()
        self.workers.cancel_group(self, "refresh")
        if self.compare_mode != was_compare:
            tab = "tab-compare" if self.compare_mode else "tab-summary"
            self.query_one("#tabs", TabbedContent).active = tab
        try:
            spec = form_spec(self.base, values)
        except SpecError as exc:
            self.spec = None
            self._show_error(str(exc))
            return
        self.spec = spec
        self.title = f"railplan: {spec.name}"
        self._speed_labels(spec)
        self._pending = True
        self._show_status()
        gen, compare = self.generation, self.compare_mode
        placement = values.get("placement") or "solve"
        self._timer = self.set_timer(
            self.debounce, lambda: self._refresh(gen, spec, compare, placement)
        )

    def _renamed(self, values: dict[str, str]) -> bool:
        """Only Name changed on a valid form: the design is the same, so keep the results and
        change the title (and the names Save and Export propose); no re-plan."""
        last = self._last_values
        if last is None or self.spec is None:
            return False
        if {k: v for k, v in values.items() if k != "name"} != {
            k: v for k, v in last.items() if k != "name"
        }:
            return False
        try:
            spec = form_spec(self.base, values)
        except SpecError:
            return False  # a bad name shows its message the usual way
        self._last_values = values
        self.spec = spec
        if self.outcome is not None:
            self.outcome = replace(self.outcome, spec=spec)
        self.title = f"railplan: {spec.name}"
        return True

    def _speed_labels(self, spec: Spec) -> None:
        from railplan.topology.shape import resolve_shape

        try:
            speed = resolve_shape(spec, self.catalog).port_speed_gbps
        except RailplanError:
            return
        self.form.set_speed(speed)

    @work(thread=True, exclusive=True, group="refresh", exit_on_error=False)
    def _refresh(self, gen: int, spec: Spec, compare_mode: bool, placement: str) -> None:
        worker = get_current_worker()

        def stale() -> bool:
            return worker.is_cancelled or gen != self.generation

        for out in stages(spec, self.catalog, compare_mode, self.runner, stale, placement):
            if stale():
                return
            self.call_from_thread(self._show, gen, out)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A bug in a refresh shows as a message, never as a crash or a silent stall."""
        worker = event.worker
        if worker.group == "refresh" and event.state == WorkerState.ERROR:
            self._show_error(f"internal error: {type(worker.error).__name__}: {worker.error}")

    def _show(self, gen: int, out: Outcome) -> None:
        if gen != self.generation:
            return
        self._pending = False
        self.shown = gen
        if self.spec is not None:
            out = replace(out, spec=self.spec)  # the same design; Name may have changed since
        self.outcome = out
        self.query_one("#summary", Static).update(summary_table(out))
        self._fill_compare(out)
        self.form.mark(error_fields(out.error))
        self._show_status()
        from railplan.tui.screens import DrillScreen

        for screen in self.screen_stack:
            if isinstance(screen, DrillScreen):
                screen.outcome_updated(out)

    def _fill_compare(self, out: Outcome) -> None:
        table = self.query_one("#compare-table", DataTable)
        note = self.query_one("#compare-note", Static)
        if not out.compare_mode:
            table.clear(columns=True)
            note.update("Choose topology 'compare all' (or press F6) to plan every family.")
            return
        column = table.cursor_column
        table.clear(columns=True)
        columns, rows = compare_table(out)
        for key, label in columns:
            table.add_column(label, key=key)
        table.add_rows(rows)
        table.move_cursor(column=max(1, min(column, len(columns) - 1)))
        table.scroll_to(x=0, animate=False)  # the fixed label column and the first families
        lines = [
            "* recommended: the cheapest bill with every pair test at full rate and all-to-all "
            ">= 0.9 (until traffic and bills are in: the cheapest); bills are on first-fit racks "
            "until the placement is solved. Enter on a column plans that family alone."
        ]
        lines += [f"{r.family}: {r.reason}" for r in out.rows if r.summary is None and r.reason]
        lines += [f"{r.family}: {r.warning}" for r in out.rows if r.warning]
        note.update("\n".join(lines))

    def _show_error(self, message: str) -> None:
        self._pending = False
        self.shown = self.generation
        self.outcome = None
        self.form.mark(error_fields(message))
        self.query_one("#summary", Static).update("")
        self.query_one("#status", Static).update(status_text(None, False, message))

    def _show_status(self) -> None:
        self.query_one("#status", Static).update(status_text(self.outcome, self._pending))

    def on_data_table_column_selected(self, event: DataTable.ColumnSelected) -> None:
        family = event.column_key.value
        if event.data_table.id == "compare-table" and family and family != "what":
            self.form.set_values({"topology": str(family)})

    # -- state for screens and tests ----------------------------------------------------------
    def spec_data(self) -> dict[str, Any]:
        """The spec data the form describes (what Save writes): comparing keeps the spec's own
        topology, the design on show; only picking a column (Enter) changes it."""
        return form_data(self.base, self.form.values())

    def set_phases(self, phases: list[dict[str, Any]]) -> None:
        """The build-out phases typed in the Growth view: kept in the spec Save writes."""
        if phases:
            self.base["phases"] = phases
        else:
            self.base.pop("phases", None)
        if self.spec is not None:
            self.spec = form_spec(self.base, self.form.values())

    def load_spec(self, spec: Spec, path: Path | None = None) -> None:
        """Replace the form with a spec (from Load or the command line)."""
        self.base = spec_base(spec)
        self.spec_path = path
        self.form.set_values(form_values(self.base))
        self.sub_title = str(path) if path else ""

    # -- actions ------------------------------------------------------------------------------
    #: keys of the main screen only: on a drill-down they would change the form under it
    #: (F6) or do nothing (F8), and leaving them out lets the footer show every key at 80 columns
    MAIN_ONLY = frozenset({"toggle_compare", "zoom"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        from railplan.tui.screens import DrillScreen

        return not (action in self.MAIN_ONLY and isinstance(self.screen, DrillScreen))

    def action_toggle_compare(self) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        if not self.compare_mode:
            self.form.set_values({"topology": COMPARE})
            tabs.active = "tab-compare"
        else:
            tabs.active = "tab-summary" if tabs.active == "tab-compare" else "tab-compare"

    def action_zoom(self) -> None:
        """Give the results the whole width (F8 again brings the form back)."""
        self.screen.toggle_class("-zoom")

    def action_to_form(self) -> None:
        """Escape on the main screen: back to the form (out of the F8 zoom, if on)."""
        self.screen.remove_class("-zoom")
        self.query_one("#f-gpus").focus()

    def action_help(self) -> None:
        from railplan.tui.dialogs import HelpScreen

        self.push_screen(HelpScreen())

    def _design_screen(self, kind: str) -> None:
        from railplan.tui.screens import DRILLS, DrillScreen

        out = self.outcome
        if isinstance(self.screen, DrillScreen):
            out = self.screen.outcome  # from one drill-down to another, same design
            self.pop_screen()
        if out is None or out.summary is None:
            self.notify("Nothing planned yet: fix the form first.", severity="warning")
            return
        self.push_screen(DRILLS[kind](out))

    def action_bom(self) -> None:
        self._design_screen("bom")

    def action_cables(self) -> None:
        self._design_screen("cables")

    def action_links(self) -> None:
        self._design_screen("links")

    def action_topology(self) -> None:
        self._design_screen("topology")

    def action_growth(self) -> None:
        self._design_screen("growth")

    def action_save(self) -> None:
        from railplan.tui.dialogs import SaveDialog

        self.push_screen(SaveDialog(self))

    def action_load(self) -> None:
        from railplan.tui.dialogs import LoadDialog

        self.push_screen(LoadDialog(self))

    def action_export(self) -> None:
        from railplan.tui.dialogs import ExportDialog

        if self.outcome is None or self.outcome.summary is None:
            self.notify("Nothing to export yet: wait for the plan or fix the form.")
            return
        self.push_screen(ExportDialog(self, self.outcome))


def run(spec: Spec | None = None, catalog: Catalog | None = None, path: Path | None = None) -> None:
    """Run the TUI in the terminal (``railplan tui [SPEC]``)."""
    RailplanApp(spec, catalog, path).run()
