"""Addresses that stay: a page's earlier addresses (`aliases:`) each get a page that sends readers on.

Every test works inside its own temporary folder, with HOME pointed at a
temporary folder.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from conftest import A, B, cli_build, leftovers, make_content, read_tree, replace, run_cli

from generator import changes, guard

LISTING = "fine-tune-70b-every-setup"
BASE = "https://costpress.example/"  # content/site.yaml's base_url


@pytest.fixture(autouse=True)
def in_tmp(home_in_tmp, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # messages name content/... as a writer in the site's folder sees it


def with_aliases(article: str, listing: str | None = None) -> dict:
    """make_content edits giving article A the aliases `article` (YAML) and, when asked, the 70B family's
    listing the aliases `listing`."""
    edits = {f"articles/{A}.md": replace(f"\nslug: {A}\n", f"\nslug: {A}\naliases: {article}\n")}
    if listing is not None:
        edits["families/70b-setups.md"] = replace(f"  slug: {LISTING}\n", f"  slug: {LISTING}\n  aliases: {listing}\n")
    return edits


def moved_to(html: str) -> tuple[str, str, str]:
    """A page's refresh target, canonical address and the link a reader can follow."""
    refresh = re.search(r'<meta http-equiv="refresh" content="0; url=([^"]+)">', html)
    canonical = re.search(r'<link rel="canonical" href="([^"]+)">', html)
    link = re.search(r'<main id="main">\s*<p>[^<]*<a href="([^"]+)">', html)
    assert refresh and canonical and link, html
    return refresh.group(1), canonical.group(1), link.group(1)


def test_each_earlier_address_sends_readers_to_the_page_and_goes_when_its_alias_does(tmp_path):
    # written as the path alone or as an address, with its slashes
    content = make_content(tmp_path, with_aliases("[spark-qlora-cost, /2025/11/spark/]", "[every-70b-setup/]"), True)
    out = tmp_path / "site"
    result = cli_build(content, out, "--strict")
    assert result.exit_code == 0, result.output
    # an alias one level down reaches the page one level up; two levels further down, three levels up
    cases = {
        "spark-qlora-cost": ("../", A),
        "2025/11/spark": ("../../../", A),
        "every-70b-setup": ("../", LISTING),
    }
    for alias, (up, slug) in cases.items():
        html = (out / alias / "index.html").read_text()
        target, canonical, link = moved_to(html)
        assert target == link == f"{up}{slug}/index.html"
        assert (out / alias / target).resolve() == (out / slug / "index.html").resolve()
        assert canonical == f"{BASE}{slug}/"
        assert '<meta name="robots" content="noindex">' in html
        title = re.search(r"<title>(.*?)</title>", (out / slug / "index.html").read_text()).group(1)
        assert f"<title>{title}</title>" in html  # the page's own title, site name included
    # search engines and feeds know only the page's own address; figures.json names the others as its aliases
    for name in ("sitemap.xml", "atom.xml"):
        text = (out / name).read_text()
        assert "spark-qlora-cost" not in text and "2025/11" not in text and "every-70b-setup" not in text, name
    entries = changes.parse((out / "figures.json").read_bytes(), "figures.json", lambda rel: (out / rel).read_bytes())
    assert not any(alias in entries for alias in cases)
    assert entries[A]["aliases"] == ["spark-qlora-cost", "2025/11/spark"]
    assert entries[LISTING]["aliases"] == ["every-70b-setup"]
    assert json.loads((out / A / "figures.json").read_text())["articles"][A]["aliases"] == entries[A]["aliases"]
    listed = (out / guard.MARKER).read_text()
    assert all(f"{alias}/index.html" in listed for alias in cases)
    assert cli_build(content, out, "--check").exit_code == 0

    # an alias taken out takes its page with it, and the folders left empty
    article = content / "articles" / f"{A}.md"
    article.write_text(article.read_text().replace("aliases: [spark-qlora-cost, /2025/11/spark/]\n", ""))
    result = cli_build(content, out)
    assert result.exit_code == 0, result.output
    assert not (out / "spark-qlora-cost").exists() and not (out / "2025").exists()
    assert (out / "every-70b-setup" / "index.html").is_file()
    fresh = tmp_path / "fresh"
    assert cli_build(content, fresh).exit_code == 0
    assert read_tree(out) == read_tree(fresh)


