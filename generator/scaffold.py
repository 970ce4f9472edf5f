"""`costpress new article`: a new article source from a short template."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from generator.errors import CostpressError
from generator.schema import NAME_MAX, is_name
from generator.theme import SCAFFOLDS


def scaffold(content: Path, slug: str, kind: str, day: dt.date) -> Path:
    """Write content/articles/<slug>.md for a kind; refuse bad slugs and existing files."""
    if not is_name(slug, "slug"):
        shown = slug if len(slug) <= NAME_MAX else f"{slug[:NAME_MAX]}... ({len(slug)} characters)"
        raise CostpressError(
            f"slug: expected at most {NAME_MAX} lower-case letters, digits and single '-', got {shown!r}"
        )
    if not (content / "site.yaml").is_file():  # a typo in --content, or run outside the site: made a new tree
        raise CostpressError(
            f"{content}: not a content folder (no site.yaml in it); pass the site's --content, or make a new site"
            " with 'costpress init DIR'"
        )
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
