"""Never lose a file: what --out accepts, one build at a time, workers that die with the build.

Every test here works inside its own temporary folder, with HOME pointed at a
temporary folder too: none of them may touch a real home folder.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, TEMPLATES, A, leftovers, make_content, run_cli

from generator import guard

sys.path.insert(0, str(ROOT / "benchmarks"))
import run as bench  # noqa: E402  (the benchmark's synthetic content)


@pytest.fixture(autouse=True)
def fake_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("keep me")
    monkeypatch.setenv("HOME", str(home))
    return home


def snapshot(folder: Path) -> dict:
    """Every file and link under folder, with bytes and modification time."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            out[path.relative_to(folder).as_posix()] = ("link", os.readlink(path))
        elif path.is_file():
            out[path.relative_to(folder).as_posix()] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def cli_build(content: Path, out: Path | str, *extra: str):
    return run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), *extra)


def refused(result, *words: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.output
    for word in words:
        assert word in errors[0], errors[0]


def test_out_at_the_home_folder_is_refused(tmp_path, fake_home):
    content = make_content(tmp_path)
    before = snapshot(fake_home)
    refused(cli_build(content, fake_home), "it is your home folder")
    refused(cli_build(content, fake_home.parent), "it contains your home folder")
    assert snapshot(fake_home) == before


def test_out_at_the_root_is_refused(tmp_path):
    refused(cli_build(make_content(tmp_path), "/"), "it is the file-system root")


def test_out_at_the_content_or_templates_folder_or_around_them_is_refused(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    make_content(repo)
    templates = repo / "templates"
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    import shutil

    shutil.copytree(TEMPLATES, templates)
    before = snapshot(repo)
    monkeypatch.chdir(repo)
    for out, words in [
        ("content", "it is the content folder"),
        ("templates", "it is the templates folder"),
        (".", "it contains the content folder"),
        ("content/site", "it lies inside the content folder"),
    ]:
        result = run_cli("build", "--content", "content", "--templates", "templates", "--out", out)
        refused(result, words)
    assert snapshot(repo) == before


def test_out_inside_a_published_site_is_refused(tmp_path):
    """A typo like --out site/preview would put a second site's files into the first, whose next build would
    then refuse to replace them: refused before anything is written, at any depth."""
    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    before = snapshot(tmp_path)
    for inner in (out / "preview", out / "about" / "deeper"):
        refused(cli_build(content, inner), f"it lies inside {out}, a site costpress publishes")
    # serve's preview folder too, before it builds or listens
    serve = run_cli("serve", "--content", str(content), "--templates", str(TEMPLATES), "--out", str(out / "p"))
    refused(serve, f"it lies inside {out}, a site costpress publishes")
    assert snapshot(tmp_path) == before
    assert cli_build(content, out, "--force").exit_code == 0  # the site itself builds as before
    assert cli_build(content, tmp_path / "site-preview").exit_code == 0  # and a folder beside it


def test_serve_refuses_a_port_out_of_range(tmp_path):
    """--port 99999 ended in a traceback from bind() ("a bug in costpress")."""
    result = run_cli("serve", "--content", str(make_content(tmp_path)), "--port", "99999")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Invalid value for '--port': 99999 is not in the range 0<=x<=65535" in result.output


def test_a_folder_with_a_foreign_file_is_refused_and_kept(tmp_path):
    content = make_content(tmp_path)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    before = snapshot(out)
    refused(cli_build(content, out), "no .costpress marker", "thesis.tex")
    assert snapshot(out) == before
    # nothing is left beside it either: no lock file, no state
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == ["content", "mine"]
    # serve's preview the same, before it builds or listens: it went on to serve the folder as it was, over
    # HTTP, after one line that the build refused it (called directly: a server started would not return)
    refusal = serve_refusal(content, out)
    assert "no .costpress marker" in refusal and "thesis.tex" in refusal
    assert snapshot(out) == before


def serve_refusal(content: Path, out: Path) -> str:
    """What serve.start says when it refuses `out` before building or listening (called directly: a server
    started would not return); a server it started instead is stopped and fails the test."""
    from generator import serve
    from generator.errors import CostpressError

    logged: list[str] = []
    try:
        started = serve.start(content, out, TEMPLATES, "127.0.0.1", 0, logged.append)
    except CostpressError as exc:
        assert logged == []  # nothing built
        return str(exc)
    started[0].shutdown()
    started[2].set()
    raise AssertionError(f"serve started on {out}: {logged}")


def test_an_out_folder_under_a_file_is_one_line_and_the_file_is_kept(tmp_path):
    """`--out notes.txt/site` with notes.txt a file: build said the lock file "exists", serve went on to build and
    then stopped with a traceback from mkdir. Both now name the folder that cannot be made, before building."""
    content = make_content(tmp_path)
    (tmp_path / "notes.txt").write_text("mine\n")
    before = snapshot(tmp_path)
    for out, why in ((tmp_path / "notes.txt" / "site", "a file is there"),
                     (tmp_path / "notes.txt" / "x" / "site", "Not a directory")):  # fmt: skip
        refused(cli_build(content, out), f"cannot make the folder {out.parent} for {out} ({why})")
        assert serve_refusal(content, out) == f"cannot make the folder {out.parent} for {out} ({why})"
    assert snapshot(tmp_path) == before


def test_a_built_site_with_a_file_added_later_is_refused_until_it_is_moved(tmp_path):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    (out / "CNAME").write_text("costs.example\n")
    before = snapshot(out)
    refused(cli_build(content, out, "--force"), "costpress did not write CNAME")
    assert snapshot(out) == before
    (out / "CNAME").unlink()
    assert cli_build(content, out, "--force").exit_code == 0


@pytest.mark.parametrize("swap", [True, False], ids=["swapped", "moved-in"])
def test_a_file_saved_into_the_site_while_it_builds_is_left_where_it_was_put(tmp_path, monkeypatch, swap):
    """A build checks the folder when it starts; a file someone saves there afterwards is not one it wrote.
    A swap deletes the replaced tree, which holds that file: the file is moved to the same place in the new
    site instead. Files moved in one by one never touch it, but the folders they went into are as the build
    left them plus that file, and recorded so, the next build would trust them: their names are counted.
    Either way the build names the file, and the next build refuses the folder, as it refuses any file
    costpress did not write."""
    from generator import publish

    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    article = content / "articles" / f"{A}.md"
    page = out / A  # a folder the build moves a file into, as it does the top one
    finish = publish.Publisher.finish

    def meanwhile(self):
        (out / "CNAME").write_text("costs.example\n")
        (page / "notes.txt").write_text("mine")
        (out / "drafts" / "ideas").mkdir(parents=True)  # a folder with a file in it, and an empty one
        (out / "drafts" / "ideas" / "next.md").write_text("later")
        (out / "empty").mkdir()
        return finish(self)

    monkeypatch.setattr(publish.Publisher, "finish", meanwhile)
    article.write_text(article.read_text() + "\nOne more sentence.\n")
    result = cli_build(content, out, *(["--swap"] if swap else []))
    assert result.exit_code == 0, result.output
    assert (out / "CNAME").read_text() == "costs.example\n"
    assert (page / "notes.txt").read_text() == "mine"
    warned = [line for line in result.output.splitlines() if line.startswith("warning: ")]
    assert (out / "drafts" / "ideas" / "next.md").read_text() == "later"
    assert warned == [
        f"warning: 3 files appeared in {out} while it was being built (CNAME, {A}/notes.txt, drafts/ideas/next.md); "
        "costpress did not write them and left them there, but the next build will refuse the folder "
        "until they are moved out (a file of your own to publish goes in the content folder's static/)"
    ]
    assert not (tmp_path / ".site.staging").exists() and not (tmp_path / ".site.old").exists()
    monkeypatch.setattr(publish.Publisher, "finish", finish)
    refused(cli_build(content, out), f"costpress did not write CNAME, {A}/notes.txt, drafts/ideas/next.md (3 files")
    (out / "CNAME").unlink()
    (page / "notes.txt").unlink()
    shutil.rmtree(out / "drafts")
    assert cli_build(content, out).exit_code == 0


def test_a_file_saved_while_a_swap_runs_where_the_new_site_has_one_stays_beside_it(tmp_path):
    """When the new site has a file (or a file where a folder would go) at the place of a file saved during
    the build, the saved file cannot go back: it stays in the replaced tree beside the site, which loses
    its marker, so the next build refuses to delete it and names it."""
    from generator import publish, write

    out = tmp_path / "site"

    def files(pages):
        made = write.Files()
        for rel in pages:
            made.add(rel, b"built")
        made.add(guard.MARKER, guard.manifest(made.paths()))
        return made

    publish.publish(files(["a/index.html"]), out)
    publisher = publish.Publisher(out, mode="swap")
    for rel, data in files(["a/index.html", "b/index.html", "c"]).items():
        publisher.add(rel, data)
    (out / "b").mkdir()
    (out / "b" / "index.html").write_text("mine")
    (out / "c").mkdir()
    (out / "c" / "notes.txt").write_text("mine too")
    (out / "d.txt").write_text("and this one goes back")
    (tmp_path / "elsewhere.txt").write_text("a link's target")
    (out / "e.txt").symlink_to(tmp_path / "elsewhere.txt")  # goes back as the link it is
    diff = publisher.finish()
    assert (out / "b" / "index.html").read_text() == "built"
    assert (out / "d.txt").read_text() == "and this one goes back"
    assert (out / "e.txt").is_symlink() and os.readlink(out / "e.txt") == str(tmp_path / "elsewhere.txt")
    assert (tmp_path / "elsewhere.txt").read_text() == "a link's target"
    assert diff.strays.kept == ["d.txt", "e.txt"]
    assert diff.strays.stranded == ["b/index.html", "c/notes.txt"]
    kept = diff.strays.folder
    assert kept.parent == tmp_path and kept.name.startswith(".site.")
    assert (kept / "b" / "index.html").read_text() == "mine"
    assert (kept / "c" / "notes.txt").read_text() == "mine too"
    assert not (kept / guard.MARKER).exists()
    assert publish.strays_said(diff, "site") == [
        "2 files appeared in site while it was being built (d.txt, e.txt); costpress did not write them and left "
        "them there, but the next build will refuse the folder until they are moved out (a file of your own to "
        "publish goes in the content folder's static/)",
        "2 files that appeared in site while it was being built could not be left there: the new site has a file "
        f"or folder at the same place (b/index.html, c/notes.txt); they are kept in {kept}: move them out before "
        "the next build",
    ]
    from generator.errors import BuildError

    with pytest.raises(BuildError, match=f"{kept} is in the way, and costpress did not make it"):
        publish.Publisher(out)
    assert (kept / "b" / "index.html").read_text() == "mine"


def test_an_empty_folder_is_accepted_and_gets_the_marker(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    assert cli_build(make_content(tmp_path), out).exit_code == 0
    listed = (out / guard.MARKER).read_text().splitlines()
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != guard.MARKER)
    assert [line for line in listed if not line.startswith("#")] == files


def test_a_link_to_the_site_publishes_into_its_target_and_stays_a_link(tmp_path):
    content = make_content(tmp_path)
    real = tmp_path / "public" / "site"
    assert cli_build(content, real).exit_code == 0
    link = tmp_path / "site"
    link.symlink_to(real)
    edited = make_content(
        tmp_path / "b",
        {"prices/nodus/2026-11-05.yaml": lambda t: t.replace("usd_per_hour: 2.60", "usd_per_hour: 2.40")},
    )
    result = cli_build(edited, link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert cli_build(edited, real, "--check").exit_code == 0  # the target holds the new prices
    assert not list(tmp_path.glob(".site.*"))  # nothing beside the link


def test_a_leftover_folder_costpress_did_not_make_is_refused(tmp_path):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    stranger = tmp_path / ".site.staging"
    stranger.mkdir()
    (stranger / "draft.md").write_text("mine")
    refused(cli_build(content, out), ".site.staging is in the way")
    assert (stranger / "draft.md").read_text() == "mine"


def test_a_file_named_like_the_marker_does_not_make_a_folder_ours(tmp_path):
    """Only the marker's own header makes a `.costpress` a marker. A file of that name with other words in it,
    even one that lists the folder's files, is a file of someone else's: the output folder holding it is
    refused, and a leftover folder beside the site holding it is not deleted."""
    content = make_content(tmp_path)
    out = tmp_path / "site"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / guard.MARKER).write_text("notes.txt\n")  # the file list alone, without the header
    before = snapshot(out)
    refused(cli_build(content, out), "no .costpress marker")
    assert snapshot(out) == before
    other = tmp_path / "other"
    stranger = tmp_path / ".other.staging"
    stranger.mkdir()
    (stranger / guard.MARKER).write_text("# my own notes about this folder\n")
    (stranger / "draft.md").write_text("mine")
    refused(cli_build(content, other), ".other.staging is in the way")
    assert (stranger / "draft.md").read_text() == "mine"


def test_publishing_into_a_file_is_refused_and_the_file_kept(tmp_path):
    """The command line refuses a file as --out (click's check); the publisher checks again, since the file
    may have taken the folder's place since, and every caller goes through it: with the check gone, a swap
    exchanged the file for the new site, which took its name, and stopped with a traceback."""
    from generator import publish, write
    from generator.errors import BuildError

    out = tmp_path / "notes.txt"
    out.write_text("precious")
    files = write.Files()
    files.add("index.html", b"<p>")
    files.add(guard.MARKER, guard.manifest(files.paths()))
    with pytest.raises(BuildError, match="it exists and is not a folder"):
        publish.publish(files, out)
    assert out.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "notes.txt"]


def test_a_tree_is_removed_marker_last_so_a_removal_cut_short_leaves_it_recognisable(tmp_path, monkeypatch):
    """remove_tree deletes every other file first: stopped halfway (a kill, a full disk), the folder still
    holds the marker, so the next build knows it made the rest and may delete it."""
    tree = tmp_path / ".site.staging"
    for rel in ("a/index.html", "b/index.html", "c/index.html", "top.txt"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("built")
    (tree / guard.MARKER).write_bytes(guard.manifest(["a/index.html", "b/index.html", "c/index.html", "top.txt"]))
    unlink, calls = os.unlink, []

    def cut_short(path, *args, **kwargs):
        calls.append(os.fspath(path))
        if len(calls) == 5:  # the four other files are gone
            raise OSError(5, "Input/output error")
        return unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", cut_short)
    with pytest.raises(OSError):
        guard.remove_tree(tree)
    monkeypatch.setattr(os, "unlink", unlink)
    assert [p.endswith(guard.MARKER) for p in calls] == [False, False, False, False, True]  # asked for once, last
    assert (tree / guard.MARKER).is_file() and guard.is_ours(tree)
    guard.remove_tree(tree)
    assert not tree.exists()


def test_a_stale_staging_folder_from_a_killed_build_is_cleared(tmp_path):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    staging = tmp_path / ".site.staging"
    (staging / "half-written").mkdir(parents=True)
    (staging / guard.MARKER).write_bytes(guard.manifest(()))
    (staging / "half-written" / "index.html").write_text("<p>")
    result = cli_build(content, out, "--force")
    assert result.exit_code == 0, result.output
    assert not staging.exists()


def test_a_second_build_waits_or_says_who_holds_the_folder(tmp_path):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    holder = os.open(guard.lock_path(out), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        os.write(holder, b"4242\n")
        stopped = []  # in a thread: a --no-wait that waited would otherwise hang the suite, not fail it
        impatient = threading.Thread(target=lambda: stopped.append(cli_build(content, out, "--no-wait")))
        impatient.start()
        impatient.join(30)
        if impatient.is_alive():
            fcntl.flock(holder, fcntl.LOCK_UN)
            impatient.join(60)
            pytest.fail("--no-wait waited for the lock")
        refused(stopped[0], "another build of", "is running (pid 4242)")
        assert not out.exists()
        done = []
        waiter = threading.Thread(target=lambda: done.append(cli_build(content, out)))
        waiter.start()
        time.sleep(1.0)
        assert not done, "the second build did not wait for the lock"
        fcntl.flock(holder, fcntl.LOCK_UN)
        waiter.join(60)
        assert done and done[0].exit_code == 0, done and done[0].output
        assert "waiting: another build of" in done[0].output
    finally:
        os.close(holder)


def test_a_waiting_build_locks_the_new_file_when_the_holder_removed_its_own(tmp_path):
    """A finishing build removes its lock file before releasing it; a build that waited on that file
    must not go on holding a lock nobody else can see: it locks the file now at the path."""
    out = tmp_path / "site"
    path = guard.lock_path(out)
    holder = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)
    entered = threading.Event()
    leave = threading.Event()

    def second():
        with guard.build_lock(out, "site"):
            entered.set()
            leave.wait(30)

    waiter = threading.Thread(target=second)
    waiter.start()
    time.sleep(0.5)
    assert not entered.is_set()
    os.unlink(path)  # what build_lock does on release
    os.close(holder)
    assert entered.wait(30)
    # the waiter holds the lock on the file at the path: a third build cannot take it
    third = os.open(path, os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(third, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(third)
        leave.set()
        waiter.join(30)
    assert not path.exists()  # removed again as the waiter finished


@pytest.fixture(scope="module")
def thousand(tmp_path_factory) -> Path:
    """A synthetic family of about 400 pages: above POOL_MIN_PAGES, so builds fork workers and flush
    while rendering, as large builds do (1,000 pages made this module a minute of the suite)."""
    dest = tmp_path_factory.mktemp("thousand") / "content"
    bench.synthetic_content(dest, 400)
    return dest


def costpress(*args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "generator", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kwargs,
    )


def test_two_builds_at_once_never_publish_a_broken_site(tmp_path, thousand):
    """Four rounds of two builds of a 400-page site started together, every other round with a price change."""
    out = tmp_path / "site"
    other = tmp_path / "other"
    import shutil

    shutil.copytree(thousand, other)
    snapshot_file = next((other / "prices").glob("*/2026-11-01.yaml"))
    snapshot_file.write_text(snapshot_file.read_text().replace("usd_per_hour: ", "usd_per_hour: 1", 1))
    for round_ in range(4):
        contents = (thousand, other) if round_ % 2 else (thousand, thousand)
        runs = [
            costpress("build", "--content", str(c), "--out", str(out), "--templates", str(TEMPLATES)) for c in contents
        ]
        outputs = [(p.wait(120), p.stdout.read()) for p in runs]
        assert all(code == 0 for code, _ in outputs), outputs
        assert "Traceback" not in "".join(text for _, text in outputs)
        waited = [c for c, (_, text) in zip(contents, outputs, strict=True) if "waiting: another build" in text]
        # the build that waited published last; where neither waited, one of the two did
        candidates = waited[:1] or list(dict.fromkeys(contents))
        checks = [cli_build(c, out, "--check").exit_code for c in candidates]
        assert 0 in checks, f"round {round_}: the published site is not what the last build produces"
        assert not [p for p in tmp_path.glob(".site.*") if p.name.endswith((".staging", ".old"))]


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_killing_the_build_kills_its_workers_and_the_next_build_succeeds(tmp_path, thousand):
    out = tmp_path / "site"
    proc = costpress(
        "build", "--content", str(thousand), "--out", str(out), "--templates", str(TEMPLATES), "--jobs", "2"
    )
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2:  # the pool's workers (multiprocessing adds no helper with fork)
        assert time.monotonic() < deadline and proc.poll() is None, "no workers started"
        workers = _children(proc.pid)
        time.sleep(0.02)
    time.sleep(0.1)  # let them write into the staging folder
    assert proc.poll() is None, "the build finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    gone = time.monotonic() + 1.0
    while any(_alive(w) for w in workers) and time.monotonic() < gone:
        time.sleep(0.02)
    assert not [w for w in workers if _alive(w)], "a worker outlived its killed parent by more than a second"
    again = costpress("build", "--content", str(thousand), "--out", str(out), "--templates", str(TEMPLATES))
    code = again.wait(120)
    text = again.stdout.read()
    assert code == 0 and "Traceback" not in text, text
    assert cli_build(thousand, out, "--check").exit_code == 0


def test_the_no_op_shortcut_sees_edits_through_a_linked_content_folder(tmp_path):
    real = make_content(tmp_path)
    link = tmp_path / "content-link"
    link.symlink_to(real)
    out = tmp_path / "site"
    assert cli_build(link, out).exit_code == 0
    assert "nothing to build" in cli_build(link, out).output
    snap = real / "prices" / "nodus" / "2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 2.60", "usd_per_hour: 2.40"))
    result = cli_build(link, out)
    assert "nothing to build" not in result.output and result.exit_code == 0
    assert cli_build(real, out, "--check").exit_code == 0


def test_a_pipe_in_the_templates_folder_is_an_error_not_a_hang(tmp_path):
    import shutil

    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    os.mkfifo(templates / "stuck.html")
    result = run_cli("build", "--content", str(make_content(tmp_path)), "--out", str(tmp_path / "site"),
                     "--templates", str(templates))  # fmt: skip
    refused(result, "stuck.html: not a regular file")


def test_missing_folders_and_bad_dates_are_one_line_errors(tmp_path):
    content = make_content(tmp_path)
    result = run_cli("build", "--content", str(content), "--templates", str(tmp_path / "nope"),
                     "--out", str(tmp_path / "site"))  # fmt: skip
    refused(result, "--templates:", "is not a folder")
    refused(run_cli("new", "article", "x", "--date", "2026-13-01", "--content", str(content)),
            "--date: expected a real date")  # fmt: skip
    huge = run_cli("estimate", "--content", str(content), "--model", "llama-3.3-70b", "--method", "lora",
                   "--tokens", str(10**400))  # fmt: skip
    assert huge.exit_code == 2 and "--tokens" in huge.output and "expected a token count" in huge.output


def test_csv_cells_behind_white_space_cannot_start_a_formula():
    from generator.escape import csv_text as _csv_text

    for text in ("=1+1", " =1+1", "\r=1+1", "\n=HYPERLINK(1)", "\t@SUM(1)", " \t-2+3"):
        assert _csv_text(text).startswith("'"), text
    assert _csv_text("Nodus, 1 × H100") == "Nodus, 1 × H100"


def test_removing_a_replaced_site_never_follows_a_folder_that_became_a_link(tmp_path):
    """The replaced site is removed from the list of files the build scanned; a folder someone swapped
    for a link to another place in the meantime is not followed, so nothing there is deleted."""
    from generator import guard
    from generator.trees import remove_site as _remove_site

    victim = tmp_path / "elsewhere"
    (victim / "deep").mkdir(parents=True)
    (victim / "index.html").write_text("not ours")
    (victim / "deep" / "index.html").write_text("not ours either")
    old = tmp_path / "old"
    for rel in ("a/index.html", "b/c/index.html", "top.txt"):
        (old / rel).parent.mkdir(parents=True, exist_ok=True)
        (old / rel).write_text("ours")
    (old / guard.MARKER).write_bytes(guard.manifest(["a/index.html", "b/c/index.html", "top.txt"]))
    scanned = {rel: str(old / rel) for rel in ("a/index.html", "b/c/index.html", "top.txt", guard.MARKER)}
    (old / "a" / "index.html").unlink()
    (old / "a").rmdir()
    (old / "a").symlink_to(victim)  # swapped for a link after the scan
    (old / "b").rename(tmp_path / "b-moved")
    (old / "b").symlink_to(victim)  # a link in the middle of a nested path
    (victim / "c").mkdir()
    (victim / "c" / "index.html").write_text("not ours, reached through a link")
    strays = _remove_site(old, scanned)
    assert strays.stranded == ["a", "b"]  # links someone made: not followed, and not deleted either
    assert sorted(os.listdir(old)) == ["a", "b"] and (old / "a").is_symlink() and (old / "b").is_symlink()
    assert (victim / "index.html").read_text() == "not ours"
    assert (victim / "deep" / "index.html").read_text() == "not ours either"
    assert (victim / "c" / "index.html").read_text() == "not ours, reached through a link"


def test_the_marker_names_every_other_file_sorted_one_per_line_in_pieces_or_whole(monkeypatch, tmp_path):
    paths = ["b/index.html", guard.MARKER, "a/figures.json", "top.txt", "a/index.html", "ü/x.md"]
    expected = guard.MARKER_HEAD + "a/figures.json\na/index.html\nb/index.html\ntop.txt\nü/x.md\n"
    for size in (1, 2, 100):  # a large site's marker is made a few thousand lines at a time
        monkeypatch.setattr(guard, "MANIFEST_LINES", size)
        pieces = guard.manifest_pieces(paths)
        assert len(pieces) == 1 + -(-5 // size)
        assert b"".join(pieces) == guard.manifest(paths) == expected.encode("utf-8")
    assert guard.manifest([]) == guard.MARKER_HEAD.encode("utf-8")
    (tmp_path / "marker").write_bytes(b"".join(pieces))
    assert guard._listed(str(tmp_path / "marker")) == {
        "a/figures.json",
        "a/index.html",
        "b/index.html",
        "top.txt",
        "ü/x.md",
    }


def test_a_price_change_is_moved_in_and_a_change_to_most_pages_swapped(tmp_path, monkeypatch):
    """A build that rewrites few files moves them into the published folder (same folder, same inode); one
    that rewrites most of the site, or any build with --swap, exchanges the whole folder. Both give the
    bytes a full build gives. A price change leaves the marker as it was, and the state records its sha256
    as recorded before (not read again)."""
    import hashlib
    import json

    from generator import state

    recorded, record = [], state.record
    monkeypatch.setattr(state, "record", lambda *a: recorded.append(a[-1]) or record(*a))
    out = tmp_path / "site"
    assert cli_build(make_content(tmp_path / "articles"), out).exit_code == 0  # the written articles alone
    inode = out.stat().st_ino
    content = make_content(tmp_path, families=True)  # and the page families: most files are new
    assert cli_build(content, out).exit_code == 0
    assert out.stat().st_ino != inode
    assert recorded == [None, None]  # a new marker each time: read back to digest it
    inode = out.stat().st_ino
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    for price, extra, moved in (("5.60", (), True), ("5.70", ("--swap",), False)):
        snap.write_text(snap.read_text().replace("usd_per_hour: 5.50}", f"usd_per_hour: {price}}}", 1))
        result = cli_build(content, out, *extra)
        assert result.exit_code == 0, result.output
        assert (out.stat().st_ino == inode) is moved, extra
        assert recorded[-1] is not None  # the marker stood: its digest as recorded
        saved = json.loads(state.state_path(out).read_text())
        assert saved["marker"] == hashlib.sha256((out / guard.MARKER).read_bytes()).hexdigest()
        assert cli_build(content, out, "--check").exit_code == 0
        assert "nothing to build" in cli_build(content, out).output  # the folders recorded are the folders
        assert not list(tmp_path.glob(".site.*staging*"))
        inode = out.stat().st_ino
        snap.write_text(snap.read_text().replace(f"usd_per_hour: {price}}}", "usd_per_hour: 5.50}", 1))


def test_moving_files_in_removes_what_the_new_site_lacks_and_the_folders_it_empties(tmp_path):
    from generator import publish, write

    out = tmp_path / "site"
    old = write.Files()
    for rel, data in {"a/b/c/index.html": b"c", "a/b/keep.txt": b"k", "page": b"a file", "x/y.txt": b"y"}.items():
        old.add(rel, data)
    old.add(guard.MARKER, guard.manifest(old.paths()))
    publish.publish(old, out, mode="in-place")
    new = write.Files()
    for rel, data in {"a/b/keep.txt": b"k2", "page/index.html": b"now a folder", "z/new.txt": b"n"}.items():
        new.add(rel, data)
    new.add(guard.MARKER, guard.manifest(new.paths()))
    inode = out.stat().st_ino
    diff = publish.publish(new, out, mode="in-place")
    assert out.stat().st_ino == inode
    assert sorted(diff.removed) == ["a/b/c/index.html", "page", "x/y.txt"]
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [guard.MARKER, "a/b/keep.txt", "page/index.html", "z/new.txt"]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_dir()) == ["a", "a/b", "page", "z"]
    assert (out / "page" / "index.html").read_bytes() == b"now a folder"
    assert (out / guard.MARKER).read_bytes() == guard.manifest(new.paths())
    assert not leftovers(tmp_path)


@pytest.mark.parametrize("forked", [False, True], ids=["checked-here", "checked-by-a-child"])
def test_an_untouched_site_is_not_walked_and_a_touched_one_is(tmp_path, monkeypatch, forked):
    """The folder as the last build left it (every folder's inode and time as recorded): its files are the
    marker's list. A file added anywhere moves a folder's time, and the folder is read again. The same
    when the folders are checked by a child process while the build loads its content (state.FolderCheck,
    for large sites; here for any)."""
    from generator import state, write

    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    monkeypatch.setattr(state, "FORK_MIN_FOLDERS", 1 if forked else 10**9)
    children, check = [], state.FolderCheck.__init__

    def counted(self, *args, **kwargs):
        check(self, *args, **kwargs)
        children.append(self._pid)

    monkeypatch.setattr(state.FolderCheck, "__init__", counted)
    walked = []
    real_scan = write.scan
    monkeypatch.setattr(write, "scan", lambda folder: walked.append(folder) or real_scan(folder))
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 5.50}", "usd_per_hour: 5.60}", 1))
    assert cli_build(content, out).exit_code == 0
    assert walked == []
    page = next(p for p in out.iterdir() if (p / "index.md").is_file())
    (page / "notes.txt").write_text("mine")
    refused(cli_build(content, out, "--force"), f"costpress did not write {page.name}/notes.txt")
    assert walked == [out]
    assert (page / "notes.txt").read_text() == "mine"
    assert len(children) == 2 and all((pid is not None) == forked for pid in children)
    for pid in children:  # every child was waited for
        if pid is not None:
            with pytest.raises(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def test_ctrl_c_while_publishing_waits_for_the_site_to_be_whole():
    """SIGINT inside held_signals is held, then reported; the code inside runs to its end."""
    from generator.commands.build import held_signals

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are held in the main thread only")
    before = signal.getsignal(signal.SIGINT)
    steps = []
    with held_signals() as caught:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        steps.append("published")
    assert steps == ["published"] and caught == [signal.SIGINT]
    with held_signals() as caught:
        steps.append("again")
    assert caught == [] and signal.getsignal(signal.SIGINT) is before


def test_sigterm_while_publishing_is_raised_once_the_site_is_whole():
    """With the console command's handlers (stop_on_signals), SIGTERM inside held_signals waits for the code
    inside to finish, then raises Terminated, which the build reports as 'stopped ... after publishing'; from
    then on both SIGTERM and Ctrl-C are ignored, so the clean-up that follows is not cut short."""
    from generator.commands.base import Terminated, stop_on_signals
    from generator.commands.build import held_signals

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are held in the main thread only")
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    steps = []
    try:
        stop_on_signals()
        with pytest.raises(Terminated):
            with held_signals():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)
                steps.append("published")
        assert signal.getsignal(signal.SIGTERM) is signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGTERM)  # ignored
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        steps.append("cleaned up")
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
    assert steps == ["published", "cleaned up"]


