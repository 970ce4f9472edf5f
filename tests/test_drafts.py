"""`draft: true` keeps an article or a family out unless --drafts (serve shows drafts, marked); --base-url for one
build."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conftest import TEMPLATES, B, Built, make_content, read_tree, replace, run_cli

from generator.serve import start

DRAFT = {f"articles/{B}.md": replace("\nkind: flops\n", "\nkind: flops\ndraft: true\n")}


def _build(content, out, *extra):
    result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), *extra)
    return result


def _locs(out):
    root = ET.fromstring((out / "sitemap.xml").read_bytes())
    return [u.text for u in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]


def test_a_draft_stays_out_of_a_plain_build(tmp_path):
    content = make_content(tmp_path, DRAFT)
    result = _build(content, tmp_path / "site", "--strict")  # its provider unused elsewhere is no warning
    assert result.exit_code == 0, result.output
    out = tmp_path / "site"
    assert not (out / B).exists()
    assert B not in (out / "index.html").read_text()
    assert B not in (out / "atom.xml").read_text()
    assert not any(B in loc for loc in _locs(out))
    assert B not in (out / "figures.json").read_text()


def test_drafts_build_with_the_flag_and_say_so(tmp_path):
    content = make_content(tmp_path, DRAFT)
    out = tmp_path / "site"
    assert _build(content, out).exit_code == 0
    result = _build(content, out, "--drafts")
    assert result.exit_code == 0, result.output
    assert "nothing to build" not in result.output  # the flag is part of what a build depends on
    page = Built(out).html(B)
    assert page.select_one(".draft-note").get_text().startswith("Draft")
    assert page.find("meta", attrs={"name": "robots"})["content"] == "noindex"
    assert "\ndraft: true\n" in Built(out).md(B).split("---")[1] + "\n"
    other = Built(out).html("dgx-spark-70b-qlora-cost")
    assert other.select_one(".draft-note") is None and other.find("meta", attrs={"name": "robots"}) is None
    # the home page and the tag pages say which of their entries is a draft
    for listed in (Built(out).html("."), Built(out).html("tags/fine-tuning")):
        metas = {
            li.a["href"].split("/")[-2]: li.select_one(".meta").get_text() for li in listed.select(".post-list li")
        }
        assert metas[B].startswith("Draft · Published ") and metas["dgx-spark-70b-qlora-cost"].startswith("Published ")
    # and a plain build takes it out again
    assert _build(content, out).exit_code == 0
    assert not (out / B).exists()


def test_serve_shows_drafts(tmp_path):
    content = make_content(tmp_path, DRAFT)
    out = tmp_path / "site"
    server, _state, stop = start(content, out, TEMPLATES, "127.0.0.1", 0, lambda line: None)
    try:
        assert (out / B / "index.html").is_file()
        assert "draft-note" in (out / B / "index.html").read_text()
    finally:
        stop.set()
        server.shutdown()


def test_base_url_for_one_build(tmp_path):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert _build(content, out).exit_code == 0
    result = _build(content, out, "--base-url", "https://preview.example.org/costs")
    assert result.exit_code == 0, result.output
    assert "nothing to build" not in result.output
    base = "https://preview.example.org/costs/"
    assert all(loc.startswith(base) for loc in _locs(out))
    canonical = Built(out).html(B).find("link", rel="canonical")["href"]
    assert canonical == f"{base}{B}/"
    assert f'href="{base}atom.xml"' in (out / "atom.xml").read_text()
    # site.yaml's address again without the option
    assert _build(content, out).exit_code == 0
    assert Built(out).html(B).find("link", rel="canonical")["href"] == f"https://costpress.example/{B}/"


def test_a_bad_base_url_is_one_line(tmp_path):
    content = make_content(tmp_path)
    for bad in ("preview.example.org", "ftp://x.example/", "https://a b/"):
        result = _build(content, tmp_path / "site", "--base-url", bad)
        assert result.exit_code == 1
        assert result.output.strip().count("\n") == 0 and "--base-url" in result.output, result.output
    assert not (tmp_path / "site").exists()


def test_serve_previews_drafts_without_touching_the_published_site(tmp_path):
    """Without --out, serve builds into a temporary folder of its own: site/ stays what `build` wrote,
    drafts never reach it, and the preview folder is gone once serve stops."""
    import os
    import re
    import signal
    import subprocess
    import sys
    import urllib.request

    content = make_content(tmp_path, DRAFT)
    out = tmp_path / "site"
    assert _build(content, out).exit_code == 0
    before = read_tree(out)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    command = [sys.executable, "-m", "generator", "serve", "--content", str(content), "--port", "0"]
    command += ["--templates", str(TEMPLATES)]
    env = dict(os.environ, TMPDIR=str(scratch))
    server = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = server.stdout.readline().decode()
        port = re.search(r"serving a preview at http://127\.0\.0\.1:(\d+)/", line)
        assert port, line + server.stderr.read1().decode()
        with urllib.request.urlopen(f"http://127.0.0.1:{port.group(1)}/{B}/", timeout=10) as page:  # noqa: S310
            assert b"draft-note" in page.read()  # the draft is in the preview
        assert [p.name for p in scratch.iterdir()][0].startswith("costpress-serve-")
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    after = read_tree(out)
    assert after == before
    assert list(scratch.iterdir()) == []


FAMILY_FILE = "families/70b-setups.md"
LISTING = "fine-tune-70b-every-setup"


def test_a_draft_family_is_held_out_and_built_with_drafts_marked(tmp_path):
    """`draft: true` in a family's front matter keeps its listing and pages out as it keeps an article out; with
    --drafts they are built and marked; made public again, the same folder is what a fresh build writes (the
    page cache took the pages' draft marks as an input)."""
    draft = {FAMILY_FILE: replace("\ndate: 2026-11-29\n", "\ndate: 2026-11-29\ndraft: true\n")}
    content = make_content(tmp_path / "a", draft, families=True)
    out = tmp_path / "site"
    result = _build(content, out, "--strict")  # aws, gcp and azure only the draft uses: no warning
    assert result.exit_code == 0, result.output
    assert not (out / LISTING).exists() and not list(out.glob("llama-3-3-70b-*-on-*"))
    for name in ("index.html", "atom.xml", "figures.json", "sitemap.xml"):
        assert LISTING not in (out / name).read_text() and "llama-3-3-70b-lora-on-" not in (out / name).read_text()
    result = _build(content, out, "--drafts")
    assert result.exit_code == 0, result.output
    pages = sorted(p.parent.name for p in out.glob("llama-3-3-70b-*-on-*/index.html"))
    assert len(pages) > 100
    for slug in (LISTING, pages[0], pages[-1]):
        page = Built(out).html(slug)
        assert page.select_one(".draft-note").get_text().startswith("Draft"), slug
        assert page.find("meta", attrs={"name": "robots"})["content"] == "noindex", slug
    for slug in (pages[0], LISTING):
        assert "\ndraft: true\n" in Built(out).md(slug).split("---")[1] + "\n", slug
    assert Built(out).html("dgx-spark-70b-qlora-cost").select_one(".draft-note") is None
    home = {li.a["href"].split("/")[-2]: li.select_one(".meta").get_text() for li in Built(out).html(".").select("li")}
    assert home[LISTING].startswith("Draft · Published ")
    # the family made public (`draft: false`: its body stays on the same line, which the pages' fingerprints
    # count): the folder built with its draft marks becomes what a fresh build writes
    undrafted = replace("\ndate: 2026-11-29\n", "\ndate: 2026-11-29\ndraft: false\n")
    public = make_content(tmp_path / "b", {FAMILY_FILE: undrafted}, families=True)
    (content / FAMILY_FILE).write_text((public / FAMILY_FILE).read_text())
    assert _build(content, out, "--drafts").exit_code == 0
    assert _build(public, tmp_path / "fresh", "--drafts").exit_code == 0
    assert read_tree(out) == read_tree(tmp_path / "fresh")
    assert "draft-note" not in (out / pages[0] / "index.html").read_text()


def test_a_draft_family_left_out_still_has_its_axes_checked(tmp_path):
    """A draft article is checked like any other; a draft family's axes are too, though its rows are not made."""

    def edit(text: str) -> str:
        text = text.replace("\ndate: 2026-11-29\n", "\ndate: 2026-11-29\ndraft: true\n")
        text = text.replace("models: [llama-3.3-70b]", "models: [llama-3.3-70b, llama-9]")
        return text.replace("providers: [lambda,", "providers: [lamda,")

    edits = {FAMILY_FILE: edit}
    result = _build(make_content(tmp_path, edits, families=True), tmp_path / "site")
    assert result.exit_code == 1, result.output
    assert "families/70b-setups.md:14: axes.models[1]: unknown model 'llama-9'" in result.output
    assert "families/70b-setups.md:16: axes.providers[0]: no price snapshot for provider 'lamda'" in result.output
