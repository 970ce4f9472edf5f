"""Plotly figure specs as plain data (no rendering): a bar chart and a line chart."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

FONT = {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", "size": 14}
COLORS = ["#1f5aa6", "#c2541b", "#2e8540", "#8a3fa0", "#b8860b", "#4a4a4a", "#d6336c", "#0b7285"]


def _clean(values: Sequence[float], places: int = 6) -> list[float]:
    return [round(float(v), places) for v in values]


def _layout(title: str, xaxis: dict, yaxis: dict, legend: bool) -> dict:
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
                title,
                {"title": {"text": y_title}, "rangemode": "tozero"},
                {"title": {"text": x_title}, "autorange": "reversed"},
                False,
            ),
            "height": 140 + 34 * len(labels),
        },
    }
    fig["layout"]["margin"]["r"] = 70
    return _validated(fig)


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
    xaxis = {"title": {"text": x_title}, "type": "log" if log_x else "linear"}
    yaxis = {"title": {"text": y_title}, "type": "log" if log_y else "linear", "tickprefix": "$"}
    for axis, is_log in ((xaxis, log_x), (yaxis, log_y)):
        if is_log:
            axis["dtick"] = 1  # one labelled tick per power of ten
    # Everything that shapes this figure's structure, for _validated: _clean makes every value a
    # float, so only the number of traces, empty arrays, the options and the label types count.
    shape = (
        "lines",
        band is not None and (type(band[0]).__name__, *(bool(len(v)) for v in band[1:])),
        log_x,
        log_y,
        *(type(v).__name__ for v in (title, x_title, y_title)),
        *((type(name).__name__, bool(len(xs)), bool(len(ys))) for name, xs, ys in series),
    )
    return _validated({"data": data, "layout": _layout(title, xaxis, yaxis, True)}, repr(shape))


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
    return _validated({"data": data, "layout": _layout(title, xaxis, yaxis, True)})


_CHECKED: set[str] = set()


def _shape(value) -> str:
    """The structure of a figure (keys and types, not values), to validate each structure once."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_shape(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        kinds = {type(v) for v in value}
        if kinds <= SCALARS:  # data arrays: only their element types matter, no call per element
            return "[" + ",".join(sorted(k.__name__ for k in kinds)) + "]"
        return "[" + ",".join(sorted({_shape(v) for v in value})) + "]"
    return type(value).__name__


SCALARS = {float, int, str, bool, type(None)}


def _validated(fig: dict, shape: str | None = None) -> dict:
    """Let plotly check every property name and value type, once per figure structure; keep the plain dict.

    `shape` is a cheaper key a builder can give when its arguments fix the structure.
    """
    shape = shape or _shape(fig)
    if shape not in _CHECKED:
        go.Figure(fig)
        _CHECKED.add(shape)
    return fig
