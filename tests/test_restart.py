"""Swapping a new site in without waiting for the disk, and what the build after a restart does (durable.py)."""

from __future__ import annotations

import os
import re

import pytest
from conftest import TEMPLATES, make_content, run_cli

from generator import durable, guard, write

needs_boot_id = pytest.mark.skipif(durable.boot_id() is None, reason="the system gives no boot id (not Linux)")


def build(content, out, *extra):
    return run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), *extra)


def built(tmp_path):
    """The written articles' content, built once into tmp_path/site."""
    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert build(content, out).exit_code == 0
    return content, out


def restart(monkeypatch) -> None:
    """From now on the kernel names another boot: the machine restarted since the last build."""
    monkeypatch.setattr(durable, "boot_id", lambda: "another-boot")


def watch_disk(monkeypatch) -> list[tuple]:
    """The disk-related steps a build takes, in order: ("sync", folder), ("fsync", path), ("rename", a, b)."""
    steps: list[tuple] = []
    monkeypatch.setattr(write, "sync_filesystem", lambda folder: steps.append(("sync", folder)))
    real_fsync, real_rename, real_replace = os.fsync, os.rename, os.replace

    def fsync(fd):
        steps.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def rename(a, b, *args, **kwargs):
        steps.append(("rename", os.fspath(a), os.fspath(b)))
        real_rename(a, b, *args, **kwargs)

    def replace(a, b, *args, **kwargs):
        steps.append(("rename", os.fspath(a), os.fspath(b)))
        real_replace(a, b, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "rename", rename)
    monkeypatch.setattr(os, "replace", replace)
    return steps


@needs_boot_id
def test_a_new_site_is_swapped_in_once_its_marker_and_the_boot_id_are_on_disk(tmp_path, monkeypatch):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    steps = watch_disk(monkeypatch)
    result = build(content, out)
    assert result.exit_code == 0, result.output
    record = durable.record_path(out)
    assert record.read_text() == durable.boot_id() + "\n"
    assert not [step for step in steps if step[0] == "sync"]  # nothing waited for the whole file system
    staging = str(tmp_path / ".site.staging")
    swap = steps.index(("rename", staging, str(out)))
    before = steps[:swap]
    # the marker, the folder naming it, the boot id and the folder naming that: each flushed before the swap
    for path in (f"{staging}/{guard.MARKER}", staging, str(record), str(tmp_path)):
        assert ("fsync", path) in before, path
    assert steps.index(("fsync", str(record))) < steps.index(("fsync", str(tmp_path)))
    record_inode = record.stat().st_ino

    # a second swap in the same boot keeps the file, and flushes it again: the first build may have been
    # stopped between writing it and flushing it
    (content / "articles" / "memory-model-vs-measurements.md").unlink()
    steps.clear()
    again = build(content, out, "--swap")
    assert again.exit_code == 0, again.output
    assert not [step for step in steps if step[0] == "sync"]
    assert ("fsync", f"{staging}/{guard.MARKER}") in steps and ("fsync", str(record)) in steps
    assert record.stat().st_ino == record_inode and record.read_text() == durable.boot_id() + "\n"


def test_without_a_boot_id_a_build_waits_for_the_disk_before_the_swap(tmp_path, monkeypatch):
    """Where no restart can be told (not Linux), the whole new tree reaches the disk before it is the site."""
    monkeypatch.setattr(durable, "boot_id", lambda: None)
    content = make_content(tmp_path)
    out = tmp_path / "site"
    steps = watch_disk(monkeypatch)
    assert build(content, out).exit_code == 0
    staging = str(tmp_path / ".site.staging")
    assert steps.index(("sync", staging)) < steps.index(("rename", staging, str(out)))
    assert not durable.record_path(out).exists()


@needs_boot_id
def test_the_build_after_a_restart_compares_every_file_and_repairs_what_was_lost(tmp_path, monkeypatch):
    """A power cut can leave a page empty in a folder whose inode and time are as the last build left them.
    In the same boot that cannot happen, and the build trusts the folder; after a restart it reads every file."""
    content, out = built(tmp_path)
    page = next(path for path in sorted(out.glob("*/index.html")))
    whole = page.read_bytes()
    folder_before = os.stat(page.parent).st_mtime_ns
    page.write_bytes(b"")  # as a restart can leave a file whose bytes never reached the disk
    assert os.stat(page.parent).st_mtime_ns == folder_before  # nothing a build looks at tells it

    same_boot = build(content, out)
    assert same_boot.output.startswith("nothing to build"), same_boot.output
    assert page.read_bytes() == b""  # the shortcut trusted the folder: what this mechanism is for

    restart(monkeypatch)
    after = build(content, out)
    assert after.exit_code == 0, after.output
    assert after.output.startswith(f"{out} was published before the machine restarted"), after.output
    assert page.read_bytes() == whole
    assert "(1 file written, " in after.output, after.output
    # the one file went in by a journalled move, on disk: nothing left for a restart to undo
    assert not durable.record_path(out).exists()
    assert build(content, out).output.startswith("nothing to build")


