"""A page family's figures parts (figures/<listing>-<n>.json): its pages' entries in site/figures.json and its
listing's, FIGURES_PART_PAGES pages to a part in slug order, so the site's figures.json stays small at any
size and a price refresh rewrites only the parts that hold a changed page.

With a pool of workers and a Publisher, the parts that hold no listing's entry and did not stay as they
were are put together by the workers (`Part`, `stored_part`) while this process writes the listings'
parts: most of a part's cost is reading its pages' entries back, and the two can do it at once."""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass

from generator import pagecache, tasks
from generator.errors import BuildError
from generator.figures_json import figures_pieces
from generator.publish import Publisher
from generator.workers import Workers

FIGURES_PART_PAGES = 200  # family pages per figures/<listing>-<n>.json (about 1.2 MB)


@dataclass(frozen=True)
class Part:
    """A task for a worker: one figures part to put together and store in the new site, as `Parts` would
    (not a tuple: a tuple is a page's task, see tasks.chunk_results)."""

    rel: str
    pages: list[int]  # its pages' article indices, in slug order: a chunk of parts fits in the task pipe
    kept: list[bool]  # whether each page kept its files (its entry is in the published part)
    saved: list | None  # the part's [key, size] in the last page cache, if any


def stored_part(part: Part) -> tuple[str, int]:
    """In a worker: `part` put together and stored (Publisher.store); its outcome and its size."""
    sink, cache, articles = tasks.JOB["sink"], tasks.JOB["cache"], tasks.JOB["articles"]
    saved = {part.rel: part.saved} if part.saved is not None else {}
    entries = [(articles[i].slug, None, kept) for i, kept in zip(part.pages, part.kept, strict=True)]
    pieces, was = _pieces(part.rel, entries, sink, cache, saved)
    return sink.store(part.rel, pieces, was), sum(map(len, pieces))


