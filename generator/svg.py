"""Static SVG versions of the charts, for Markdown pages, feeds and readers without JavaScript.

Drawn from the same figure dicts that plotly renders, with no browser and no
network. Coordinates are rounded so the output is byte-stable.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from html import escape

from generator import formatting as fmt

WIDTH = 760
FONT = "font-family='system-ui, -apple-system, Segoe UI, Roboto, sans-serif'"


def _n(x: float) -> str:
    return f"{round(x, 1):g}"


@functools.lru_cache(maxsize=4096)  # axis labels and titles repeat on every page of a family
def _text(x, y, text, size=13, anchor="start", weight="normal", color="#1d1d1f", rotate=None) -> str:
    transform = f" transform='rotate({rotate} {_n(x)} {_n(y)})'" if rotate is not None else ""
    return (
        f"<text x='{_n(x)}' y='{_n(y)}' font-size='{size}' text-anchor='{anchor}' font-weight='{weight}' "
        f"fill='{color}'{transform}>{escape(str(text))}</text>"
    )


def _frame(title: str, height: float, body: list[str], chart_id: str) -> str:
    head = (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{_n(height)}' "
        f"viewBox='0 0 {WIDTH} {_n(height)}' role='img' aria-labelledby='t-{chart_id}' {FONT}>"
    )
    parts = [
        head,
        f"<title id='t-{chart_id}'>{escape(title)}</title>",
        f"<rect width='{WIDTH}' height='{_n(height)}' fill='#ffffff'/>",
        _text(16, 28, title, size=16, weight="600"),
        *body,
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


def bar(fig: dict, chart_id: str, title: str) -> str:
    """Horizontal bars, one per label, value printed at the end of each bar."""
    trace = fig["data"][0]
    labels, values = (trace["y"], trace["x"]) if trace.get("orientation") == "h" else (trace["x"], trace["y"])
    texts = trace.get("text") or [str(v) for v in values]
    axis_key = "xaxis" if trace.get("orientation") == "h" else "yaxis"
    axis = fig["layout"][axis_key]["title"]["text"]
    left, right, top, row = 230, 90, 56, 30
    plot_w = WIDTH - left - right
    top_value = max(values) if values and max(values) > 0 else 1.0
    body = []
    for i, (label, value, text) in enumerate(zip(labels, values, texts, strict=True)):
        y = top + i * row
        w = plot_w * max(value, 0) / top_value
        body.append(_text(left - 8, y + 19, label, anchor="end"))
        body.append(f"<rect x='{left}' y='{_n(y + 5)}' width='{_n(w)}' height='{row - 10}' fill='#1f5aa6'/>")
        body.append(_text(left + w + 6, y + 19, text))
    bottom = top + len(labels) * row
    body.append(f"<line x1='{left}' y1='{top}' x2='{left}' y2='{_n(bottom)}' stroke='#555b61'/>")
    body.append(_text(left, bottom + 22, axis, size=12, color="#555b61"))
    return _frame(title, bottom + 36, body, chart_id)


def _log_ticks(lo: float, hi: float) -> list[float]:
    start, stop = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [10.0**k for k in range(start, stop + 1)]


def _linear_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    step = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if raw <= mult * step:
            step *= mult
            break
    first = math.floor(lo / step) * step
    ticks, v = [], first
    while v <= hi + step * 0.5:
        ticks.append(round(v, 10))
        v += step
    return ticks


def _scales(xtype, ytype, x0, x1, y0, y1, left, top, plot_w, plot_h):
    """Data to SVG coordinates along each axis."""
    if xtype == "log":
        lx0, xspan = math.log10(x0), math.log10(x1) - math.log10(x0) or 1
    if ytype == "log":
        ly0, yspan = math.log10(y0), math.log10(y1) - math.log10(y0) or 1

    def tx(v: float) -> float:
        if xtype == "log":
            return left + plot_w * (math.log10(v) - lx0) / xspan
        return left + plot_w * (v - x0) / ((x1 - x0) or 1)

    def ty(v: float) -> float:
        if ytype == "log":
            return top + plot_h - plot_h * (math.log10(v) - ly0) / yspan
        return top + plot_h - plot_h * (v - y0) / ((y1 - y0) or 1)

    return tx, ty


@functools.lru_cache(maxsize=1024)  # a family's charts share their axes: draw each distinct set once
def _axes(xtype, ytype, xticks, yticks, bounds, dollars, xtitle, ytitle) -> tuple[str, ...]:
    """Grid lines, tick labels and axis titles of a line chart."""
    left, right, top, plot_h = LINES_BOX
    plot_w = WIDTH - left - right
    tx, ty = _scales(xtype, ytype, *bounds, left, top, plot_w, plot_h)
    body = []
    for v in yticks:
        y = ty(v)
        body.append(f"<line x1='{left}' y1='{_n(y)}' x2='{left + plot_w}' y2='{_n(y)}' stroke='#dddddd'/>")
        label = fmt.usd(v, 0 if v >= 1 else 2) if dollars else fmt.number(v, 0)
        body.append(_text(left - 6, y + 4, label, size=12, anchor="end", color="#555b61"))
    for v in xticks:
        x = tx(v)
        if xtype == "date":
            label = dt.date.fromordinal(int(v)).isoformat()
        elif xtype == "log":
            label = fmt.tokens(v).replace(" ", "")
        else:
            label = fmt.number(v, 0)
        body.append(f"<line x1='{_n(x)}' y1='{top + plot_h}' x2='{_n(x)}' y2='{top + plot_h + 5}' stroke='#555b61'/>")
        body.append(_text(x, top + plot_h + 20, label, size=12, anchor="middle", color="#555b61"))
    body.append(f"<line x1='{left}' y1='{top + plot_h}' x2='{left + plot_w}' y2='{top + plot_h}' stroke='#555b61'/>")
    body.append(_text(left + plot_w / 2, top + plot_h + 40, xtitle, size=12, anchor="middle", color="#555b61"))
    body.append(_text(18, top + plot_h / 2, ytitle, size=12, anchor="middle", color="#555b61", rotate=-90))
    return tuple(body)


# left margin, right margin, top margin, plot height of a line chart
LINES_BOX = (80, 24, 50, 300)


def lines(fig: dict, chart_id: str, title: str) -> str:
    """Line chart on log, linear or date axes, with a legend under the plot."""
    layout = fig["layout"]
    xtype, ytype = layout["xaxis"].get("type", "linear"), layout["yaxis"].get("type", "linear")
    traces = fig["data"]
    series = [(t["name"], t["x"], t["y"], t["line"]["color"]) for t in traces]

    def xval(v):
        return dt.date.fromisoformat(v).toordinal() if xtype == "date" else float(v)

    def placed(x: float, y: float) -> bool:
        """Whether a point has a place on the axes: a log axis has none for zero or less (plotly.js leaves
        such a point out, and so does this picture; a cost that rounds to $0 is one)."""
        return (xtype != "log" or x > 0) and (ytype != "log" or y > 0)

    every = [(xval(x), float(y)) for _, xx, yy, _ in series for x, y in zip(xx, yy, strict=True)]
    if not any(placed(x, y) for x, y in every):  # nothing to place on a log axis: draw them on linear ones
        xtype, ytype = ("linear" if xtype == "log" else xtype), "linear"
    xs = [x for x, y in every if placed(x, y)]
    ys = [y for x, y in every if placed(x, y)]
    left, right, top, plot_h = LINES_BOX
    plot_w = WIDTH - left - right
    if xtype == "log":
        xticks = _log_ticks(min(xs), max(xs))
    elif xtype == "date":
        xticks = sorted(set(xs))
    else:
        xticks = _linear_ticks(min(xs), max(xs))
    if ytype == "log":
        yticks = _log_ticks(min(ys), max(ys))
    else:
        yticks = _linear_ticks(0 if layout["yaxis"].get("rangemode") == "tozero" else min(ys), max(ys))
    x0, x1 = min(xticks[0], min(xs)), max(xticks[-1], max(xs))
    y0, y1 = min(yticks[0], min(ys)), max(yticks[-1], max(ys))

    tx, ty = _scales(xtype, ytype, x0, x1, y0, y1, left, top, plot_w, plot_h)
    body = list(
        _axes(
            xtype,
            ytype,
            tuple(xticks),
            tuple(yticks),
            (x0, x1, y0, y1),
            layout["yaxis"].get("tickprefix") == "$",
            layout["xaxis"]["title"]["text"],
            layout["yaxis"]["title"]["text"],
        )
    )

    def coords(xx, yy) -> list[tuple[str, str]]:
        at = [(xval(x), float(y)) for x, y in zip(xx, yy, strict=True)]
        return [(_n(tx(x)), _n(ty(y))) for x, y in at if placed(x, y)]

    def points(xx, yy) -> list[str]:
        return [f"{x},{y}" for x, y in coords(xx, yy)]

    for i, (trace, (_name, xx, yy, color)) in enumerate(zip(traces, series, strict=True)):
        if trace.get("fill") == "tonexty" and i > 0:  # a shaded band between the previous trace and this one
            _, px, py, _ = series[i - 1]
            outline = points(px, py) + list(reversed(points(xx, yy)))
            body.append(f"<polygon points='{' '.join(outline)}' fill='#4a4a4a' fill-opacity='0.15'/>")
            continue
        if trace["line"].get("width") == 0:
            continue
        at = coords(xx, yy)  # each point's position, for the line and for its marker
        body.append(
            f"<polyline points='{' '.join(f'{x},{y}' for x, y in at)}' fill='none' stroke='{color}' stroke-width='2'/>"
        )
        body.extend(f"<circle cx='{x}' cy='{y}' r='3' fill='{color}'/>" for x, y in at)
    legend_top = top + plot_h + 62
    shown = [(t, s) for t, s in zip(traces, series, strict=True) if t.get("showlegend", True)]
    for i, (trace, (name, _, _, color)) in enumerate(shown):
        y = legend_top + i * 20
        if trace.get("fill") == "tonexty":
            body.append(f"<rect x='{left}' y='{y - 6}' width='22' height='12' fill='#4a4a4a' fill-opacity='0.15'/>")
        else:
            body.append(f"<line x1='{left}' y1='{y}' x2='{left + 22}' y2='{y}' stroke='{color}' stroke-width='3'/>")
        body.append(_text(left + 30, y + 4, name, size=12))
    series = shown  # the legend height below counts shown entries
    return _frame(title, legend_top + len(series) * 20 + 10, body, chart_id)


def render(fig: dict, chart_id: str, title: str) -> str:
    """The SVG for a figure built by generator.charts."""
    kind = fig["data"][0]["type"]
    return bar(fig, chart_id, title) if kind == "bar" else lines(fig, chart_id, title)
