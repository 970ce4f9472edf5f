"""Warnings, and --strict turning them into failures."""

from __future__ import annotations

import pytest
from conftest import TEMPLATES, make_content, run_cli

OLD_NODUS = (
    "provider: nodus\nname: Nodus\nchecked: 2026-01-05\nsource: Nodus pricing page\ncurrency: USD\noffers:\n"
    "  - {gpu: a100-80gb, count: 1, usd_per_hour: 1.09}\n  - {gpu: h100, count: 1, usd_per_hour: 2.60}\n"
    "  - {gpu: b200, count: 1, usd_per_hour: 5.50}\n  - {gpu: b200, count: 8, usd_per_hour: 44.00}\n"
    "  - {gpu: h200, count: 8, usd_per_hour: 28.74}\n"
)


@pytest.mark.parametrize(
    ("edits", "warning"),
    [
        ({"notes.txt": "draft"}, "content/notes.txt: not a file costpress reads"),
        (
            {
                "prices/acme/2026-11-01.yaml": "provider: acme\nchecked: 2026-11-01\nsource: s\ncurrency: USD\n"
                "offers:\n  - {gpu: h100, count: 1, usd_per_hour: 2.0}\n"
            },
            "content/prices/acme: no article uses provider 'acme'",
        ),
        (
            {
                "prices/nodus/2026-01-05.yaml": OLD_NODUS,
                "articles/fine-tune-70b-cost-by-setup.md": lambda t: t.replace(
                    "kind: flops", "kind: flops\nprices_as_of: 2026-01-05"
                ),
            },
            "content/articles/fine-tune-70b-cost-by-setup.md: uses prices checked 2026-01-05, 328 days older than the "
            "newest snapshot (2026-11-29); the limit is 180 days",
        ),
    ],
)
def test_warning_then_strict_failure(tmp_path, monkeypatch, edits, warning):
    make_content(tmp_path, edits)
    monkeypatch.chdir(tmp_path)
    loose = run_cli("build", "--content", "content", "--out", "site", "--templates", str(TEMPLATES))
    assert loose.exit_code == 0, loose.output
    assert f"warning: {warning}" in loose.output
    strict = run_cli("build", "--strict", "--content", "content", "--out", "strict-site", "--templates", str(TEMPLATES))
    assert strict.exit_code == 1
    assert f"error: {warning}" in strict.output
    assert not (tmp_path / "strict-site").exists()
    assert not list(tmp_path.glob(".strict-site.*"))  # no staging folder, no half-written page cache


def test_default_content_has_no_warnings(tmp_path):
    result = run_cli(
        "build",
        "--strict",
        "--out",
        str(tmp_path / "s"),
        "--templates",
        str(TEMPLATES),
        "--content",
        str(make_content(tmp_path)),
    )
    assert result.exit_code == 0 and "warning" not in result.output
