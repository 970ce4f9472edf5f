"""Addresses that stay: each of a page's earlier addresses (`aliases:`) gets a small page that sends readers on.

A writer who renames an article, or a family's listing, changes its
address, and every link to the old one (a post, a search result, a
bookmark) would land on the not-found page. `aliases: [old-name]` in the
front matter (`listing.aliases` in a family) keeps the old address: the
build writes `old-name/index.html`, a page that names the new address as
canonical, asks search engines not to index it, and moves the browser on
(a link for one that does not). A static host needs nothing more.

An alias is a path of slugs (`2025/old-name` too). It may not be a page's
address, go into a page's folder or one the build writes for itself, or
be claimed twice: each is a one-line problem naming the file and line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

TEMPLATE = "redirect.html"


def problems(articles: Iterable, listings: Iterable, owners: dict[str, tuple], reserved: dict[str, str]) -> list[str]:
    """A problem, with its file and line, for each alias that cannot be published.

    `articles`: the written articles (drafts this build leaves out are not
    among them); `owners`: every page's slug (articles, families' pages
    and listings) to a tuple whose first item is its file, as
    build.slug_clashes collects them; `reserved`: the folders the build
    writes for itself, with what each holds.
    """
    out: list[str] = []
    claimed: dict[str, str] = {}  # an alias -> where it was first claimed
    for slug, _title, file, doc, key, aliases in _owners(articles, listings):
        for i, alias in enumerate(aliases):
            line = doc.line((*key, i))
            at = f"{file}:{line}" if line else file
            first = alias.partition("/")[0]
            if alias == slug:
                why = "is this page's own address; list only addresses it had before"
            elif first in reserved:
                where = "names" if alias == first else "is inside"
                why = f"{where} {first}/, the folder of the site's {reserved[first]}; choose another"
            elif alias in owners:
                why = (
                    f"is the address of a page made from {owners[alias][0]}; "
                    "an address cannot both show a page and send readers on"
                )
            elif first in owners:
                why = f"is inside {first}/, the folder of a page made from {owners[first][0]}; choose another"
            elif alias in claimed:
                why = f"is already an alias at {claimed[alias]}; list it once"
            else:
                claimed[alias] = at
                continue
            out.append(f"{at}: aliases: {alias!r} {why}")
    return out


def _owners(articles: Iterable, listings: Iterable) -> Iterator[tuple]:
    """(slug, title, file, its front matter, where the aliases are in it, aliases) for each article and
    listing that has aliases."""
    for a in articles:
        if a.aliases:
            yield a.slug, a.title, a.file, a.params_doc, ("aliases",), a.aliases
    for x in listings:
        if x.aliases:
            yield x.slug, x.title, x.family.file, x.family.doc, ("listing", "aliases"), x.aliases


def pages(renderer, articles: Iterable, listings: Iterable, base: str) -> dict[str, bytes]:
    """The page at each alias of the articles and listings, by output path; `base` ends in '/'."""
    template = renderer.html.get_template(TEMPLATE)
    out = {}
    for slug, title, _file, _doc, _key, aliases in _owners(articles, listings):
        for alias in aliases:
            root = "../" * (alias.count("/") + 1)
            page = {"root": root, "url": f"{base}{slug}/", "target": f"{root}{slug}/index.html", "title": title}
            out[f"{alias}/index.html"] = template.render(page=page).encode("utf-8")
    return out
