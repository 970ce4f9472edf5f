"""The benchmark's file-creation probe makes what its printed line says it makes, and leaves it for the run's
clean-up (deleting right away would slow the builds that follow on ext4 without a journal)."""

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
