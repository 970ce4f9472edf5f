"""The bad-input corpus: every file in tests/bad/ breaks the content in one way.

Each case must fail the build with exit status 1, no traceback, messages that
name the file, line and field, and an output folder left exactly as it was
(bytes and modification times). A case edits one file (`replace`), writes
one (`text`), deletes one, makes it a named pipe (`fifo`) or a link
(`symlink`), or appends a long repeated paragraph (`append_repeat`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from conftest import KEPT_STATE, TEMPLATES, make_content, run_cli

from generator import sandbox

CASES = sorted((Path(__file__).parent / "bad").glob("*.yaml"))


def apply_case(case: dict, tmp: Path) -> Path:
    content = make_content(tmp)
    target = content / case["file"]
    if case.get("delete"):
        target.unlink()
    elif case.get("fifo"):
        os.mkfifo(target)
    elif "symlink" in case:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(case["symlink"])
    elif "text" in case:
        target.parent.mkdir(parents=True, exist_ok=True)  # e.g. families/, which tests leave out
        target.write_text(case["text"])
    elif "bytes_repeat" in case:
        chunk, times = case["bytes_repeat"]
        target.write_bytes(chunk.encode("latin-1") * times)
    elif "copy_of" in case:
        target.write_text((content / case["copy_of"]).read_text())
    elif "append_repeat" in case:  # a paragraph of `unit` written `times` times, then `tail`, at the file's end
        unit, times, tail = case["append_repeat"]
        target.write_text(target.read_text() + "\n\n" + unit * times + tail)
    else:
        text = target.read_text()
        for old, new in case["replace"]:
            assert old in text, f"case does not apply: {old!r} not in {case['file']}"
            text = text.replace(old, new, 1)
        target.write_text(text)
    return content


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A previously published site, to prove a failed build leaves it untouched."""
    tmp = tmp_path_factory.mktemp("published")
    out = tmp / "site"
    result = run_cli("build", "--content", str(make_content(tmp)), "--out", str(out), "--templates", str(TEMPLATES))
    assert result.exit_code == 0, result.output
    return out


def snapshot(folder: Path) -> dict:
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_corpus_is_big_enough():
    assert len(CASES) >= 100


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_bad_input(path, tmp_path, monkeypatch, published):
    case = yaml.safe_load(path.read_text())
    apply_case(case, tmp_path)
    monkeypatch.chdir(tmp_path)  # so messages name content/... as a user would type it
    monkeypatch.setattr(sandbox, "SECONDS", 1.0)  # a runaway template is stopped sooner; prose takes milliseconds
    before = snapshot(published)
    result = run_cli("build", "--content", "content", "--out", str(published), "--templates", str(TEMPLATES))
    output = result.output
    assert result.exit_code == 1, output
    assert "Traceback" not in output
    for expected in case["expect"]:
        assert expected in output, f"{path.name}: expected {expected!r} in:\n{output}"
    error_lines = [line for line in output.splitlines() if line.startswith("error: ")]
    assert error_lines and all(len(line) < 400 for line in error_lines)
    assert snapshot(published) == before
    assert not [p for p in published.parent.glob(".site.*") if p.name not in KEPT_STATE]
