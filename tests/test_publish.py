"""What publishers check: metadata, structured data, sitemap, feed, robots, 404."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import feedparser
import jinja2
import pytest
import yaml
from bs4 import BeautifulSoup
from conftest import CONTENT, A, B

CONTENT_PRICES = CONTENT / "prices"

SLUGS = [A, B, "70b-fine-tune-across-clouds", "mlperf-llama2-70b-lora-cost"]
BASE = "https://costpress.example/"


@pytest.mark.parametrize("slug", SLUGS)
def test_head_metadata(site, slug):
    soup = site.html(slug)
    title = soup.find("h1").get_text()
    assert soup.title.string == f"{title} | costpress"
    assert soup.find("meta", attrs={"name": "description"})["content"]
    assert soup.find("link", rel="canonical")["href"] == f"{BASE}{slug}/"
    for prop in ("og:title", "og:description", "og:url", "og:type"):
        assert soup.find("meta", property=prop)["content"]
    assert soup.find("meta", attrs={"name": "twitter:card"})["content"] == "summary"


@pytest.mark.parametrize("slug", SLUGS)
def test_json_ld(site, slug):
    soup = site.html(slug)
    docs = {d["@type"]: d for d in (json.loads(s.string) for s in soup.find_all("script", type="application/ld+json"))}
    art = docs["Article"]
    front = yaml.safe_load(site.md(slug).split("---\n")[1])
    assert art["headline"] == soup.find("h1").get_text() == front["title"]
    assert art["datePublished"] == front["date"].isoformat()
    assert art["dateModified"] == front["lastmod"].isoformat()
    assert art["author"]["name"] == "costpress editors" and art["publisher"]["name"] == "Nodus blog"
    visible_q = [s.get_text(" ", strip=True) for s in soup.select("section.faq summary")]
    visible_a = [" ".join(d.get_text().split()) for d in soup.select("section.faq .answer")]
    faq = docs["FAQPage"]["mainEntity"]
    assert [q["name"] for q in faq] == visible_q
    assert [" ".join(q["acceptedAnswer"]["text"].split()) for q in faq] == visible_a


def test_modified_date_follows_the_snapshot(site):
    docs = [json.loads(s.string) for s in site.html(B).find_all("script", type="application/ld+json")]
    art = next(d for d in docs if d["@type"] == "Article")
    assert art["dateModified"] == "2026-11-05"  # Nodus snapshot date, not the clock


def test_sitemap(site):
    root = ET.fromstring((site.out / "sitemap.xml").read_bytes())
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [u.find("s:loc", ns).text for u in root.findall("s:url", ns)]
    assert locs[0] == BASE and {f"{BASE}{s}/" for s in SLUGS} <= set(locs)
    for url in root.findall("s:url", ns):
        assert len(url.find("s:lastmod", ns).text) == 10


def test_sitemap_index_past_the_protocol_limit():
    """Past the limit (50,000 addresses; 3 here), sitemap.xml indexes numbered sitemaps that share the addresses."""
    import datetime as dt

    from generator import theme
    from generator.jinja_env import PageEnvironment
    from generator.sitefiles import SITEMAP_LIMIT, Address, sitemaps

    assert SITEMAP_LIMIT == 50_000  # the sitemap protocol's limit per file
    xml = PageEnvironment(loader=jinja2.FileSystemLoader(str(theme.DEFAULT)), autoescape=True)
    day = dt.date(2026, 11, 30)
    entries = [Address(f"p{i}/", day - dt.timedelta(days=i)) for i in range(7)]
    files = sitemaps(xml, BASE, entries, day, limit=3)
    assert sorted(files) == [
        "sitemap.xml",
        "sitemaps/sitemap-1.xml",
        "sitemaps/sitemap-2.xml",
        "sitemaps/sitemap-3.xml",
    ]
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    index = ET.fromstring(files["sitemap.xml"])
    assert index.tag == "{http://www.sitemaps.org/schemas/sitemap/0.9}sitemapindex"
    parts = [(s.find("s:loc", ns).text, s.find("s:lastmod", ns).text) for s in index.findall("s:sitemap", ns)]
    # each part's date is its newest page's: the home page and p0, p1 date from 11-30; p2..p4 from 11-28 on
    assert parts == [
        (f"{BASE}sitemaps/sitemap-1.xml", "2026-11-30"),
        (f"{BASE}sitemaps/sitemap-2.xml", "2026-11-28"),
        (f"{BASE}sitemaps/sitemap-3.xml", "2026-11-25"),
    ]
    locs = []
    for n in (1, 2, 3):
        urls = ET.fromstring(files[f"sitemaps/sitemap-{n}.xml"]).findall("s:url", ns)
        assert 0 < len(urls) <= 3
        locs += [u.find("s:loc", ns).text for u in urls]
    assert locs == [BASE] + [f"{BASE}p{i}/" for i in range(7)]
    single = sitemaps(xml, BASE, entries[:2], day, limit=3)  # at the limit: one plain sitemap
    assert list(single) == ["sitemap.xml"] and b"<urlset" in single["sitemap.xml"]


def test_feed_parses(site):
    feed = feedparser.parse((site.out / "atom.xml").read_bytes())
    assert not feed.bozo, feed.get("bozo_exception")
    assert [e.link for e in feed.entries] == [
        f"{BASE}memory-model-vs-measurements/",
        f"{BASE}mlperf-llama2-70b-lora-cost/",
        f"{BASE}fine-tune-open-models-every-setup/",
        f"{BASE}fine-tune-70b-every-setup/",
        f"{BASE}70b-fine-tune-across-clouds/",
        f"{BASE}{B}/",
        f"{BASE}{A}/",
    ]
    assert all(e.summary for e in feed.entries)
    # an entry's summary opens with the answer the home page shows for it, then the description
    home = {li.a["href"]: li for li in site.html(".").select("ul.post-list > li")}
    answered = 0
    for e in feed.entries:
        li = home[f"{e.link.removeprefix(BASE)}index.html"]
        description = " ".join(li.select("p")[-1].get_text().split())
        headline = li.select_one(".headline")
        said = f"{' '.join(headline.get_text().split())}. " if headline is not None else ""
        assert " ".join(e.summary.split()) == said + description
        answered += headline is not None
    assert answered == 6


def test_robots_and_404(site):
    robots = (site.out / "robots.txt").read_text()
    assert "User-agent: *" in robots and f"Sitemap: {BASE}sitemap.xml" in robots
    soup = site.html(".").__class__((site.out / "404.html").read_text(), "html.parser")
    assert soup.find("h1").get_text() == "Page not found"
    assert soup.find("meta", attrs={"name": "robots"})["content"] == "noindex"


@pytest.mark.parametrize("slug", SLUGS)
def test_every_table_has_a_csv_and_every_chart_an_svg(site, slug):
    soup = site.html(slug)
    for link in soup.select("p.download a"):
        assert (site.out / slug / link["href"]).is_file(), link["href"]
    for table in soup.find_all("table"):
        assert table.find("caption").get_text(strip=True)
    for div in soup.select("div.plot"):
        img = div.find("img")
        assert (site.out / slug / img["src"]).is_file()
        ET.fromstring((site.out / slug / img["src"]).read_bytes())  # well-formed SVG


def test_headings_are_in_order(site):
    for slug in SLUGS:
        levels = [int(h.name[1]) for h in site.html(slug).find_all(["h1", "h2", "h3", "h4"])]
        assert levels[0] == 1 and levels.count(1) == 1
        assert all(b - a <= 1 for a, b in zip(levels, levels[1:], strict=False))


def test_a_page_recorded_at_once_is_checked_and_counted_like_its_files_one_by_one():
    from generator.errors import BuildError
    from generator.write import Files

    one_by_one, at_once = Files(), Files()
    for files in (one_by_one, at_once):
        files.add("index.html", b"x")
        files.add("a/b/other.txt", b"y")
    for rel in ("a/b/p/index.html", "a/b/p/index.md", "a/b/p/figures.json"):
        one_by_one.add(rel, None, checked=True)
    at_once.add_page("a/b/p", ["a/b/p/index.html", "a/b/p/index.md", "a/b/p/figures.json"])
    assert at_once.folders() == one_by_one.folders() == {".": 1, "a/": 0, "a/b/": 1, "a/b/p/": 3}
    assert at_once.names() == one_by_one.names()
    with pytest.raises(BuildError, match="same output path"):
        at_once.add_page("a/b/p", ["a/b/p/new.csv", "a/b/p/index.md"])
    with pytest.raises(BuildError, match="also a folder"):
        at_once.add_page("a", ["a/x.html", "a/b"])


def test_pages_recorded_together_are_checked_and_counted_like_pages_one_by_one():
    """Files.add_pages (the pages a price refresh keeps) records what add_page would, page by page, and
    refuses what add_page refuses with the same message, in each way the shortcut must notice."""
    from generator.errors import BuildError
    from generator.write import Files

    def made():
        files = Files()
        files.add("index.html", b"x")
        files.add("a/b/other.txt", b"y")
        return files

    top = [("p", ["p/index.html", "p/index.md"]), ("q", []), ("r", ["r/figures.json"]), ("a", ["a/x"])]
    for pages in (top, [*top, ("a/b/s", ["a/b/s/x"])]):  # all at once; page by page (a nested folder)
        one_by_one, together = made(), made()
        for folder, rels in pages:
            one_by_one.add_page(folder, rels)
        together.add_pages(pages)
        assert together.folders() == one_by_one.folders()
        assert together.folders()["p/"] == 2 and together.folders()["a/"] == 1 and "q/" not in together.folders()
        assert together.paths() == one_by_one.paths()  # the same order, as the marker and the reports read them
    conflicts = {
        "the same path twice in the batch": ([("p", ["p/a"]), ("p", ["p/a"])], "same output path: p/a"),
        "a path already recorded": ([("p", ["p/a"]), ("a", ["a/b/other.txt"])], "same output path: a/b/other.txt"),
        "a path that is a folder": ([("p", ["p/a"]), ("a", ["a/b"])], "output path a/b is also a folder"),
        "a folder that is a file": ([("index.html", ["index.html/x"])], "lies under a file"),
    }
    for what, (batch, message) in conflicts.items():
        with pytest.raises(BuildError, match=message):
            made().add_pages(batch)
            pytest.fail(what)


def test_pages_held_by_name_are_recorded_like_pages_added_and_checked_when_a_path_meets_them():
    """Files.hold_pages (a price refresh's kept pages, named as the page cache names them) counts and lists
    what add_pages would; it takes only new top-level folders, and a path added later into a held folder,
    or under a held file, is refused as it would be had the held paths been made."""
    from generator.errors import BuildError
    from generator.write import Files, paths_in

    def made():
        files = Files()
        files.add("index.html", b"x")
        files.add("a/b/other.txt", b"y")
        return files

    pages = [("p", ("index.html", "index.md")), ("q", ()), ("r", ("figures.json",))]
    added, held = made(), made()
    added.add_pages(paths_in(pages))
    assert held.hold_pages(pages)
    assert len(held) == len(added) == 5
    assert held.folders() == added.folders()
    assert sorted(held.paths()) == sorted(added.paths())
    for refused in ([("a", ("x",))], [("s", ("x",)), ("s", ("y",))], [("s/t", ("x",))], [("index.html", ("x",))]):
        files = made()
        assert not files.hold_pages(refused), refused
        assert len(files) == 2 and "s/" not in files.folders()
    conflicts = {
        "a held path added again": (lambda f: f.add("p/index.md", b"z"), "same output path: p/index.md"),
        "a path under a held file": (lambda f: f.add("p/index.md/x", b"z"), "lies under a file"),
        "a page over a held page": (lambda f: f.add_pages([("r", ["r/figures.json"])]), "same output path"),
        "a held folder as a file": (lambda f: f.add("p", b"z"), "also a folder"),
    }
    for what, (add, message) in conflicts.items():
        files = made()
        assert files.hold_pages(pages)
        with pytest.raises(BuildError, match=message):
            add(files)
            pytest.fail(what)
    files = made()
    assert files.hold_pages(pages)
    files.add("p/new.txt", b"z")  # beside the held files: they are made, and the new one counts with them
    assert len(files) == 6 and files.folders()["p/"] == 3 and "p/index.html" in files


def test_a_file_given_in_pieces_is_written_whole_even_with_short_writes(tmp_path, monkeypatch):
    """figures.json reaches the Publisher as pieces; writev may write less than asked, and the rest follows."""
    import os

    from generator import guard, publish, write

    real = os.writev
    monkeypatch.setattr(write.os, "writev", lambda fd, views: real(fd, [bytes(b"".join(views))[:7]]))
    pieces = [b"{", b"", b"abc" * 5, b",\n", bytes(range(256)) * 3, b"}"]
    out = tmp_path / "site"
    out.mkdir()
    (out / "same.json").write_bytes(b"".join(pieces))
    (out / "other.json").write_bytes(b"x" * sum(map(len, pieces)))
    (out / guard.MARKER).write_bytes(guard.manifest(["same.json", "other.json"]))  # a site costpress wrote
    pub = publish.Publisher(out)
    for name in ("same.json", "other.json", "new.json"):
        pub.add(name, list(pieces))
    diff = pub.finish()
    assert (diff.unchanged, diff.changed, diff.added) == (1, ["other.json"], ["new.json"])
    for name in ("same.json", "other.json", "new.json"):
        assert (out / name).read_bytes() == b"".join(pieces)


def test_pages_kept_together_must_all_be_published(tmp_path):
    """Publisher.keep_pages keeps pages' files only when the folder has every one of them, and names a
    missing one; the kept files count as unchanged and stay as they are."""
    from generator import guard, publish
    from generator.errors import BuildError

    out = tmp_path / "site"
    for rel in ("p/index.html", "p/index.md", "q/index.html"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(rel)
    (out / guard.MARKER).write_bytes(guard.manifest(["p/index.html", "p/index.md", "q/index.html"]))
    pub = publish.Publisher(out)
    with pytest.raises(BuildError, match="a kept file is missing from the output folder: q/index.md"):
        pub.keep_pages([("p", ["index.html"]), ("q", ["index.html", "index.md"])])
    pub.abort()
    pub = publish.Publisher(out)
    with pytest.raises(BuildError, match="a kept file is missing from the output folder: q/index.md"):
        pub.keep("q/index.md")  # one file kept alone, as a listing's are
    pub.abort()
    pub = publish.Publisher(out)
    with pytest.raises(BuildError, match="refusing to write outside the output folder"):
        pub.keep_pages([("p", ["../q/index.html"])])
    pub.keep_pages([("p", ["index.html", "index.md"]), ("q", ["index.html"])])
    pub.keep(guard.MARKER)
    diff = pub.finish()
    assert (diff.unchanged, diff.changed, diff.added, diff.removed) == (4, [], [], [])
    assert (out / "p" / "index.md").read_text() == "p/index.md"


def test_no_page_is_published_before_its_prices(tmp_path):
    """A newer Nodus snapshot: the written article is marked updated on its date, and the family's
    pages that use Nodus are published on it; pages on other providers keep the family's date."""
    from conftest import Built, build, make_content

    old = (CONTENT_PRICES / "nodus" / "2026-11-05.yaml").read_text()
    content = make_content(
        tmp_path, {"prices/nodus/2026-11-30.yaml": old.replace("checked: 2026-11-05", "checked: 2026-11-30")}, True
    )
    result, out = build(tmp_path, content)
    assert result.exit_code == 0, result.output
    site = Built(out)

    def meta(slug):
        return " ".join(site.html(slug).select_one("p.meta").get_text().split())

    assert meta(B) == "Published 2026-11-05 · updated 2026-11-30 · prices checked 2026-11-30"
    assert "*Published 2026-11-05, updated 2026-11-30, prices checked 2026-11-30.*" in site.md(B)
    assert meta("llama-3-3-70b-full-on-nodus-b200x8").startswith("Published 2026-11-30 · prices checked 2026-11-30")
    assert meta("llama-3-3-70b-lora-on-lambda-a100-40gbx8").startswith("Published 2026-11-29 · prices")
    for slug in (B, "llama-3-3-70b-full-on-nodus-b200x8"):
        docs = [json.loads(s.string) for s in site.html(slug).find_all("script", type="application/ld+json")]
        art = next(d for d in docs if d["@type"] == "Article")
        assert art["datePublished"] <= art["dateModified"] == "2026-11-30"
    index = " ".join(BeautifulSoup((out / "index.html").read_text(), "html.parser").get_text().split())
    assert "Published 2026-11-05 · updated 2026-11-30" in index
    assert "updated 2026-11-29" not in index  # no "updated" that repeats the publication date


def test_a_file_is_compared_with_its_pieces_block_by_block(tmp_path, monkeypatch):
    """same_bytes reads a file a block at a time against the pieces, never joining them: equal, a piece
    longer or shorter, a difference in the last byte, and pieces larger than a block."""
    from generator import write

    monkeypatch.setattr(write, "COMPARE_BLOCK", 4)
    path = tmp_path / "f"
    path.write_bytes(b"0123456789abcdef")
    same = str(path)
    assert write.same_bytes(same, [b"0123", b"456789abcdef"])
    assert write.same_bytes(same, [b"", b"0123456789abcdef", b""])
    assert not write.same_bytes(same, [b"0123456789abcdeX"])
    assert not write.same_bytes(same, [b"0123456789abcde"])
    assert not write.same_bytes(same, [b"0123456789abcdef", b"!"])


def test_a_file_read_just_before_is_compared_in_memory(tmp_path, monkeypatch):
    """Publisher.add with the published bytes (a figures part the build has just read) compares the new
    pieces with them, without reading the file again: equal, a changed byte, one byte more, and views."""
    from generator import guard, publish, write

    out = tmp_path / "site"
    out.mkdir()
    old = b'{"articles": {\n "a": 1,\n "b": 2\n}}\n'
    for name in ("same.json", "changed.json", "longer.json"):
        (out / name).write_bytes(old)
    (out / guard.MARKER).write_bytes(guard.manifest(["same.json", "changed.json", "longer.json"]))
    pub = publish.Publisher(out)
    monkeypatch.setattr(write, "same_bytes", lambda *_: pytest.fail("the file was read again"))
    view = memoryview(old)
    pub.add("same.json", [view[:15], b' "a": 1,\n', view[24:]], old)
    pub.add("changed.json", [view[:15], b' "a": 3,\n', view[24:]], old)
    pub.add("longer.json", [old, b"\n"], old)
    diff = pub.finish()
    assert (diff.unchanged, sorted(diff.changed)) == (1, ["changed.json", "longer.json"])
    assert (out / "same.json").read_bytes() == old
    assert (out / "changed.json").read_bytes() == old.replace(b'"a": 1', b'"a": 3')
    assert (out / "longer.json").read_bytes() == old + b"\n"
    assert write.starts_with(old, old[:5]) and not write.starts_with(old, [old[:5], b"!"])


def test_files_are_read_whole(tmp_path):
    """write.read_file gives a file's bytes: empty, small, and larger than one read's block."""
    import os

    from generator import write

    for size in (0, 1, 6_000, (1 << 20) * 3 + 7):
        path = tmp_path / f"f{size}"
        data = os.urandom(size)
        path.write_bytes(data)
        assert write.read_file(str(path)) == data
    with pytest.raises(FileNotFoundError):
        write.read_file(str(tmp_path / "missing"))
