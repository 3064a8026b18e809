"""Files and tables of a change: growth work orders, delta bill, delta cabling sheet and test
plan, design diffs and capture drift (CSV through ``to_csv``, Markdown, JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from railplan.change.delta import Delta, DeltaLine, Move
from railplan.change.diff import DesignDiff, LinkMove
from railplan.change.grow import Growth
from railplan.change.preinstall import Choice
from railplan.field.drift import DriftReport
from railplan.render.cables_csv import to_csv

BILL_COLUMNS = (
    "kind",
    "part",
    "length_m",
    "added",
    "removed",
    "net",
    "unit_price_usd",
    "cost_usd",
)
MOVE_COLUMNS = (
    "step",
    "cable_id",
    "end",
    "from_rack",
    "from_u",
    "from_device",
    "from_port",
    "to_rack",
    "to_u",
    "to_device",
    "to_port",
    "old_label_a",
    "old_label_b",
    "new_label_a",
    "new_label_b",
    "cable",
)
SHEET_COLUMNS = (
    "action",
    "cable_id",
    "link_id",
    "a_end",
    "b_end",
    "label_a",
    "label_b",
    "media",
    "length_m",
)
TEST_COLUMNS = ("step", "why", "link_id", "cable_id", "a_end", "b_end", "label_a", "label_b")


def _length(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def bill_rows(lines: Sequence[DeltaLine]) -> list[list[str]]:
    return [
        [
            ln.kind,
            ln.part,
            _length(ln.length_m),
            str(ln.added),
            str(ln.removed),
            f"{ln.net:+d}",
            f"{ln.unit_price_usd:.2f}",
            f"{ln.cost_usd:.2f}",
        ]
        for ln in lines
    ]


def move_rows(moves: Sequence[Move]) -> list[list[str]]:
    return [
        [
            str(k),
            m.cable,
            m.end,
            m.from_rack,
            str(m.from_u),
            m.from_device,
            m.from_port,
            m.to_rack,
            str(m.to_u),
            m.to_device,
            m.to_port,
            m.old_label_a,
            m.old_label_b,
            m.label_a,
            m.label_b,
            "re-use" if m.reuse else "replace",
        ]
        for k, m in enumerate(moves, 1)
    ]


def sheet_rows(g: Growth) -> list[list[str]]:
    """The delta cabling sheet: only the cables that change, added, moved or removed."""
    after_links = {lk.id: lk for lk in g.after.links}
    before_links = {lk.id: lk for lk in g.before.links}
    cab_a = {c.link_id: c for c in g.after.cables}
    cab_b = {c.link_id: c for c in g.before.cables}

    def end(design: Any, dev: str, port: int) -> str:
        return f"{dev} {design.port_name(dev, port)}"

    rows: list[list[str]] = []
    for m in g.change.moves:
        lk, cab = after_links[m.link_after], cab_a.get(m.link_after)
        rows.append(
            [
                "move",
                m.cable,
                lk.id,
                end(g.after, lk.a_device, lk.a_port),
                end(g.after, lk.b_device, lk.b_port),
                m.label_a,
                m.label_b,
                cab.media if cab else "",
                _length(cab.length_m if cab else None),
            ]
        )
    for action, ids, links, cabs, design in (
        ("add", g.change.added, after_links, cab_a, g.after),
        ("remove", g.change.removed, before_links, cab_b, g.before),
    ):
        for lid in ids:
            lk, cab = links[lid], cabs.get(lid)
            rows.append(
                [
                    action,
                    cab.id if cab else "",
                    lid,
                    end(design, lk.a_device, lk.a_port),
                    end(design, lk.b_device, lk.b_port),
                    cab.label_a if cab else "",
                    cab.label_b if cab else "",
                    cab.media if cab else "",
                    _length(cab.length_m if cab else None),
                ]
            )
    for lid, fields in g.change.changed:
        lk, cab = after_links[lid], cab_a.get(lid)
        rows.append(
            [
                "relabel" if set(fields) <= {"label_a", "label_b", "id"} else "re-cable",
                cab.id if cab else "",
                lid,
                end(g.after, lk.a_device, lk.a_port),
                end(g.after, lk.b_device, lk.b_port),
                cab.label_a if cab else "",
                cab.label_b if cab else "",
                cab.media if cab else "",
                _length(cab.length_m if cab else None),
            ]
        )
    return rows


def test_rows(g: Growth) -> list[list[str]]:
    return [
        [str(k), t.why, t.link, t.cable, t.a, t.b, t.label_a, t.label_b]
        for k, t in enumerate(g.tests.links, 1)
    ]


def growth_json(g: Growth) -> dict[str, Any]:
    """The growth step as one JSON object (the ``grow --json`` contract)."""
    d: Delta = g.change
    out: dict[str, Any] = {
        "before": d.before,
        "after": d.after,
        "gpus": {"before": g.before.gpus, "after": g.after.gpus},
        "subset": g.alignment is None,
        "links": {
            "kept": len(d.kept),
            "moved": len(d.moves),
            "added": len(d.added),
            "removed": len(d.removed),
            "relabelled": len(d.changed),
        },
        "moves": {
            "count": g.moved,
            "lower_bound": g.lower_bound,
            "gap": g.gap,
            "status": g.alignment.status if g.alignment else "subset",
        },
        "switches": {"added": list(d.switches_added), "removed": list(d.switches_removed)},
        "renamed": dict(g.alignment.renamed) if g.alignment else {},
        "reracked": [list(r) for r in d.reracked],
        "bill": [
            {
                "kind": ln.kind,
                "part": ln.part,
                "length_m": ln.length_m,
                "added": ln.added,
                "removed": ln.removed,
                "net": ln.net,
                "unit_price_usd": ln.unit_price_usd,
                "cost_usd": ln.cost_usd,
            }
            for ln in d.lines
        ],
        "cost_usd": d.cost_usd,
        "tests": {
            "links": len(g.tests.links),
            "added": len(g.tests.covered("added")),
            "moved": len(g.tests.covered("moved")),
            "regression": len(g.tests.covered("regression")),
            "pairs": len(g.tests.pairs),
            "seed": g.tests.seed,
        },
        "notes": list(g.notes),
    }
    return out


def choice_rows(choices: Sequence[Choice]) -> list[list[str]]:
    def usd(x: float | None) -> str:
        return "-" if x is None else f"${x:,.0f}"

    rows = []
    for c in choices:
        later_moves = "?" if c.moves_buy_later is None else str(c.moves_buy_later)
        if c.moves_lower_bound is not None:
            later_moves += f" (bound {c.moves_lower_bound})"
        rows.append(
            [
                c.phase,
                c.item,
                c.pre_install,
                usd(c.pre_install_usd),
                c.buy_later,
                usd(c.buy_later_usd),
                later_moves,
            ]
        )
    return rows


CHOICE_HEADER = ("phase", "item", "pre-install", "cost", "buy later", "cost", "moves next")


def growth_markdown(g: Growth, choices: Sequence[Choice] = ()) -> str:
    """The work order of one growth step, printable."""
    d = g.change
    out = [
        f"# Growth: {d.before} ({g.before.gpus} GPUs) -> {d.after} ({g.after.gpus} GPUs)",
        "",
        f"- links kept {len(d.kept)}, added {len(d.added)}, moved {len(d.moves)}, removed "
        f"{len(d.removed)}, relabelled {len(d.changed)}",
        f"- installed cables moved or removed: {g.moved} (proved lower bound {g.lower_bound}, "
        f"gap {g.gap})",
        f"- switches added {len(d.switches_added)}, removed {len(d.switches_removed)}; "
        f"cost of what is bought: ${d.cost_usd:,.2f}",
        *(f"- {n}" for n in g.notes),
        "",
        "## Delta bill",
        "",
        _table(BILL_COLUMNS, bill_rows(d.lines)),
    ]
    if d.moves:
        out += ["", "## Moves, in technician order", "", _table(MOVE_COLUMNS, move_rows(d.moves))]
    if choices:
        out += ["", "## Day-one pre-install", "", _table(CHOICE_HEADER, choice_rows(choices))]
    out += [
        "",
        "## Test plan of the change",
        "",
        f"{len(g.tests.covered('added'))} added and {len(g.tests.covered('moved'))} moved links "
        f"checked, {len(g.tests.covered('regression'))} unchanged links re-checked (seed "
        f"{g.tests.seed}), {len(g.tests.pairs)} RDMA pair tests; the full list is "
        "delta-testplan.csv.",
        "",
    ]
    return "\n".join(out)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def cell(x: str) -> str:
        return x.replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def growth_files(g: Growth, choices: Sequence[Choice] = (), prefix: str = "") -> dict[str, str]:
    """Every file of one growth step, by name (written together with ``write_set``)."""
    pairs = [[p.why, p.node_a, p.node_b, p.port] for p in g.tests.pairs]
    files = {
        "delta-bill.csv": to_csv(BILL_COLUMNS, bill_rows(g.change.lines)),
        "moves.csv": to_csv(MOVE_COLUMNS, move_rows(g.change.moves)),
        "delta-cables.csv": to_csv(SHEET_COLUMNS, sheet_rows(g)),
        "delta-testplan.csv": to_csv(TEST_COLUMNS, test_rows(g)),
        "delta-pairs.csv": to_csv(("why", "node_a", "node_b", "port"), pairs),
        "growth.md": growth_markdown(g, choices),
        "growth.json": json.dumps(growth_json(g), indent=2) + "\n",
    }
    return {prefix + k: v for k, v in files.items()}


# -- design diff ---------------------------------------------------------------------------


def diff_rows(d: DesignDiff) -> list[list[str]]:
    """One row per difference: what, which, A, B."""
    rows: list[list[str]] = []
    rows += [["switch added", s, "", s] for s in d.switches_added]
    rows += [["switch removed", s, s, ""] for s in d.switches_removed]
    rows += [["switch changed", s, x, y] for s, x, y in d.switches_changed]
    for x, y in d.swapped:  # one row per cable of the pair, named by its id and both labels
        rows += [[f"cable swapped with {o.cable}", _labelled(m), m.from_port, m.to_port]
                 for m, o in ((x, y), (y, x))]  # fmt: skip
    rows += [["cable moved", _labelled(m), m.from_port, m.to_port] for m in d.moved]
    rows += [["link added", lid, "", lid] for lid in d.links_added]
    rows += [["link removed", lid, lid, ""] for lid in d.links_removed]
    for lid, fields in d.cables_changed:
        rows += [[f"cable {f}", lid, x, y] for f, x, y in fields]
    rows += [["port", f"{dev} {port}", x, y] for dev, port, x, y in d.ports_changed]
    rows += [
        ["bill", f"{k} {p}" + (f" {ln:g} m" if ln is not None else ""), str(x), str(y)]
        for k, p, ln, x, y in d.bill
    ]
    return rows


def _labelled(m: LinkMove) -> str:
    """``C00025 (R0101-U02-N1-nic0 / R0102-U40-...-P1/1)``: a cable with its two labels."""
    labels = " / ".join(x for x in (m.label_a, m.label_b) if x)
    return f"{m.cable} ({labels})" if labels else m.cable


def diff_summary(d: DesignDiff) -> str:
    if d.identical:
        return f"{d.a} and {d.b} are the same fabric ({d.links_same} links)"
    bill = (
        f"bill ${d.cost_a_usd:,.0f} -> ${d.cost_b_usd:,.0f}"
        if d.billed
        else "bill not compared (a capture shows ports, not parts)"
    )
    return (
        f"{d.a} -> {d.b}: {d.links_same} links the same, {len(d.links_added)} added, "
        f"{len(d.links_removed)} removed, {len(d.moved)} moved, {len(d.swapped)} swapped; "
        f"{len(d.switches_added)} switches added, {len(d.switches_removed)} removed; "
        f"{len(d.cables_changed)} cables changed, {len(d.ports_changed)} ports changed; {bill}"
    )


# -- drift between captures ----------------------------------------------------------------


def drift_rows(r: DriftReport) -> tuple[list[str], list[list[str]]]:
    header = ["change", "cable", "label a", "label b", "before", "now", "now as planned"]
    rows = [
        [
            e.kind,
            e.cable,
            e.label_a,
            e.label_b,
            e.before,
            e.after,
            "" if e.planned is None else ("yes" if e.planned else "no"),
        ]
        for e in r.entries
    ]
    return header, rows


def drift_markdown(r: DriftReport) -> str:
    header, rows = drift_rows(r)
    out = ["## Changes since the earlier capture", "", r.summary_line(), ""]
    if rows:
        out.append(_table(header, rows))
    return "\n".join(out) + "\n"
