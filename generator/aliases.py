"""Addresses that stay: each of a page's earlier addresses (`aliases:`) gets a small page that sends readers on.

A writer who renames an article, or a family's listing, changes its
address, and every link to the old one (a post, a search result, a
bookmark) would land on the not-found page. `aliases: [old-name]` in the
front matter (`listing.aliases` in a family) keeps the old address: the
build writes `old-name/index.html`, a page that names the new address as
canonical, asks search engines not to index it, and moves the browser on
(a link for one that does not). A static host needs nothing more. A
family whose `page.slug` pattern changed lists the patterns its pages had
before under `page.aliases`: each gives every page of the family one
alias (family_pages fills them in).

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
    among them) and the family pages (those without aliases are passed
    over); `owners`: every
    page's slug (articles, families' pages and listings) to a tuple whose
    first item is its file, as build.slug_clashes collects them;
    `reserved`: the folders the build writes for itself, with what each
    holds. A family's pattern (`page.aliases`) is told once, with the first
    page it fails for and how many more it fails for.
    """
    out: list[str | list] = []  # a problem, or a failing pattern's [first problem, how many more]
    claimed: dict[str, tuple] = {}  # an alias -> where it was first claimed, and by which pattern (or None)
    patterns: dict[tuple, list] = {}  # a failing pattern (where, which) -> its entry in out
    for slug, _title, file, doc, key, aliases in _owners(articles, listings):
        pattern = key == PATTERN
        for i, alias in enumerate(aliases):
            line = doc.line((*key, i))
            at = f"{file}:{line}" if line else file
            first = alias.partition("/")[0]
            if not alias:  # (a pattern's: an article's or listing's is an address)
                why = "is empty; expected a pattern that leaves letters or digits"
            elif alias == slug:
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
                why = (
                    "is given to more than one page; use placeholders that tell its pages apart"
                    if pattern and claimed[alias] == (at, i)
                    else f"is already an alias at {claimed[alias][0]}; list it once"
                )
            else:
                claimed[alias] = (at, i if pattern else None)
                continue
            if not pattern:
                out.append(f"{at}: aliases: {alias!r} {why}")
            elif (at, i) in patterns:
                patterns[at, i][1] += 1
            else:
                told = f"{at}: page.aliases: {doc.data['page']['aliases'][i]!r} gives the page {slug!r} the address"
                patterns[at, i] = [f"{told} {alias!r}, which {why}", 0]
                out.append(patterns[at, i])
    return [x if isinstance(x, str) else f"{x[0]} ({x[1]} more pages alike)" if x[1] else x[0] for x in out]


PATTERN = ("page", "aliases")  # where a family's earlier slug patterns are


def _owners(articles: Iterable, listings: Iterable) -> Iterator[tuple]:
    """(slug, title, file, its front matter, where the aliases are in it, aliases) for each article and
    listing that has aliases (a family's page has them from its family's earlier patterns; a written
    article, of any kind, from its own front matter)."""
    for a in articles:
        if a.aliases:
            yield a.slug, a.title, a.file, a.params_doc, ("aliases",) if a.page_inputs is None else PATTERN, a.aliases
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
