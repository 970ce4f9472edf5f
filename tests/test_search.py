"""Search: a Pagefind index built offline with the site, a search box on every page, and a search in
headless Chromium, with nothing but the local server reachable, that finds a model's pages."""

from __future__ import annotations

import functools
import http.server
import tempfile
import threading

import pytest
from conftest import TEMPLATES, make_content, run_cli
from test_browser import browser  # noqa: F401 - the shared headless Chromium

from generator import search


@pytest.fixture(scope="module")
def served(site):
    """The built site under /site/ of a local server: the index must work from a sub-folder."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site.out.parent))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{site.out.name}/"
    server.shutdown()


def test_every_page_has_a_search_box(site):
    for rel in ("index.html", "dgx-spark-70b-qlora-cost/index.html", "mixtral-8x7b-qlora-on-nodus-h100x1/index.html"):
        html = (site.out / rel).read_text()
        root = "" if rel == "index.html" else "../"
        assert f'<form class="site-search" role="search" action="{root}search/index.html">' in html
    assert (site.out / "search" / "index.html").is_file()
    assert (site.out / "pagefind" / "pagefind-ui.js").is_file()


def test_search_finds_a_models_pages(browser, served):  # noqa: F811
    page = browser.new_page()
    problems = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)

    def local_only(route):
        if route.request.url.startswith(served.split("/site/")[0]):
            route.continue_()
        else:
            problems.append(f"network request: {route.request.url}")
            route.abort()

    page.route("**/*", local_only)
    page.goto(f"{served}index.html")
    page.fill("#site-search-q", "Mixtral")
    page.press("#site-search-q", "Enter")  # the header's form takes the query to the search page
    page.wait_for_selector(".pagefind-ui__result-link", timeout=15_000)
    links = page.eval_on_selector_all(".pagefind-ui__result-link", "els => els.map(e => e.href)")
    assert links and all(link.startswith(served) for link in links), links
    assert any("mixtral-8x7b-" in link for link in links), links
    first = next(link for link in links if "mixtral-8x7b-" in link)
    response = page.goto(first)
    assert response.status == 200 and "Mixtral" in page.title()
    assert problems == []
    page.close()


def test_a_price_change_keeps_the_index(tmp_path):
    """Titles and descriptions do not move with prices: the published index stays, byte for byte."""
    content = make_content(tmp_path)
    out = tmp_path / "site"
    args = ["build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES)]
    assert run_cli(*args).exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in (out / "pagefind").rglob("*") if p.is_file()}
    snapshot = content / "prices" / "spark-rental" / "2026-10-28.yaml"
    assert "usd_per_hour: 0.75" in snapshot.read_text()
    snapshot.write_text(snapshot.read_text().replace("usd_per_hour: 0.75", "usd_per_hour: 0.80"))
    result = run_cli(*args)
    assert result.exit_code == 0 and "nothing to build" not in result.output
    after = {p: p.stat().st_mtime_ns for p in (out / "pagefind").rglob("*") if p.is_file()}
    assert after == before
    # a new title is a new index
    art = content / "articles" / "dgx-spark-70b-qlora-cost.md"
    art.write_text(art.read_text().replace("title: ", "title: Renamed ", 1))
    assert run_cli(*args).exit_code == 0
    assert (out / search.INPUT).read_text() == search.digest(search_input(content), "en") + "\n"
    assert {p: p.stat().st_mtime_ns for p in (out / "pagefind").rglob("*") if p.is_file()} != before


def search_input(content):
    """What the index is made of, read from a fresh load: the digest it records must be of exactly this."""
    from generator.build import _searched
    from generator.load import load_content

    catalog = load_content(content)
    return _searched(list(catalog.articles), [])


def test_missing_pagefind_is_one_line(tmp_path, monkeypatch):
    import pagefind_bin

    def gone():
        raise FileNotFoundError("no binary")

    monkeypatch.setattr(pagefind_bin, "get_executable", gone)
    content = make_content(tmp_path)
    result = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"), "--templates", str(TEMPLATES))
    assert result.exit_code == 1
    assert result.output.strip() == (
        "error: site.yaml asks for search, but the Pagefind binary is not installed "
        "(pip install 'pagefind[bin]==1.5.2')"
    )
    assert not (tmp_path / "site").exists()


def test_a_failing_pagefind_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    """Pagefind that exits with an error before answering: its last line, exit 1, no traceback, no site and
    nothing left in the temporary folder (the documents and the index travel through pipes, not files)."""
    import pagefind_bin

    script = tmp_path / "pagefind"
    script.write_text("#!/bin/sh\necho 'index: something went wrong' >&2\nexit 3\n")
    script.chmod(0o755)
    monkeypatch.setattr(pagefind_bin, "get_executable", lambda: str(script))
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setenv("TMPDIR", str(where))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    content = make_content(tmp_path)
    result = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"), "--templates", str(TEMPLATES))
    assert result.exit_code == 1, result.output
    assert "error: search: Pagefind failed: index: something went wrong" in result.output
    assert "Traceback" not in result.output
    assert list(where.iterdir()) == [] and not (tmp_path / "site").exists()


# A stand-in for `pagefind --service`: it answers each request as Pagefind does (base64 of JSON, then a
# comma), with one file for the index, and writes down the processors it was allowed, its allocator setting
# and what it was sent.
FAKE_SERVICE = """
import base64, json, os, sys
open(sys.argv[1], "w").write(repr(sorted(os.sched_getaffinity(0))))
open(sys.argv[1] + ".allocator", "w").write(os.environ.get("_RJEM_MALLOC_CONF", "(unset)"))
sent, data = [], b""
while True:
    chunk = sys.stdin.buffer.read1(65536)
    if not chunk:
        break
    data += chunk
    *messages, data = data.split(b",")
    for message in messages:
        request = json.loads(base64.b64decode(message))
        payload, answer = request["payload"], {"type": "IndexedFile"}
        sent.append(payload["type"])
        if payload["type"] == "NewIndex" and os.environ.get("FAKE_PAGEFIND") == "refuse":
            answer = {"type": "Error", "message": "config:  no such language"}
        elif payload["type"] == "NewIndex" and os.environ.get("FAKE_PAGEFIND") == "hang":
            continue
        elif payload["type"] == "NewIndex":
            answer = {"type": "NewIndex", "index_id": 7}
        elif payload["type"] == "AddFile" and payload["index_id"] != 7:
            answer = {"type": "Error", "message": "no such index"}
        elif payload["type"] == "GetFiles":
            files = [{"path": "pagefind-entry.json", "content": base64.b64encode(repr(sent).encode()).decode()}]
            answer = {"type": "GetFiles", "files": files}
        reply = {"message_id": request["message_id"], "payload": answer}
        sys.stdout.buffer.write(base64.b64encode(json.dumps(reply).encode()) + b",")
        sys.stdout.buffer.flush()