def test_a_held_draft_keeps_its_aliases_out_of_the_site(tmp_path):
    edits = with_aliases("[spark-qlora-cost]")
    edits[f"articles/{B}.md"] = replace(f"\nslug: {B}\n", f"\nslug: {B}\ndraft: true\naliases: [old-by-setup]\n")
    content = make_content(tmp_path, edits)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    assert (out / "spark-qlora-cost" / "index.html").is_file()
    assert not (out / "old-by-setup").exists()
    preview = tmp_path / "preview"
    assert cli_build(content, preview, "--drafts").exit_code == 0
    assert moved_to((preview / "old-by-setup" / "index.html").read_text())[0] == f"../{B}/index.html"


@pytest.mark.parametrize(
    "aliases, why",
    [
        (f"[{A}]", f"'{A}' is this page's own address; list only addresses it had before"),
        (f"[ok, {B}]", f"'{B}' is the address of a page made from content/articles/{B}.md"),
        (f"[{B}/old]", f"'{B}/old' is inside {B}/, the folder of a page made from content/articles/{B}.md"),
        ("[assets]", "'assets' names assets/, the folder of the site's stylesheet and scripts"),
        ("[tags/old]", "'tags/old' is inside tags/, the folder of the site's tag pages"),
        ("[old, old]", "'old' is already an alias at content/articles/" + A + ".md:4; list it once"),
        ("[Old-Name]", "aliases[0]: expected an address in the site"),
        ("[old/../name]", "aliases[0]: expected an address in the site"),
        ("[old//name]", "aliases[0]: expected an address in the site"),
        ("['/']", "aliases[0]: expected an address in the site"),
        ("old-name", "aliases: expected a list, got 'old-name'"),
    ],
)
def test_an_alias_the_site_cannot_hold_is_one_line_and_the_site_stays(tmp_path, aliases, why):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    before = read_tree(out)
    article = content / "articles" / f"{A}.md"
    article.write_text(replace(f"\nslug: {A}\n", f"\nslug: {A}\naliases: {aliases}\n")(article.read_text()))
    result = cli_build(content, out)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.output
    assert errors[0].startswith(f"error: content/articles/{A}.md:4: "), errors[0]
    assert why in errors[0], errors[0]
    assert read_tree(out) == before
    assert not [name for name in leftovers(tmp_path) if name.endswith((".tmp", ".staging"))]


# An article of kind `setup` written by hand (not made by a family): its aliases are its own front matter's
SETUP = """---
title: One setup, written by hand
slug: my-setup
date: 2026-11-01
description: One setup.
kind: setup
aliases: [{aliases}]
params:
  model: llama-3.3-70b
  method: qlora
  offer: nodus:h100x1
  reference_tokens: 20M
  token_budgets: [1M, 10M]
  chart_tokens: [1M, 10M]
  utilization: 0.3
  startup_hours: 0.25
  neighbours: {{shown: [], others: 0, cheaper: 0}}
  listing_slug: {listing}
---
Text.
"""


def test_a_written_setup_article_s_aliases_are_its_own_not_a_family_s_pattern(tmp_path):
    """A family's pages are of kind `setup` too; a written one's bad alias is told at its own line (it had
    been read as a family's page.aliases pattern: a KeyError and a traceback)."""
    content = make_content(tmp_path, {"articles/my-setup.md": SETUP.format(aliases="my-setup", listing=A)})
    result = cli_build(content, tmp_path / "site")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert ("error: content/articles/my-setup.md:7: aliases: 'my-setup' is this page's own address; list only "
            "addresses it had before") in result.output  # fmt: skip
    (content / "articles" / "my-setup.md").write_text(SETUP.format(aliases="my-old-setup", listing=A))
    result = cli_build(content, tmp_path / "site")
    assert result.exit_code == 0, result.output
    assert moved_to((tmp_path / "site" / "my-old-setup" / "index.html").read_text())[0] == "../my-setup/index.html"


