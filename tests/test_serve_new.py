"""`costpress serve` rebuilds and reloads on an edit; `costpress new` scaffolds a buildable article or family."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
import yaml
from conftest import ROOT, TEMPLATES, build, make_content, run_cli

from generator.serve import start


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback only
        return response.read()


def test_serve_rebuilds_and_reloads_on_an_edit(tmp_path):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    server, state, stop = start(content, out, TEMPLATES, "127.0.0.1", 0, lambda line: None)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        page = fetch(f"{base}/dgx-spark-70b-qlora-cost/")
        assert b"$27.42" in page
        assert b"/__costpress/version" in page  # reload script added when served...
        assert (
            b"/__costpress/version" not in (out / "dgx-spark-70b-qlora-cost" / "index.html").read_bytes()
        )  # ...not built
        version = json.loads(fetch(f"{base}/__costpress/version"))["version"]
        snapshot = content / "prices" / "spark-rental" / "2026-10-28.yaml"
        snapshot.write_text(snapshot.read_text().replace("usd_per_hour: 0.75", "usd_per_hour: 0.80"))
        deadline = time.monotonic() + 30
        while json.loads(fetch(f"{base}/__costpress/version"))["version"] == version:
            assert time.monotonic() < deadline, "no rebuild after the edit"
            time.sleep(0.2)
        cost = 100e6 / 759.79 / 3600 * 0.80
        assert f"${cost:.2f}".encode() in fetch(f"{base}/dgx-spark-70b-qlora-cost/")
        # a bad edit keeps the last good site and reports the error
        snapshot.write_text(snapshot.read_text().replace("usd_per_hour: 0.80", "usd_per_hour: n/a"))
        deadline = time.monotonic() + 30
        while json.loads(fetch(f"{base}/__costpress/version"))["error"] is None:
            assert time.monotonic() < deadline, "bad edit not reported"
            time.sleep(0.2)
        assert "usd_per_hour: expected a positive number" in state.error
        assert f"${cost:.2f}".encode() in fetch(f"{base}/dgx-spark-70b-qlora-cost/")
    finally:
        stop.set()
        server.shutdown()


def test_a_file_saved_into_the_served_folder_during_a_rebuild_is_kept_and_named(tmp_path, monkeypatch):
    """`serve --out site` rebuilds into a folder someone may be saving into: a file that appears there while a
    rebuild runs stays, and the log names it, as a build's warning does."""
    from generator import publish, serve

    content = make_content(tmp_path)
    out = tmp_path / "site"
    log: list[str] = []
    serve.rebuild(content, out, TEMPLATES, serve.State(), log.append)
    assert log[-1].startswith("rebuilt: ")
    finish = publish.Publisher.finish

    def meanwhile(self):
        (out / "CNAME").write_text("costs.example\n")
        return finish(self)

    monkeypatch.setattr(publish.Publisher, "finish", meanwhile)
    snapshot = content / "prices" / "spark-rental" / "2026-10-28.yaml"
    snapshot.write_text(snapshot.read_text().replace("usd_per_hour: 0.75", "usd_per_hour: 0.80"))
    serve.rebuild(content, out, TEMPLATES, serve.State(), log.append)
    assert (out / "CNAME").read_text() == "costs.example\n"
    assert log[-1] == (
        f"warning: 1 file appeared in {out} while it was being built (CNAME); costpress did not write it and left "
        "it there, but the next build will refuse the folder until it is moved out (a file of your own to publish "
        "goes in the content folder's static/)"
    )


def test_new_article_scaffolds_a_buildable_source(tmp_path):
    content = make_content(tmp_path)
    for kind in ("throughput", "flops", "market", "time-to-train"):
        result = run_cli(
            "new", "article", f"my-{kind}", "--kind", kind, "--date", "2026-11-30", "--content", str(content)
        )
        assert result.exit_code == 0, result.output
    again = run_cli("new", "article", "my-flops", "--kind", "flops", "--content", str(content))
    assert again.exit_code == 1 and "already exists" in again.output
    result, out = build(tmp_path, content)
    assert result.exit_code == 0, result.output
    assert (out / "my-flops" / "index.html").is_file()
    assert run_cli("new", "article", "../x", "--content", str(content)).exit_code == 1


