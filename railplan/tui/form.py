"""The spec form: one compact row per field; it reports edits and marks the fields errors name."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

from railplan.catalog import Catalog
from railplan.tui.formspec import (
    AUTO,
    COMPARE,
    CUSTOM,
    FIELDS,
    PLACEMENTS,
    SELECTS,
    plain_number,
)

TOPOLOGY_CHOICES = (
    ("ROFT (rail-optimized)", "roft"),
    ("Matrix (spineless)", "matrix"),
    ("fat-tree (per rack)", "fat-tree"),
    ("rail-only", "rail-only"),
    ("compare all", COMPARE),
)


def switch_choices(catalog: Catalog, speed_gbps: int | None) -> list[tuple[str, str]]:
    """Switch select options with the radix at the NIC speed shown (``qm9700 64x400G``)."""
    options = [("any (auto)", AUTO)]
    for sw in sorted(catalog.switches.values(), key=lambda s: s.id):
        if speed_gbps is None:
            label = f"{sw.id} {sw.cages}x{sw.cage_speed_gbps}G"
        elif sw.radix(speed_gbps):
            label = f"{sw.id} {sw.radix(speed_gbps)}x{speed_gbps}G"
        else:
            label = f"{sw.id} (no {speed_gbps}G)"
        options.append((label, sw.id))
    return options


class SpecForm(VerticalScroll):
    """The cluster, fabric and layout fields; posts ``SpecForm.Edited`` on every change."""

    #: Tab goes from field to field: the box itself is no stop (a focused field scrolls into
    #: view, so the form needs no focus of its own to scroll)
    can_focus = False

    class Edited(Message):
        """A field changed (``field`` is its id)."""

        def __init__(self, field: str) -> None:
            super().__init__()
            self.field = field

    def __init__(self, catalog: Catalog, values: dict[str, str], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.catalog = catalog
        self._initial = values
        self._speed: int | None = None

    def _widget(self, field_id: str) -> Input | Select[str]:
        value = self._initial.get(field_id, "")
        if field_id == "node":
            options = [(n, n) for n in sorted(self.catalog.nodes)] + [("custom", CUSTOM)]
        elif field_id == "nic":
            options = [("from node", AUTO)] + [(n, n) for n in sorted(self.catalog.nics)]
        elif field_id == "switch":
            options = switch_choices(self.catalog, None)
        elif field_id == "placement":
            options = list(PLACEMENTS)
        else:
            options = list(TOPOLOGY_CHOICES)
        if field_id in SELECTS:
            known = {v for _, v in options}
            return Select(
                options,
                value=value if value in known else options[0][1],
                allow_blank=False,
                compact=True,
                id=f"f-{field_id}",
            )
        hint = next(f.hint for f in FIELDS if f.id == field_id)
        return Input(value, placeholder=hint, compact=True, id=f"f-{field_id}")

    def compose(self) -> ComposeResult:
        for field in FIELDS:
            with Horizontal(classes="row", id=f"row-{field.id}"):
                yield Label(field.label, classes="label")
                yield self._widget(field.id)
            if field.id == "nic":
                yield Static("", id="nic-note", classes="note")

    def on_mount(self) -> None:
        self.nic_note()

    def nic_note(self) -> str:
        """Under NIC: say which of its figures the typed Ports/NIC or Port Gb/s replace."""
        values = self.values()
        nic = self.catalog.nics.get(values.get("nic", ""))
        replaced = []
        if nic is not None:
            typed = (
                ("ports_per_nic", "Ports/NIC", nic.ports),
                ("port_speed_gbps", "Port Gb/s", nic.port_speed_gbps),
            )
            for field_id, label, own in typed:
                text = values.get(field_id, "").strip()
                if text and plain_number(text) != str(own):
                    replaced.append(f"{label} {text} replaces its {own}")
        note = f"{nic.id}: " + "; ".join(replaced) if nic is not None and replaced else ""
        widget = self.query_one("#nic-note", Static)
        widget.update(note)
        widget.display = bool(note)
        return note

    def values(self) -> dict[str, str]:
        """The text of every field (select values for selects)."""
        out = {}
        for field in FIELDS:
            widget = self.query_one(f"#f-{field.id}")
            if isinstance(widget, Select):
                out[field.id] = "" if widget.is_blank() else str(widget.value)
            elif isinstance(widget, Input):
                out[field.id] = widget.value
        return out

    def set_values(self, values: dict[str, str]) -> None:
        """Fill the fields (from a loaded spec); the app sees one edit per changed field."""
        for field in FIELDS:
            if field.id not in values:
                continue
            widget = self.query_one(f"#f-{field.id}")
            if isinstance(widget, Select):
                self._select(widget, values[field.id])
            elif isinstance(widget, Input):
                widget.value = values[field.id]
        self.post_message(self.Edited("*"))

    @staticmethod
    def _select(widget: Select[str], value: str) -> None:
        """Choose ``value``; a value the catalog lacks is added so the planner can name it."""
        options = [(label, v) for label, v in getattr(widget, "_options", []) if v != Select.NULL]
        if value and all(v != value for _, v in options):
            widget.set_options([*options, (f"{value} (not in catalog)", value)])
        if value:
            widget.value = value

    def set_speed(self, speed_gbps: int | None) -> None:
        """Show every switch's radix at the NIC port speed (keeps the chosen switch)."""
        if speed_gbps == self._speed:
            return
        self._speed = speed_gbps
        widget = self.query_one("#f-switch", Select)
        current = widget.value
        widget.set_options(switch_choices(self.catalog, speed_gbps))
        if isinstance(current, str):
            widget.value = current

    def mark(self, bad: set[str]) -> None:
        """Flag the fields an error names."""
        for field in FIELDS:
            self.query_one(f"#row-{field.id}").set_class(field.id in bad, "-invalid")

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.nic_note()
        if event.input.id:
            self.post_message(self.Edited(event.input.id.removeprefix("f-")))

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.nic_note()
        if event.select.id:
            self.post_message(self.Edited(event.select.id.removeprefix("f-")))