class Parts:
    """A build's figures parts: planned from its pages; `send` hands the ones a worker can make to the pool,
    `finish` makes the rest and returns the parts' names and, for the page cache, each part's key and size.

    The parts that hold no listing's entry come first, while the listings' worker may still be at work;
    `listing_chunks()` then waits for it and gives each listing's entry and its digest (_record_listings).
    With a Publisher (`files`), a part whose entries are all as they were stands as published; a part
    that changed takes its kept pages' entries from the published part, or else from their own files.
    """

    def __init__(
        self, listings, pages: list[tasks.PageInfo], order: list[int], kept: Container[int], files, cache, saved_parts
    ):
        """`order`: each page's article index; `kept`: the article indices of the pages that kept their files."""
        self.files, self.cache, self.saved_parts, self.kept = files, cache, saved_parts, kept
        self.sink = files if isinstance(files, Publisher) else None
        self.listings = bool(listings)
        self.planned = _plan(listings, pages, order)  # (part, its entries), in order: see _plan
        self.part_keys: dict[str, list] = {}
        self._done: set[str] = set()  # parts kept, written or sent
        self._sent: list[int] = []  # the pool's chunks of parts
        self._sent_keys: list[tuple[str, str | None]] = []  # each sent part and its key, in order

    def send(self, pool: Workers) -> None:
        """Hand the parts that hold no listing's entry and changed to the pool's workers (with a Publisher)."""
        if self.sink is None:
            return
        sent: list[Part] = []
        for rel, held in self.planned:
            if any(data is not None for _, data, _, _ in held):  # a listing's, or (not in a folder) a page's
                continue
            self._done.add(rel)
            key = self._key(rel, held)
            if key is _KEPT:
                continue
            pages = [i for _, _, _, i in held]
            sent.append(Part(rel, pages, [i in self.kept for i in pages], self.saved_parts.get(rel)))
            self._sent_keys.append((rel, key))
        if sent:  # two chunks a worker at most: with the site files and checks, every chunk is queued at once
            self._sent = pool.submit(sent, -(-len(sent) // (2 * len(pool))))

    def finish(self, listing_chunks: Callable[[], dict], pool: Workers | None) -> tuple[list[str], dict[str, list]]:
        """Write the parts not sent (those that hold a listing's entry last, once `listing_chunks()` has
        them), record the ones the workers stored, and return every part's name and the page cache's keys."""
        later = []
        for rel, held in self.planned:
            if rel in self._done:
                continue
            if any(data is _LISTING for _, data, _, _ in held):
                later.append((rel, held))
            else:
                self._write(rel, held)
        chunks = listing_chunks() if self.listings else {}
        for rel, held in later:
            self._write(rel, [(e[0], *chunks[e[0]], None) if e[1] is _LISTING else e for e in held])
        done = [result for number in self._sent for result, _ in pool.results(number)]
        for (rel, key), (status, size) in zip(self._sent_keys, done, strict=True):
            self.sink.stored(rel, status)
            if key is not None:
                self.part_keys[rel] = [key, size]
        names = [rel for rel, _ in self.planned]
        return names, {rel: self.part_keys[rel] for rel in names if rel in self.part_keys}  # in the parts' order

    def _key(self, rel: str, held: list) -> str | None | object:
        """The part's key (None: some entry has no fingerprint), or _KEPT when the published part stands."""
        if self.sink is None or not all(what is not None for _, _, what, _ in held):
            return None
        key = pagecache.part_key([(slug, what) for slug, _, what, _ in held])
        if pagecache.part_kept(self.cache, rel, key, self.saved_parts) and rel in self.sink.have:
            self.files.keep(rel)  # every entry is as it was: the published part stands
            self.part_keys[rel] = self.saved_parts[rel]
            return _KEPT
        return key

    def _write(self, rel: str, held: list) -> None:
        """Write (or keep) one figures part of `held` entries here, and note its key and size."""
        key = self._key(rel, held)
        if key is _KEPT:
            return
        entries = [(slug, data, i in self.kept) for slug, data, _, i in held]
        pieces, was = _pieces(rel, entries, self.sink, self.cache, self.saved_parts)
        if self.sink is not None:
            self.sink.add(rel, pieces, was)
        else:
            self.files.add(rel, b"".join(pieces))
        if key is not None:
            self.part_keys[rel] = [key, sum(map(len, pieces))]


_LISTING = object()  # where a listing's entry goes in its family's parts, before its worker is done
_KEPT = object()  # Parts._key's answer for a part that stands as published


def _plan(listings, pages: list[tasks.PageInfo], order: list[int]) -> list[tuple[str, list]]:
    """Each family's parts and their entries, FIGURES_PART_PAGES to a part: (slug, figures, fingerprint,
    article index) for a page (`order`: each page's index), (slug, _LISTING, None, None) for its listing."""
    planned = []
    for listing in sorted(listings, key=lambda x: x.slug):
        family = listing.family.file
        mine = [
            (p.article.slug, p.figures, p.fingerprint, i)
            for i, p in zip(order, pages, strict=True)
            if p.article.file == family
        ]
        mine = sorted([*mine, (listing.slug, _LISTING, None, None)])  # slugs are unique: sorted by slug
        for n, start in enumerate(range(0, len(mine), FIGURES_PART_PAGES), 1):
            planned.append((f"figures/{listing.slug}-{n}.json", mine[start : start + FIGURES_PART_PAGES]))
    return planned


def _pieces(rel: str, entries: list, sink: Publisher | None, cache, saved_parts: dict) -> tuple[list, bytes | None]:
    """A part's pieces from its entries, (slug, figures or None, kept), and the published part's bytes when
    they were read (for its kept pages' entries): the new part is compared with those in memory."""
    published: dict[str, memoryview] | None = None  # kept pages' entries, from the part as published
    was = None
    part = []
    for slug, data, kept in entries:
        if data is None and kept:
            if published is None:
                was, published = pagecache.published_part(cache, rel, saved_parts)
            data = published.get(slug)
        part.append(data if data is not None else figures_from(sink, slug))
    return figures_pieces(part), was


def figures_from(sink: Publisher, slug: str) -> memoryview:
    """A page's entry in the site's figures, from the figures.json it has in the new site."""
    chunk = pagecache.chunk_of(sink.current(f"{slug}/figures.json"), view=True)
    if chunk is None:  # this build wrote or kept the file, and what it holds is not what costpress wrote
        raise BuildError(
            f"{slug}/figures.json is not what costpress wrote (changed during the build, or edited in place); "
            "run 'costpress build --force'"
        )
    return chunk
