"""Plotly figure specs as plain data (no rendering): a bar chart and a line chart.

The build does not load plotly's Python package: the specs are written as JSON
for plotly.js. Their structure comes from the builders here, not from content
(content supplies only numbers, made floats, and strings), and the tests check
every builder's output and every chart of the built sites against plotly's
own validators (tests/test_charts.py). Validating in the build cost each worker
0.12 s of imports.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from generator.formatting import sentence, tokens

FONT = {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", "size": 14}
# Okabe and Ito's palette for colour-vision deficiencies (its yellow left out: too light on white),
# then a dark grey; series and providers take colours in this order.
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000", "#555555"]
# Lines that run close together (similar costs) stay apart by their markers and dashes, not only by colour.
SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "triangle-down", "cross", "star"]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "solid", "dash", "dot"]


def _clean(values: Sequence[float], places: int = 6) -> list[float]:
    return [round(float(v), places) for v in values]


class Shared(dict):
    """A layout that pages share: it refuses changes, and keeps its JSON once it has been written.

    Every page of a family draws the same axes, so its line chart's layout is
    one object, written as JSON once per build (about 10 µs a page).
    """

    __slots__ = ("json",)

    def _refuse(self, *args, **kwargs):
        raise TypeError("a chart layout shared by many pages cannot be changed")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse


def _shared(value):
    """A deep copy in which every dict is a Shared (lists become tuples: the same JSON)."""
    if isinstance(value, dict):
        shared = Shared({k: _shared(v) for k, v in value.items()})
        shared.json = None
        return shared
    if isinstance(value, list | tuple):
        return tuple(_shared(v) for v in value)
    return value


def _layout(xaxis: dict, yaxis: dict, legend: bool) -> dict:
    # No zooming or panning: a drag on a chart or a swipe over it on a phone scrolls the page,
    # and the axes always show what the table under the chart shows.
    return {
        "font": FONT,
        "dragmode": False,
        "xaxis": {"automargin": True, "fixedrange": True, **xaxis},
        "yaxis": {"automargin": True, "gridcolor": "#dddddd", "fixedrange": True, **yaxis},
        "margin": {"l": 10, "r": 10, "t": 20, "b": 10},
        "showlegend": legend,
        # "normal": plotly would reverse the order when a shaded band (a tonexty fill) is drawn
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.2, "yanchor": "top", "traceorder": "normal"},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "height": 520 if legend else 420,
    }


def bar(
    title: str, labels: Sequence[str], values: Sequence[float], texts: Sequence[str], x_title: str, y_title: str
) -> dict:
    """Horizontal bars, first label on top, with a value label on each bar (long labels stay readable).

    A label "Provider, setup" is drawn on two lines, which leaves a phone's width to the bars; bars
    take one colour per provider (the part before the comma), in order of first appearance.
    """
    groups = [label.split(", ", 1)[0] if ", " in label else "" for label in labels]
    palette = {g: COLORS[i % len(COLORS)] for i, g in enumerate(dict.fromkeys(groups))}
    fig = {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                "y": [label.replace(", ", ",<br>", 1) for label in labels],
                "x": _clean(values),
                "text": list(texts),
                "textposition": "outside",
                "marker": {"color": [palette[g] for g in groups]},
                "hovertemplate": "%{text}<extra></extra>",
                "cliponaxis": False,
            }
        ],
        "layout": {
            **_layout(
                {"title": {"text": y_title}, "rangemode": "tozero", **_money(y_title)},
                # no title on the category axis: its labels name themselves, and a title there was
                # drawn over the two-line labels on a phone ("Provider and setup" across "8 × H100")
                {"autorange": "reversed"},
                False,
            ),
            "height": 140 + 34 * len(labels),
        },
    }
    fig["layout"]["margin"]["r"] = 70
    return fig


def lines(
    title: str,
    series: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    x_title: str,
    y_title: str,
    log_x: bool = True,
    log_y: bool = True,
    band: tuple | None = None,
) -> dict:
    """One line per (name, xs, ys), on log axes by default.

    The legend lists the lines from the top one down at the right end, the order a reader finds
    them in; a single line has no legend. Token axes are labelled as the text writes counts.
    """
    series = sorted(series, key=lambda s: -float(s[2][-1]) if len(s[2]) else 0.0)
    data = []
    for i, (name, xs, ys) in enumerate(series):
        name = sentence(name)  # a legend entry starts like a list item
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": _clean(xs, 0),
                "y": _clean(ys),
                "line": {"color": COLORS[i % len(COLORS)], "width": 2, "dash": DASHES[i % len(DASHES)]},
                "marker": {"symbol": SYMBOLS[i % len(SYMBOLS)], "size": 7},
                "hovertemplate": f"{name}<br>%{{x:,.0f}} tokens: $%{{y:,.2f}}<extra></extra>",
            }
        )
    if band is not None:
        name, xs, lower, upper = band
        shade = {
            "type": "scatter",
            "mode": "lines",
            "x": _clean(xs, 0),
            "line": {"width": 0, "color": COLORS[5]},
            "hoverinfo": "skip",
        }
        data.append({**shade, "name": name, "y": _clean(lower), "showlegend": False})
        data.append(
            {**shade, "name": name, "y": _clean(upper), "fill": "tonexty", "fillcolor": "rgba(74, 74, 74, 0.15)"}
        )
    ticks = tuple(sorted({float(x) for _, xs, _ in series for x in xs}))
    return {"data": data, "layout": _lines_layout(x_title, y_title, log_x, log_y, len(series) > 1, ticks)}


def _money(title: str) -> dict:
    """Dollar signs and thousands separators on an axis of US dollars."""
    return {"tickprefix": "$", "separatethousands": True} if "USD" in title else {}


@functools.lru_cache(maxsize=256)
def _lines_layout(
    x_title: str, y_title: str, log_x: bool, log_y: bool, legend: bool = True, x_ticks: tuple = ()
) -> Shared:
    xaxis = {"title": {"text": x_title}, "type": "log" if log_x else "linear"}
    yaxis = {"title": {"text": y_title}, "type": "log" if log_y else "linear", "tickprefix": "$"}
    yaxis["separatethousands"] = True
    for axis, is_log in ((xaxis, log_x), (yaxis, log_y)):
        if is_log:
            axis["dtick"] = 1  # one labelled tick per power of ten
    if x_ticks and "tokens" in x_title.lower():  # "1 M", "1 B": as the text and the tables write them
        # More than five labels turn sideways on a phone and run into the axis title: label the powers
        # of ten then (the data table lists every point).
        tens = [x for x in x_ticks if x > 0 and math.log10(x).is_integer()]
        shown = tens if len(x_ticks) > 5 and len(tens) >= 2 else list(x_ticks)
        xaxis.update(tickmode="array", tickvals=shown, ticktext=[tokens(x) for x in shown], tickangle=0)
        xaxis.pop("dtick", None)
    return _shared(_layout(xaxis, yaxis, legend))


def dated_lines(
    title: str, series: Sequence[tuple[str, Sequence[str], Sequence[float]]], x_title: str, y_title: str
) -> dict:
    """One line per (name, ISO dates, values), on a date axis."""
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": name,
            "x": list(days),
            "y": _clean(values),
            "line": {"color": COLORS[i % len(COLORS)], "width": 2, "shape": "hv"},
            "hovertemplate": f"{name}<br>%{{x}}: $%{{y:,.2f}}<extra></extra>",
        }
        for i, (name, days, values) in enumerate(series)
    ]
    xaxis = {"title": {"text": x_title}, "type": "date"}
    yaxis = {"title": {"text": y_title}, "tickprefix": "$", "rangemode": "tozero"}
    return {"data": data, "layout": _layout(xaxis, yaxis, True)}
