"""Drill-down screens: BOM lines, cable schedule with filter, hottest links, topology text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Select, Static, TextArea
from textual.worker import get_current_worker

from railplan.errors import RailplanError
from railplan.tui.compute import METHOD_NAMES, Outcome
from railplan.tui.details import (
    PATTERNS,
    Rows,
    bom_rows,
    cables_of,
    filter_rows,
    growth_of,
    hot_links_of,
    topology_of,
)
from railplan.tui.host import Host

#: rows a table shows at once (the filter narrows the rest)
MAX_ROWS = 5000


class DrillScreen(Screen[None]):
    """A full screen over one aspect of the design on show; Escape goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back")]
    TITLE = ""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__()
        self.outcome = outcome
        assert outcome.summary is not None
        self.summary = outcome.summary

    @property
    def owner(self) -> Host:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        s = self.summary
        yield Static(f"{self.TITLE}: {s['name']} ({s['topology']})", id="drill-title")
        yield from self.body()
        # the note scrolls (Tab reaches it; arrows, Page Up/Down, the wheel) when it is longer
        # than its four lines
        with VerticalScroll(id="drill-note-box"):
            yield Static("", id="drill-note")
        yield Footer(compact=True, show_command_palette=False)

    def body(self) -> ComposeResult:
        yield DataTable(id="drill-table", zebra_stripes=True, cursor_type="row")

    def note(self, text: str) -> None:
        self.query_one("#drill-note", Static).update(text)

    def show_rows(self, rows: Rows, shown: list[tuple[str, ...]] | None = None) -> None:
        table = self.query_one("#drill-table", DataTable)
        table.clear(columns=True)
        table.add_columns(*rows.columns)
        body = rows.rows if shown is None else shown
        table.add_rows(body[:MAX_ROWS])
        more = f" (first {MAX_ROWS} of {len(body)})" if len(body) > MAX_ROWS else ""
        self.note(f"{len(body)} row(s){more}. {rows.note}".strip())

    def in_child(
        self, fn: Callable[..., Any], args: tuple[Any, ...], done: Callable[[Any], None]
    ) -> None:
        """Run a library call in a child process (stopped if we leave); show its result."""
        runner = self.owner.runner

        def job() -> None:
            worker = get_current_worker()
            for _, ok, value in runner.run([("drill", fn, args)], lambda: worker.is_cancelled):
                if not ok and not isinstance(value, RailplanError):
                    raise value
                self.app.call_from_thread(done if ok else self.note, value if ok else str(value))

        self.run_worker(job, thread=True, exclusive=True, exit_on_error=False)

    def on_unmount(self) -> None:
        # only this screen's own work: ``cancel_all`` would also stop the next drill-down's
        # worker and the app's refresh (the screen that opens next would wait forever)
        self.workers.cancel_node(self)

    def outcome_updated(self, outcome: Outcome) -> None:
        """The app has newer results for the design on show (e.g. the bill arrived)."""
        if (outcome.spec, outcome.family) == (self.outcome.spec, self.outcome.family):
            self.outcome = outcome


class BomScreen(DrillScreen):
    """Every BOM line: part, kind, count, length, prices, power and the price source."""

    TITLE = "Bill of materials"

    def on_mount(self) -> None:
        self._fill()
        self.query_one(DataTable).focus()

    def _fill(self) -> None:
        why = self.outcome.shown.warning if self.outcome.shown else ""
        self.show_rows(bom_rows(self.outcome.bom, why or "the bill is still being computed"))

    def outcome_updated(self, outcome: Outcome) -> None:
        had = self.outcome.bom
        super().outcome_updated(outcome)
        if self.outcome.bom is not had:
            self._fill()  # opened while the bill was being computed: show it when it comes