"""


def fake_pagefind(tmp_path, monkeypatch) -> None:
    """Indexes made after this start FAKE_SERVICE in Pagefind's place, writing to tmp_path / "affinity" (and
    "affinity.allocator")."""
    import sys

    script = tmp_path / "pagefind"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'service.py'} {tmp_path / 'affinity'}\n")
    (tmp_path / "service.py").write_text(FAKE_SERVICE)
    script.chmod(0o755)
    monkeypatch.setattr(search, "executable", lambda: str(script))


def test_pagefind_runs_on_one_processor_and_the_build_keeps_all(tmp_path, monkeypatch):
    """Pagefind starts with one processor (search._one_cpu: its thread pools, sized by the processors it may
    use, only contended with the workers); the thread that started it gets all of its processors back."""
    import os

    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    if len(allowed) < 2:
        pytest.skip("needs two processors and Linux's affinity calls")
    seen = tmp_path / "affinity"
    fake_pagefind(tmp_path, monkeypatch)
    pages = [(f"page-{n}", f"Page {n}", "about it", ("tag",)) for n in range(600)]  # more answers than a pipe holds
    index = search.Index(pages, "en").start()
    try:
        assert os.sched_getaffinity(0) == allowed
        files = dict(index.files(timeout=60))
    finally:
        index.close()
    assert files["pagefind/pagefind-entry.json"] == repr(["NewIndex", *["AddFile"] * 600, "GetFiles"]).encode()
    assert seen.read_text() == repr([max(allowed)])


@pytest.mark.parametrize("users", [None, "narenas:1"])
def test_pagefind_gets_the_allocator_setting_unless_the_user_has_one(tmp_path, monkeypatch, users):
    fake_pagefind(tmp_path, monkeypatch)
    if users is None:
        monkeypatch.delenv("_RJEM_MALLOC_CONF", raising=False)
    else:
        monkeypatch.setenv("_RJEM_MALLOC_CONF", users)
    index = search.Index([("page", "Page", "about it", ())], "en").start()
    try:
        index.files(timeout=60)
    finally:
        index.close()
    assert (tmp_path / "affinity.allocator").read_text() == (users or "tcache_max:131072")


def test_the_allocator_setting_is_pagefinds_and_changes_no_byte(monkeypatch):
    """The real Pagefind: its allocator takes the setting (with abort_conf an unknown one stops it), and an
    index made with it is the one made with the allocator's defaults."""
    import os
    import subprocess

    name, value = search.ALLOCATOR
    env = {**os.environ, name: f"abort_conf:true,{value}"}
    check = subprocess.run([search.executable(), "--version"], env=env, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr
    env[name] = "abort_conf:true,no_such_setting:1"  # a setting the binary does not know stops it: so would ours
    assert subprocess.run([search.executable(), "--version"], env=env, capture_output=True, timeout=60).returncode
    pages = [
        (f"page-{n}", f"Page {n} on H100 x{n % 8 + 1}", f"What run {n} costs", ("llama", "qlora")) for n in range(300)
    ]

    def index() -> list:
        made = search.Index(pages, "en").start()
        try:
            return made.files(timeout=120)
        finally:
            made.close()

    monkeypatch.delenv(name, raising=False)
    tuned = index()
    monkeypatch.setenv(name, "")  # the user's own (empty) setting: the allocator's defaults
    assert index() == tuned


@pytest.mark.parametrize("how", ["refuse", "hang"])
def test_a_pagefind_that_refuses_or_hangs_is_one_error_and_ends(tmp_path, monkeypatch, how):
    """An error answer is reported in one line; no answer at all ends in a time-out, and `close` ends the
    process and both threads instead of waiting on a pipe."""
    import time

    from generator.errors import BuildError

    fake_pagefind(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_PAGEFIND", how)
    index = search.Index([(f"page-{n}", f"Page {n}", "about it", ()) for n in range(50)], "en").start()
    process, threads = index.process, [index._reader, index._feeder]
    started = time.monotonic()
    try:
        with pytest.raises(BuildError) as caught:
            index.files(timeout=2)
    finally:
        index.close()
    if how == "refuse":
        assert str(caught.value) == "search: Pagefind failed: config: no such language"
    else:
        assert str(caught.value) == "search: Pagefind did not finish within 2 s"
    assert time.monotonic() - started < 10
    assert process.poll() is not None and not any(t.is_alive() for t in threads)


class _Index:
    """Stands for search.Index: its files come back once `ready` is set, and only once."""

    def __init__(self, files):
        self.found, self.is_ready, self.asked = files, False, 0

    def ready(self):
        return self.is_ready

    def files(self):
        self.asked += 1
        assert self.asked == 1, "the index's files are taken once"
        return self.found


def test_the_index_goes_in_between_pages_a_slice_at_a_time_and_the_rest_at_the_end():
    """build._IndexFiles: nothing before the index is in; then SLICE files a step, in order; `finish` adds
    what is left (or all of it, when the index came in after the last page), each file once."""
    from types import SimpleNamespace

    from generator.build import _IndexFiles
    from generator.write import Files

    made = [(f"pagefind/fragment/f{n:04}.pf_fragment", bytes([n % 256])) for n in range(2 * _IndexFiles.SLICE + 5)]
    for steps in (0, 1, 2, 3, 4):
        run = SimpleNamespace(files=Files(), pool=None)
        index = _Index(list(made))
        early = _IndexFiles(run, index)
        early.step()
        assert run.files.paths() == [] and not early.done  # not in yet: nothing taken
        index.is_ready = True
        for n in range(steps):
            early.step()
            assert len(run.files.paths()) == min((n + 1) * _IndexFiles.SLICE, len(made))
        assert early.done == (steps >= 3)
        early.finish()
        assert early.done and sorted(run.files.items()) == made
