"""Every built page passes the Nu HTML Checker with zero errors."""

from __future__ import annotations

import json
import subprocess

from tools import JAVA, VNU_JAR, need


def sample(out, pattern: str) -> list[str]:
    """Every page but family setup pages, and of those the first of each model and method.

    Setup pages share one template and differ only in figures and names; checking 1,800 of them took
    the checker 16 s.
    """
    seen, out_files = set(), []
    for path in sorted(out.rglob(pattern)):
        folder = path.parent.name
        group = folder.split("-on-")[0] if "-on-" in folder else None
        if group is None or (group, path.name) not in seen:
            seen.add((group, path.name))
            out_files.append(str(path))
    return out_files


def test_vnu_reports_no_errors(site):
    need(JAVA, "Java (Debian package default-jre-headless)")
    need(VNU_JAR.exists(), "vnu-jar (npm ci)")
    pages = sample(site.out, "*.html")
    svgs = sample(site.out, "*.svg")
    done = subprocess.run(
        [JAVA, "-jar", str(VNU_JAR), "--errors-only", "--format", "json", *pages], capture_output=True, text=True
    )
    messages = json.loads(done.stderr or done.stdout or '{"messages": []}')["messages"]
    errors = [f"{m.get('url')}:{m.get('lastLine')}: {m.get('message')}" for m in messages if m.get("type") == "error"]
    assert errors == [], "\n".join(errors)
    done = subprocess.run(
        [JAVA, "-jar", str(VNU_JAR), "--errors-only", "--svg", "--format", "json", *svgs],
        capture_output=True,
        text=True,
    )
    messages = json.loads(done.stderr or done.stdout or '{"messages": []}')["messages"]
    assert [m for m in messages if m.get("type") == "error"] == []
