"""Every built page passes the Nu HTML Checker with zero errors."""

from __future__ import annotations

import json
import subprocess

from tools import JAVA, VNU_JAR, need


def test_vnu_reports_no_errors(site):
    need(JAVA, "Java (Debian package default-jre-headless)")
    need(VNU_JAR.exists(), "vnu-jar (npm ci)")
    pages = sorted(str(p) for p in site.out.rglob("*.html"))
    svgs = sorted(str(p) for p in site.out.rglob("*.svg"))
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