def test_a_listing_alias_that_is_a_page_of_its_family_names_the_family_file_and_line(tmp_path):
    page = "llama-3-3-70b-qlora-on-nodus-h100x1"
    content = make_content(tmp_path, with_aliases("[ok]", f"[{page}]"), True)
    result = cli_build(content, tmp_path / "site")
    assert result.exit_code == 1, result.output
    assert (
        f"error: content/families/70b-setups.md:6: aliases: '{page}' is the address of a page made from "
        "content/families/70b-setups.md" in result.output
    )
    assert not (tmp_path / "site").exists()


def test_a_file_of_your_own_may_not_go_where_an_alias_is(tmp_path):
    edits = with_aliases("[old-name]") | {"static/old-name/photo.jpg": "mine"}
    result = cli_build(make_content(tmp_path, edits), tmp_path / "site")
    assert result.exit_code == 1, result.output
    assert "static/old-name/photo.jpg: old-name/ is a folder the build writes files into" in result.output


def test_a_site_s_own_redirect_template_replaces_the_theme_s(tmp_path):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "redirect.html").write_text('<a href="{{ page.target }}">{{ page.title }}</a>\n')
    content = make_content(tmp_path, with_aliases("[old-name]"))
    out = tmp_path / "site"
    result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(templates))
    assert result.exit_code == 0, result.output
    title = re.search(r"^title: (.*)$", (content / "articles" / f"{A}.md").read_text(), re.M).group(1)
    assert (out / "old-name" / "index.html").read_text() == f'<a href="../{A}/index.html">{title}</a>\n'


# the 70B family's pages under a new slug pattern, with the old one kept as its pages' earlier addresses
RENAMED = "{model}-{method}-{provider}-{count}x-{gpu}"
WAS = "{model}-{method}-on-{provider}-{gpu}x{count}"  # content/families/70b-setups.md's page.slug


def renamed_family(*earlier: str) -> dict:
    listed = ", ".join(f'"{pattern}"' for pattern in earlier)
    return {
        "families/70b-setups.md": replace(
            f'  slug: "{WAS}"\n', f'  slug: "{RENAMED}"\n' + (f"  aliases: [{listed}]\n" if earlier else "")
        )
    }


def old_address(slug: str) -> str:
    """A page's address under WAS, from its address under RENAMED (by hand: the parts moved about)."""
    m = re.fullmatch(r"(llama-3-3-70b)-(qlora|lora|full-8bit|full)-([a-z]+)-(\d+)x-([a-z0-9-]+)", slug)
    assert m, slug
    model, method, provider, count, gpu = m.groups()
    return f"{model}-{method}-on-{provider}-{gpu}x{count}"


