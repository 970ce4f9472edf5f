"""Implausible prices fail the build unless the snapshot confirms them."""

from __future__ import annotations

import pytest
from conftest import TEMPLATES, B, Built, make_content, read_tree, run_cli

OLD = (
    "provider: nodus\nname: Nodus\nchecked: 2026-11-05\nsource: Nodus pricing page\ncurrency: USD\noffers:\n"
    "  - {gpu: a100-80gb, count: 1, usd_per_hour: 1.09}\n"
    "  - {gpu: h100, count: 1, usd_per_hour: 2.60}\n"
    "  - {gpu: b200, count: 1, usd_per_hour: 5.50}\n"
    "  - {gpu: b200, count: 8, usd_per_hour: 44.00}\n"
    "  - {gpu: h200, count: 8, usd_per_hour: 28.74}\n"
)


def newer(b200: str, h100: str = "2.60", extra: str = "") -> str:
    return (
        OLD.replace("2026-11-05", "2026-11-12")
        .replace("usd_per_hour: 5.50}", f"usd_per_hour: {b200}{extra}}}")
        .replace("usd_per_hour: 2.60}", f"usd_per_hour: {h100}}}")
    )


@pytest.fixture
def published(tmp_path):
    out = tmp_path / "site"
    make_content(tmp_path / "orig")
    result = run_cli(
        "build", "--content", str(tmp_path / "orig/content"), "--out", str(out), "--templates", str(TEMPLATES)
    )
    assert result.exit_code == 0
    return out


@pytest.mark.parametrize(
    ("b200", "h100", "message"),
    [
        (
            "55.00",
            "2.60",
            "content/prices/nodus/2026-11-12.yaml:9: usd_per_hour: nodus b200x1 moved from $5.50 "
            "(2026-11-05) to $55.00, +900%, more than the 50% limit",
        ),
        (
            "5.50",
            "0.01",
            "content/prices/nodus/2026-11-12.yaml:8: usd_per_hour: nodus h100x1 at $0.01 is "
            "$0.0100 per GPU-hour, below the $0.05 floor",
        ),
        ("2.00", "2.60", "nodus b200x1 moved from $5.50 (2026-11-05) to $2.00, -64%"),
        (
            "0",
            "2.60",
            "content/prices/nodus/2026-11-12.yaml:9: offers[2].usd_per_hour: expected a positive number, got 0",
        ),
    ],
)
def test_bad_prices_fail_and_leave_the_site(tmp_path, monkeypatch, published, b200, h100, message):
    make_content(tmp_path, {"prices/nodus/2026-11-12.yaml": newer(b200, h100)})
    monkeypatch.chdir(tmp_path)
    before = read_tree(published)
    result = run_cli("build", "--content", "content", "--out", str(published), "--templates", str(TEMPLATES))
    assert result.exit_code == 1
    assert message in result.output
    assert read_tree(published) == before


def test_confirmed_change_passes_and_the_article_follows(tmp_path, monkeypatch, published):
    make_content(tmp_path, {"prices/nodus/2026-11-12.yaml": newer("9.00", extra=", confirmed: true")})
    monkeypatch.chdir(tmp_path)
    result = run_cli("build", "--content", "content", "--out", str(published), "--templates", str(TEMPLATES))
    assert result.exit_code == 0, result.output
    site = Built(published)
    text = site.text(B)
    assert "prices checked 2026-11-12" in text
    assert "Hourly price, 1 × B200: $9.00" in text
    assert "lastmod: 2026-11-12" in site.md(B)


def test_pinned_article_keeps_its_old_prices(tmp_path, monkeypatch):
    edits = {
        "prices/nodus/2026-11-12.yaml": newer("9.00", extra=", confirmed: true"),
        "articles/fine-tune-70b-cost-by-setup.md": lambda t: t.replace(
            "kind: flops", "kind: flops\nprices_as_of: 2026-11-05"
        ),
    }
    make_content(tmp_path, edits)
    monkeypatch.chdir(tmp_path)
    result = run_cli("build", "--content", "content", "--out", "site", "--templates", str(TEMPLATES))
    assert result.exit_code == 0, result.output
    text = Built(tmp_path / "site").text(B)
    assert "Hourly price, 1 × B200: $5.50" in text and "prices checked 2026-11-05" in text


def test_price_history_chart_appears_with_a_second_snapshot(tmp_path, monkeypatch):
    make_content(tmp_path, {"prices/nodus/2026-11-12.yaml": newer("5.00", h100="2.40")})
    monkeypatch.chdir(tmp_path)
    result = run_cli("build", "--content", "content", "--out", "site", "--templates", str(TEMPLATES))
    assert result.exit_code == 0, result.output
    site = Built(tmp_path / "site")
    rows = site.table(B, "price-history-data")
    assert rows[0][0] == "Snapshot" and "Nodus, B200" in rows[0]
    col = rows[0].index("Nodus, B200")
    # cheapest B200 offer per GPU-hour: min(5.50, 44.00 / 8) = 5.50, then min(5.00, 5.50) = 5.00
    assert [r[col] for r in rows[1:]] == ["$5.50", "$5.00"]
    h100 = rows[0].index("Nodus, H100 SXM")
    assert [r[h100] for r in rows[1:]] == ["$2.60", "$2.40"]
    assert site.html(B).find("div", id=f"{B}-price-history") is not None


def test_no_history_chart_with_one_snapshot(site):
    assert site.html(B).find("div", id=f"{B}-price-history") is None
