"""The authoring commands that write into content/ (import-prices, calibrate, import-model, import-results)
never put their file over one that holds something else unless asked, and never leave half a file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from conftest import make_content, run_cli

from generator import authored
from generator.errors import CostpressError

FIXTURES = Path(__file__).parent / "fixtures"
LAMBDA = next((FIXTURES / "catalogs").glob("skypilot-catalog-lambda-*.csv"))


def _import(content: Path, day: str, *extra: str):
    args = ["import-prices", "skypilot", str(LAMBDA), "--provider", "lambda", "--checked", day]
    return run_cli(*args, "--out", str(content / "prices"), "--content", str(content), *extra)


def test_a_snapshot_edited_by_hand_is_kept_until_replace_is_given(tmp_path):
    """The price guard asks for `confirmed: true` in the snapshot; importing the same day again wrote over
    it without a word, so the guard stopped the next build again (and any other edit was gone)."""
    content = make_content(tmp_path)
    first = _import(content, "2026-12-01")
    assert first.exit_code == 0 and first.output.endswith(f"wrote {content}/prices/lambda/2026-12-01.yaml\n")
    snapshot = content / "prices" / "lambda" / "2026-12-01.yaml"
    again = _import(content, "2026-12-01")
    assert again.exit_code == 0 and again.output.endswith(f"unchanged {snapshot}\n")

    edited = snapshot.read_text().replace("instance_type: gpu_1x_a100,", "instance_type: gpu_1x_a100, confirmed: true,")
    assert edited != snapshot.read_text()
    snapshot.write_text(edited)
    refused = _import(content, "2026-12-01")
    assert refused.exit_code == 1
    assert refused.output == (
        f"error: {snapshot}: already exists and holds something else; --replace overwrites it (a hand edit in it"
        " is lost)\n"
    )
    assert snapshot.read_text() == edited
    replaced = _import(content, "2026-12-01", "--replace")
    assert replaced.exit_code == 0 and replaced.output.endswith(f"replaced {snapshot}\n")
    assert "confirmed" not in snapshot.read_text()
    assert sorted(p.name for p in snapshot.parent.iterdir()) == ["2026-11-29.yaml", "2026-12-01.yaml"]


def test_a_refresh_keeps_the_name_pages_call_the_provider(tmp_path):
    """Without --name a snapshot was named by the provider's id: 'lambda' on every page after a refresh, where
    the snapshot before said 'Lambda'. The newest snapshot's name is kept; a new provider gets its id."""
    content = make_content(tmp_path)
    before = content / "prices" / "lambda" / "2026-11-29.yaml"
    before.write_text(before.read_text().replace("name: Lambda\n", "name: Lambda Labs\n"))
    assert _import(content, "2026-12-01").exit_code == 0
    assert yaml.safe_load((content / "prices" / "lambda" / "2026-12-01.yaml").read_text())["name"] == "Lambda Labs"
    assert _import(content, "2026-12-02", "--name", "Lambda Cloud").exit_code == 0
    assert yaml.safe_load((content / "prices" / "lambda" / "2026-12-02.yaml").read_text())["name"] == "Lambda Cloud"

    args = ["import-prices", "skypilot", str(LAMBDA), "--provider", "lambda2", "--checked", "2026-12-01"]
    assert run_cli(*args, "--out", str(content / "prices"), "--content", str(content)).exit_code == 0
    assert yaml.safe_load((content / "prices" / "lambda2" / "2026-12-01.yaml").read_text())["name"] == "lambda2"


def test_a_newest_snapshot_whose_name_cannot_be_read_is_an_error_not_a_guess(tmp_path):
    """With a YAML typo in the newest snapshot, a refresh named the provider by its id ("lambda") in the new
    snapshot, which outlived the fix to the typo. It now stops and says why, as the build would."""
    content = make_content(tmp_path)
    newest = content / "prices" / "lambda" / "2026-11-29.yaml"
    newest.write_text(newest.read_text().replace("name: Lambda\n", "name: [Lambda\n"))
    typo = _import(content, "2026-12-01")
    assert typo.exit_code == 1
    assert typo.output == (
        f"error: {newest}:4:8: YAML syntax error: expected ',' or ']', but got ':'; give --name to name the provider\n"
    )
    newest.write_text("provider: lambda\n")
    unnamed = _import(content, "2026-12-01")
    assert unnamed.output == f"error: {newest}: no provider name in it to keep; give --name to name the provider\n"
    assert not (content / "prices" / "lambda" / "2026-12-01.yaml").exists()
    named = _import(content, "2026-12-01", "--name", "Lambda")
    assert (
        named.exit_code == 0
        and yaml.safe_load((content / "prices/lambda/2026-12-01.yaml").read_text())["name"] == "Lambda"
    )


def _calibrate(content: Path, bench_id: str, seconds: str, *extra: str):
    args = ["calibrate", "--content", str(content), "--tokens", "20M", "--seconds", seconds, "--id", bench_id]
    return run_cli(*args, "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h100", *extra)


