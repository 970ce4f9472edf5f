"""A price change must move every dependent figure, sentence, chart and the manifest."""

from __future__ import annotations

import json
import re

import yaml
from conftest import A, B, Built, build, make_content, replace

NODUS = "prices/nodus/2026-11-05.yaml"


def _build(tmp_path, edits):
    content = make_content(tmp_path, edits)
    result, out = build(tmp_path, content)
    assert result.exit_code == 0, result.output
    return Built(out)


def test_dearer_b200_moves_the_winner_everywhere(tmp_path):
    site = _build(
        tmp_path,
        {
            NODUS: lambda t: t.replace("usd_per_hour: 5.50", "usd_per_hour: 9.00").replace(
                "usd_per_hour: 44.00", "usd_per_hour: 72.00"
            )
        },
    )
    text, md = site.text(B), site.md_text(B)
    # hand-computed: QLoRA on 1 × H100 = 6 × P × 20e6 / (989e12 × 0.3 × 3600) h × $2.60
    h100 = 6 * 70_553_706_496 * 20e6 / (989e12 * 0.3 * 3600) * 2.60 / 20
    assert f"${h100:.2f}" == "$1.03"
    for page in (text, md):
        assert "The cheapest setup per token is QLoRA, 1 × H100 SXM" in page
        assert "The H100 SXM has the lowest price per PFLOP-hour" in page
        assert "Why the dearest GPU per hour" not in page
        assert "Which setup is cheapest per token" in page
        # no sentence may still name the old winner
        assert "cheapest per token is LoRA, 1 × B200" not in page
        assert "B200 has the lowest price" not in page
    manifest = yaml.safe_load(site.html(B).find("code", class_="language-yaml").get_text())
    assert manifest["spec"]["parameters"]["method"] == "QLoRA"
    assert "lora" not in manifest["spec"]["parameters"] or manifest["spec"]["parameters"]["method"] == "QLoRA"
    assert manifest["spec"]["resources"]["gpu"] == {"type": ["H100"], "count": 1}
    assert manifest["metadata"]["name"] == "llama-70b-qlora"
    assert "nodus describe tj/llama-70b-qlora" in site.md(B)
    # per-PFLOP chart ranks H100 first
    scripts = " ".join(s.get_text() for s in site.html(B).find_all("script"))
    bar = re.search(r'"y":\[("[^\]]*)\]', scripts).group(1)
    assert bar.startswith('"H100 SXM"')
    # B200 now costs 9.00 / 2.25 = 4.00 per PFLOP-hour
    rows = site.table(B, "price-per-pflop-data")
    assert ["B200", "$9.00", "2.250", "$4.00"] in rows


def test_equal_prices_per_token_are_reported_as_a_tie(tmp_path):
    # Make QLoRA on the H100 cost exactly what LoRA on the B200 costs per token:
    # per-token cost ∝ price / peak, so H100 price = 5.50 × 989 / 2250.
    tie_price = 5.50 * 989 / 2250
    site = _build(tmp_path, {NODUS: replace("usd_per_hour: 2.60", f"usd_per_hour: {tie_price!r}")})
    text = site.text(B)
    assert (
        "The cheapest setups per token are tied: QLoRA, 1 × H100 SXM and LoRA, 1 × B200." in text
        or "The cheapest setups per token are tied: LoRA, 1 × B200 and QLoRA, 1 × H100 SXM." in text
    )
    assert (
        "H100 SXM and B200 tie for the lowest price per PFLOP-hour" in text
        or "B200 and H100 SXM tie for the lowest price per PFLOP-hour" in text
    )


def test_a_setup_that_stops_fitting_fails_the_build(tmp_path):
    content = make_content(tmp_path, {"hardware.yaml": replace("memory_gb: 180", "memory_gb: 140")})
    result, out = build(tmp_path, content)
    assert result.exit_code == 1
    assert "fine-tune-70b-cost-by-setup.md" in result.output
    assert "needs 157.4 GB per GPU, but 1 x B200 holds 140 GB each" in result.output
    assert not out.exists()


def test_article_a_follows_its_rate(tmp_path):
    site = _build(
        tmp_path, {"prices/spark-rental/2026-10-28.yaml": replace("usd_per_hour: 0.75", "usd_per_hour: 1.20")}
    )
    h = 100e6 / 759.79 / 3600
    assert f"{h * 1.20:.2f}" == "43.87"
    assert ["100 M", "36.6", "$43.87"] in site.table(A, "estimates")
    assert "cost about $43.87" in site.text(A)
    code = site.html(A).find("code", class_="language-python").get_text()
    assert "usd_per_hour = 1.2" in code
    figures = json.loads((site.out / "figures.json").read_text())["articles"][A]["figures"]
    assert round(next(f for f in figures if f["id"] == "snippet.cost")["value"], 2) == 43.87


def test_cheapest_per_hour_also_cheapest_per_token(tmp_path):
    # A100 at $0.50: 0.50 / 0.312 = 1.60 per PFLOP-hour, the lowest; it is also cheapest per hour.
    site = _build(tmp_path, {NODUS: replace("usd_per_hour: 1.09", "usd_per_hour: 0.50")})
    text = site.text(B)
    assert "The cheapest setup per token is QLoRA, 1 × A100 80 GB, which is also the cheapest per hour." in text
    assert "Take 1 × A100 80 GB, the cheapest setup per hour" not in text
