"""The chart of ``railplan compare --chart``: cost, power and traffic figures per family.

Three bar panels side by side, one bar (or bar group) per feasible family: the bill's cost,
its typical power, and the traffic figures ``compare`` prints (pairs at full rate, all-to-all
pace, PD pace: fractions of line rate, 0 to 1). Drawn with reportlab.graphics.charts from
``compare_json``'s rows, so the bars are the table's numbers. When the rows carry the cost
breakdown, the cost bar is stacked by switches, NICs, transceivers, cables and fibre plant at
typical prices, a whisker spans the bill at every price low to every price high, and a hollow
bar beside it is the TCO.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from reportlab.graphics.charts.barcharts import VerticalBarChart
from reportlab.graphics.charts.legends import Legend
from reportlab.graphics.shapes import Drawing, Line, Rect, String

from railplan.render import pdf_common as pc

PANEL_W, PANEL_H = 230.0, 190.0
WIDTH, HEIGHT = 3 * PANEL_W + 60.0, PANEL_H + 110.0
BAR = pc.colors.HexColor("#4a6fa5")
#: the traffic figures: (legend, test, key), as the compare table's rows
TRAFFIC = (
    ("pairs at full rate", "pairs", "fraction_full"),
    ("all-to-all pace", "alltoall", "collective_fraction"),
    ("PD pace", "pd", "collective_fraction"),
)
TRAFFIC_COLOURS = ("#4a6fa5", "#e0913a", "#6aa56a")
#: the cost groups of ``PricedBill.by_group`` stacked bottom up, with their colours
COST_GROUPS = (
    ("switches", "#4a6fa5"),
    ("nics", "#8a6fb5"),
    ("transceivers", "#e0913a"),
    ("cables", "#6aa56a"),
    ("fibre plant", "#b5a33a"),
)


def _text(x: float, y: float, text: str, size: float, bold: bool = False, **kw: Any) -> String:
    font = pc.BOLD if bold else pc.FONT
    return String(x, y, text, fontName=font, fontSize=size, fillColor=pc.INK, **kw)


def _bars(
    x: float,
    families: list[str],
    series: Sequence[Sequence[float]],
    colours: Sequence[Any],
    label: str,
    value_max: float | None = None,
) -> VerticalBarChart:
    chart = VerticalBarChart()
    chart.x, chart.y, chart.width, chart.height = x, 60.0, PANEL_W - 50.0, PANEL_H - 40.0
    chart.data = [list(s) for s in series]
    chart.categoryAxis.categoryNames = families
    chart.categoryAxis.labels.fontName = pc.FONT
    chart.categoryAxis.labels.fontSize = 7
    chart.categoryAxis.labels.angle = 30
    chart.categoryAxis.labels.boxAnchor = "ne"
    chart.valueAxis.valueMin = 0
    if value_max is not None:
        chart.valueAxis.valueMax = value_max
        chart.valueAxis.valueStep = value_max / 4
    chart.valueAxis.labels.fontName = pc.FONT
    chart.valueAxis.labels.fontSize = 7
    chart.barLabelFormat = label
    chart.barLabels.fontName = pc.FONT
    chart.barLabels.fontSize = 6
    chart.barLabels.nudge = 6
    chart.groupSpacing = 8
    for i, colour in enumerate(colours):
        chart.bars[i].fillColor = colour
        chart.bars[i].strokeColor = None
    return chart


def _figure(d: dict[str, Any], test: str, key: str) -> float | None:
    part = d.get("traffic", {}).get(test)
    value = part.get(key) if isinstance(part, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def _panel(
    drawing: Drawing,
    x: float,
    title: str,
    families: list[str],
    values: list[float | None],
    label: str,
    missing: str,
) -> None:
    drawing.add(_text(x + PANEL_W / 2 - 20, PANEL_H + 62, title, 9, True, textAnchor="middle"))
    if not families or any(v is None for v in values):
        drawing.add(_text(x + PANEL_W / 2 - 20, PANEL_H / 2 + 40, missing, 7, textAnchor="middle"))
        return
    drawing.add(_bars(x, families, [[float(v or 0) for v in values]], [BAR], label))


def compare_chart(designs: list[dict[str, Any]], infeasible: list[dict[str, Any]]) -> Drawing:
    """The chart for ``compare_json``'s designs (feasible families) and its infeasible list."""
    drawing = Drawing(WIDTH, HEIGHT)
    drawing.add(Rect(0, 0, WIDTH, HEIGHT, fillColor=pc.colors.white, strokeColor=None))
    families = [str(d["topology"]) for d in designs]
    first = designs[0] if designs else {}
    title = "Topology families compared"
    if first:
        title = f"{first['name']}: {first['gpus']:,} GPUs, families compared"
    drawing.add(_text(20, HEIGHT - 22, title, 12, True))
    totals: list[dict[str, Any] | None] = [d.get("totals") for d in designs]

    def bill(get: Callable[[dict[str, Any]], float]) -> list[float | None]:
        return [get(t) if t else None for t in totals]

    no_bill = "not billed (compare --no-layout)"
    cost = bill(lambda t: float(t["cost_usd"]) / 1e6)
    if designs and all("cost_breakdown_usd" in d and "tco_usd" in d for d in designs):
        _cost_panel(drawing, 30, designs)
    else:
        _panel(drawing, 30, "cost (million USD)", families, cost, "%.2f", no_bill)
    power = bill(lambda t: float(t["power_w"]) / 1e3)
    _panel(drawing, 30 + PANEL_W, "power, typical (kW)", families, power, "%.1f", no_bill)
    x = 30 + 2 * PANEL_W
    drawing.add(
        _text(
            x + PANEL_W / 2 - 20,
            PANEL_H + 62,
            "traffic (of line rate)",
            9,
            True,
            textAnchor="middle",
        )
    )
    series = [[_figure(d, test, key) for d in designs] for _, test, key in TRAFFIC]
    if not designs or any(v is None for s in series for v in s):
        drawing.add(
            _text(
                x + PANEL_W / 2 - 20,
                PANEL_H / 2 + 40,
                "no traffic figures (compare --no-traffic)",
                7,
                textAnchor="middle",
            )
        )
    else:
        colours = [pc.colors.HexColor(c) for c in TRAFFIC_COLOURS]
        numbers = [[float(v or 0) for v in s] for s in series]
        bars = _bars(x, families, numbers, colours, "%.2f", value_max=1.0)
        bars.barLabels.angle, bars.barLabels.boxAnchor, bars.barLabels.nudge = 90, "w", 2
        drawing.add(bars)  # labels upright: three bars per family leave no room side by side
        legend = Legend()
        legend.x, legend.y = x - 10, PANEL_H + 50
        legend.fontName, legend.fontSize = pc.FONT, 7
        legend.alignment, legend.columnMaximum = "right", 1
        legend.dx, legend.dy, legend.deltax = 6, 6, 75
        legend.colorNamePairs = [
            (c, name) for c, (name, _, _) in zip(colours, TRAFFIC, strict=True)
        ]
        drawing.add(legend)
    notes = [f"{i['topology']}: not possible: {i['reason']}" for i in infeasible]
    for k, note in enumerate(notes[:3]):
        drawing.add(_text(20, 14 + 10 * (len(notes[:3]) - 1 - k), pc.clip(note, WIDTH - 30), 7))
    return drawing


