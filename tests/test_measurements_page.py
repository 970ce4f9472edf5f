"""The memory-check page: every published measurement in content, beside the model, with its error."""

from __future__ import annotations

import yaml
from conftest import CONTENT

SLUG = "memory-model-vs-measurements"
GIB = 2**30 / 1e9


def published() -> list[dict]:
    out = []
    for path in sorted((CONTENT / "measurements").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for m in doc["measurements"]:
            out.append({**m, "source": doc["source"], "conditions": " ".join(doc["conditions"].split())})
    return out


def number(cell: str) -> float:
    return float(cell.replace(",", "").replace("\u2212", "-").rstrip("%+"))


def test_the_table_holds_every_measurement_from_content(site):
    rows = site.table(SLUG, "measurements")[1:]
    items = published()
    guide = yaml.safe_load((CONTENT / "methods.yaml").read_text())["memory"]
    assert len(rows) == len(items) + len(guide)
    for m in items:
        peak = m["peak"] * (GIB if m["unit"] == "GiB" else 1)
        row = next(r for r in rows if r[0] == m["label"] and r[2] == f"{m['count']} × {m['gpu_name']}")
        assert number(row[3]) == round(peak, 1)


def test_errors_and_the_largest_follow_from_the_table(site):
    table = site.table(SLUG, "measurements")[1:]
    errors = []
    for row in table:
        measured, predicted = number(row[3]), number(row[4])
        shown = number(row[5])
        assert abs(shown - (predicted / measured - 1) * 100) <= 1.0, row  # the table rounds both columns
        errors.append(abs(predicted / measured - 1))
    worst = max(errors)
    text = site.text(SLUG)
    assert f"The largest difference is {round(worst * 100)}%" in text
    assert f"{sum(e <= 0.25 for e in errors)} of {len(errors)} figures fall within 25% of the model" in text


def test_each_measurement_names_its_source_and_conditions(site):
    text = site.text(SLUG)
    for m in published():
        assert m["conditions"] in text
        assert m["source"] in text
    sources = [a.get_text(" ", strip=True) for a in site.html(SLUG).select("a")]
    assert any("torchtune" in s for s in sources)
