"""A family's rows made ahead: when many rows are in no cache, a second process makes some providers' rows
while the build makes the others (generator.rowsahead). The rows, their order and the next row cache must
be what one process makes alone (the cache's records may come in another order: it is read by family and
provider)."""

from __future__ import annotations

import marshal
import os

import pytest
from conftest import make_content

from generator import families, rowcache, rowsahead
from generator.load import load_content

MADE = rowsahead._made


def _grid(content, out, monkeypatch, ahead: bool, log=None, rows_made=None):
    """The family's rows (as value tuples, in order) and the next row cache's rows by provider (decoded),
    made with a row cache that has none kept; `log` records which process made each provider's rows, and
    `rows_made` (a list) receives the rows themselves."""
    monkeypatch.setattr(rowsahead, "FROM", 1 if ahead else 10**9)
    if log is not None:
        log.write_text("")

        def logged(providers, make):
            with open(log, "a") as fh:
                fh.write(f"{os.getpid()} {' '.join(providers)}\n")
            return MADE(providers, make)

        monkeypatch.setattr(rowsahead, "_made", logged)
    cat = load_content(content)
    (fam,) = families.load_families(content, [])
    cache = rowcache.RowCache(out, "code 1")
    rows = families.family_grid(cat, fam, cache.family(cat, fam))
    if rows_made is not None:
        rows_made += rows
    cache.finish()
    kept = rowcache._read(cache.tmp)[fam.file][1]
    next_rows = {provider: (key, marshal.loads(data)) for provider, (key, data) in kept.items()}
    by = [line.split() for line in log.read_text().splitlines()] if log is not None else []
    return [families.row_values(r) for r in rows], list(kept), next_rows, by


def test_some_providers_rows_are_made_by_another_process_and_are_the_same(tmp_path, monkeypatch):
    content, log = make_content(tmp_path, families=True), tmp_path / "log"
    rows, order, next_rows, by = _grid(content, tmp_path / "one", monkeypatch, False, log)
    assert by == [] and len(rows) > 100
    made: list = []
    rows_ahead, order_ahead, next_ahead, by = _grid(content, tmp_path / "two", monkeypatch, True, log, made)
    # the providers at the end of the family's list, made elsewhere
    (pid, *share), *more = by
    assert more == [] and int(pid) != os.getpid() and share
    providers = families.load_families(content, [])[0].data["axes"]["providers"]
    assert share == providers[-len(share) :] and len(share) < len(providers)
    assert rows_ahead == rows  # every row, every value, in the same order
    # rows of one job (model, method, GPU and count) read back share its values, as rows made here do
    theirs = [r for r in made if r.provider in share]
    for name in families.JOB_VALUES:
        jobs: dict = {}
        for r in theirs:
            assert jobs.setdefault((r.model, r.method, r.gpu, r.count), getattr(r, name)) is getattr(r, name), name
    assert len({(r.model, r.method, r.gpu, r.count) for r in theirs}) < len(theirs)
    # the next cache: the same records (the other process's written as they are taken: the order is the file's own)
    assert sorted(order_ahead) == sorted(order) and next_ahead == next_rows


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_when_the_other_process_fails_the_build_makes_its_rows(tmp_path, monkeypatch, how):
    content = make_content(tmp_path, families=True)
    rows, order, next_rows, _ = _grid(content, tmp_path / "one", monkeypatch, False)

    def fail(providers, make):
        if how == "dies":
            os._exit(3)
        raise RuntimeError("a bug")

    monkeypatch.setattr(rowsahead, "_made", fail)
    rows_ahead, order_ahead, next_ahead, _ = _grid(content, tmp_path / "two", monkeypatch, True)
    assert rows_ahead == rows and sorted(order_ahead) == sorted(order) and next_ahead == next_rows


def test_too_few_rows_to_make_start_no_process(tmp_path, monkeypatch):
    """The default family is below FROM: no process is forked for it."""
    content, log = make_content(tmp_path, families=True), tmp_path / "log"
    monkeypatch.setattr(rowsahead, "RowsAhead", None)  # would fail if started
    rows, _, _, _ = _grid(content, tmp_path / "one", monkeypatch, False, log)
    cat = load_content(content)
    (fam,) = families.load_families(content, [])
    offers = sum(len(cat.snapshot(p).offers) for p in fam.data["axes"]["providers"])
    assert len(rows) == offers * len(fam.data["axes"]["models"]) * len(fam.data["axes"]["methods"]) < 4000
    monkeypatch.setattr(rowsahead, "FROM", 4000)
    families.family_grid(cat, fam, rowcache.RowCache(tmp_path / "three", "code 1").family(cat, fam))