def test_a_marker_edited_in_place_to_name_a_file_outside_is_not_trusted(tmp_path):
    """The folder looks as the last build left it (a file rewritten in place moves no folder's time), but
    its marker now lists a path out of the folder: the build reads the folder instead, and what lies
    outside is never touched."""
    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    outside = tmp_path / "precious.txt"
    outside.write_text("mine")
    marker = out / guard.MARKER
    with open(marker, "r+b") as fh:  # in place: the folder's time stays as recorded
        fh.seek(0, os.SEEK_END)
        fh.write(b"../precious.txt\n")
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 5.50}", "usd_per_hour: 5.60}", 1))
    result = cli_build(content, out)
    assert result.exit_code == 0, result.output
    assert outside.read_text() == "mine"
    assert "../precious.txt" not in marker.read_text()
    assert cli_build(content, out, "--check").exit_code == 0


def test_the_marker_stands_when_the_site_has_the_same_files_and_is_rewritten_when_not(tmp_path, monkeypatch):
    """A price refresh changes bytes, not names: the published marker already lists every file and is
    kept as it is, not made again. A build that drops an article lists the files that are left."""
    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    made = []
    real = guard.manifest_pieces

    def counted(paths):
        paths = list(paths)
        if paths:  # (a staging folder starts with a marker that lists nothing)
            made.append(len(paths))
        return real(paths)

    monkeypatch.setattr(guard, "manifest_pieces", counted)
    marker = out / guard.MARKER
    before = marker.stat()
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 5.50}", "usd_per_hour: 5.60}", 1))
    assert cli_build(content, out).exit_code == 0
    after = marker.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns) and made == []
    article = sorted((content / "articles").glob("*.md"))[0]
    article.unlink()
    result = cli_build(content, out)
    assert result.exit_code == 0, result.output
    listed = [line for line in marker.read_text().splitlines() if line and not line.startswith("#")]
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p != marker)
    assert made and listed == files and not any(name.startswith(article.stem + "/") for name in files)
    assert cli_build(content, out, "--check").exit_code == 0


