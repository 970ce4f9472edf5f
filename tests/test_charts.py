"""Every chart spec is a figure plotly accepts: each builder's variants, and every chart of the built sites.

The build writes the specs as JSON without loading plotly's Python package, so
these tests are where plotly's validators see them.
"""

from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import pytest
from conftest import make_content, run_cli

from generator import charts, theme

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


def test_the_site_ships_plotly_js_basic_at_the_version_the_validator_knows(site):
    """The theme's plotly.js is the official basic bundle of the plotly.js that the pinned plotly package
    (whose validators check every chart above) bundles, and the built site carries exactly that file."""
    import plotly.offline

    shipped = (theme.DEFAULT / "assets" / "plotly.min.js").read_bytes()
    version = re.search(r"plotly\.js v(\S+)", plotly.offline.get_plotlyjs()[:200]).group(1)
    assert shipped.startswith(f"/**\n* plotly.js (basic - minified) v{version}\n".encode())
    assert (site.out / "assets" / "plotly.min.js").read_bytes() == shipped
    assert len(shipped) < 1_500_000  # the full bundle is 4.8 MB


def test_every_trace_the_site_draws_is_in_the_basic_bundle(site):
    """plotly.js basic registers scatter, bar and pie; a chart of another type would draw nothing."""
    figures = [fig for page in sorted(site.out.glob("*/index.html")) for fig in page_figures(page.read_text())]
    figures += BUILT
    types = {trace.get("type", "scatter") for fig in figures for trace in fig["data"]}
    assert types and types <= {"scatter", "bar", "pie"}, types


def test_a_site_can_ship_its_own_plotly_js(tmp_path):
    """A site that needs other trace types puts the full bundle in its templates/assets/."""
    templates = tmp_path / "templates"
    (templates / "assets").mkdir(parents=True)
    (templates / "assets" / "plotly.min.js").write_text("/* the site's own plotly.js */\n")
    out, content = tmp_path / "site", make_content(tmp_path)
    result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(templates))
    assert result.exit_code == 0, result.output
    assert (out / "assets" / "plotly.min.js").read_text() == "/* the site's own plotly.js */\n"


def test_a_shared_layout_refuses_changes_and_writes_the_same_json():
    from generator.escape import json_script

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


def test_the_picture_of_a_log_chart_leaves_out_a_cost_of_zero():
    """A cost that rounds to $0 (a run of a few tokens at a very high throughput) has no place on a log axis:
    the SVG a page shows without JavaScript stopped the build with 'math domain error'. It leaves the point
    out, as plotly.js does; with no point above zero it draws them all on linear axes."""
    from generator import svg

    fig = charts.lines("t", [("a", [1e6, 1e7, 1e8], [0.0, 0.5, 5.0])], "Training tokens", "Cost in USD")
    assert fig["layout"]["yaxis"]["type"] == "log"
    picture = svg.render(fig, "c", "t")
    assert picture.count("<circle") == 2
    flat = svg.render(charts.lines("t", [("a", [1e6, 1e7], [0.0, 0.0])], "Training tokens", "Cost in USD"), "c", "t")
    assert flat.count("<circle") == 2
