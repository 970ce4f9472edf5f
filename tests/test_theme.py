"""The packaged theme, a site's own templates over it file by file, and `costpress init`."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess

import pytest
import yaml
from conftest import CONTENT, ROOT, TEMPLATES, make_content, run_cli

from generator import __version__, theme
from generator.starter import ARTICLES, init_site


def _build(content, out, templates=None):
    args = ["build", "--content", str(content), "--out", str(out)]
    if templates is not None:
        args += ["--templates", str(templates)]
    return run_cli(*args)


def test_the_theme_ships_in_the_package():
    assert theme.DEFAULT == ROOT / "generator" / "theme"
    for name in ("base.html", "article.html", "article.md", "index.html", "assets/style.css"):
        assert (theme.DEFAULT / name).is_file(), name
    # this repository's templates/ holds no template: its site is the theme's
    assert [p.name for p in (ROOT / "templates").iterdir()] == ["README.md"]


def test_a_site_without_templates_builds_with_the_theme(tmp_path, monkeypatch):
    site = tmp_path / "blog"
    init_site(site, dt.date(2026, 12, 1))
    monkeypatch.chdir(site)  # no templates/ here: the default --templates is missing, and that is fine
    result = run_cli("build", "--strict")
    assert result.exit_code == 0, result.output
    for slug in ARTICLES.values():
        assert (site / "site" / slug / "index.html").is_file(), slug
    assert (site / "site" / "assets" / "style.css").read_bytes() == (theme.DEFAULT / "assets/style.css").read_bytes()


def test_one_override_changes_only_its_file(tmp_path):
    content = make_content(tmp_path, families=True)  # written articles, a family and its listing
    plain = _build(content, tmp_path / "plain")
    assert plain.exit_code == 0, plain.output
    own = tmp_path / "templates"
    (own / "assets").mkdir(parents=True)
    base = (TEMPLATES / "base.html").read_text()
    assert "</footer>" in base
    (own / "base.html").write_text(base.replace("</footer>", "<p>Our own footer line</p></footer>"))
    (own / "assets" / "style.css").write_text("body { color: #123456; }\n")
    (own / "robots.txt").write_text("User-agent: *\nDisallow: /drafts/\n\nSitemap: {{ base }}sitemap.xml\n")
    result = _build(content, tmp_path / "own", own)
    assert result.exit_code == 0, result.output
    page = (tmp_path / "own" / "dgx-spark-70b-qlora-cost" / "index.html").read_text()
    assert "Our own footer line" in page
    assert (tmp_path / "own" / "assets" / "style.css").read_text() == "body { color: #123456; }\n"
    assert (tmp_path / "own" / "robots.txt").read_text() == (
        "User-agent: *\nDisallow: /drafts/\n\nSitemap: https://costpress.example/sitemap.xml\n"
    )
    # files the site does not override are the theme's
    for rel in ("assets/sort.js", "dgx-spark-70b-qlora-cost/index.md"):
        assert (tmp_path / "own" / rel).read_bytes() == (tmp_path / "plain" / rel).read_bytes()


def test_a_named_templates_folder_must_exist(tmp_path):
    result = _build(CONTENT, tmp_path / "out", tmp_path / "nope")
    assert result.exit_code == 1
    assert "--templates" in result.output and "nope" in result.output


def test_init_refuses_a_folder_with_anything_in_it(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    result = run_cli("init", str(tmp_path))
    assert result.exit_code == 1 and "not an empty folder" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_init_under_a_file_is_one_line(tmp_path):
    """`init notes.txt/blog`, with notes.txt a file, was a traceback from mkdir."""
    (tmp_path / "notes.txt").write_text("mine\n")
    result = run_cli("init", str(tmp_path / "notes.txt" / "blog"))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.output == f"error: {tmp_path}/notes.txt/blog: cannot make the folder (Not a directory)\n"
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_init_refuses_a_folder_inside_a_published_site(tmp_path):
    """A new site's sources inside a published site are files its next build refuses to replace."""
    site = tmp_path / "site"
    assert _build(make_content(tmp_path), site, TEMPLATES).exit_code == 0
    for inner in (site / "blog", site / "about" / "blog"):
        result = run_cli("init", str(inner))
        assert result.exit_code == 1 and f"it lies inside {site}, a site costpress publishes" in result.output
        assert not inner.exists()
    assert run_cli("init", str(tmp_path / "blog")).exit_code == 0  # beside it is fine


