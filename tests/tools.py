"""Where the external checkers live, and a clear skip when one is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
JAVA = shutil.which("java")
HUGO = shutil.which("hugo")
VNU_JAR = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def need(condition: object, what: str) -> None:
    """Skip with a reason CI prints (pytest -rs) when a tool could not be installed."""
    if not condition:
        pytest.skip(f"{what} is not installed; .ci/run installs it (see README, Checks)")
