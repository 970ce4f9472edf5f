"""Docs that cannot drift from the code, and that render as written."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT
from markdown_it import MarkdownIt

from generator import clidoc

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_command_reference_is_current():
    assert clidoc.update(ROOT / "docs" / "commands.md", check=True), "docs/commands.md is stale: run 'make docs'"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make site" in readme and "make test" in readme
    assert "\nmake test\n" in ci and "\nmake check\n" in ci


def test_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 250
    assert ".venv/bin/costpress" in readme  # how to run the command make installed
    assert "costpress init" in readme and "## Your first article" in readme


def problems(text: str) -> list[str]:
    """What CommonMark makes of `text` that its writer did not mean: an unclosed fence, or a heading
    inside a code block (the sign of a fence that closed one line too late or never)."""
    lines = text.split("\n")
    found = []
    for tok in MarkdownIt("commonmark").enable("table").parse(text):
        if tok.type not in ("fence", "code_block") or tok.map is None:
            continue
        start, end = tok.map
        if tok.type == "fence":
            closing = lines[end - 1].strip() if end - 1 > start else ""
            if not (closing.startswith(tok.markup) and set(closing) <= set(tok.markup[0])):
                found.append(f"line {start + 1}: a {tok.markup} fence that is never closed")
        for i, line in enumerate(tok.content.split("\n")):
            if re.match(r"#{2,6} \S", line):
                found.append(f"line {start + 2 + i}: heading {line!r} inside a code block")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_renders_as_written(page):
    assert problems(page.read_text()) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_point_at_files(page):
    html = MarkdownIt("commonmark").render(page.read_text())
    for target in re.findall(r'(?:href|src)="([^"#]+)"', html):
        if ":" in target:  # an address elsewhere
            continue
        assert (page.parent / target).exists(), f"{page.name}: {target}"


def test_the_check_finds_what_it_is_for():
    assert problems("# A\n\n```sh\nmake site\n\n## Price refresh\n\ntext\n") == [
        "line 3: a ``` fence that is never closed",
        "line 6: heading '## Price refresh' inside a code block",
    ]
    assert problems("# A\n\n```sh\nmake site\n```\n\n## B\n") == []