class CablesScreen(DrillScreen):
    """The cable schedule (first-fit racks, as billed), narrowed by a search as you type."""

    TITLE = "Cable schedule"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("slash", "search", "Search"),
    ]

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome)
        self.rows = Rows(("",), ())

    def body(self) -> ComposeResult:
        yield Input(placeholder="filter: words in any column", id="drill-filter", compact=True)
        yield from super().body()

    def on_mount(self) -> None:
        self.query_one("#drill-filter", Input).focus()
        out = self.outcome
        solved = out.shown is not None and out.shown.placement == "solved"
        method = "cp-sat" if solved else "naive"
        self.note(f"laying out racks and cables ({METHOD_NAMES[method]}, as billed)...")
        self.in_child(cables_of, (out.spec, self.owner.catalog, out.family, method), self._loaded)

    def _loaded(self, rows: Rows) -> None:
        self.rows = rows
        self.apply_filter()

    def apply_filter(self) -> None:
        query = self.query_one("#drill-filter", Input).value
        self.show_rows(self.rows, filter_rows(self.rows.rows, query))

    def on_input_changed(self, _: Input.Changed) -> None:
        self.apply_filter()

    def on_input_submitted(self, _: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def action_search(self) -> None:
        self.query_one("#drill-filter", Input).focus()


class LinksScreen(DrillScreen):
    """The analyzer's hottest links for a chosen traffic pattern."""

    TITLE = "Hottest links"

    def body(self) -> ComposeResult:
        yield Select(
            [(p, p) for p in PATTERNS],
            value=PATTERNS[0],
            allow_blank=False,
            compact=True,
            id="drill-pattern",
        )
        yield from super().body()

    pattern = ""

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.on_select_changed()

    def on_select_changed(self, _: Select.Changed | None = None) -> None:
        pattern = str(self.query_one("#drill-pattern", Select).value)
        if pattern != self.pattern:
            self.pattern = pattern
            self.analyze(pattern)

    def analyze(self, pattern: str) -> None:
        """Run the analyzer in a child process (killed if the pattern changes or we leave)."""
        self.note(f"analyzing {pattern} traffic...")
        out = self.outcome
        args = (out.spec, self.owner.catalog, out.family, pattern)
        self.in_child(hot_links_of, args, self.show_rows)


class TopologyText(TextArea):
    """The read-only topology text: F6 and F7 stay the app's keys (TextArea takes them to
    select a line and select all, which left the topology screen without Export)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f6", "app.toggle_compare", "Compare", show=False),
        Binding("f7", "app.export", "Export"),
    ]


class TopologyScreen(DrillScreen):
    """Tiers, groups and bundle counts of each plane, as text."""

    TITLE = "Topology"

    def body(self) -> ComposeResult:
        yield TopologyText("planning...", read_only=True, id="drill-text")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()
        out = self.outcome
        self.in_child(topology_of, (out.spec, self.owner.catalog, out.family), self._loaded)

    def _loaded(self, text: str) -> None:
        self.query_one(TextArea).text = text


class GrowthScreen(DrillScreen):
    """The phases of the build-out (typed here, saved with the spec): each step's change and
    the day-one pre-install, as ``railplan grow SPEC`` computes them."""

    TITLE = "Growth"

    def body(self) -> ComposeResult:
        from railplan.tui.formspec import phases_text

        phases = [{"name": p.name, "gpus": p.gpus} for p in self.outcome.spec.phases]
        yield Input(
            phases_text(phases),
            placeholder="phases, then Enter: su2=512, su4=1024",
            id="drill-phases",
            compact=True,
        )
        yield from super().body()

    def on_mount(self) -> None:
        self.query_one("#drill-phases", Input).focus()
        self.grow(self.outcome.spec)

    def grow(self, spec: Any) -> None:
        self.note("planning the final size and cutting each phase from it...")
        self.in_child(growth_of, (spec, self.owner.catalog), self.show_rows)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter: the typed phases join the spec (Save writes them) and the growth is planned."""
        from railplan.errors import SpecError
        from railplan.spec import spec_from_dict
        from railplan.tui.formspec import phases_data

        phases = phases_data(event.value)
        data = self.owner.spec_data()
        data["phases"] = phases
        try:
            spec = spec_from_dict(data)
        except SpecError as exc:
            self.note(str(exc))
            return
        self.owner.set_phases(phases)
        self.outcome = replace(self.outcome, spec=spec)
        self.grow(spec)


DRILLS: dict[str, Any] = {
    "bom": BomScreen,
    "cables": CablesScreen,
    "links": LinksScreen,
    "topology": TopologyScreen,
    "growth": GrowthScreen,
}
