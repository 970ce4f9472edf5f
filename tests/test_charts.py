"""Every chart spec is a figure plotly accepts: each builder's variants, and every chart of the built sites.

The build writes the specs as JSON without loading plotly's Python package, so
these tests are where plotly's validators see them.
"""

from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import pytest

from generator import charts

EVIL = "<script>alert('x')</script> & \"quotes\" \u2028"

BUILT = [
    charts.bar("t", ["a", "b"], [1.5, 2], ["$1.50", "$2.00"], "USD", "Setup"),
    charts.bar(EVIL, [EVIL], [0.0], [EVIL], EVIL, EVIL),
    charts.lines("t", [("a", [1e6, 1e9], [3.0, 4.0]), ("b", [1e6], [5.0])], "Tokens", "USD"),
    charts.lines("t", [("a", [1, 2], [3, 4])], "x", "y", log_x=False, log_y=False),
    charts.lines("t", [("a", [1e6, 1e9], [3.0, 4.0])], "x", "y", band=("range", [1e6, 1e9], [2.0, 3.0], [4.0, 5.0])),
    charts.lines(EVIL, [(EVIL, [], [])], EVIL, EVIL),
    charts.dated_lines("t", [("a", ["2026-11-01", "2026-11-29"], [2.5, 2.4])], "Date", "USD"),
]


def check(fig: dict) -> None:
    """plotly's own validation of what plotly.js receives: an unknown property or a wrong type raises ValueError."""
    go.Figure(json.loads(json.dumps({"data": fig["data"], "layout": fig["layout"]})))


def test_the_validation_can_fail():
    with pytest.raises(ValueError):
        check({"data": [{"type": "scatter", "colour": "red"}], "layout": {}})
    with pytest.raises(ValueError):
        check({"data": [], "layout": {"height": "tall"}})


@pytest.mark.parametrize("fig", BUILT, ids=range(len(BUILT)))
def test_each_builder_makes_a_valid_figure(fig):
    check(fig)


NEWPLOT = re.compile(r"<script>Plotly\.newPlot\((.*)\);</script>")


def page_figures(html: str) -> list[dict]:
    """The data and layout of every Plotly.newPlot call on a page, read back as JSON."""
    out = []
    decoder = json.JSONDecoder()
    for args in NEWPLOT.findall(html):  # id, data, layout, config, separated by ", "
        values, pos = [], 0
        for _ in range(4):
            value, end = decoder.raw_decode(args, pos)
            values.append(value)
            pos = end + 2
        out.append({"data": values[1], "layout": values[2]})
    return out


def test_every_chart_of_the_default_site_is_valid(site):
    pages = sorted(site.out.glob("*/index.html"))
    figures = [fig for page in pages for fig in page_figures(page.read_text())]
    charted = sum(1 for page in pages if "Plotly.newPlot(" in page.read_text())
    assert charted > 100 and len(figures) >= charted
    for fig in figures:
        check(fig)


def test_plotly_js_is_the_packaged_file():
    import plotly.offline

    from generator.build import plotly_js

    assert plotly_js() == plotly.offline.get_plotlyjs().encode("utf-8")


def test_a_shared_layout_refuses_changes_and_writes_the_same_json():
    from generator.render import json_script

    first = charts.lines("a", [("s", [1e6, 1e9], [1.0, 2.0])], "Tokens", "USD")["layout"]
    second = charts.lines("b", [("t", [1e6, 1e9], [3.0, 4.0])], "Tokens", "USD")["layout"]
    assert first is second  # the same axes: one object for every page
    assert first["xaxis"]["ticktext"] == ("1 M", "1 B")  # written as the text writes counts
    assert first["dragmode"] is False and first["xaxis"]["fixedrange"] and first["yaxis"]["fixedrange"]
    assert "showlegend" in first and first["showlegend"] is False  # one line needs no legend
    with pytest.raises(TypeError):
        first["height"] = 1
    with pytest.raises(TypeError):
        first["xaxis"]["type"] = "linear"
    plain = json.loads(json.dumps(first))
    assert json_script(first) == json_script(plain) == json_script(first)
