"""scripts/pick-python.py: which Python `make` builds .venv with."""

from __future__ import annotations

import importlib.util
import subprocess

import pytest
from conftest import ROOT

SCRIPT = ROOT / "scripts" / "pick-python.py"


@pytest.fixture
def pick():
    spec = importlib.util.spec_from_file_location("pick_python", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_other_builds_of_python3s_version_are_weighed(pick, monkeypatch):
    answers = {
        "python3": ("3.11", "/pyenv/python3.11"),
        "python3.11": ("3.11", "/pyenv/python3.11"),  # the same interpreter by another name
        "/usr/bin/python3.11": ("3.11", "/usr/bin/python3.11"),
        "/usr/bin/python3": ("3.13", "/usr/bin/python3.13"),  # another version: its wheels may be missing
        "/usr/local/bin/python3.11": None,  # absent, older than 3.11, or no venv module
    }
    monkeypatch.setattr(pick, "ask", lambda name: answers.get(name))
    assert pick.builds() == ["/pyenv/python3.11", "/usr/bin/python3.11"]


@pytest.mark.parametrize(
    "times, chosen",
    [
        ({"/a": 0.50, "/b": 0.46}, "/a"),  # 8% faster: within the noise, python3's own build stays
        ({"/a": 0.50, "/b": 0.33}, "/b"),
        ({"/a": 0.30, "/b": 0.50}, "/a"),
    ],
)
def test_another_build_is_taken_only_when_a_tenth_faster(pick, monkeypatch, capsys, times, chosen):
    monkeypatch.setattr(pick, "builds", lambda: list(times))
    monkeypatch.setattr(pick, "loop_time", times.get)
    pick.main()
    out, err = capsys.readouterr()
    assert out == f"{chosen}\n"
    assert err.startswith(f"pick-python: {chosen} for .venv") and "/a 0." in err and "/b 0." in err


def test_the_answer_makes_a_venv_of_python3s_version(tmp_path):
    """Run as make runs it: whatever this machine holds, the answer is python3's version and makes a venv."""
    chosen = subprocess.run(["python3", str(SCRIPT)], capture_output=True, text=True, check=True).stdout.strip()
    version = subprocess.run(
        ["python3", "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
    )
    theirs = subprocess.run([chosen, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    assert theirs.stdout == version.stdout
    subprocess.run([chosen, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    assert (tmp_path / "venv" / "bin" / "python").exists()
