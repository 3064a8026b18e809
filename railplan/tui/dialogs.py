"""Dialogs: help, save spec, load spec, export files (with progress); all keyboard-driven."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import (
    Checkbox,
    DirectoryTree,
    Input,
    Label,
    Markdown,
    ProgressBar,
    Static,
)
from textual.worker import get_current_worker

from railplan.errors import RailplanError
from railplan.tui.compute import Outcome
from railplan.tui.exports import FILES, STEPS, export_stream, read_spec, save_spec
from railplan.tui.host import Host

HELP = """\
# railplan TUI

Describe the cluster on the left; the fabric is planned as you type, with the same library
calls (and the same error messages) as `railplan plan`.

| key | what |
|---|---|
| Tab / Shift+Tab | next / previous field |
| Enter | open a choice list; in the compare table, plan that family |
| F1 | this help |
| F2 | bill of materials, line by line |
| F3 | cable schedule (type to filter, `/` to search again) |
| F4 | hottest links for a traffic pattern |
| F5 | topology as text: tiers, groups, bundles |
| F6 | compare every family side by side (cheapest marked `*`) |
| Ctrl+S | save the spec as YAML (beside an opened spec; asks before replacing a file) |
| Ctrl+O | load a spec (.yaml) or a design.json |
| F7 | export {files} |
| F8 | results full width (hide the form) and back |
| Escape | back / close; on the main screen, back to the form |
| Ctrl+Q | quit |
| Ctrl+G | growth: type the phases (`su2=512, su4=1024`, Enter); moves, delta bill, pre-install |

Empty fields take the spec's defaults: GPUs/node, NICs/node, ports and speed come from
the node model; "any (auto)" lets railplan choose among every catalog switch that runs the
NIC speed (radix shown at that speed). "compare all" builds every family side by side and
shows the cheapest (first column, marked `*`).

Numbers may be grouped: `1,024`, `1 024` and `1_024` all read 1024. Typed Ports/NIC or
Port Gb/s replace the chosen NIC's figures (a note under NIC says which). Name only names
the design, its title and the files Save and Export propose: editing it never re-plans.
Errors name the form's labels (GPUs, Planes, ...) where the CLI names spec fields.

Counts appear first, then the traffic figures (as `railplan compare`), then a bill on
first-fit racks and, with Bill racks "solved", the bill on the solved switch placement: the
figures `railplan plan --json` prints. The work runs in child processes, so typing never
waits; an edit stops the stale work. Every number comes from the library, as on the CLI.
""".replace("{files}", ", ".join(FILES))


class Dialog(ModalScreen[None]):
    """A centred box; Escape closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, app: Host) -> None:
        super().__init__()
        self.owner = app

    def action_close(self) -> None:
        self.dismiss()

    def message(self, text: str, style: str = "") -> None:
        self.query_one("#dialog-message", Static).update(f"[{style}]{text}[/]" if style else text)


class HelpScreen(ModalScreen[None]):
    """Key bindings and how the TUI relates to the CLI."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("f1", "dismiss", "Close", show=False),
    ]

    DEFAULT_CSS = "HelpScreen { align: center middle; }"

    def compose(self) -> ComposeResult:
        # a focused scroll container: Up/Down, Page Up/Down, Home/End and the mouse wheel scroll
        with VerticalScroll(id="help-scroll"):
            yield Markdown(HELP, id="help")

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()


def save_default(spec_path: Path | None, name: str) -> Path:
    """Where Save proposes to write: beside the spec the form came from (``NAME-tui.yaml``, so
    the original and its comments stay as they are), else ``NAME.yaml`` here."""
    if spec_path is not None and spec_path.suffix.lower() in (".yaml", ".yml"):
        return spec_path.with_name(f"{spec_path.stem}-tui.yaml")
    return Path.cwd() / f"{name}.yaml"


class SaveDialog(Dialog):
    """Save the form's spec as YAML; asks before replacing a file, never creates folders."""

    confirmed: Path | None = None

    def compose(self) -> ComposeResult:
        name = str(self.owner.spec_data().get("name", "cluster"))
        default = save_default(self.owner.spec_path, name)
        with Vertical(id="dialog"):
            yield Label("Save spec (YAML) to", id="dialog-title")
            yield Input(str(default), id="dialog-path")
            yield Static("Enter saves, Escape cancels.", id="dialog-message")

    def on_input_changed(self, _: Input.Changed) -> None:
        self.confirmed = None  # a changed path asks again

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = Path(event.value).expanduser()
        if not path.parent.is_dir():
            self.message(
                f"the folder {path.parent} does not exist; create it first or choose another path",
                "bold red",
            )
            return
        if path.is_dir():
            self.message(f"{path} is a folder; give a file name", "bold red")
            return
        if path.exists() and self.confirmed != path:
            self.confirmed = path
            self.message(
                f"{path} exists and would be replaced (its comments lost): Enter again to "
                "overwrite it, or change the path",
                "bold yellow",
            )
            return
        try:
            save_spec(self.owner.spec_data(), path)
        except (RailplanError, OSError) as exc:
            self.message(str(exc), "bold red")
            return
        self.owner.spec_path = path
        self.owner.notify(f"saved {path}")
        self.dismiss()


