"""A page and a feed per tag, a tags index, all in the sitemap; articles link their tags."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import feedparser
import yaml
from bs4 import BeautifulSoup
from conftest import CONTENT

BASE = "https://costpress.example/"


def _front(path):
    return yaml.safe_load(path.read_text().split("---\n")[1])


def expected() -> dict[str, set[str]]:
    """tag -> slugs of the written articles and family listings that carry it, read from content/."""
    tags: dict[str, set[str]] = {}
    for path in (CONTENT / "articles").glob("*.md"):
        front = _front(path)
        for tag in front.get("tags") or ():
            tags.setdefault(tag, set()).add(front["slug"])
    for path in (CONTENT / "families").glob("*.md"):
        front = _front(path)
        for tag in front.get("tags") or ():
            tags.setdefault(tag, set()).add(front["listing"]["slug"])
    return tags


def _slugs(soup):
    return {a["href"].split("/")[-2] for a in soup.select("ul.post-list > li > a")}


def test_tags_index_and_pages(site):
    want = expected()
    assert want  # the default content has tags
    index = BeautifulSoup((site.out / "tags" / "index.html").read_text(), "html.parser")
    listed = {a.get_text(): a["href"] for a in index.select("ul.tag-list a")}
    assert set(listed) == set(want)
    for tag, slugs in want.items():
        count = index.find("a", string=tag).find_next_sibling("span").get_text()
        assert count == f"({len(slugs)})"
        page = BeautifulSoup((site.out / "tags" / listed[tag]).read_text(), "html.parser")
        assert _slugs(page) == slugs, tag
        for a in page.select("ul.post-list > li > a"):
            assert (site.out / "tags" / listed[tag]).parent.joinpath(a["href"]).resolve().is_file()


def test_a_feed_per_tag(site):
    for tag, slugs in expected().items():
        feed = feedparser.parse((site.out / "tags" / re.sub(r"[^a-z0-9]+", "-", tag) / "atom.xml").read_bytes())
        assert not feed.bozo, tag
        assert feed.feed.title == f"costpress: {tag}"
        assert {e.link.rstrip("/").rsplit("/", 1)[1] for e in feed.entries} == slugs


def test_tag_pages_are_in_the_sitemap(site):
    root = ET.fromstring((site.out / "sitemap.xml").read_bytes())
    locs = {u.text for u in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")}
    assert f"{BASE}tags/" in locs
    for tag in expected():
        assert f"{BASE}tags/{tag}/" in locs


def test_a_feed_is_as_new_as_its_newest_entry_and_so_is_the_home_page_in_the_sitemap(site):
    """A feed reader asks a feed for what changed since its <updated>: it must be the newest entry's date, the
    site's and each tag's; the sitemap gives the home page that date too."""
    atom = "{http://www.w3.org/2005/Atom}"
    feeds = [site.out / "atom.xml", *sorted((site.out / "tags").glob("*/atom.xml"))]
    assert len(feeds) > 5
    newest, mixed = {}, 0
    for path in feeds:
        root = ET.fromstring(path.read_bytes())
        entries = [e.find(f"{atom}updated").text for e in root.iter(f"{atom}entry")]
        assert entries, path
        newest[path] = max(entries)
        mixed += len(set(entries)) > 1  # a feed whose entries differ in date: the oldest would not do
        assert root.find(f"{atom}updated").text == newest[path], path
    assert mixed >= 2
    urls = ET.fromstring((site.out / "sitemap.xml").read_bytes())
    sm = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    home = next(u for u in urls.iter(f"{sm}url") if u.find(f"{sm}loc").text == BASE)
    assert home.find(f"{sm}lastmod").text == newest[site.out / "atom.xml"][:10]


def test_articles_link_their_tags(site):
    for path in (CONTENT / "articles").glob("*.md"):
        front = _front(path)
        soup = site.html(front["slug"])
        links = soup.select("p.tags a")
        assert [a.get_text() for a in links] == list(front.get("tags") or ())
        for a in links:
            assert (site.out / front["slug"]).joinpath(a["href"]).resolve().is_file()


def _tagged(tmp_path, tags: str):
    from conftest import TEMPLATES, make_content, replace, run_cli

    old = "tags: [fine-tuning, dgx-spark, qlora, llama, gpu-cost]"
    content = make_content(tmp_path, {"articles/dgx-spark-70b-qlora-cost.md": replace(old, f"tags: {tags}")})
    out = tmp_path / "site"
    return run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES)), out


def test_tags_that_would_share_a_page_or_have_none_are_errors(tmp_path):
    """'C++' and 'C#' both make tags/c/, and '🚀' made a page named "section": each is a problem with its
    file and line, and nothing is written."""
    result, out = _tagged(tmp_path, '[C++, C#, "🚀"]')
    assert result.exit_code == 1 and not out.exists(), result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    at = "articles/dgx-spark-70b-qlora-cost.md:7: tags:"
    assert any(at in line and "'C#' and 'C++' would share one page (tags/c/)" in line for line in lines), lines
    assert any(at in line and "'🚀' has no letter or digit to name its page" in line for line in lines), lines


def test_tags_written_alike_share_a_page_and_accents_are_kept_as_letters(tmp_path):
    result, out = _tagged(tmp_path, "[GPU Cost, gpu-cost, gpu_cost, über]")
    assert result.exit_code == 0, result.output
    page = BeautifulSoup((out / "dgx-spark-70b-qlora-cost" / "index.html").read_text(), "html.parser")
    links = {a.text: a["href"] for a in page.select("a[href*='tags/']") if a.text != "Tags"}
    assert links == {
        "GPU Cost": "../tags/gpu-cost/index.html",
        "gpu-cost": "../tags/gpu-cost/index.html",
        "gpu_cost": "../tags/gpu-cost/index.html",
        "über": "../tags/uber/index.html",
    }, links
    assert (out / "tags" / "uber" / "index.html").is_file()
