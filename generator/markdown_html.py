"""Markdown to HTML for pages: markdown-it.rs with the rules costpress allows, and an id on every heading."""

from __future__ import annotations

import functools
import html as html_lib
import re

from markdown_it_pyrs import MarkdownIt

from generator.escape import slugify

# CommonMark with GFM tables and no raw HTML: what an author writes as HTML shows as text.
MARKDOWN_RULES = [
    "blockquote", "code", "fence", "heading", "hr", "lheading", "list", "paragraph", "reference",
    "autolink", "backticks", "emphasis", "entity", "escape", "image", "link", "newline", "table",
]  # fmt: skip
HEADING_RE = re.compile(r"<h([1-6])>(.*?)</h\1>", re.S)


class Markdown:
    """Markdown to HTML with markdown-it.rs (Rust), and an id on every heading.

    It replaced the pure-Python markdown-it-py, which gave the same HTML for all
    our pages but was the largest item (45% of page rendering) in the profile of
    a 10,000-page build; the Rust port is about 16 times faster on our prose.
    """

    def __init__(self) -> None:
        self._md = MarkdownIt("zero")
        self._md.enable_many(MARKDOWN_RULES)
        # a family's pages share whole paragraphs: render each distinct text once
        self._raw = functools.lru_cache(maxsize=4096)(self._md.render)

    def warm(self, sources: list[str]) -> None:
        """Convert `sources` now, one after another, for `render` to find them done.

        The converter runs about four times slower when it is called between
        the Python work of a page (its code and data are out of the CPU's
        caches by then) than in a row, so workers convert a chunk's pages
        together (tasks.chunk_results).
        """
        raw = self._raw
        for source in sources:
            raw(source)

    def render(self, source: str, env: dict | None = None) -> str:
        """HTML for `source`; heading ids stay unique across calls that share `env`."""
        env = env if env is not None else {}
        used = env.setdefault("ids", set())
        # per heading text, the suffix to try next: the ids in use only grow, so every one below it is taken
        # (trying from 2 each time made 50,000 headings of one text take minutes)
        following = env.setdefault("following", {})

        def heading(m: re.Match) -> str:
            base = _heading_slug(m.group(2))
            anchor = base
            if anchor in used:
                n = following.get(base, 2)
                anchor = f"{base}-{n}"
                while anchor in used:
                    n += 1
                    anchor = f"{base}-{n}"
                following[base] = n + 1
            used.add(anchor)
            return f'<h{m.group(1)} id="{anchor}">{m.group(2)}</h{m.group(1)}>'

        html = self._raw(source)
        return HEADING_RE.sub(heading, html) if "<h" in html else html


# Blockquotes and list items opened on one line ("> > > x", "- - - x", "1. 1. x"): the converter nests each
# inside the last by recursing, and past some 10,000-30,000 of them on one line it overflows its stack and the
# process dies (a segmentation fault: no message, and a build's staging folder left behind). It rendered 10,000
# of each kind in a process's main thread and in a thread; a line opening more than a fifth of that is refused
# before it reaches the converter. No prose needs more than a few, and a text no longer than this needs no look.
MAX_NESTING = 2000
_OPENERS = re.compile(r"[ \t]*(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t]))")
# a line that opens two or more: most prose has none, and a search for this (from each line feed) is quick
_TWO_OPENERS = re.compile(r"\n(?:[ \t]*(?:>|[-+*][ \t]|\d{1,9}[.)][ \t])){2}")


def too_deep(text: str) -> int | None:
    """The number (from 1) of the first line of `text` that opens more than MAX_NESTING blockquotes or list
    items, else None. Only a line longer than MAX_NESTING characters can: the others are not looked at."""
    if len(text) <= MAX_NESTING or _TWO_OPENERS.search("\n" + text) is None:
        return None
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_NESTING:
            count, at = 0, 0
            while (m := _OPENERS.match(line, at)) is not None:
                count, at = count + 1, m.end()
                if count > MAX_NESTING:
                    return number
    return None


@functools.lru_cache(maxsize=4096)  # a family's pages share their headings
def _heading_slug(inner_html: str) -> str:
    return slugify(html_lib.unescape(re.sub(r"<[^>]+>", "", inner_html)))