def test_calibrate_does_not_write_over_a_file_or_a_record_it_did_not_make(tmp_path):
    """`calibrate --id mlperf-llama2-70b-lora` wrote its one record over the MLPerf suite of that name, and an
    id already in benchmarks.yaml made a second record the build then refused."""
    content = make_content(tmp_path)
    suite = content / "benchmarks" / "mlperf-llama2-70b-lora.yaml"
    settings = content / "site.yaml"
    kept = {path: path.read_bytes() for path in (suite, settings, content / "benchmarks.yaml")}

    over_suite = _calibrate(content, "mlperf-llama2-70b-lora", "3600")
    assert over_suite.exit_code == 1
    assert over_suite.output == (
        f"error: {suite}: already exists and holds something else; --replace overwrites it, or choose another"
        " --id or --out\n"
    )
    taken = yaml.safe_load((content / "benchmarks.yaml").read_text())["benchmarks"][0]["id"]
    over_record = _calibrate(content, taken, "3600")
    assert over_record.exit_code == 1
    assert (
        over_record.output == f"error: --id: {taken!r} is already a benchmark record in {content}; choose another id\n"
    )
    over_settings = _calibrate(content, "mine", "3600", "--out", str(settings))
    assert over_settings.exit_code == 1 and over_settings.output.startswith(f"error: {settings}: already exists")
    assert {path: path.read_bytes() for path in kept} == kept
    assert not (content / "benchmarks" / f"{taken}.yaml").exists()


def test_calibrate_measured_again_replaces_its_record_only_when_asked(tmp_path):
    content = make_content(tmp_path)
    record = content / "benchmarks" / "mine.yaml"
    # 20M tokens in 3,600 s: 5,555.56 tokens/s; in 3,000 s: 6,666.67
    assert _calibrate(content, "mine", "3600").output.endswith(
        f"5,555.56 tokens/s, 27.1% of dense peak; wrote {record}\n"
    )
    assert _calibrate(content, "mine", "3600").output.endswith(f"; unchanged {record}\n")
    first = record.read_bytes()
    refused = _calibrate(content, "mine", "3000")
    assert refused.exit_code == 1 and refused.output.startswith(f"error: {record}: already exists")
    assert record.read_bytes() == first
    replaced = _calibrate(content, "mine", "3000", "--replace")
    assert replaced.exit_code == 0 and replaced.output.startswith("6,666.67 tokens/s")
    assert replaced.output.endswith(f"; replaced {record}\n")
    assert yaml.safe_load(record.read_text())["benchmarks"][0]["tokens_per_second"] == pytest.approx(20e6 / 3000)


@pytest.mark.parametrize("where", ["write", "chmod", "rename"])
def test_a_write_stopped_part_way_leaves_the_old_file_whole(tmp_path, monkeypatch, where):
    """models.yaml (import-model rewrites it to add one entry) and a suite (import-results) were written in
    place: Ctrl-C or a full disk part way left a cut file. Now the old bytes stay until the rename."""
    target = tmp_path / "models.yaml"
    target.write_bytes(b"models:\n  - id: a\n")
    os.chmod(target, 0o640)

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    if where == "write":
        real_open = open

        class Cut:
            def __init__(self, *args, **kwargs):
                self.fh = real_open(*args, **kwargs)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()

            def write(self, data):
                self.fh.write(data[:5])
                raise KeyboardInterrupt

        monkeypatch.setattr("builtins.open", Cut)
    else:
        monkeypatch.setattr(authored.os, "chmod" if where == "chmod" else "replace", stop)
    with pytest.raises(KeyboardInterrupt):
        authored.write_whole(target, b"models:\n  - id: a\n  - id: b\n")
    monkeypatch.undo()
    assert target.read_bytes() == b"models:\n  - id: a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["models.yaml"]
    authored.write_whole(target, b"models:\n  - id: a\n  - id: b\n")
    assert target.read_bytes() == b"models:\n  - id: a\n  - id: b\n"
    assert oct(target.stat().st_mode & 0o777) == "0o640"  # the file keeps its permissions


def test_a_folder_where_the_file_goes_is_one_line(tmp_path):
    (tmp_path / "x.yaml").mkdir()
    with pytest.raises(CostpressError, match=r"x\.yaml: is a folder; expected a file to write$"):
        authored.write_new(tmp_path / "x.yaml", "a: 1\n", replace=True, hint="")
    (tmp_path / "f").write_text("a file, not a folder")
    with pytest.raises(CostpressError, match=r"/f: cannot make the folder \(a file is there\)$"):  # said of the file
        authored.write_whole(tmp_path / "f" / "z.yaml", b"")


def test_write_created_makes_only_new_files_and_leaves_none_cut(tmp_path):
    """`new article` and `new family` wrote with write_text: a file where the folder should be was a traceback,
    and a write stopped part way left a cut file. write_created makes the file only if its name is free."""
    target = tmp_path / "articles" / "a.md"
    authored.write_created(target, "one\n")
    assert target.read_text() == "one\n"
    with pytest.raises(CostpressError, match=r"a\.md: already exists$"):
        authored.write_created(target, "two\n")
    assert target.read_text() == "one\n"
    (tmp_path / "families").write_text("not a folder\n")
    with pytest.raises(CostpressError, match=r"families: cannot make the folder \(a file is there\)$"):
        authored.write_created(tmp_path / "families" / "f.md", "x")
    stopped = tmp_path / "articles" / "b.md"
    with pytest.raises(TypeError):  # anything raised while writing (Ctrl-C included) removes the new file
        authored.write_created(stopped, 3)  # type: ignore[arg-type]
    assert not stopped.exists() and sorted(p.name for p in target.parent.iterdir()) == ["a.md"]


def test_an_import_under_a_file_names_the_folder(tmp_path):
    """`import-prices --out notes.txt/x`, with notes.txt a file, said "cannot read (Not a directory)" of the
    snapshot it was to write."""
    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(CostpressError, match=r"notes\.txt/x/lambda: cannot make the folder \(Not a directory\)$"):
        authored.write_new(tmp_path / "notes.txt" / "x" / "lambda" / "2026-12-01.yaml", "a: 1\n", False, "")
    assert (tmp_path / "notes.txt").read_text() == "mine\n" and [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
