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
from collections.abc import Sequence

FONT = {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", "size": 14}
COLORS = ["#1f5aa6", "#c2541b", "#2e8540", "#8a3fa0", "#b8860b", "#4a4a4a", "#d6336c", "#0b7285"]


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
    return {
        "font": FONT,
        "xaxis": {"automargin": True, **xaxis},
        "yaxis": {"automargin": True, "gridcolor": "#dddddd", **yaxis},
        "margin": {"l": 10, "r": 10, "t": 20, "b": 10},
        "showlegend": legend,
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.2, "yanchor": "top"},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "height": 520 if legend else 420,
    }


def bar(
    title: str, labels: Sequence[str], values: Sequence[float], texts: Sequence[str], x_title: str, y_title: str
) -> dict:
    """Horizontal bars, first label on top, with a value label on each bar (long labels stay readable)."""
    fig = {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                "y": list(labels),
                "x": _clean(values),
                "text": list(texts),
                "textposition": "outside",
                "marker": {"color": COLORS[0]},
                "hovertemplate": "%{y}: %{text}<extra></extra>",
                "cliponaxis": False,
            }
        ],
        "layout": {
            **_layout(
                {"title": {"text": y_title}, "rangemode": "tozero"},
                {"title": {"text": x_title}, "autorange": "reversed"},
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
    """One line per (name, xs, ys), on log axes by default."""
    data = []
    for i, (name, xs, ys) in enumerate(series):
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": _clean(xs, 0),
                "y": _clean(ys),
                "line": {"color": COLORS[i % len(COLORS)], "width": 2},
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
    return {"data": data, "layout": _lines_layout(x_title, y_title, log_x, log_y)}


@functools.lru_cache(maxsize=256)
def _lines_layout(x_title: str, y_title: str, log_x: bool, log_y: bool) -> Shared:
    xaxis = {"title": {"text": x_title}, "type": "log" if log_x else "linear"}
    yaxis = {"title": {"text": y_title}, "type": "log" if log_y else "linear", "tickprefix": "$"}
    for axis, is_log in ((xaxis, log_x), (yaxis, log_y)):
        if is_log:
            axis["dtick"] = 1  # one labelled tick per power of ten
    return _shared(_layout(xaxis, yaxis, True))


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