def test_a_marker_edited_in_place_is_not_trusted_even_when_every_path_is_safe(tmp_path, monkeypatch):
    """The marker's sha256 is recorded after publishing: any edit in place (here a listed page's file
    dropped from the list) makes the next build read the folder instead of believing the list."""
    from generator import write

    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    marker = out / guard.MARKER
    text = marker.read_bytes()
    dropped = next(line for line in text.splitlines() if line.endswith(b"/index.md"))
    with open(marker, "r+b") as fh:  # in place: no folder's time moves
        fh.write(text.replace(dropped + b"\n", b""))
        fh.truncate()
    walked = []
    real_scan = write.scan
    monkeypatch.setattr(write, "scan", lambda folder: walked.append(folder) or real_scan(folder))
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 5.50}", "usd_per_hour: 5.60}", 1))
    refused(cli_build(content, out), f"costpress did not write {dropped.decode()}")
    assert walked == [out]


def test_an_output_folder_on_another_file_system_is_refused_before_anything_changes(tmp_path, monkeypatch):
    """Moving files in is a rename, which cannot cross file systems (an output folder that is a mount
    point): the build says so in one line and leaves the site as it was, with no journal to replay."""
    from generator import trees

    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    before = snapshot(out)
    assert trees.why_not_in_place(tmp_path / "content", out, {"assets", "no-such-folder"}) is None
    real = os.lstat
    monkeypatch.setattr(  # the site's own folder on another device, as a mount point's is
        trees.os,
        "lstat",
        lambda path: os.stat_result((*real(path)[:2], 999, *real(path)[3:])) if path == out else real(path),
    )
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 5.50}", "usd_per_hour: 5.60}", 1))
    refused(cli_build(content, out), "is on another file system")
    assert snapshot(out) == before
    assert not list(tmp_path.glob(".site.staging*"))