def test_init_writes_a_whole_site(tmp_path):
    result = run_cli("init", str(tmp_path / "blog"), "--title", "Rent or buy")
    assert result.exit_code == 0, result.output
    blog = tmp_path / "blog"
    for rel in (".gitignore", "README.md", ".github/workflows/price-refresh.yml", "content/site.yaml"):
        assert (blog / rel).is_file(), rel
    assert (blog / "README.md").read_text().startswith("# Rent or buy\n")
    kinds = sorted(p.read_text().split("kind: ")[1].split()[0] for p in (blog / "content/articles").glob("*.md"))
    assert kinds == sorted(ARTICLES)
    workflow = (blog / ".github/workflows/price-refresh.yml").read_text()
    assert "costpress changes --format markdown" in workflow and f'"costpress=={__version__}"' in workflow


@pytest.mark.parametrize("title", ["Rent or buy", 'Notes: "cheap" GPUs, #1 {of 2}', "yes", "2026", "- a list?"])
def test_init_s_title_is_the_site_s_title(tmp_path, monkeypatch, title):
    """--title went into README.md only: every page of the new site was titled 'GPU cost notes'. Titles that
    YAML would read as something else (a comment, a mapping, true, a number, a list) are quoted."""
    import json

    import yaml
    from markupsafe import escape

    assert run_cli("init", str(tmp_path / "blog"), "--title", title).exit_code == 0
    settings = yaml.safe_load((tmp_path / "blog" / "content" / "site.yaml").read_text())
    assert (settings["title"], settings["publisher"]) == (title, title)
    monkeypatch.chdir(tmp_path / "blog")
    result = run_cli("build")
    assert result.exit_code == 0, result.output
    home = (tmp_path / "blog" / "site" / "index.html").read_text()
    assert f"<title>{escape(title)}</title>" in home
    assert f'<a class="site-title" href="index.html">{escape(title)}</a>' in home
    page = (tmp_path / "blog" / "site" / ARTICLES["flops"] / "index.html").read_text()
    article = json.loads(page.split('<script type="application/ld+json">', 1)[1].split("</script>", 1)[0])
    assert article["publisher"]["name"] == title


@pytest.mark.parametrize("title", ["", "  ", "two\nlines", "a\ttab", "bidi \u202e"])
def test_init_refuses_a_title_a_page_cannot_show(tmp_path, title):
    result = run_cli("init", str(tmp_path / "blog"), "--title", title)
    assert result.exit_code == 1
    assert result.output == "error: --title: expected one line of text without control characters\n"
    assert not (tmp_path / "blog").exists()


def test_init_names_its_folder_as_a_shell_reads_it(tmp_path, monkeypatch):
    """'next: cd my site' was two words to a shell."""
    monkeypatch.chdir(tmp_path)
    result = run_cli("init", "my site")
    assert result.exit_code == 0, result.output
    assert "next: cd 'my site' && costpress build" in result.output
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    here = run_cli("init", ".")  # it said "next: cd . && costpress build"
    assert here.exit_code == 0 and here.output.endswith("files into .; next: costpress build\n"), here.output


