"""A page family's figures parts (figures/<listing>-<n>.json): its pages' entries in site/figures.json and its
listing's, FIGURES_PART_PAGES pages to a part in slug order, so the site's figures.json stays small at any
size and a price refresh rewrites only the parts that hold a changed page."""

from __future__ import annotations

from collections.abc import Callable

from generator import pagecache, tasks
from generator.errors import BuildError
from generator.figures_json import figures_pieces
from generator.publish import Publisher

FIGURES_PART_PAGES = 200  # family pages per figures/<listing>-<n>.json (about 1.2 MB)


def write(
    listings,
    pages: list[tasks.PageInfo],
    kept_slugs: set[str],
    listing_chunks: Callable[[], dict],
    files,
    cache,
    saved_parts: dict,
) -> tuple[list[str], dict[str, list]]:
    """Write each page family's figures parts (figures/<listing>-<n>.json): its pages' entries and its
    listing's, FIGURES_PART_PAGES to a part in slug order, so the site's figures.json stays small at any
    size (a 100,000-row listing's entry alone is 45 MB). Returns the parts' names and, for the page cache,
    each part's key and size.

    The parts that hold no listing's entry come first, while the listings' workers may still be at work;
    `listing_chunks()` then waits for them and gives each listing's entry and its digest (_record_listings).
    With a Publisher (`files`), a part whose entries are all as they were stands as published; a part
    that changed takes its kept pages' entries from the published part, or else from their own files.
    """
    planned = []  # (part, its entries as (slug, figures, fingerprint)), in order
    for listing in sorted(listings, key=lambda x: x.slug):
        family = listing.family.file
        mine = [(p.article.slug, p.figures, p.fingerprint) for p in pages if p.article.file == family]
        mine = sorted([*mine, (listing.slug, _LISTING, None)])  # slugs are unique: sorted by slug
        for n, start in enumerate(range(0, len(mine), FIGURES_PART_PAGES), 1):
            planned.append((f"figures/{listing.slug}-{n}.json", mine[start : start + FIGURES_PART_PAGES]))
    part_keys: dict[str, list] = {}
    later = []
    for rel, held in planned:
        if any(data is _LISTING for _, data, _ in held):
            later.append((rel, held))
        else:
            _write_part(rel, held, kept_slugs, files, cache, saved_parts, part_keys)
    chunks = listing_chunks() if listings else {}
    for rel, held in later:
        held = [(slug, *chunks[slug]) if data is _LISTING else (slug, data, what) for slug, data, what in held]
        _write_part(rel, held, kept_slugs, files, cache, saved_parts, part_keys)
    return [rel for rel, _ in planned], part_keys


_LISTING = object()  # where a listing's entry goes in its family's parts, before its worker is done


def _write_part(rel: str, held: list, kept_slugs: set[str], files, cache, saved_parts: dict, part_keys: dict) -> None:
    """Write (or keep) one figures part of `held` entries, and note its key and size in `part_keys`."""
    sink = files if isinstance(files, Publisher) else None
    key = None
    if sink is not None and all(what is not None for _, _, what in held):
        key = pagecache.part_key([(slug, what) for slug, _, what in held])
        if pagecache.part_kept(cache, rel, key, saved_parts) and rel in sink.have:
            files.keep(rel)  # every entry is as it was: the published part stands
            part_keys[rel] = saved_parts[rel]
            return
    published: dict[str, memoryview] | None = None  # kept pages' entries, from the part as published
    was = None  # the published part's bytes, once read for them: the new part is compared with these
    part = []
    for slug, data, _ in held:
        if data is None and slug in kept_slugs:
            if published is None:
                was, published = pagecache.published_part(cache, rel, saved_parts)
            data = published.get(slug)
        part.append(data if data is not None else figures_from(sink, slug))
    pieces = figures_pieces(part)
    if sink is not None:
        sink.add(rel, pieces, was)
    else:
        files.add(rel, b"".join(pieces))
    if key is not None:
        part_keys[rel] = [key, sum(map(len, pieces))]


def figures_from(sink: Publisher, slug: str) -> memoryview:
    """A page's entry in the site's figures, from the figures.json it has in the new site."""
    chunk = pagecache.chunk_of(sink.current(f"{slug}/figures.json"), view=True)
    if chunk is None:  # this build wrote or kept the file, and what it holds is not what costpress wrote
        raise BuildError(
            f"{slug}/figures.json is not what costpress wrote (changed during the build, or edited in place); "
            "run 'costpress build --force'"
        )
    return chunk
