"""The link-table row of every cable's link, worked out once per design (the check and the bill
both read it)."""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from railplan.catalog import Catalog
from railplan.design.link_table import LinkTable, link_table
from railplan.design.memo import by_identity
from railplan.design.types import Design
from railplan.errors import RailplanError

_CACHE: dict[tuple[int, ...], tuple[tuple[object, ...], np.ndarray]] = {}
_LINK_ID = attrgetter("link_id")


def cable_rows(design: Design, catalog: Catalog) -> np.ndarray:
    """Each cable's link as its row of ``link_table(design, catalog)``, in ``design.cables``
    order; -1 for a cable naming no link of the design. Remembered by the cables and links
    objects (callers only read it)."""
    held = (design.cables, design.links, design.switches, design.devices, catalog, design.shape)
    return by_identity(_CACHE, held, lambda: _rows(design, catalog))


def table_and_rows(design: Design, catalog: Catalog) -> tuple[LinkTable, np.ndarray] | None:
    """The design's ``link_table`` and ``cable_rows``, or None when the table cannot be made
    (a design whose devices the catalog does not know, an edited design.json): a rule that
    reads them then walks the ids itself, and says what is wrong."""
    try:
        return link_table(design, catalog), cable_rows(design, catalog)
    except (KeyError, IndexError, ValueError, RailplanError):
        return None


def _rows(design: Design, catalog: Catalog) -> np.ndarray:
    row = link_table(design, catalog).row
    cables = design.cables
    found = list(map(row.get, map(_LINK_ID, cables), [-1] * len(cables)))
    out = np.array(found, np.int64) if found else np.zeros(0, np.int64)
    out.setflags(write=False)
    return out
