"""Drill-down screens: BOM lines, cable schedule with filter, hottest links, topology text."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Select, Static, TextArea
from textual.worker import get_current_worker

from railplan.catalog import Catalog
from railplan.errors import RailplanError
from railplan.model import Design
from railplan.tui.compute import Outcome
from railplan.tui.details import PATTERNS, Rows, bom_rows, cable_rows, filter_rows, hot_links
from railplan.tui.runner import InlineRunner
from railplan.tui.topotext import topology_text

#: rows a table shows at once (the filter narrows the rest)
MAX_ROWS = 5000


class DrillScreen(Screen[None]):
    """A full screen over one aspect of the current design; Escape goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back")]
    TITLE = ""

    def __init__(self, outcome: Outcome, catalog: Catalog) -> None:
        super().__init__()
        self.outcome = outcome
        self.catalog = catalog
        assert outcome.design is not None
        self.design = outcome.design

    def compose(self) -> ComposeResult:
        yield Static(f"{self.TITLE}: {self.design.name} ({self.design.topology})", id="drill-title")
        yield from self.body()
        yield Static("", id="drill-note")
        yield Footer()

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


class BomScreen(DrillScreen):
    """Every BOM line: part, kind, quantity, unit price and power, with the totals."""

    TITLE = "Bill of materials"

    def on_mount(self) -> None:
        why = "; ".join(w for w in self.outcome.warnings if w.startswith("bill:"))
        if self.outcome.bom is None and not why:
            why = "the bill is still being computed; come back in a moment"
        self.show_rows(bom_rows(self.outcome.bom, why))
        self.query_one(DataTable).focus()


class CablesScreen(DrillScreen):
    """The cable schedule of the completed design, narrowed by a search as you type."""

    TITLE = "Cable schedule"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("slash", "search", "Search"),
    ]

    def __init__(self, outcome: Outcome, catalog: Catalog) -> None:
        super().__init__(outcome, catalog)
        self.rows = Rows(("",), ())

    def body(self) -> ComposeResult:
        yield Input(placeholder="filter: words in any column", id="drill-filter", compact=True)
        yield from super().body()

    def on_mount(self) -> None:
        self.query_one("#drill-filter", Input).focus()
        full = self.outcome.full
        if full is None:
            why = "; ".join(w for w in self.outcome.warnings if w.startswith("bill:"))
            self.note(why or "the racks and cables are still being laid out; come back in a moment")
            return
        self.note("reading the cable schedule...")
        self.load(full)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self, full: Design) -> None:
        try:
            rows = cable_rows(full)
        except RailplanError as exc:
            self.app.call_from_thread(self.note, str(exc))
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._loaded, rows)

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

    def on_mount(self) -> None:
        self.analyze(PATTERNS[0])
        self.query_one(DataTable).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        self.analyze(str(event.value))

    @work(thread=True, exclusive=True, exit_on_error=False)
    def analyze(self, pattern: str) -> None:
        """Run the analyzer in a child process (killed if the pattern changes or we leave)."""
        worker = get_current_worker()
        self.app.call_from_thread(self.note, f"analyzing {pattern} traffic...")
        runner = getattr(self.app, "runner", None) or InlineRunner()
        for _, ok, value in runner.run(
            [("hot", hot_links, (self.design, pattern))],
            lambda: worker.is_cancelled or not self.is_attached,
        ):
            if not ok and not isinstance(value, RailplanError):
                raise value
            show = self.show_rows if ok else (lambda exc: self.note(str(exc)))
            self.app.call_from_thread(show, value)


class TopologyScreen(DrillScreen):
    """Tiers, groups and bundle counts of each plane, as text."""

    TITLE = "Topology"

    def body(self) -> ComposeResult:
        yield TextArea(topology_text(self.design), read_only=True, id="drill-text")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()


DRILLS: dict[str, Any] = {
    "bom": BomScreen,
    "cables": CablesScreen,
    "links": LinksScreen,
    "topology": TopologyScreen,
}
