"""Article A (throughput method): every figure of launch-articles.md, computed here from the formula.

hours = tokens / tokens_per_second / 3600; cost = hours × hourly rate.
"""

from __future__ import annotations

import contextlib
import io
import re
from decimal import ROUND_HALF_UP, Decimal

import pytest
from conftest import A

RATE = 0.75
RUNS = {"70b": 759.79, "3b": 13_519.54, "8b": 6_969.59}


def r(x: float, places: int) -> str:
    return f"{Decimal(repr(x)).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP):,.{places}f}"


def hours(tokens: float, tps: float) -> float:
    return tokens / tps / 3600


def test_hand_values_match_the_spec():
    # Guards the test's own arithmetic against the figures published in the spec.
    assert r(hours(10e6, RUNS["70b"]), 1) == "3.7"
    assert r(hours(10e6, RUNS["70b"]) * RATE, 2) == "2.74"
    assert r(hours(100e6, RUNS["70b"]), 1) == "36.6"
    assert r(hours(100e6, RUNS["70b"]) * RATE, 2) == "27.42"
    assert r(hours(1e9, RUNS["70b"]), 1) == "365.6"
    assert r(hours(1e9, RUNS["70b"]) * RATE, 2) == "274.20"
    assert r(hours(1e9, RUNS["3b"]) * RATE, 2) == "15.41"
    assert r(hours(1e9, RUNS["8b"]) * RATE, 2) == "29.89"


@pytest.mark.parametrize(("label", "tokens"), [("10 M", 10e6), ("100 M", 100e6), ("1 B", 1e9)])
def test_estimate_table(site, label, tokens):
    h = hours(tokens, RUNS["70b"])
    expected = [label, r(h, 1), "$" + r(h * RATE, 2)]
    assert expected in site.table(A, "estimates")
    assert expected in site.md_table(A, "Time and cost by training tokens")


@pytest.mark.parametrize(
    ("name", "tps"),
    [("Llama 3.2 3B, full fine-tune", "3b"), ("Llama 3.1 8B, LoRA", "8b"), ("Llama 3.3 70B, QLoRA", "70b")],
)
def test_compare_table(site, name, tps):
    h = hours(1e9, RUNS[tps])
    expected = [name, r(RUNS[tps], 2), r(h, 1), "$" + r(h * RATE, 2)]
    assert expected in site.table(A, "compare")
    assert expected in site.md_table(A, "1 B training tokens at each")


def test_compare_table_is_ordered_by_cost(site):
    costs = [float(row[3].lstrip("$").replace(",", "")) for row in site.table(A, "compare")[1:]]
    assert costs == sorted(costs)


def _run(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<snippet>", "exec"), {})
    return out.getvalue().strip()


def test_snippet_runs_as_printed_and_matches_the_page(site):
    soup = site.html(A)
    code = soup.find("code", class_="language-python").get_text()
    printed = _run(code)
    h = hours(100e6, RUNS["70b"])
    assert printed == f"{r(h, 1)} hours, ${r(h * RATE, 2)}"
    # what it prints is what the page says it prints, and what the table shows
    assert soup.find("p", class_="code-output").get_text(" ", strip=True) == f"Output: {printed}"
    assert ["100 M", r(h, 1), "$" + r(h * RATE, 2)] in site.table(A, "estimates")


def test_markdown_snippet_runs_too(site):
    block = re.search(r"```python\n(.*?)```", site.md(A), re.S).group(1)
    assert _run(block) in site.md(A)


def test_prose_and_faq_carry_the_100m_figures(site):
    h = hours(100e6, RUNS["70b"])
    for text in (site.text(A), site.md_text(A)):
        assert f"about {r(h, 1)} hours and cost about ${r(h * RATE, 2)}" in text
        assert "759.79 tokens per second" in text
        assert "$0.75 per hour" in text


def test_source_is_linked(site):
    links = [a["href"] for a in site.html(A).find_all("a")]
    assert "https://developer.nvidia.com/blog/how-nvidia-dgx-sparks-performance-enables-intensive-ai-tasks/" in links


def test_chart_present_with_stable_id(site):
    soup = site.html(A)
    div = soup.find("div", id=f"{A}-cost-vs-tokens")
    assert div is not None and div["aria-label"]
    scripts = " ".join(s.get_text() for s in soup.find_all("script"))
    assert f'Plotly.newPlot("{A}-cost-vs-tokens"' in scripts
    assert soup.find("script", src="../assets/plotly.min.js") is not None


def test_the_page_shows_its_doubt_and_the_flop_method_by_hand(site):
    """The DGX Spark figure implies more than the chip's dense peak; the page says so and what the FLOP method gives."""
    params, tps, peak, price = 70_553_706_496, 759.79, 125e12, 0.75
    work = 6 * params * tps  # operations per second the published throughput implies (QLoRA: 6 per parameter)
    share = work / peak
    flop_hours = 6 * params * 100e6 / (peak * 0.30 * 3600)  # 100 M tokens at the 30% planning share
    text = site.text(A)
    assert f"{work / 1e12:.1f} TFLOPS of work: {share * 100:.0f}% of the 125 TFLOPS dense BF16 peak" in text
    assert "more than the chip can do at its dense peak" in text
    assert f"about {flop_hours:.1f} hours and ${flop_hours * price:.2f}" in text
    assert (round(share * 100), round(flop_hours, 1), round(flop_hours * price, 2)) == (257, 313.6, 235.18)
    rows = site.table(A, "checks")[1:]
    assert [r[-1] for r in rows] == ["Above the dense peak"] * 3  # a cell reads as a phrase of its own


def test_the_check_calls_any_share_above_the_dense_peak_a_doubt(tmp_path):
    """Above 100% of the dense peak is a doubt, at 150% as at 257%; 90% is plausible. The seed figures all sit
    above 250%, so a limit of 200% passed every test but the committed-site comparison."""
    from conftest import CONTENT, Built, build, make_content

    text = (CONTENT / "benchmarks.yaml").read_text()
    shares = {
        "tokens_per_second: 13519.54": (8, 3_212_749_824, 1.5),
        "tokens_per_second: 6969.59": (6, 8_030_261_248, 0.9),
    }
    for line, (ops, params, share) in shares.items():
        assert text.count(line) == 1
        text = text.replace(line, f"tokens_per_second: {share * 125e12 / (ops * params):.2f}")
    result, out = build(tmp_path, make_content(tmp_path, {"benchmarks.yaml": text}))
    assert result.exit_code == 0, result.output
    rows = {r[0]: (r[-2], r[-1]) for r in Built(out).table(A, "checks")[1:]}
    assert rows["Llama 3.2 3B, full fine-tune"] == ("150%", "Above the dense peak")
    assert rows["Llama 3.1 8B, LoRA"] == ("90%", "Plausible")