def test_an_output_folder_that_cannot_be_written_is_refused_before_anything_changes(tmp_path, monkeypatch):
    from generator import trees

    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    before = snapshot(out)
    real = os.access
    monkeypatch.setattr(
        trees.os, "access", lambda path, mode: path != out and real(path, mode)
    )  # as a read-only folder
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 5.50}", "usd_per_hour: 5.60}", 1))
    refused(cli_build(content, out), f"cannot publish into {out}: {out} is not writable")
    assert snapshot(out) == before
    assert not list(tmp_path.glob(".site.staging*"))


def test_messages_name_a_folder_outside_the_working_one_by_its_absolute_path(tmp_path, monkeypatch):
    """`lint --content /srv/data` from a repository said '../../srv/data: content folder not found'."""
    repo = tmp_path / "repo"
    (repo / "content").mkdir(parents=True)
    monkeypatch.chdir(repo)
    elsewhere = tmp_path / "elsewhere" / "data"
    elsewhere.mkdir(parents=True)
    result = run_cli("lint", "--content", str(elsewhere / "nope"))
    assert result.exit_code == 1 and f"error: {elsewhere / 'nope'}: content folder not found" in result.output
    result = run_cli("lint", "--content", "content/nope")  # inside the working folder: as given
    assert result.exit_code == 1 and "error: content/nope: content folder not found" in result.output
