"""kill -9 at every step of publishing: the output folder is always the old or the new site."""

from __future__ import annotations

import builtins
import os
import shutil
import signal
from pathlib import Path

import pytest
from conftest import CONTENT, TEMPLATES, build, leftovers, make_content, read_tree, replace, run_cli

import generator.publish as w
import generator.trees as trees
import generator.write as wr
from generator.build import render_site


def tree(folder: Path):
    """read_tree(folder), or None when there is no folder."""
    return read_tree(folder) if folder.exists() else None


def _linked_copy(site: Path, out: Path) -> None:
    """A copy of a published site whose files are hard links to its own (its folders are new): a build never
    writes into a published file in place (it renames or links new ones in), so the session's site is safe,
    and copying the default site's 109 MB took 4.8 s a test (linking it, 0.7 s). The kill-at-every-step
    tests copy their small site so at each of some 200 kill points, and check at the end that it is whole."""
    shutil.copytree(site, out, copy_function=os.link)


def publish_and_die_at(files, out: Path, limit: int, fallback: bool, mode: str = "swap") -> int:
    """Fork; the child publishes and SIGKILLs itself at the limit-th file-system step."""
    pid = os.fork()
    if pid == 0:  # child
        count = [0]

        def tick():
            count[0] += 1
            if count[0] == limit:
                os.kill(os.getpid(), signal.SIGKILL)

        def wrap(owner, name):
            original = getattr(owner, name)

            def wrapped(*args, **kwargs):
                tick()
                result = original(*args, **kwargs)
                tick()
                return result

            setattr(owner, name, wrapped)

        if fallback:
            trees.exchange = lambda a, b: False
        for owner, name in [
            (os, "link"),
            (os, "rename"),
            (os, "sync"),
            (wr, "sync_filesystem"),
            (os, "unlink"),
            (os, "makedirs"),
            (os, "mkdir"),
            (os, "rmdir"),
            (shutil, "rmtree"),
            (shutil, "copystat"),
            (trees, "exchange"),
        ]:
            wrap(owner, name)
        real_open = builtins.open

        def counting_open(file, mode="r", *args, **kwargs):
            if "w" in mode:
                tick()
            return real_open(file, mode, *args, **kwargs)

        wr.open = counting_open
        try:
            w.publish(files, out, mode=mode)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


# One article and no search index: publishing is the same file operations over fewer files, so every
# kill point is still visited, at a third of the points and a fraction of the copying per point.
SMALL = {
    "site.yaml": replace("search: true", "search: false"),
    **{
        f"articles/{name}.md": None
        for name in (
            "70b-fine-tune-across-clouds",
            "dgx-spark-70b-qlora-cost",
            "memory-model-vs-measurements",
            "mlperf-llama2-70b-lora-cost",
        )
    },
}


def _light(files: wr.Files) -> wr.Files:
    """The same files, the theme's plotly.js (1.2 MB, the same in both sites: one unchanged file like the
    others) cut to a line: each kill point copies the old site and reads the folder back three times, and
    those megabytes were most of the time, not the file-system steps the tests count."""
    out = wr.Files()
    for rel, data in files.items():
        out.add(rel, b"/* plotly.js stand-in */\n" if rel == "assets/plotly.min.js" else data)
    return out


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kill")
    new_content = make_content(
        tmp / "new", {**SMALL, "prices/nodus/2026-11-05.yaml": replace("usd_per_hour: 5.50}", "usd_per_hour: 5.60}")}
    )
    old_files = _light(render_site(make_content(tmp / "old", SMALL), TEMPLATES).files)
    new_files = _light(render_site(new_content, TEMPLATES).files)
    assert "assets/plotly.min.js" in new_files.names()
    old_site = tmp / "old-site"
    w.publish(old_files, old_site)
    return old_site, new_files, tree(old_site)


@pytest.mark.parametrize("mode", ["exchange", "fallback"])
def test_kill_at_every_step_of_a_swap(tmp_path, sites, mode):
    old_site, new_files, old_tree = sites
    new_tree = {rel: data for rel, data in new_files.items()}
    assert old_tree != new_tree
    out = tmp_path / "site"
    points = 0
    for limit in range(1, 500):
        shutil.rmtree(out, ignore_errors=True)
        _linked_copy(old_site, out)
        code = publish_and_die_at(new_files, out, limit, fallback=mode == "fallback")
        if code == 0:
            break  # publishing finished before reaching this step
        assert code == -signal.SIGKILL
        points += 1
        now = tree(out)
        if mode == "exchange":
            assert now in (old_tree, new_tree), f"mixed site after kill at step {limit}"
        else:
            # the two-rename fallback may leave no folder for a moment, never a mixed one
            assert now in (old_tree, new_tree, None), f"mixed site after kill at step {limit}"
        # the next run cleans up whatever the killed one left and publishes
        w.clean_leftovers(out)
        assert tree(out) in (old_tree, new_tree)
        w.publish(new_files, out)
        assert tree(out) == new_tree
        assert not leftovers(tmp_path), f"leftovers after step {limit}"
    assert points >= 20, f"only {points} interruption points"
    assert tree(old_site) == old_tree  # each copy linked its files: no step wrote into one in place


