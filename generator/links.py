"""Links between pages: a relative link in an author's prose should lead to something the build makes.

A writer links to another article by hand (`[the setups](../fine-tune-70b-cost-by-setup/index.html)`),
and a typo in the slug, or a renamed article, would publish a link to
nothing. After the pages are made, every relative link in the prose
(articles' bodies and FAQ answers, families' bodies and FAQ answers, the
about page) is resolved from the folder of the page that holds it: the
first folder it reaches must be a page, an alias, a folder or file the
build writes, or a file of your own. One that is not is a warning with
the file and line (an error with --strict). Full URLs, links within the
page (`#...`), links from the site's root (`/...`) and links a template
makes (`{{ ... }}`) are not checked.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterable

from generator.load import display_path
from generator.sitefiles import TOP_FILES

INLINE_RE = re.compile(r"\]\(\s*<?([^()\s<>]+)")  # a link's or an image's target: ](target
REFERENCE_RE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s<>]+)", re.M)  # [label]: target
EXTERNAL_RE = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...
OWN = "\0page"  # the folder of the page that holds the link, whatever its slug (a family's pages)


# Code shows Markdown as text: fenced blocks and code spans are not links
CODE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[^\n]*$|\Z)|`[^`\n]+`", re.M | re.S)


def targets(text: str) -> Iterable[tuple[int, str]]:
    """(line within text, counted from 0; target) of each inline and reference link in Markdown text."""
    text = CODE_RE.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # (lines keep their numbers)
    for regex in (INLINE_RE, REFERENCE_RE):
        for m in regex.finditer(text):
            yield text.count("\n", 0, m.start(1)), m.group(1)


def leads_nowhere(target: str, own: str, addresses: set[str]) -> bool:
    """Whether a relative link from the folder `own` reaches no address of the site."""
    path = target.split("#", 1)[0].split("?", 1)[0]
    if not path or path.startswith("/") or EXTERNAL_RE.match(path) or "{" in target:
        return False
    resolved = posixpath.normpath(f"{own}/{path}")
    if resolved == "." or resolved == "..":  # the site's root is its home page
        return resolved == ".."
    first, _, rest = resolved.partition("/")
    if first == own:  # a file of the page's own (a table's CSV): a page's folder holds no folders
        return bool(rest) and (path.endswith("/") or "/" in rest or "." not in rest)
    return first == ".." or first not in addresses


def addresses(pages: Iterable, listings: Iterable, reserved: Iterable[str], static: Iterable[str]) -> set[str]:
    """The names at the top of the site a link may lead into: pages, listings, aliases' first folders, the
    build's own folders and files, and the first part of each file of your own."""
    found = {p.article.slug for p in pages} | TOP_FILES | set(reserved)
    for owner in (*(p.article for p in pages if p.article.aliases), *listings):
        found.add(owner.slug)
        found.update(alias.split("/", 1)[0] for alias in owner.aliases)
    found.update(rel.split("/", 1)[0] for rel in static)
    return found


def problems(sources: Iterable[tuple[str, int, str, str]], addresses: set[str], gone=dict) -> list[str]:
    """A warning for each link in `sources` that leads nowhere: each source is (file, the line its text
    starts on, the text, the slug of the folder its page is in, or OWN).

    gone() -> {slug: what retired.pages() says of it}: the addresses that now only say their offer is no
    longer listed (called once, and only when some link leads outside `addresses`)."""
    out, retired = [], None
    for file, first_line, text, own in sources:
        for line, target in targets(text):
            if not leads_nowhere(target, own, addresses):
                continue
            if retired is None:
                retired = gone()
            page = retired.get(posixpath.normpath(f"{own}/{target.split('#', 1)[0]}").split("/")[0])
            if page is not None:  # the address answers, but with a notice in place of the figures
                out.append(
                    f"{file}:{first_line + line}: the link {target!r} leads to a page that now only says "
                    f"{page['provider_name']} no longer lists {page['setup']} (not in its prices of "
                    f"{page['newest'].isoformat()}); link to ../{page['listing']['slug']}/index.html or to a "
                    "setup on offer"
                )
                continue
            out.append(
                f"{file}:{first_line + line}: the link {target!r} leads to no page or file of the site"
                f"{_hint(target, own, addresses)}; link to another page as ../<slug>/index.html"
            )
    return out


def _hint(target: str, own: str, addresses: set[str]) -> str:
    """' (did you mean ...?)' naming the address closest to the one the link reaches, when one is close."""
    folder = posixpath.normpath(f"{own}/{target.split('#', 1)[0]}").split("/")
    name = folder[1] if folder[0] == own and len(folder) > 1 else folder[0]
    close = difflib.get_close_matches(name, addresses, n=1, cutoff=0.85)
    return f" (did you mean ../{close[0]}/?)" if close and close[0] not in TOP_FILES else ""


def sources(catalog, listings: Iterable) -> Iterable[tuple[str, int, str, str]]:
    """The prose whose links are checked: (file, first line, text, the folder its page is in)."""
    for art in catalog.articles:
        yield art.file, art.body_line, art.body, art.slug
        yield from _faq(art.file, art.params_doc, art.faq, art.slug)
    for listing in listings:
        fam = listing.family
        yield fam.file, fam.body_line, fam.body, OWN
        yield from _faq(fam.file, fam.doc, fam.data.get("faq") or (), OWN)
    if catalog.about is not None:
        yield display_path(catalog.root / "about.md"), 1, catalog.about, "about"


def _faq(file: str, doc, faq, own: str) -> Iterable[tuple[str, int, str, str]]:
    for i, entry in enumerate(faq):
        yield file, (doc.line(("faq", i, "a")) if doc is not None else None) or 1, entry["a"], own
