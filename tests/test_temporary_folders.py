"""Where the test run's temporary folders go (tests/conftest.py): the RAM disk when it has room."""

from __future__ import annotations

import os
import subprocess
import sys

import conftest


def _dead_pid() -> int:
    """The pid of a process that has ended (and been waited for)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_failed_runs_folder_is_removed_by_a_later_run_but_not_a_running_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "RAM_DISK", tmp_path)
    ended = tmp_path / f"{conftest.RAM_DISK_PREFIX}{_dead_pid()}-abc"
    running = tmp_path / f"{conftest.RAM_DISK_PREFIX}{os.getpid()}-def"
    odd = tmp_path / f"{conftest.RAM_DISK_PREFIX}mine-ghi"  # not a run's name: left alone
    other = tmp_path / "notes"
    for folder in (ended, running, odd, other):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "file.txt").write_text("x")
    conftest._remove_earlier_runs()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, odd.name, other.name])
    assert (running / "sub" / "file.txt").read_text() == "x"


def test_a_folder_that_is_not_a_mounted_tmpfs_is_no_ram_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "RAM_DISK", tmp_path)  # a folder, never a mount point of its own
    assert conftest.ram_disk_room() is False


def test_a_ram_disk_without_the_room_is_not_used(monkeypatch):
    monkeypatch.setattr(conftest, "RAM_DISK_ROOM", 1 << 62)  # more than any machine has
    assert conftest.ram_disk_room() is False
