"""Snapshots parsed ahead: when many price snapshots are in no cache, a second process parses half of them
while the build parses the rest (generator.parseahead). What the build loads, tells and keeps for the next
build must be what one process makes alone."""

from __future__ import annotations

import os

import pytest
from conftest import make_content

from generator import load, parseahead, parsecache
from generator.errors import ContentError

LOAD_FILE = load._snapshot_file


def _load(content, out, ahead: bool, monkeypatch, log=None):
    """load_content with a fresh parse cache; (the cache, the catalog's snapshots or the problems, the
    processes that loaded each snapshot file)."""
    monkeypatch.setattr(parseahead, "FROM", 2 if ahead else 10**9)
    if log is not None:
        log.write_text("")

        def logged(provider, path, display, *rest, **kw):
            with open(log, "a") as fh:
                fh.write(f"{os.getpid()} {path.name} {provider}\n")
            return LOAD_FILE(provider, path, display, *rest, **kw)

        monkeypatch.setattr(load, "_snapshot_file", logged)
    cache = parsecache.ParseCache(out)
    cache.code = "code 1"
    try:
        found = repr(load.load_content(content, cache).snapshots)
    except ContentError as exc:
        found = exc.problems
    pids = {}
    for line in log.read_text().splitlines() if log is not None else []:
        pid, name, provider = line.split()
        pids[f"{provider}/{name}"] = int(pid)
    return cache, found, pids


def _same_cache(one, other) -> None:
    assert one.new == other.new and one.new_records == other.new_records and one.parsed == other.parsed


def test_half_the_snapshots_are_parsed_by_another_process_and_load_the_same(tmp_path, monkeypatch):
    content, out, log = make_content(tmp_path, families=True), tmp_path / "site", tmp_path / "log"
    files = sorted((content / "prices").rglob("*.yaml"))
    assert len(files) >= 4
    alone, snapshots, by = _load(content, out, False, monkeypatch, log)
    assert set(by.values()) == {os.getpid()}
    ahead, snapshots_ahead, by = _load(content, out, True, monkeypatch, log)
    others = sorted(name for name, pid in by.items() if pid != os.getpid())
    # the second half, in the order the build takes them (by provider, then date)
    assert others == sorted(f"{p.parent.name}/{p.name}" for p in files[len(files) // 2 :])
    assert snapshots_ahead == snapshots
    _same_cache(ahead, alone)  # the same records and documents kept for the next build, the same count
    assert ahead.kept_snapshots == alone.kept_snapshots == 0
    # the next build takes every snapshot from the cache, and starts no process
    ahead.save()
    again, snapshots_again, by = _load(content, out, True, monkeypatch, log)
    assert snapshots_again == snapshots and by == {} and again.kept_snapshots == len(files)


def test_problems_in_the_other_half_are_told_as_one_process_tells_them(tmp_path, monkeypatch):
    """A snapshot with a problem is left to the build, which tells it in its place among the others."""
    probe = make_content(tmp_path / "probe", families=True)
    files = sorted((probe / "prices").rglob("*.yaml"))
    last, before = (f.relative_to(probe).as_posix() for f in (files[-1], files[-2]))
    dup = "  - {gpu: h100, count: 1, usd_per_hour: 2.70}\n  - {gpu: h100, count: 1, usd_per_hour: 2.80}\n"
    content = make_content(
        tmp_path,
        {last: lambda text: text + dup, before: lambda text: text.replace("gpu: ", "gpu: x-", 1)},
        families=True,
    )
    out, log = tmp_path / "site", tmp_path / "log"
    alone, problems, _ = _load(content, out, False, monkeypatch)
    ahead, problems_ahead, by = _load(content, out, True, monkeypatch, log)
    assert isinstance(problems, list) and problems_ahead == problems
    assert any("duplicate offer h100 x1" in p for p in problems) and any("unknown GPU 'x-" in p for p in problems)
    # both files were tried in the other process first, then loaded here, where their problems are told
    for rel in (last, before):
        assert by[rel.split("/", 1)[1]] == os.getpid()
    assert any(pid != os.getpid() for pid in by.values())
    _same_cache(ahead, alone)


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_when_the_other_process_fails_the_build_parses_its_half(tmp_path, monkeypatch, how):
    content, out = make_content(tmp_path, families=True), tmp_path / "site"
    alone, snapshots, _ = _load(content, out, False, monkeypatch)

    def fail(*args):
        if how == "dies":
            os._exit(3)
        raise RuntimeError("a bug")

    monkeypatch.setattr(parseahead, "_parse_share", fail)
    ahead, snapshots_ahead, _ = _load(content, out, True, monkeypatch)
    assert snapshots_ahead == snapshots
    _same_cache(ahead, alone)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_build_of_one_process_loads_nothing_ahead(tmp_path, monkeypatch, jobs):
    """--jobs 1 asks for one process: no second one parses snapshots or makes rows ahead; with two, both do,
    and the site is the same."""
    from conftest import TEMPLATES, run_cli

    from generator import rowsahead

    monkeypatch.setattr(parseahead, "FROM", 2)
    monkeypatch.setattr(rowsahead, "FROM", 1)
    started = []
    for module, name in ((parseahead, "ParsedAhead"), (rowsahead, "RowsAhead")):
        real = getattr(module, name)

        def made(*args, real=real, name=name):
            started.append(name)
            return real(*args)

        monkeypatch.setattr(module, name, made)
    content, out = make_content(tmp_path, families=True), tmp_path / "site"
    args = ("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), "--jobs", jobs)
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert started == ([] if jobs == "1" else ["ParsedAhead", "RowsAhead"])
    assert run_cli(*args[:-2], "--check").exit_code == 0