@needs_boot_id
def test_after_a_restart_the_page_cache_keeps_no_page_unread(tmp_path, monkeypatch):
    """A family page whose inputs did not change is kept as published without being read (the page cache):
    after a restart it is rendered and compared like every other page."""
    from generator import pagecache

    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert build(content, out).exit_code == 0
    cache, _ = pagecache.read(out)
    page = out / cache.slugs[0] / "index.html"
    whole = page.read_bytes()
    page.write_bytes(b"")
    article = content / "articles" / "memory-model-vs-measurements.md"  # no family page reads it
    article.write_text(article.read_text() + "\nOne more sentence.\n")

    same_boot = build(content, out)
    assert same_boot.exit_code == 0, same_boot.output
    built_pages, rendered = map(int, re.search(r"built (\d+) articles .* (\d+) rendered", same_boot.output).groups())
    assert rendered < built_pages, same_boot.output  # the family pages were kept
    assert page.read_bytes() == b""  # kept, unread: the page cache said its inputs had not changed

    restart(monkeypatch)
    article.write_text(article.read_text() + "\nAnd another.\n")
    after = build(content, out)
    assert after.exit_code == 0, after.output
    assert f"built {built_pages} articles" in after.output and f"{built_pages} rendered" in after.output, after.output
    assert page.read_bytes() == whole


@needs_boot_id
def test_after_a_restart_a_site_found_whole_stops_being_compared(tmp_path, monkeypatch):
    content, out = built(tmp_path)
    restart(monkeypatch)
    after = build(content, out)
    assert after.exit_code == 0 and "(0 files written" in after.output, after.output
    assert not durable.record_path(out).exists()
    assert build(content, out).output.startswith("nothing to build")


@needs_boot_id
def test_after_a_restart_a_swap_records_the_new_boot(tmp_path, monkeypatch):
    content, out = built(tmp_path)
    restart(monkeypatch)
    (content / "articles" / "memory-model-vs-measurements.md").unlink()  # something to publish
    after = build(content, out, "--swap")
    assert after.exit_code == 0 and "was published before the machine restarted" in after.output, after.output
    assert durable.record_path(out).read_text() == "another-boot\n"


def test_a_record_that_cannot_be_read_counts_as_another_boot(tmp_path):
    out = tmp_path / "site"
    durable.record_path(out).write_bytes(b"")  # a write cut short
    assert durable.restarted(out)
    durable.record_path(out).unlink()
    durable.record_path(out).mkdir()  # there, and not a file
    assert durable.restarted(out)
    durable.record_path(out).rmdir()
    assert not durable.restarted(out)  # no record: published by a build that waited for the disk


@needs_boot_id
def test_only_a_build_that_may_wait_for_the_disk_flushes_while_it_renders(tmp_path):
    """The background flushes make the final wait for the disk short; a swap that will not wait skips them."""
    import threading

    from generator import publish

    def flushing(publisher) -> bool:
        publisher.start_flushing()
        running = any(t.name == "costpress-flush" for t in threading.enumerate())
        publisher.abort()
        return running

    out = tmp_path / "site"
    assert not flushing(publish.Publisher(out))  # a new folder: swapped in without waiting
    out.mkdir()
    assert flushing(publish.Publisher(out))  # may move files into it, which waits for the disk
    assert not flushing(publish.Publisher(out, mode="swap"))


@needs_boot_id
def test_a_link_in_the_boot_ids_place_is_not_written_through(tmp_path, monkeypatch):
    """costpress never overwrites a file it did not write: with a link where `.site.boot-id` goes, the swap
    waits for the disk instead, and the linked file keeps its bytes."""
    content = make_content(tmp_path)
    out = tmp_path / "site"
    mine = tmp_path / "mine.txt"
    mine.write_text("my notes\n")
    durable.record_path(out).symlink_to(mine)
    steps = watch_disk(monkeypatch)
    assert build(content, out).exit_code == 0
    assert mine.read_text() == "my notes\n"
    assert durable.record_path(out).is_symlink()  # left where it was
    staging = str(tmp_path / ".site.staging")
    assert steps.index(("sync", staging)) < steps.index(("rename", staging, str(out)))