def test_kill_at_every_step_of_an_in_place_publish(tmp_path, sites):
    """Moving the changed files in: killed before the journal is on disk, the site is the old one; after,
    every file is whole (old or new bytes, never a part), and the next build finishes the moves."""
    old_site, new_files, old_tree = sites
    new_tree = {rel: data for rel, data in new_files.items()}
    out = tmp_path / "site"
    journal = tmp_path / ".site.staging" / trees.JOURNAL
    points, mixed = 0, 0
    for limit in range(1, 500):
        shutil.rmtree(out, ignore_errors=True)
        _linked_copy(old_site, out)
        code = publish_and_die_at(new_files, out, limit, fallback=False, mode="in-place")
        if code == 0:
            break
        assert code == -signal.SIGKILL
        points += 1
        now, journalled = tree(out), journal.exists()
        if journalled:
            mixed += now not in (old_tree, new_tree)
            for rel, data in now.items():
                assert data in (old_tree.get(rel), new_tree.get(rel)), f"{rel} half written at step {limit}"
        else:
            assert now in (old_tree, new_tree), f"mixed site with no journal after kill at step {limit}"
        w.clean_leftovers(out)
        assert tree(out) == (new_tree if journalled or now == new_tree else old_tree)
        assert not list(tmp_path.glob(".site.*")), f"leftovers after step {limit}"
        w.publish(new_files, out, mode="in-place")
        assert tree(out) == new_tree
    assert points >= 10 and mixed >= 1, (points, mixed)
    assert tree(old_site) == old_tree  # each copy linked its files: no step wrote into one in place


def test_a_journal_for_a_folder_deleted_since_is_dropped(tmp_path, sites):
    """Killed while moving files in, and the site deleted before the next build: that build removes the
    staging folder (nothing to finish) and builds the site anew."""
    old_site, new_files, _ = sites
    out = tmp_path / "site"
    shutil.copytree(old_site, out)
    limit = 1
    while True:  # the first kill point after the journal is on disk
        code = publish_and_die_at(new_files, out, limit, fallback=False, mode="in-place")
        assert code == -signal.SIGKILL
        if (tmp_path / ".site.staging" / trees.JOURNAL).exists():
            break
        w.clean_leftovers(out)
        shutil.rmtree(out)
        shutil.copytree(old_site, out)
        limit += 1
    shutil.rmtree(out)
    w.clean_leftovers(out)
    assert not list(tmp_path.glob(".site.*")) and not out.exists()
    w.publish(new_files, out)
    assert tree(out) == {rel: data for rel, data in new_files.items()}


def test_interrupted_fallback_restores_the_old_site(tmp_path, sites):
    """Killed between the two renames: the next build, even a failing one, puts the old site back."""
    old_site, _, old_tree = sites
    out = tmp_path / "site"
    shutil.copytree(old_site, tmp_path / ".site.old")
    (tmp_path / ".site.staging").mkdir()
    broken = make_content(tmp_path / "broken", {"site.yaml": "title: [unclosed\n"})
    result, _ = build(tmp_path, broken, out)
    assert result.exit_code == 1
    assert tree(out) == old_tree
    assert not (tmp_path / ".site.old").exists() and not (tmp_path / ".site.staging").exists()


def test_background_flushes_stop_with_the_publisher(tmp_path, monkeypatch):
    """Large builds that will wait for the disk flush written files while rendering (here: a system with no
    boot id, generator/durable.py); finish and abort stop the thread first."""
    import threading
    import time

    from generator import durable, guard, publish, write

    monkeypatch.setattr(durable, "boot_id", lambda: None)
    calls = []
    monkeypatch.setattr(write, "sync_filesystem", lambda folder: calls.append(folder))
    monkeypatch.setattr(publish.Publisher, "FLUSH_EVERY", 0.01)
    out = tmp_path / "site"
    for ending in ("finish", "abort"):
        publisher = publish.Publisher(out)
        publisher.start_flushing()
        publisher.add("index.html", b"<p>new</p>")
        publisher.add(guard.MARKER, guard.manifest(["index.html"]))
        deadline = time.monotonic() + 5
        while not calls and time.monotonic() < deadline:
            time.sleep(0.01)
        assert calls, "the background thread never flushed"
        getattr(publisher, ending)()
        assert not any(t.name == "costpress-flush" for t in threading.enumerate())
        calls.clear()
    assert (out / "index.html").read_bytes() == b"<p>new</p>"  # finished once, then an aborted build left it


