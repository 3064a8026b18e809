"""The TUI's stylesheet: a form on the left, results on the right; fits 80x24 and grows.

Kept in Python (not a .tcss file) so it ships with the package without package-data rules.
"""

CSS = """
#main {
    height: 1fr;
}

SpecForm {
    width: 35;
    min-width: 28;
    height: 1fr;
    border: round $primary 50%;
    border-title-color: $text;
    padding: 0;
    scrollbar-size-vertical: 1;
}

SpecForm:focus-within {
    border: round $accent;
}

SpecForm .row {
    height: 1;
}

SpecForm .label {
    width: 12;
    padding: 0 0 0 1;
    color: $text-muted;
}

SpecForm .row.-invalid .label {
    color: $error;
    text-style: bold;
}

SpecForm .row.-invalid Input {
    background: $error 20%;
}

SpecForm .note {
    height: auto;
    padding: 0 0 0 1;
    color: $warning;
}

SpecForm Input, SpecForm Select {
    width: 1fr;
}

/* the field with focus: its label bold in the accent colour, its value on an accent band */
SpecForm .row:focus-within .label {
    color: $accent;
    text-style: bold;
}

SpecForm Input:focus, SpecForm Select:focus > SelectCurrent {
    background: $accent 35%;
}

Screen.-zoom SpecForm {
    display: none;
}

#results {
    width: 1fr;
    height: 1fr;
    border: round $primary 50%;
}

#results:focus-within {
    border: round $accent;
}

#tabs {
    height: 1fr;
}

#summary {
    height: auto;
}

/* the table as tall as its rows: the tab scrolls, so the note under it can be read */
#compare-table {
    height: auto;
}

#compare-note {
    height: auto;
    color: $text-muted;
    padding: 0 1;
}

#status {
    height: auto;
    max-height: 5;
    padding: 0 1;
}

/* drill-down screens */

DrillScreen #drill-title {
    height: 1;
    padding: 0 1;
    background: $primary 30%;
    text-style: bold;
}

DrillScreen #drill-note-box {
    height: auto;
    max-height: 4;
    scrollbar-size-vertical: 1;
}

DrillScreen #drill-note {
    height: auto;
    padding: 0 1;
    color: $text-muted;
}

DrillScreen DataTable {
    height: 1fr;
}

DrillScreen #drill-filter {
    height: 1;
    margin: 0 1;
}

DrillScreen #drill-text {
    height: 1fr;
}

/* dialogs */

Dialog {
    align: center middle;
}

Dialog #dialog {
    width: 72;
    max-width: 95%;
    height: auto;
    max-height: 95%;
    border: thick $accent;
    background: $surface;
    padding: 0 1;
}

Dialog #dialog-title {
    text-style: bold;
    height: 1;
}

Dialog Input {
    margin: 1 0 0 0;
}

Dialog #dialog-message {
    height: auto;
    margin: 1 0 0 0;
}

Dialog #dialog-tree {
    height: 10;
    margin: 1 0 0 0;
}

Dialog ProgressBar {
    margin: 1 0 0 0;
}

Dialog #dialog-log {
    height: auto;
    max-height: 10;
    color: $text-muted;
}

HelpScreen #help-scroll {
    width: 76;
    max-width: 95%;
    height: 90%;
    border: thick $accent;
    background: $surface;
}

HelpScreen #help {
    height: auto;
}
"""