def test_new_family_scaffolds_a_family_that_builds(tmp_path):
    """`new family` writes a family of the named models on every trainable method and provider, which builds:
    a listing at its slug and a page for each combination that fits, as the listing's CSV counts them."""
    import csv

    content = make_content(tmp_path)  # no families: the 70B one would already make the 70B pages
    # (nodus given twice is listed once)
    args = ["new", "family", "small-llama", "--model", "llama-3.1-8b", "--provider", "nodus", "--provider", "lambda",
            "--provider", "nodus", "--date", "2026-11-30", "--content", str(content)]  # fmt: skip
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    trainable = [m["id"] for m in yaml.safe_load((content / "methods.yaml").read_text())["methods"] if "training" in m]
    newest = [sorted((content / "prices" / p).glob("*.yaml"))[-1] for p in ("lambda", "nodus")]
    offers = sum(len(yaml.safe_load(f.read_text())["offers"]) for f in newest)
    assert f"× {len(trainable)} methods ({', '.join(trainable)}) ×" in result.output
    assert f": {len(trainable) * offers:,} combinations of model, method and offer" in result.output
    front = yaml.safe_load((content / "families" / "small-llama.md").read_text().split("---\n")[1])
    assert front["axes"] == {"models": ["llama-3.1-8b"], "methods": trainable, "providers": ["nodus", "lambda"]}
    assert run_cli(*args).exit_code == 1  # it exists now
    built, out = build(tmp_path, content)
    assert built.exit_code == 0, built.output
    with (out / "small-llama" / "combinations.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(trainable) * offers
    fitting = [r for r in rows if r["Memory"] == "fits"]
    assert fitting and len(fitting) < len(rows)  # a full fine-tune of 8B does not fit one A100 40 GB
    pages = sorted(p.parent.name for p in out.glob("llama-3-1-8b-*-on-*/index.html"))
    assert len(pages) == len(fitting)
    # each page's description reads as a sentence for every method name ("full fine-tune, AdamW" included)
    names = [m["name"] for m in yaml.safe_load((content / "methods.yaml").read_text())["methods"]]
    described = [(out / page / "index.md").read_text().split("\ndescription: ")[1].split("\n")[0] for page in pages]
    assert not [d for d in described for name in names if f"{name} fine-tune" in d]
    # the command said how many would get a page, before any build
    assert f"; {len(fitting)} hold the job, a page each; edit it, then run 'costpress build'\n" in result.output
    none = run_cli(
        "new", "family", "too-big", "--model", "llama-3.1-405b", "--method", "full", "--content", str(content)
    )
    assert none.exit_code == 0 and "; none holds the job: the listing will say so, and no page is made;" in none.output


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["--model", "llama-3.3-70b"],
            "--model: content/families/70b-setups.md already makes the pages of llama-3.3-70b",
        ),
        (["--model", "gpt-9"], "--model: unknown model 'gpt-9'; known: "),
        (["--model", "llama-3.2-1b", "--method", "sft"], "--method: unknown method 'sft'; known: "),
        (["--model", "llama-3.2-1b", "--provider", "aws2"], "--provider: unknown provider 'aws2'; known: "),
        ([], "--model: name the family's models"),
        (["--model", "llama-3.2-1b", "--kind", "flops"], "--kind: only 'new article' takes it"),
    ],
    ids=["another-family-has-it", "unknown-model", "unknown-method", "unknown-provider", "no-model", "kind"],
)
def test_new_family_refuses_what_would_not_build(tmp_path, monkeypatch, args, words):
    content = make_content(tmp_path, families=True)
    monkeypatch.chdir(tmp_path)
    result = run_cli("new", "family", "mine", *args, "--content", "content")
    assert result.exit_code == 1 and result.output == f"error: {words}" + result.output[len(words) + 7 :], result.output
    assert result.output.count("\n") == 1 and not (content / "families" / "mine.md").exists()


