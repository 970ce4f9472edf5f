"""`costpress new article`: a new article source from a short template."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from generator.errors import CostpressError
from generator.schema import SLUG_RE
from generator.theme import SCAFFOLDS


def scaffold(content: Path, slug: str, kind: str, day: dt.date) -> Path:
    """Write content/articles/<slug>.md for a kind; refuse bad slugs and existing files."""
    if not SLUG_RE.match(slug):
        raise CostpressError(f"slug: expected lower-case letters, digits and single '-', got {slug!r}")
    source = SCAFFOLDS / f"{kind}.md"
    if not source.is_file():
        raise CostpressError(f"{source}: no article template for kind {kind!r}")
    target = content / "articles" / f"{slug}.md"
    if target.exists():
        raise CostpressError(f"{target}: already exists")
    title = slug.replace("-", " ").capitalize()
    text = source.read_text().replace("__SLUG__", slug).replace("__DATE__", day.isoformat()).replace("__TITLE__", title)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return target
