"""The change report misses nothing: every page whose visible text changed is in it, and no other page.

Builds the default articles and the 70B page family before and after a price
change, reads the visible text of every page (dates aside: a refresh moves
them everywhere), and compares the pages whose text changed with the pages
`costpress changes --format json` reports from the two figures.json files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import CONTENT, TEMPLATES, make_content, replace, run_cli

DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b(?:January|February|March|April|May|June|July|August|September|"
                  r"October|November|December) \d{1,2}, \d{4}\b")  # fmt: skip


def visible(out: Path) -> dict[str, str]:
    """Each page's visible text, whitespace folded, dates removed."""
    pages = {}
    for path in sorted(out.glob("*/index.html")):
        soup = BeautifulSoup(path.read_text(), "html.parser")
        for tag in soup(["script", "style", "noscript"]):
            tag.decompose()
        main = soup.find("main") or soup
        pages[path.parent.name] = DATE.sub("", " ".join(main.get_text(" ").split()))
    return pages


def built(tmp: Path, name: str, edits: dict) -> Path:
    content = make_content(tmp / name, edits, families=True)
    out = tmp / name / "site"
    result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES))
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("changes")
    return tmp, built(tmp, "before", {})


NODUS = "prices/nodus/2026-11-05.yaml"
H100 = "{gpu: h100, count: 1, usd_per_hour: 2.60}"
LAMBDA = "prices/lambda/2026-11-29.yaml"
A100_40 = (
    "- {gpu: a100-40gb, count: 1, usd_per_hour: 1.29, region: asia-northeast-1, instance_type: gpu_1x_a100, "
    "gpu_memory_gb: 40.0}\n"
)
LATER = (
    (CONTENT / NODUS)
    .read_text()
    .replace("checked: 2026-11-05", "checked: 2026-11-20")
    .replace("{gpu: b200, count: 1, usd_per_hour: 5.50}", "{gpu: b200, count: 1, usd_per_hour: 5.20}")
)
CASES = {
    "price-up": {NODUS: replace(H100, H100.replace("2.60", "2.80"))},
    "price-down": {NODUS: replace(H100, H100.replace("2.60", "2.40"))},
    "offer-removed": {LAMBDA: replace(A100_40, "")},
    "new-snapshot": {"prices/nodus/2026-11-20.yaml": LATER},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_page_whose_text_changed_is_reported_and_no_other(before, case):
    tmp, old = before
    new = built(tmp, case, CASES[case])
    a, b = visible(old), visible(new)
    changed = {slug for slug in set(a) | set(b) if a.get(slug) != b.get(slug)}
    assert changed, "the change changed no page"
    result = run_cli("changes", "--old", str(old / "figures.json"), "--new", str(new / "figures.json"),
                     "--format", "json")  # fmt: skip
    assert result.exit_code == 3, result.output
    report = json.loads(result.output)
    reported = {row["page"] for row in report["changes"] if row["kind"] != "prices_checked"}
    reported |= {row["page"] for row in report["changes"] if row["kind"] == "prices_checked"} & changed
    assert changed - reported == set(), f"pages changed but not reported: {sorted(changed - reported)[:5]}"
    assert reported - changed == set(), f"pages reported but unchanged: {sorted(reported - changed)[:5]}"
    assert report["summary"].startswith(f"{report['pages']} pages, {report['figures']} figures, ")