class SpecTree(DirectoryTree):
    """Folders and spec/design files only."""

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return [
            p
            for p in paths
            if not p.name.startswith(".")
            and (p.is_dir() or p.suffix.lower() in (".yaml", ".yml", ".json"))
        ]


class LoadDialog(Dialog):
    """Load a spec (.yaml) or a design.json: type a path or pick one in the tree."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Load a spec .yaml or a design .json", id="dialog-title")
            yield Input(placeholder="path, then Enter", id="dialog-path")
            yield SpecTree(Path.cwd(), id="dialog-tree")
            yield Static("Enter loads, Escape cancels.", id="dialog-message")

    def on_directory_tree_file_selected(self, event: DirectoryTree.FileSelected) -> None:
        self.load(Path(event.path))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.load(Path(event.value).expanduser())

    def load(self, path: Path) -> None:
        try:
            spec = read_spec(path)
        except RailplanError as exc:
            self.message(str(exc), "bold red")
            return
        self.owner.load_spec(spec, path if path.suffix.lower() != ".json" else None)
        self.owner.notify(f"loaded {path}")
        self.dismiss()


class ExportDialog(Dialog):
    """Export spec, design JSON, cable CSV, sheets and test plan PDFs into a folder."""

    def __init__(self, app: Host, outcome: Outcome) -> None:
        super().__init__(app)
        self.outcome = outcome
        self.running = False

    def compose(self) -> ComposeResult:
        assert self.outcome.summary is not None
        default = Path.cwd() / f"{self.outcome.spec.name}-{self.outcome.family}"
        solved = self.outcome.shown is not None and self.outcome.shown.placement == "solved"
        with Vertical(id="dialog"):
            yield Label(f"Export the {self.outcome.family} design to a folder", id="dialog-title")
            yield Input(str(default), id="dialog-path")
            yield Checkbox(
                "Solve switch placement (CP-SAT, as railplan plan)",
                value=solved or not self.outcome.totals,
                id="dialog-solve",
                compact=True,
            )
            yield ProgressBar(total=STEPS, show_eta=False, id="dialog-progress")
            yield Static(
                f"Writes {', '.join(FILES)}. Enter exports, Escape stops or closes.",
                id="dialog-message",
            )
            yield Static("", id="dialog-log")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not self.running:
            self.running = True
            self.written: list[str] = []
            solve = self.query_one("#dialog-solve", Checkbox).value
            self.export(Path(event.value).expanduser(), "cp-sat" if solve else "naive")

    def _progress(self, step: tuple[str, int, str]) -> None:
        message, done, path = step
        self.query_one(ProgressBar).update(total=STEPS, progress=done)
        self.message(message)
        if path:
            self.written.append(path)
            self.query_one("#dialog-log", Static).update("\n".join(self.written))

    def _finished(self, error: str) -> None:
        self.running = False
        if error:
            self.message(error, "bold red")
        else:
            self.message(f"wrote {len(self.written)} file(s). Escape closes.", "green")
            self.owner.notify(f"exported {len(self.written)} file(s)")

    @work(thread=True, exclusive=True, exit_on_error=False)
    def export(self, folder: Path, method: str) -> None:
        """Run the export in a child process; Escape (closing the dialog) stops it."""
        worker = get_current_worker()
        out = self.outcome
        task = ("export", export_stream, (out.spec, self.owner.catalog, out.family, folder, method))
        error = ""
        for _, ok, value in self.owner.runner.run([task], lambda: worker.is_cancelled):
            if ok:
                self.app.call_from_thread(self._progress, value)
            elif isinstance(value, (RailplanError, OSError)):
                error = str(value)
            else:
                raise value
        if not worker.is_cancelled:
            self.app.call_from_thread(self._finished, error)