def test_a_family_s_earlier_slug_pattern_keeps_each_page_s_old_address(tmp_path):
    """Renaming page.slug moves every page of the family; page.aliases keeps each old address as a page that
    sends readers on, and taking it out takes those pages with it."""
    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    published = tmp_path / "published"  # the figures before the rename, for `changes`
    shutil.copytree(out / "figures", published / "figures")
    shutil.copy(out / "figures.json", published)
    family = content / "families" / "70b-setups.md"
    family.write_text(renamed_family(WAS)["families/70b-setups.md"](family.read_text()))
    (content / "articles" / f"{A}.md").write_text(  # a link in prose to an old address is not broken
        (content / "articles" / f"{A}.md").read_text()
        + "\n[An old address](../llama-3-3-70b-qlora-on-nodus-h100x1/index.html)\n"
    )
    result = cli_build(content, out, "--strict")
    assert result.exit_code == 0, result.output
    pages = sorted(json.loads((out / "figures" / f"{LISTING}-1.json").read_text())["articles"])
    pages = [slug for slug in pages if slug != LISTING]
    assert len(pages) > 50  # every fitting setup of the 70B family
    for slug in pages:
        alias = old_address(slug)
        target, canonical, link = moved_to((out / alias / "index.html").read_text())
        assert target == link == f"../{slug}/index.html" and canonical == f"{BASE}{slug}/"
    assert "-on-nodus-" not in (out / "sitemap.xml").read_text()
    assert cli_build(content, out, "--check").exit_code == 0
    # the change report: each page moved, and its old address still answers
    report = run_cli("changes", "--old", str(published / "figures.json"), "--new", str(out / "figures.json"),
                     "--format", "json")  # fmt: skip
    moved = json.loads(report.output)["moved"]
    assert moved == sorted(({"page": old_address(slug), "to": slug, "address_kept": True} for slug in pages),
                           key=lambda m: m["page"])  # fmt: skip
    entries = changes.parse((out / "figures.json").read_bytes(), "figures.json", lambda rel: (out / rel).read_bytes())
    assert all(entries[slug]["aliases"] == [old_address(slug)] for slug in pages)  # what ties the two

    # renamed as a price changed: still moved, each page with its changes under its new address
    price = content / "prices" / "nodus" / "2026-11-05.yaml"
    price.write_text(replace("usd_per_hour: 5.50}", "usd_per_hour: 6.05}")(price.read_text()))
    assert cli_build(content, out).exit_code == 0
    report = json.loads(run_cli("changes", "--old", str(published / "figures.json"), "--new",
                                str(out / "figures.json"), "--format", "json").output)  # fmt: skip
    assert report["moved"] == moved and report["gone"] == report["new"] == []
    nodus = "llama-3-3-70b-qlora-nodus-1x-b200"  # RENAMED for the offer whose price changed
    rows = [row for row in report["changes"] if row["page"] == nodus and row["kind"] == "figure"]
    assert rows and {round(row["new"] / row["old"], 9) for row in rows if row["unit"].startswith("USD")} == {1.1}
    assert not {row["page"] for row in report["changes"]} & {old_address(slug) for slug in pages}

    # another earlier pattern in its place (nothing else in the file moves), then none: each build leaves
    # the pages at the old addresses, and the aliases in figures.json, as a build from nothing would
    other = WAS.replace("-on-", "-at-")
    for before, after in ((f'"{WAS}"', f'"{other}"'), (f'  aliases: ["{other}"]\n', "")):
        family.write_text(family.read_text().replace(before, after))
        assert cli_build(content, out).exit_code == 0
        fresh = tmp_path / "fresh"
        assert cli_build(content, fresh).exit_code == 0
        assert read_tree(out) == read_tree(fresh)
        shutil.rmtree(fresh)
    assert not [p.name for p in out.iterdir() if re.search("-on-|-at-", p.name) and p.name.startswith("llama-3-3")]


@pytest.mark.parametrize(
    "earlier, why",
    [
        ([RENAMED], "the address '{page}', which is this page's own address; list only addresses it had before"),
        (["{model}-{method}"], "which is given to more than one page; use placeholders that tell its pages apart"),
        ([WAS, WAS], "which is already an alias at content/families/70b-setups.md:10; list it once"),
        (["{{}}"], "the address '', which is empty; expected a pattern that leaves letters or digits"),
        (["tags"], "the address 'tags', which names tags/, the folder of the site's tag pages; choose another"),
        ([A], f"the address '{A}', which is the address of a page made from content/articles/{A}.md"),
    ],
)
def test_an_earlier_pattern_the_site_cannot_hold_is_one_line_for_all_its_pages(tmp_path, earlier, why):
    content = make_content(tmp_path, renamed_family(), True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    before = read_tree(out)
    pages = len(json.loads((out / "figures" / f"{LISTING}-1.json").read_text())["articles"]) - 1
    family = content / "families" / "70b-setups.md"
    listed = ", ".join(f'"{pattern}"' for pattern in earlier)
    family.write_text(
        family.read_text().replace(f'  slug: "{RENAMED}"\n', f'  slug: "{RENAMED}"\n  aliases: [{listed}]\n')
    )
    result = cli_build(content, out)
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.output
    told = re.fullmatch(
        r"error: content/families/70b-setups\.md:10: page\.aliases: '(.+?)' gives the page '([a-z0-9-]+)' (.+?)"
        r"(?: \((\d+) more pages alike\))?", errors[0])  # fmt: skip
    assert told and told[1] == earlier[-1], errors[0]
    assert why.format(page=told[2]) in told[3], errors[0]
    failing = pages - 4 if earlier == ["{model}-{method}"] else pages  # (each method's first page is fine)
    assert int(told[4] or 0) == failing - 1
    assert read_tree(out) == before
