"""The benchmark's file-creation probe makes what its printed line says it makes, and leaves it for the run's
clean-up (deleting right away would slow the builds that follow on ext4 without a journal); and the
benchmark says when costpress's code changed while it ran."""

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import run as bench  # noqa: E402


def test_the_probe_makes_the_files_its_line_names_and_leaves_them(tmp_path):
    line = bench.probe_line(tmp_path / "probe", "before the builds")
    folders = sorted(p for p in (tmp_path / "probe").iterdir())
    files = [f for folder in folders for f in folder.iterdir()]
    assert len(folders) == 200 and all(p.is_dir() for p in folders)
    assert len(files) == 2000 and {f.stat().st_size for f in files} == {3000}
    assert line.startswith("file creation here before the builds: ")
    assert line.endswith(" µs a file (2,000 files of 3,000 bytes in 200 new folders)")
    assert float(line.split(": ")[1].split()[0]) > 0


def test_the_benchmark_says_when_the_code_changed_under_it(tmp_path, monkeypatch, capsys):
    """An edit made while `make bench` ran made every later build render every page again (session 49)."""
    (tmp_path / "generator" / "theme").mkdir(parents=True)
    (tmp_path / "generator" / "__pycache__").mkdir()
    module = tmp_path / "generator" / "build.py"
    module.write_text("x = 1\n")
    monkeypatch.setattr(bench, "ROOT", tmp_path)
    started = bench.code_state()
    (tmp_path / "generator" / "__pycache__" / "build.cpython-311.pyc").write_bytes(b"compiled")  # not the code
    bench.warn_if_changed(started, "the default site")
    assert capsys.readouterr().out == ""
    (tmp_path / "generator" / "theme" / "base.html").write_text("<html>\n")
    bench.warn_if_changed(started, "10,000 pages")
    assert "WARNING: costpress's code or theme changed during the run (noticed after 10,000 pages)" in (
        capsys.readouterr().out
    )
