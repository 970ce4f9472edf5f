"""The multi-provider article: every row recomputed here from the snapshots and the formula."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import oracle
import pytest
import yaml
from conftest import CONTENT

SLUG = "70b-fine-tune-across-clouds"
P70 = 70_553_706_496
OPS = {"lora": 6, "full-8bit": 8}
PROVIDERS = ["lambda", "nebius", "runpod", "nodus"]


def usd(x: float) -> str:
    return "$" + f"{Decimal(repr(x)).quantize(Decimal('0.01'), ROUND_HALF_UP):,}"


def newest(provider: str) -> dict:
    path = sorted((CONTENT / "prices" / provider).glob("*.yaml"))[-1]
    return yaml.safe_load(path.read_text())


GPUS = {g["id"]: g for g in yaml.safe_load((CONTENT / "hardware.yaml").read_text())["gpus"]}


def expected_rows(method: str) -> dict[str, float]:
    """label -> run cost with startup, cheapest GPU count per provider and GPU type."""
    return {label: cost for label, (cost, _) in priced_rows(method).items()}


def priced_rows(method: str) -> dict[str, tuple[float, float]]:
    """label -> (run cost with startup, price per hour), cheapest GPU count per provider and GPU type."""
    best: dict[tuple[str, str], tuple[float, str, float]] = {}
    for provider in PROVIDERS:
        snap = newest(provider)
        for o in snap["offers"]:
            gpu = GPUS[o["gpu"]]
            if not oracle.fits(method, gpu["memory_gb"], o["count"]):
                continue
            hours = OPS[method] * P70 * 20e6 / (gpu["peak_tflops"] * o["count"] * 1e12 * 0.3 * 3600)
            cost = (hours + 0.25) * o["usd_per_hour"]
            label = f"{snap['name']}, {o['count']} × {gpu['name']}"
            key = (snap["name"], o["gpu"])
            if key not in best or cost < best[key][0]:
                best[key] = (cost, label, o["usd_per_hour"])
    return {label: (cost, hourly) for cost, label, hourly in best.values()}


@pytest.mark.parametrize("method", ["lora", "full-8bit"])
def test_table_rows(site, method):
    rows = site.table(SLUG, f"offers-{method}")[1:]
    expected = expected_rows(method)
    assert {r[0] for r in rows} == set(expected)
    for r in rows:
        assert r[4] == usd(expected[r[0]]), r
    costs = [float(r[4].lstrip("$").replace(",", "")) for r in rows]
    assert costs == sorted(costs)


def test_sentences_name_the_computed_winners(site):
    text = site.text(SLUG)
    lora = expected_rows("lora")
    cheapest = min(lora, key=lora.get)
    dearest = max(lora, key=lora.get)
    assert f"The cheapest run is on {cheapest}, at {usd(lora[cheapest])} with startup" in text
    ratio = Decimal(repr(lora[dearest] / lora[cheapest])).quantize(Decimal("0.1"), ROUND_HALF_UP)
    assert f"The dearest fitting setup, {dearest}, costs {usd(lora[dearest])}: {ratio}× as much" in text
    full = expected_rows("full-8bit")
    low = min(full.values())
    tied = sorted(k for k, v in full.items() if usd(v) == usd(low))
    assert len(tied) == 2  # Nebius and Nodus both list 8 × B200 at $44.00
    assert f"The cheapest runs are tied: {' and '.join(tied)}, at {usd(low)}." in text


@pytest.mark.parametrize(("method", "heading"), [("lora", "LoRA"), ("full-8bit", "Full fine-tune")])
def test_the_lowest_hourly_price_is_named_when_it_is_not_the_cheapest_run(site, method, heading):
    """Where the setup with the lowest hourly price is not the cheapest run, the method's section says whose it
    is, its price and what its run costs; where it is the cheapest run, the sentence is left out."""
    rows = priced_rows(method)
    hourly = min(price for _, price in rows.values())
    (lowest,) = [label for label, (_, price) in rows.items() if price == hourly]  # no tie in the seed prices
    run = min(cost for cost, _ in rows.values())
    cheapest = [label for label, (cost, _) in rows.items() if usd(cost) == usd(run)]
    page = (site.out / SLUG / "index.md").read_text()
    (section,) = [part for part in page.split("\n## ") if part.startswith(heading)]
    section = " ".join(section.split())
    if lowest in cheapest:
        assert "The lowest hourly price" not in section
    else:
        said = f"The lowest hourly price belongs to {lowest} ({usd(hourly)} per hour), yet its run costs"
        assert f"{said} {usd(rows[lowest][0])}." in section, section
