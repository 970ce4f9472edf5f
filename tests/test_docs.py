"""Docs that cannot drift from the code."""

from __future__ import annotations

from conftest import ROOT

from generator import clidoc


def test_cli_reference_in_readme_is_current():
    assert clidoc.update(ROOT / "README.md", check=True), "README CLI reference is stale: run 'make docs'"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make site" in readme and "make test" in readme
    assert "\nmake test\n" in ci and "\nmake check\n" in ci
