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
        used = (env if env is not None else {}).setdefault("ids", set())

        def heading(m: re.Match) -> str:
            base = _heading_slug(m.group(2))
            anchor, n = base, 2
            while anchor in used:
                anchor, n = f"{base}-{n}", n + 1
            used.add(anchor)
            return f'<h{m.group(1)} id="{anchor}">{m.group(2)}</h{m.group(1)}>'

        html = self._raw(source)
        return HEADING_RE.sub(heading, html) if "<h" in html else html


@functools.lru_cache(maxsize=4096)  # a family's pages share their headings
def _heading_slug(inner_html: str) -> str:
    return slugify(html_lib.unescape(re.sub(r"<[^>]+>", "", inner_html)))