def _cost_panel(drawing: Drawing, x: float, designs: list[dict[str, Any]]) -> None:
    """Stacked cost per group, the low-high whisker and the TCO bar, in million USD."""
    title = f"cost and {designs[0]['tco_usd']['years']}-year TCO (million USD)"
    drawing.add(_text(x + PANEL_W / 2 - 20, PANEL_H + 62, title, 9, True, textAnchor="middle"))
    top = max(
        max(float(d["cost_usd"]["high"]), float(d["tco_usd"]["total"]["high"])) for d in designs
    )
    y0, height, width = 60.0, PANEL_H - 40.0, PANEL_W - 50.0
    scale = height / (top / 1e6) if top > 0 else 0.0
    slot = width / len(designs)
    bar = min(18.0, slot / 3)
    drawing.add(Line(x, y0, x + width, y0, strokeColor=pc.INK, strokeWidth=0.5))
    for i, d in enumerate(designs):
        left = x + i * slot + slot / 2 - bar
        y = y0
        for group, colour in COST_GROUPS:
            part = d["cost_breakdown_usd"].get(group)
            if not part:
                continue
            h = float(part["typical"]) / 1e6 * scale
            drawing.add(
                Rect(left, y, bar, h, fillColor=pc.colors.HexColor(colour), strokeColor=None)
            )
            y += h
        mid = left + bar / 2
        lo = y0 + float(d["cost_usd"]["low"]) / 1e6 * scale
        hi = y0 + float(d["cost_usd"]["high"]) / 1e6 * scale
        for line in ((mid, lo, mid, hi), (mid - 3, lo, mid + 3, lo), (mid - 3, hi, mid + 3, hi)):
            drawing.add(Line(*line, strokeColor=pc.INK, strokeWidth=0.7))
        tco = d["tco_usd"]["total"]
        th = float(tco["typical"]) / 1e6 * scale
        drawing.add(Rect(left + bar + 2, y0, bar, th, fillColor=None, strokeColor=pc.INK))
        tl = y0 + float(tco["low"]) / 1e6 * scale
        tt = y0 + float(tco["high"]) / 1e6 * scale
        drawing.add(
            Line(
                left + 1.5 * bar + 2,
                tl,
                left + 1.5 * bar + 2,
                tt,
                strokeColor=pc.INK,
                strokeWidth=0.7,
            )
        )
        typical = float(d["cost_usd"]["typical"]) / 1e6
        drawing.add(_text(mid, hi + 3, f"{typical:.2f}", 6, textAnchor="middle"))
        drawing.add(_text(left + bar, y0 - 10, str(d["topology"]), 7, textAnchor="middle"))
    legend = Legend()
    legend.x, legend.y = x, PANEL_H + 50
    legend.fontName, legend.fontSize = pc.FONT, 6
    legend.alignment, legend.columnMaximum = "right", 1
    legend.dx, legend.dy, legend.deltax = 5, 5, 44
    legend.colorNamePairs = [
        (pc.colors.HexColor(c), g)
        for g, c in COST_GROUPS
        if any(g in d["cost_breakdown_usd"] for d in designs)
    ] + [(pc.colors.white, "TCO")]
    drawing.add(legend)