def test_init_names_a_folder_with_a_line_feed_as_bash_reads_it(tmp_path, monkeypatch):
    """A line feed in the name was shown as \\n inside plain quotes, which a shell reads as a backslash and an n."""
    import shutil
    import subprocess

    monkeypatch.chdir(tmp_path)
    name = "it's\nmy \\ site"
    result = run_cli("init", name)
    assert result.exit_code == 0, result.output
    hint = result.output.split("next: cd ", 1)[1].split(" && ", 1)[0]
    assert hint == "$'it\\'s\\nmy \\\\ site'" and len(result.output.splitlines()) == 1
    if shutil.which("bash"):
        went = subprocess.run(["bash", "-c", f"cd {hint} && pwd"], capture_output=True, text=True, cwd=tmp_path)
        assert went.returncode == 0 and went.stdout.rstrip("\n") == str(tmp_path / name)


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("article.html", '{% extends "base.html" %}{% block main %}{{ oops( }}{% endblock %}', "unexpected '}'"),
        ("article.html", '{% extends "base.html" %}{% block main %}{{ page.nope.x }}{% endblock %}', "nope"),
        ("index.html", '{% extends "base.html" %}{% block main %}{{ page.nope.x }}{% endblock %}', "nope"),
        # a loop that does not end stopped every page a minute each (here 0.5 s), then hung: the first stops it
        # (the starter site's five articles render together, under one budget: Renderer.render_articles)
        (
            "article.html",
            '{% extends "base.html" %}{% block main %}{% for i in range(10**12) %}{% endfor %}{% endblock %}',
            "took longer than 0.5 s to render 5 pages; a loop that does not end?",
        ),
        (
            "article.html",
            '{% extends "base.html" %}{% macro f() %}{{ f() }}{% endmacro %}{% block main %}{{ f() }}{% endblock %}',
            "a macro calls itself too deeply",
        ),
        (
            "index.html",
            '{% extends "base.html" %}{% block main %}{% for i in range(10**12) %}{% endfor %}{% endblock %}',
            "s to render the home page and feeds; a loop that does not end?",
        ),
        # each of these three ended in a traceback: Jinja passes on what an expression raises as it is, and
        # its loader decodes a template as UTF-8
        ("article.html", '{% extends "base.html" %}{% block main %}{{ 1 / 0 }}{% endblock %}', "division by zero"),
        ("sitemap.xml", '{{ 1 + "a" }}', "unsupported operand type(s) for +: 'int' and 'str'"),
        ("404.html", b"\xff\xfe not text", "expected UTF-8 text"),
    ],
    ids=["syntax", "undefined", "index", "endless-loop", "recursion", "endless-index", "zero", "type", "bytes"],
)
def test_a_broken_override_is_one_line_and_publishes_nothing(tmp_path, monkeypatch, name, text, message):
    monkeypatch.setattr("generator.render.THEME_SECONDS", 0.5)
    monkeypatch.setattr("generator.render.THEME_SECONDS_PER_ITEM", 0.0)
    site = tmp_path / "blog"
    init_site(site, dt.date(2026, 12, 1))
    out = site / "site"
    assert _build(site / "content", out).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (site / "templates").mkdir()
    (site / "templates" / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    result = _build(site / "content", out, site / "templates")
    assert result.exit_code == 1
    first = result.output.strip().splitlines()[0]
    assert first.startswith("error: ") and f"templates/{name}:1: template error:" in first and message in first
    assert "Traceback" not in result.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_listing_template_that_never_ends_is_one_line(tmp_path, monkeypatch):
    """A listing's template gets its budget and a millisecond a row (here 0.5 s and none): then one line."""
    monkeypatch.setattr("generator.render.THEME_SECONDS", 0.5)
    monkeypatch.setattr("generator.render.THEME_SECONDS_PER_ITEM", 0.0)
    templates = tmp_path / "templates"
    templates.mkdir()
    endless = "{% for i in range(10**12) %}{% endfor %}"
    (templates / "listing.html").write_text('{% extends "base.html" %}{% block main %}' + endless + "{% endblock %}")
    result = _build(make_content(tmp_path, families=True), tmp_path / "site", templates)
    assert result.exit_code == 1 and not (tmp_path / "site").exists(), result.output
    first = result.output.strip().splitlines()[0]
    assert "templates/listing.html:1: template error: took longer than 0.5 s to render a listing" in first, first


def test_an_error_raised_in_the_packaged_theme_is_reported_as_a_bug(tmp_path):
    """template_failure turns what a site's own template raised into its one-line problem, and raises again
    what the packaged theme raised: that is costpress's own bug, reported with its traceback."""
    from generator import theme
    from generator.render import RenderProblem, template_failure

    def raised_in(filename: str) -> ZeroDivisionError:
        try:
            exec(compile("\n1 / 0", filename, "exec"))
        except ZeroDivisionError as exc:
            return exc
        raise AssertionError("no error")

    own = template_failure(raised_in(str(tmp_path / "templates" / "404.html")))
    assert isinstance(own, RenderProblem) and "404.html:2: template error: division by zero" in str(own)
    with pytest.raises(ZeroDivisionError):
        template_failure(raised_in(str(theme.DEFAULT / "404.html")))


def test_a_template_saved_with_a_byte_order_mark_renders_as_without(tmp_path):
    """A partial saved with the mark some Windows editors write first put it in the middle of every page."""
    content = make_content(tmp_path)
    plain = _build(content, tmp_path / "plain")
    assert plain.exit_code == 0, plain.output
    own = tmp_path / "templates"
    own.mkdir()
    for name in ("_table.html", "base.html"):
        (own / name).write_bytes(b"\xef\xbb\xbf" + (theme.DEFAULT / name).read_bytes())
    marked = _build(content, tmp_path / "marked", own)
    assert marked.exit_code == 0, marked.output
    page = "dgx-spark-70b-qlora-cost/index.html"
    assert (tmp_path / "marked" / page).read_bytes() == (tmp_path / "plain" / page).read_bytes()


def test_the_refresh_workflow_of_a_new_site_keeps_provider_names_and_cuts_its_report(tmp_path):
    """The new site's weekly job named each provider on every import (undoing a name the writer had changed in
    the latest snapshot), put the whole change report into the pull request's body, which GitHub refuses past
    65,536 characters, and built with --strict, so a warning (an article's prices grown stale, as the Nodus and
    DGX Spark snapshots the job does not import will) stopped it and nothing fresh was proposed. Its import step
    runs here with git, curl and costpress stubbed, logging their arguments; the body is what `costpress changes`
    writes, which opens with the build's warnings."""
    blog = tmp_path / "blog"
    assert run_cli("init", str(blog)).exit_code == 0
    workflow = yaml.safe_load((blog / ".github/workflows/price-refresh.yml").read_text())
    (step,) = [s for s in workflow["jobs"]["refresh"]["steps"] if s.get("id") == "refresh"]
    (opening,) = [s for s in workflow["jobs"]["refresh"]["steps"] if s.get("name") == "Open pull request"]
    shutil.rmtree(blog / "content/prices/runpod")  # a provider this site has no snapshot of yet
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "calls.log"
    stale = "warning: content/articles/a.md: uses prices checked 2026-10-28, 200 days older than the newest snapshot"
    for name, body in {
        "git": 'echo "0123abc\trefs/heads/master"',
        "curl": 'while [ "$1" != "-o" ]; do shift; done; : > "$2"',
        "costpress": f'echo "$*" >> {log}\n'
        '[ "$1" = build ] && [ -n "$BAD" ] && { echo "error: a price the guard refused" >&2; exit 1; }\n'
        f'[ "$1" = build ] && [ -z "$QUIET" ] && echo "{stale}" >&2\n'
        # costpress changes opens its report with the build's warnings (tests/test_changes.py)
        '[ "$1" = changes ] && [ -z "$QUIET" ] && printf "**The build warned** (fix before merging; '
        f'\\`costpress build --strict\\` fails on these):\\n\\n    {stale}\\n\\n"\n'
        '[ "$1" = changes ] && { echo "3 pages changed."; exit 3; }\nexit 0',
    }.items():
        (stubs / name).write_text(f"#!/bin/bash\n{body}\n")
        (stubs / name).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{stubs}:{os.environ['PATH']}",
        "PROVIDERS": workflow["env"]["PROVIDERS"],
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=blog, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    calls = log.read_text().splitlines()
    imports = {c.split("--provider ")[1].split()[0]: c for c in calls if c.startswith("import-prices")}
    assert set(imports) == {"lambda", "nebius", "runpod"}
    assert "--name" not in imports["lambda"] and "--name" not in imports["nebius"]  # their snapshots name them
    assert "--name RunPod" in imports["runpod"]  # a first import
    assert "build" in calls and "changes --format markdown --max-chars 60000" in calls
    assert "status=3" in (tmp_path / "output").read_text()
    body = blog / opening["with"]["body-path"]
    assert body.read_text() == (
        "**The build warned** (fix before merging; `costpress build --strict` fails on these):\n\n"
        f"    {stale}\n\n3 pages changed.\n"
    )
    quiet = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=blog, env={**env, "QUIET": "1"}, capture_output=True)
    assert quiet.returncode == 0 and body.read_text() == "3 pages changed.\n"
    bad = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=blog, env={**env, "BAD": "1"}, capture_output=True,
                         text=True)  # fmt: skip
    assert bad.returncode == 1 and "error: a price the guard refused" in bad.stdout + bad.stderr
