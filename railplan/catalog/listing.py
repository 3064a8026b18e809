"""What `railplan catalog list|show` prints: one row per part, and one part's fields."""

from __future__ import annotations

import difflib
from typing import Any

from railplan.catalog.load import LoadedCatalog
from railplan.catalog.parts import SECTIONS
from railplan.errors import CatalogError
from railplan.identifiers import shown


def _about(section: str, item: Any) -> str:
    """A few words that tell parts of one section apart."""
    if section == "switches":
        return f"{item.protocol}, {item.cages} x {item.form_factor} {item.cage_speed_gbps}G"
    if section == "nics":
        return f"{item.ports} x {item.port_speed_gbps}G {item.form_factor}"
    if section == "nodes":
        return f"{item.gpus} GPUs, {item.nics} x {item.nic}"
    if section == "transceivers":
        return f"{item.form_factor} {item.ports} x {item.port_speed_gbps}G {item.interface}"
    if section == "cables":
        return f"{item.kind} {item.end_a}-{item.end_b}"
    if section == "panels":
        return f"{item.rack_units}U, {item.slots} slots"
    if section == "cassettes":
        return f"{item.ports} x {item.connector}"
    return ""


def catalog_rows(loaded: LoadedCatalog) -> list[dict[str, str]]:
    """Every part, section by section and id by id: section, id, name, about, from."""
    rows = []
    for section in SECTIONS:
        table: dict[str, Any] = getattr(loaded.catalog, section)
        for ident in sorted(table):
            item = table[ident]
            rows.append(
                {
                    "section": section,
                    "id": ident,
                    "name": item.name,
                    "about": _about(section, item),
                    "from": loaded.origins[(section, ident)],
                }
            )
    return rows


def catalog_entry(loaded: LoadedCatalog, ident: str) -> list[dict[str, Any]]:
    """The parts with this id (one per section that has it) as plain data with their origin."""
    found = []
    for section in SECTIONS:
        item = getattr(loaded.catalog, section).get(ident)
        if item is not None:
            data = item.model_dump(mode="json", exclude_defaults=True)
            found.append({"section": section, "from": loaded.origins[(section, ident)], **data})
    if not found:
        ids = sorted({i for s in SECTIONS for i in getattr(loaded.catalog, s)})
        close = difflib.get_close_matches(ident, ids, n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise CatalogError(
            f"no catalog part has the id {shown(ident)}; {hint}`railplan catalog list` shows them"
        )
    return found
