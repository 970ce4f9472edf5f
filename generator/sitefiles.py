"""The site-wide files: the home page, the Atom feeds, the sitemap (an index past 50,000 addresses),
robots.txt, the 404 page, the about and search pages, and a page and a feed per tag."""

from __future__ import annotations

import datetime as dt
import urllib.parse
from typing import NamedTuple

from markupsafe import Markup

from generator import aliases, retired, search
from generator.escape import slugify
from generator.listing import listing_answer
from generator.render import Page, _entry, page_dates


def _entries(pages: list[Page], listings=()) -> list[dict]:
    """Index and feed entries: articles and family listings (family pages are reached from their listing)."""
    entries = [{**_entry(p.article, p.prices_checked), "answer": p.answer} for p in pages if p.article.kind != "setup"]
    entries += [{**_entry(x, x.prices_checked), "answer": listing_answer(x)} for x in listings]
    return sorted(entries, key=lambda e: (e["published"], e["article"].slug), reverse=True)


def render_index(renderer, pages: list[Page], listings=()) -> bytes:
    site = renderer.catalog.site
    page = {"root": "", "entries": _entries(pages, listings), "url": site.base_url}
    return renderer.html.get_template("index.html").render(page=page).encode("utf-8")


def _tags(entries: list[dict]) -> list[dict]:
    """One entry per tag of the articles and listings on the home page (family pages are reached
    through their listing), by name; each with its entries newest first and its latest date."""
    tags: dict[str, dict] = {}
    for e in entries:
        for name in e["article"].tags:
            slug = slugify(name)
            t = tags.setdefault(slug, {"slug": slug, "name": name, "entries": []})
            t["entries"].append(e)
    for t in tags.values():
        t["updated"] = max(e["modified"] for e in t["entries"])
        t["count"] = len(t["entries"])
    return [tags[s] for s in sorted(tags)]


def render_site_files(renderer, pages: list[Page], listings=()) -> dict[str, bytes]:
    """Sitemap, Atom feed, robots.txt, the 404 page, and a page and a feed per tag with their index."""
    site = renderer.catalog.site
    base = site.base_url if site.base_url.endswith("/") else site.base_url + "/"
    entries = _entries(pages, listings)
    every = [Address(f"{e['article'].slug}/", e["modified"]) for e in entries]
    # a family page's address and date, with no entry of its own (100,000 of them were 70 MB)
    every += [
        Address(f"{p.article.slug}/", page_dates(p.article, p.prices_checked)[1])
        for p in pages
        if p.article.kind == "setup"
    ]
    updated = max((e["modified"] for e in entries), default=None)
    xml = renderer.xml
    tags = _tags(entries)
    every += [Address("tags/", updated)] if tags else []
    every += [Address("about/", updated)] if renderer.catalog.about is not None else []
    every += [Address(f"tags/{t['slug']}/", t["updated"]) for t in tags]
    files = {  # always there: every page's navigation links to it
        "tags/index.html": renderer.html.get_template("tags.html")
        .render(page={"root": "../", "tags": tags, "url": f"{base}tags/"})
        .encode("utf-8")
    }
    for t in tags:
        url = f"{base}tags/{t['slug']}/"
        page = {"root": "../../", "tag": t, "url": url, "entries": t["entries"]}
        files[f"tags/{t['slug']}/index.html"] = renderer.html.get_template("tag.html").render(page=page).encode("utf-8")
        files[f"tags/{t['slug']}/atom.xml"] = (
            xml.get_template("atom.xml")
            .render(
                base=base,
                entries=t["entries"],
                updated=t["updated"].isoformat(),
                feed={"title": f"{site.title}: {t['name']}", "id": url, "page": url, "self": f"{url}atom.xml"},
            )
            .encode("utf-8")
        )
    if site.search:
        page = {"root": "../", "url": f"{base}search/"}
        files["search/index.html"] = renderer.html.get_template("search.html").render(page=page).encode("utf-8")
    # the earlier addresses of articles, family pages and listings (drafts this build leaves out are not among
    # the pages)
    files |= aliases.pages(renderer, (p.article for p in pages), listings, base)
    files |= retired.render(renderer, retired.found(renderer.catalog, pages, listings), base)
    if renderer.catalog.about is not None:
        about = {
            "root": "../",
            "url": f"{base}about/",
            "body": Markup(renderer.markdown.render(renderer.catalog.about)),
        }
        files["about/index.html"] = renderer.html.get_template("about.html").render(page=about).encode("utf-8")
    return (
        files
        | sitemaps(xml, base, every, updated)
        | {
            "atom.xml": xml.get_template("atom.xml")
            .render(
                base=base,
                entries=entries,
                updated=updated.isoformat() if updated else "1970-01-01",
                feed={"title": site.title, "id": base, "page": base, "self": f"{base}atom.xml"},
            )
            .encode("utf-8"),
            "robots.txt": renderer.md.get_template("robots.txt").render(base=base).encode("utf-8"),  # plain text
            # served at any address that does not exist: its links start at the site's own path
            "404.html": renderer.html.get_template("404.html")
            .render(page={"root": urllib.parse.urlsplit(base).path})
            .encode("utf-8"),
        }
    )


# What a build writes at the top of the site besides pages and folders (sitemaps/ when it is large)
TOP_FILES = frozenset({"index.html", "404.html", "atom.xml", "sitemap.xml", "sitemaps", "robots.txt", "figures.json"})


def reserved_folders(catalog) -> dict[str, str]:
    """The output folders a build writes besides the pages' own, by name: no page's slug may be one of them
    (its files would mix with theirs, or the same path be written twice)."""
    folders = {"assets": "stylesheet and scripts", "figures": "figures data", "tags": "tag pages"}
    if catalog.site.search:
        folders |= {"search": "search page", search.FOLDER: "search index"}
    if catalog.about is not None:
        folders["about"] = "about page"
    return folders


class Address(NamedTuple):
    """A sitemap's line: an address under the site's base and the date its page last changed."""

    url: str
    modified: dt.date | None


SITEMAP_LIMIT = 50_000  # URLs in one sitemap file, by the sitemap protocol


def sitemaps(xml, base: str, entries: list[Address], updated, limit: int = SITEMAP_LIMIT) -> dict[str, bytes]:
    """sitemap.xml; past `limit` addresses (the home page counts), a sitemap index over numbered sitemap files."""
    everything = [Address("", updated), *entries]
    if len(everything) <= limit:
        return {"sitemap.xml": xml.get_template("sitemap.xml").render(base=base, entries=everything).encode("utf-8")}
    files, parts = {}, []
    for n, start in enumerate(range(0, len(everything), limit), 1):
        chunk = everything[start : start + limit]
        name = f"sitemaps/sitemap-{n}.xml"
        files[name] = xml.get_template("sitemap.xml").render(base=base, entries=chunk).encode("utf-8")
        dated = [e.modified for e in chunk if e.modified is not None]
        parts.append(Address(name, max(dated) if dated else None))
    files["sitemap.xml"] = xml.get_template("sitemapindex.xml").render(base=base, entries=parts).encode("utf-8")
    return files