def test_syncing_waits_for_the_sites_file_system_only(tmp_path, monkeypatch):
    """syncfs on the output's file system where libc has it; os.sync (every file system) only as a fallback."""
    import generator.write as write

    everything = []
    monkeypatch.setattr(write.os, "sync", lambda: everything.append(1))
    write.sync_filesystem(str(tmp_path))
    if write._syncfs:  # Linux: the site's file system alone
        assert everything == []
    write.sync_filesystem(str(tmp_path / "no-such-folder"))  # cannot open it: flush everything instead
    assert everything[-1:] == [1]


# The signals that stop a build, the status it then exits with and its last line
STOPPING = pytest.mark.parametrize(
    "number, status, said",
    [
        (signal.SIGINT, 130, "interrupted; a build leaves the published folder as it was."),
        # a CI job's time limit or `kill`: it ended the process on the spot, leaving the staging tree, the next
        # caches' .tmp files and the search index's temporary folder (in /dev/shm, where nothing removes it)
        (signal.SIGTERM, 143, "stopped by SIGTERM; a build leaves the published folder as it was."),
    ],
    ids=["SIGINT", "SIGTERM"],
)


def _rendering(out: Path, env: dict | None = None):
    """A forced two-worker build of the default content into `out`, in a process of its own, once its first
    progress line shows pages rendering."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "generator", "build", "--content", str(CONTENT), "--out", str(out)]
    command += ["--templates", str(TEMPLATES), "--jobs", "2", "--force"]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    first = run.stderr.readline()
    assert first.startswith("built "), first
    return run


@STOPPING
def test_ctrl_c_during_a_build_exits_130_and_keeps_the_published_site(tmp_path, site, number, status, said):
    """SIGINT while pages render: status 130 (as shells report Ctrl-C), one line, no traceback, and the
    site published before is byte for byte what it was, with nothing left beside it; SIGTERM the same, 143."""
    out = tmp_path / "site"
    _linked_copy(site.out, out)  # the default site, built once for the session: enough pages for progress lines
    before = tree(out)
    temporary = tmp_path / "tmp"  # where the search index is made while pages render
    temporary.mkdir()
    run = _rendering(out, {**os.environ, "TMPDIR": str(temporary)})
    run.send_signal(number)
    _, err = run.communicate(timeout=60)
    assert run.returncode == status, err
    assert "Traceback" not in err
    assert err.rstrip().endswith(said)
    assert tree(out) == before
    assert not [p.name for p in tmp_path.glob(".site.*") if p.name.endswith((".staging", ".old", ".tmp"))]
    assert list(temporary.iterdir()) == []
    assert build(tmp_path, CONTENT, out)[0].exit_code == 0  # and the next build works


@STOPPING
def test_ctrl_c_pressed_twice_prints_no_traceback(tmp_path, site, number, status, said):
    """Ctrl-C twice in quick succession, as an impatient user presses it: the second lands while the build
    cleans up (it printed 'Exception ignored in ... KeyboardInterrupt' from a finalizer it cut short, in
    most trials); status 130, the one line, and the published site as it was. SIGTERM twice the same, 143."""
    import time

    out = tmp_path / "site"
    _linked_copy(site.out, out)
    before = tree(out)
    for gap in (0.002, 0.005, 0.01, 0.03):
        run = _rendering(out)
        run.send_signal(number)
        time.sleep(gap)
        run.send_signal(number)
        _, err = run.communicate(timeout=60)
        assert run.returncode == status, err
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert err.rstrip().endswith(said)
        assert tree(out) == before


def test_a_second_ctrl_c_does_not_stop_the_clean_up(tmp_path, monkeypatch):
    """Ctrl-C pressed twice: the first stops the build, the second comes while the staging folder is being
    removed and is held, so nothing is left beside the site (a trial left .site.staging behind)."""
    import threading

    from generator import publish

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are held in the main thread only")
    content = make_content(tmp_path)
    result, out = build(tmp_path, content)
    assert result.exit_code == 0, result.output
    before = tree(out)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    real_abort = publish.Publisher.abort

    def abort_pressed_again(self):
        os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C, as the clean-up starts
        real_abort(self)

    monkeypatch.setattr("generator.build.render_site", interrupted)
    monkeypatch.setattr(publish.Publisher, "abort", abort_pressed_again)
    result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), "--force")
    assert result.exit_code == 130
    assert "interrupted" in result.output
    assert tree(out) == before
    assert not (tmp_path / ".site.staging").exists()