@pytest.mark.parametrize(
    ("args", "owner"),
    [
        (["article", "fine-tune-70b-every-setup"], "content/families/70b-setups.md (its listing)"),
        (["article", "tags"], "the site's tag pages"),
        (["family", "dgx-spark-70b-qlora-cost", "--model", "m"], "content/articles/dgx-spark-70b-qlora-cost.md"),
        (["family", "assets", "--model", "mistral-7b"], "the site's stylesheet and scripts"),
    ],
    ids=["article-as-a-listing", "article-as-tags", "family-as-an-article", "family-as-assets"],
)
def test_new_refuses_a_slug_in_use(tmp_path, monkeypatch, args, owner):
    """`new` wrote a source whose slug another page or one of the build's folders had; the build then refused it."""
    content = make_content(tmp_path, families=True)
    monkeypatch.chdir(tmp_path)
    before = sorted(p.relative_to(content) for p in content.rglob("*"))
    result = run_cli("new", *args, "--content", "content")
    assert result.exit_code == 1, result.output
    assert result.output == f"error: slug: {args[1]!r} is already used by {owner}; choose another\n"
    assert sorted(p.relative_to(content) for p in content.rglob("*")) == before


def test_new_where_its_folder_is_a_file_is_one_line(tmp_path):
    """A file named `families` (or `articles`) where the folder goes was a traceback from mkdir."""
    content = make_content(tmp_path)
    (content / "families").write_text("a note, not a folder\n")
    result = run_cli("new", "family", "mine", "--model", "mistral-7b", "--content", str(content))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.output == f"error: {content}/families: cannot make the folder (a file is there)\n"
    assert (content / "families").read_text() == "a note, not a folder\n"


def test_new_article_takes_no_family_options(tmp_path):
    result = run_cli("new", "article", "x", "--model", "llama-3.2-1b", "--content", str(make_content(tmp_path)))
    assert result.exit_code == 1 and "--model: only 'new family' takes it" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["new", "article", "a" * 300],
        [
            "import-model",
            str(ROOT / "tests/fixtures/model-configs/Qwen__Qwen2.5-7B.json"),
            "--id",
            "b" * 300,
            "--name",
            "X",
        ],
        ["import-prices", "skypilot", "nope.csv", "--provider", "c" * 300, "--checked", "2026-11-30"],
        [
            "calibrate",
            "--tokens",
            "1M",
            "--seconds",
            "10",
            "--id",
            "d" * 300,
            "--model",
            "m",
            "--method",
            "x",
            "--gpu",
            "g",
        ],
    ],
    ids=["new", "import-model", "import-prices", "calibrate"],
)
def test_a_name_too_long_for_a_file_is_one_line(tmp_path, args):
    """A 300-character slug or id made `new` fail with OSError (File name too long) and a traceback; every
    command that names a file or a record after one now says the limit content has (80 characters)."""
    result = run_cli(*args, "--content", str(make_content(tmp_path)))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "expected at most 80 lower-case letters" in result.output, result.output


def test_serve_survives_a_crash_shows_it_and_answers_odd_addresses(tmp_path, monkeypatch):
    import socket
    import urllib.error

    import pytest

    from generator import serve
    from generator.errors import CostpressError

    content = make_content(tmp_path)
    out = tmp_path / "site"
    server, state, stop = start(content, out, TEMPLATES, "127.0.0.1", 0, lambda line: None)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        real = serve.render_site
        calls = []

        def crash_once(*args, **kwargs):
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("boom")
            return real(*args, **kwargs)

        monkeypatch.setattr(serve, "render_site", crash_once)
        snapshot = content / "prices" / "spark-rental" / "2026-10-28.yaml"
        text = snapshot.read_text()
        snapshot.write_text(text.replace("usd_per_hour: 0.75", "usd_per_hour: 0.80"))
        deadline = time.monotonic() + 30
        while state.error is None:
            assert time.monotonic() < deadline, "the crash was not reported"
            time.sleep(0.1)
        assert "RuntimeError: boom" in json.loads(fetch(f"{base}/__costpress/version"))["error"]
        assert b"the last build failed" in fetch(f"{base}/dgx-spark-70b-qlora-cost/")  # the overlay's script
        version = state.version
        snapshot.write_text(text.replace("usd_per_hour: 0.75", "usd_per_hour: 0.85"))  # the watcher is still alive
        while state.version == version:
            assert time.monotonic() < deadline, "no rebuild after the crash"
            time.sleep(0.1)
        assert state.error is None
        with pytest.raises(urllib.error.HTTPError) as bad:
            fetch(f"{base}/%00")
        assert bad.value.code == 400
        request = urllib.request.Request(f"{base}/dgx-spark-70b-qlora-cost")
        opener = urllib.request.build_opener(type("NoRedirect", (urllib.request.HTTPRedirectHandler,), {
            "redirect_request": lambda *a, **k: None}))  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as moved:
            opener.open(request, timeout=5)
        assert moved.value.code == 301 and moved.value.headers["Location"] == "/dgx-spark-70b-qlora-cost/"
        with socket.create_connection(("127.0.0.1", server.server_address[1])):
            pass
        with pytest.raises(CostpressError, match="cannot serve on 127.0.0.1:.*--port"):
            start(content, tmp_path / "other", TEMPLATES, "127.0.0.1", server.server_address[1], lambda line: None)
    finally:
        stop.set()
        server.shutdown()


def test_an_edit_made_during_the_first_build_is_built(tmp_path, monkeypatch):
    """The watcher started only after the first build, so an edit made while it ran was missed until the next
    edit. The edit is made here from inside the first build."""
    import generator.serve as serve

    content = make_content(tmp_path)
    snapshot = content / "prices" / "spark-rental" / "2026-10-28.yaml"
    real, calls = serve.rebuild, []

    def rebuild(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            snapshot.write_text(snapshot.read_text().replace("usd_per_hour: 0.75", "usd_per_hour: 0.80"))
        return real(*args, **kwargs)

    monkeypatch.setattr(serve, "rebuild", rebuild)
    server, state, stop = start(content, tmp_path / "site", TEMPLATES, "127.0.0.1", 0, lambda line: None)
    try:
        deadline = time.monotonic() + 30
        while state.version < 2:
            assert time.monotonic() < deadline, "the edit made during the first build was not built"
            time.sleep(0.2)
        cost = 100e6 / 759.79 / 3600 * 0.80
        page = fetch(f"http://127.0.0.1:{server.server_address[1]}/dgx-spark-70b-qlora-cost/")
        assert f"${cost:.2f}".encode() in page
    finally:
        stop.set()
        server.shutdown()


def test_new_outside_a_site_makes_nothing(tmp_path, monkeypatch):
    """`new article x --content contnet` (or `new` run in the wrong folder, with the default --content)
    made contnet/articles/x.md, a tree no build reads, and said it was written."""
    monkeypatch.chdir(tmp_path)
    for args in (["--content", "contnet"], []):
        result = run_cli("new", "article", "my-post", *args)
        where = "contnet" if args else "content"
        assert result.exit_code == 1, result.output
        assert result.output == (
            f"error: {where}: not a content folder (no site.yaml in it); pass the site's --content, or make a new"
            " site with 'costpress init DIR'\n"
        )
    assert list(tmp_path.iterdir()) == []
