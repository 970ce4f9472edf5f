"""What a build's worker processes do, and the main process too when it builds alone.

A chunk of pages (each kept as the last build wrote it, or rendered in two
passes: contexts and prose, the chunk's Markdown in one run, then the rest),
a family's listing, and the site files (index, feed, sitemap). What they
need is in JOB, set before the workers fork, so each inherits the loaded
catalog and articles; a page comes back as a PageInfo's packed fields.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from generator import figures_parts, listingcache, pagecache, svg
from generator.articles import build_context
from generator.claims import claims_of
from generator.errors import BuildError
from generator.escape import table_csv
from generator.figures_json import NO_TEXTS, figures_doc, figures_entry, listing_chunk
from generator.fingerprints import digest_of
from generator.kinds.common import Context
from generator.records import Article
from generator.render import TEMPLATE_ERRORS, Prose, RenderProblem, template_problem, theme_budget
from generator.workers import Workers


@dataclass(slots=True)  # one per page, held to the end of the build: no __dict__ each
class PageInfo:
    """What the site-wide files need from one rendered page, once its bytes are out."""

    article: Article
    prices_checked: list
    figures: bytes | None  # this page's entry in site/figures.json, UTF-8 (None: read from its own file)
    has_charts: bool
    files: list  # (path, bytes), or (path, size, status) when a Publisher already wrote them
    providers: list[str]
    unsourced: list[str]  # inputs shown without a source
    fingerprint: str | None = None  # for the page cache (family pages, when building into a folder)
    cache: tuple | None = None  # its files' names within its folder and their sizes, for the page cache (entry_files)
    folder: tuple[int, int] | None = None  # its staged folder's inode and mtime, when the worker wrote every file
    answer: dict | None = None  # the figure a written article opens with, for the home page

    def packed(self) -> tuple:
        """Everything but the article, as a tuple: what a worker sends back (a tuple pickles in half the time)."""
        return (
            self.prices_checked,
            self.figures,
            self.has_charts,
            self.files,
            self.providers,
            self.unsourced,
            self.fingerprint,
            self.cache,
            self.folder,
            self.answer,
        )

    @classmethod
    def unpacked(cls, article: Article, fields: tuple, shared: dict[tuple, list]) -> PageInfo:
        """A worker's packed fields as a PageInfo. A family's pages repeat a few lists of dates, providers
        and unsourced inputs, each out of the pipe as a copy of its own: they take one of each from
        `shared` (100,000 pages held 30 MB of copies)."""
        info = cls(article, *fields)
        for name in ("prices_checked", "providers", "unsourced"):
            value = getattr(info, name)
            setattr(info, name, _one_of(shared, tuple(value), lambda value=value: value))
        return info


def _one_of(shared: dict[tuple, list], key: tuple, make: Callable[[], list]) -> list:
    """The list `shared` holds for `key`, made (and kept) the first time."""
    found = shared.get(key)
    if found is None:
        found = shared[key] = make()
    return found


# Set before the worker processes fork, so each worker inherits the loaded catalog.
JOB: dict = {}


@dataclass
class SiteFiles:
    """A task: the index, feed, sitemap and 404 page, from each published page's article index and price dates."""

    pages: list[tuple[int, int]]  # (article index, the number in `dates` of the dates its prices were checked)
    dates: list[list[int]]  # each list of dates pages have, as ordinals, once (a family's pages share a few)
    answers: dict[int, dict]  # article index -> the answer it opens with (written articles)


def site_files(task: SiteFiles) -> dict[str, bytes]:
    """What `render_index` and `render_site_files` make, in a worker that already holds every article.

    A worker renders them while the main process writes figures.json and
    checks for warnings: the end of a large build runs on both cores.
    """
    arts, renderer, listings = JOB["articles"], JOB["renderer"], JOB["listings"]
    for listing in listings:  # every listing is written by now: their rows (most of a worker's memory) can go
        listing.rows = []
    dates = [[*map(dt.date.fromordinal, days)] for days in task.dates]
    answers = task.answers
    pages = [_Listed(arts[i], dates[n], answers.get(i)) for i, n in task.pages]
    try:
        with theme_budget("the home page and feeds", len(pages)):
            return {"index.html": renderer.render_index(pages, listings), **renderer.render_site_files(pages, listings)}
    except TEMPLATE_ERRORS as exc:  # a site's own template, or the theme
        raise BuildError(str(template_problem(exc))) from None


class _Listed(NamedTuple):
    """What the index, feed and sitemap read of a page."""

    article: Article
    prices_checked: list
    answer: dict | None = None


@dataclass(frozen=True)
class ContentChecks:
    """A task: the warnings that depend only on the content (JOB["content_checks"]), made by the listings'
    process once its listings are done, or without one by a worker that is done with its pages while the
    main process writes the listings' figures parts."""


def describe_chunk(chunk: list) -> str:
    """What a chunk of tasks renders, for the error when its worker dies (workers.Workers): its pages by the
    file they come from (the first and last slug of each file's, in the chunk's order), and its other work."""
    articles, listings = JOB.get("articles") or [], JOB.get("listings") or []
    pages: dict[str, list[str]] = {}
    other = []
    for task in chunk:
        if isinstance(task, tuple) and isinstance(task[0], int) and 0 <= task[0] < len(articles):
            art = articles[task[0]]
            pages.setdefault(art.file, []).append(art.slug)
        elif isinstance(task, int) and 0 < -task <= len(listings):
            listing = listings[-1 - task]
            other.append(f"the listing {listing.slug} ({listing.family.file})")
        elif isinstance(task, SiteFiles):
            other.append("the home page, feeds and sitemap")
        elif isinstance(task, ContentChecks):
            other.append("the content checks")
        elif isinstance(task, figures_parts.Part):
            other.append(f"the figures part {task.rel}")
    shown = [
        f"{file}: page {slugs[0]}" if len(slugs) == 1 else f"{file}: {len(slugs)} pages, {slugs[0]} to {slugs[-1]}"
        for file, slugs in pages.items()
    ]
    return "; ".join(shown + other) or "work of its own"


def other_task(task: int | SiteFiles | ContentChecks | figures_parts.Part) -> tuple:
    """One unit of work that is not a page: listing `-1 - task`, the site files, the content's warnings or
    a figures part (pages go by `chunk_results`)."""
    if isinstance(task, figures_parts.Part):
        return figures_parts.stored_part(task), []
    if isinstance(task, SiteFiles):
        return site_files(task), []
    if isinstance(task, ContentChecks):
        return JOB["content_checks"](), []
    number = -1 - task
    listing, sink = JOB["listings"][number], JOB.get("sink")
    if sink is None:
        return _listing_in_memory(listing), []
    context = digest_of(JOB["code"], repr(JOB["catalog"].site))  # what a row's text depends on
    texts = listingcache.RowTexts(
        JOB.get("cache"), number, listing.family.file, context, listing.row_keys, JOB.get("reuse", True)
    )
    try:
        out = _listing_written(listing, sink, texts)
    except BaseException:
        texts.discard()
        raise
    texts.close()
    return out, []


def _render_listing(listing, texts) -> tuple:
    try:
        with theme_budget("a listing", len(listing.rows)):
            return JOB["renderer"].render_listing(listing, texts)
    except TEMPLATE_ERRORS as exc:
        raise BuildError(str(template_problem(exc))) from None


def _listing_in_memory(listing) -> ListingOut:
    html, md, table, extra = _render_listing(listing, NO_TEXTS)
    chunk = b"".join(listing_chunk(listing))
    slug = listing.slug
    files = [
        (f"{slug}/index.html", html),
        (f"{slug}/index.md", md),
        (f"{slug}/{table.id}.csv", table_csv(table, NO_TEXTS)),
        (f"{slug}/figures.json", figures_doc([chunk])),
        *((rel, b"".join(pieces)) for rel, pieces in extra),
    ]
    return ListingOut(files, None, chunk, hashlib.sha256(chunk).hexdigest())


def _listing_written(listing, sink, texts) -> ListingOut:
    """A listing's files written as a page's are, each as soon as it is made: the main process gets their
    outcomes and reads the listing's figures back from its figures.json for the family's part. A
    100,000-page family's listing files come to 130 MB, and held together with what made them they
    doubled its worker's memory."""
    html, md, table, extra = _render_listing(listing, texts)
    texts.release("html")
    slug = listing.slug
    # the rows of long tables come as pieces
    first, _ = sink.store_page(slug, [(f"{slug}/index.html", html), (f"{slug}/index.md", md), *extra])
    del html, md, extra
    csv, _ = sink.store_page(slug, [(f"{slug}/{table.id}.csv", table_csv(table, texts))])
    del table
    texts.release("csv")
    pieces = listing_chunk(listing, texts)
    digest = hashlib.sha256()
    for piece in pieces:
        digest.update(piece)
    files = [pagecache.FIGURES_HEAD, *pieces, pagecache.FIGURES_TAIL]
    figures, folder = sink.store_page(slug, [(f"{slug}/figures.json", files)])
    outcomes = [first[0], *csv, *figures, *first[1:]]
    listing.rows = []  # no other task of this worker reads them
    # the folder's stat after its last file, valid when every file was written
    folder = folder if all(status != "unchanged" for _, _, status in outcomes) else None
    return ListingOut(outcomes, folder, None, digest.hexdigest())


class ListingOut(NamedTuple):
    """A rendered listing: its files, or with a Publisher their outcomes (and its folder's stat, as for a page);
    its entry in the site's figures (None: in its figures.json, written) and that entry's digest."""

    files: list
    folder: tuple[int, int] | None
    chunk: bytes | None
    digest: str


class Kept(NamedTuple):
    """A worker's answer for a page it kept: its figures entry, when the main process needs it."""

    figures: bytes | None


_UNKNOWN = object()  # a keeper's fingerprint when the caller has none: it makes it
KEPT_IN_FOLDER = Kept(None)  # a kept family page whose figures the main process reads from its folder


def page_keeper() -> Callable[..., Kept | None]:
    """`keep(i, entry[, fp])`: Kept(...) when article i can keep the files the last build wrote for it, else
    None; `fp` is its fingerprint when the caller has it.

    Workers answer this for the pages they are sent, beside the listing
    (checking 10,000 pages' files took most of a price change's time in the
    main process alone); in a folder the last build left untouched the main
    process answers it for every page itself (in_order). The build's state is
    looked up once per keeper, not for each of 10,000 pages.
    """
    fingerprints, articles, cache = JOB.get("fingerprints"), JOB.get("articles"), JOB.get("cache")
    untouched, verified, known = JOB.get("untouched", False), JOB.get("verified", False), JOB.get("known")
    in_folder, family_files = JOB.get("sink") is not None, JOB.get("family_files", ())
    reusable, figures_of = pagecache.reusable, pagecache.figures_of

    def keep(i: int, entry: dict | None, fp: str | None | object = _UNKNOWN) -> Kept | None:
        if entry is None or fingerprints is None:
            return None
        art = articles[i]
        if fp is _UNKNOWN:
            fp = fingerprints.of(art)
        if fp and reusable(entry, fp, cache, art.slug, untouched, verified):
            # a family page written to a folder leaves its figures there: they are read back for the parts
            if in_folder and art.file in family_files:
                if untouched or figures_of(cache, art.slug) is not None:  # (read: still whole)
                    return KEPT_IN_FOLDER
            else:
                chunk = figures_of(cache, art.slug)
                if chunk is not None:
                    return Kept(chunk)
        known[i] = fp  # _finish need not digest the page again
        return None

    return keep


def chunk_results(chunk: list) -> list[tuple]:
    """The results of a chunk of tasks, in order. A page's task is (article index, its page-cache entry):
    a page whose fingerprint matches its entry, and whose files are still there, is kept (`page_keeper`);
    the others render in stages, each over all of them before the next.

    First every page's context, then every page's prose, then their Markdown
    converted in one run (Markdown.warm: the converter is about four times
    faster with its code and data still in the CPU's caches), then the rest
    of the pages (_finish), stage by stage as well.
    """
    out: list = [None] * len(chunk)
    contexts = []
    keep = page_keeper()
    for n, task in enumerate(chunk):
        if isinstance(task, tuple):
            kept = keep(*task)
            if kept is not None:
                out[n] = (kept, [])
                continue
            i = task[0]
            ctx = _context(i)
            if isinstance(ctx, Context):
                contexts.append((n, i, ctx))
                continue
            out[n] = ctx
        else:
            out[n] = other_task(task)
    prepared = []
    for n, i, ctx in contexts:  # each stage over the chunk's pages in turn: see Renderer.render_articles
        ready = _prepare(i, ctx)
        if isinstance(ready, _Prepared):
            prepared.append((n, ready))
        else:
            out[n] = ready
    if prepared:
        JOB["renderer"].markdown.warm([text for _, ready in prepared for text in ready.prose.markdown()])
        for (n, _), (info, problems) in zip(prepared, _finish([ready for _, ready in prepared]), strict=True):
            out[n] = (info.packed() if info is not None else None), problems
    return out


class _Prepared(NamedTuple):
    """A page half made: its article index, context and prose."""

    i: int
    ctx: Context
    prose: Prose


def _context(i: int) -> Context | tuple[None, list[str]]:
    """Article i's context, or (None, the problems that stopped it)."""
    art = JOB["articles"][i]
    before = len(art.params_doc.problems)
    ctx = build_context(JOB["catalog"], art)
    if ctx is None:
        return None, list(art.params_doc.problems[before:])
    return ctx


def _prepare(i: int, ctx: Context) -> _Prepared | tuple[None, list[str]]:
    """Article i's prose from its context, or (None, the problem that stopped it)."""
    try:
        return _Prepared(i, ctx, JOB["renderer"].prose(JOB["articles"][i], ctx))
    except RenderProblem as exc:
        return None, [str(exc)]


def _finish(prepared: list[_Prepared]) -> list[tuple[PageInfo | None, list[str]]]:
    """Each prepared page and every file of it; or the problems that stopped it.

    Stage by stage over all the pages, as Renderer.render_articles does: the
    pages' HTML and Markdown, their figures entries, their CSV files, their
    charts' SVG, then each page's files stored and its PageInfo.
    """
    arts = [JOB["articles"][ready.i] for ready in prepared]
    done = JOB["renderer"].render_articles([(art, r.ctx, r.prose) for art, r in zip(arts, prepared, strict=True)])
    ok = [n for n, page in enumerate(done) if not isinstance(page, RenderProblem)]
    chunks: dict[int, bytes] = {}
    for n in ok:
        art, ctx = arts[n], prepared[n].ctx
        chunks[n] = b"".join(
            figures_entry(
                art.slug,
                art.title,
                ctx.figures,
                ctx.prices_checked,
                claims_of(ctx.values),
                aliases=art.aliases,
                rests_on=ctx.rests_on,
            )
        )
    files: dict[int, list] = {}
    for n in ok:
        slug, page, blocks = arts[n].slug, done[n], prepared[n].ctx.blocks
        files[n] = out = [
            (f"{slug}/index.html", page.html),
            (f"{slug}/index.md", page.markdown),
            (f"{slug}/figures.json", figures_doc([chunks[n]])),
        ]
        for table in [*blocks.tables.values(), *(c.table for c in blocks.charts.values())]:
            out.append((f"{slug}/{table.id}.csv", table_csv(table)))
    for n in ok:
        slug = arts[n].slug
        for chart in prepared[n].ctx.blocks.charts.values():
            svg_text = svg.render(chart.figure, f"{slug}-{chart.id}-svg", chart.title)
            files[n].append((f"{slug}/{chart.id}.svg", svg_text.encode("utf-8")))
    sink = JOB.get("sink")
    stored: dict[int, tuple[list, tuple[int, int] | None]] = {}
    for n in ok:  # write here, in the worker; the main process only records the outcome
        stored[n] = sink.store_page(arts[n].slug, files[n]) if sink is not None else (files[n], None)
    return [
        (None, [str(done[n])]) if n not in stored else (_page_info(ready, chunks[n], *stored[n]), [])
        for n, ready in enumerate(prepared)
    ]


def _page_info(ready: _Prepared, chunk: bytes, out: list, folder: tuple[int, int] | None) -> PageInfo:
    """What the main process needs of a rendered page: `out` is its files as stored (a Publisher's outcomes,
    or the bytes), `folder` its folder's inode and mtime when the worker wrote every file."""
    i, ctx = ready.i, ready.ctx
    art = JOB["articles"][i]
    made, fingerprints = JOB.get("fingerprinted"), JOB.get("fingerprints")  # (made: every page's, see in_order)
    if made is not None:
        fingerprint = made[i]
    else:
        fingerprint = JOB.get("known", {}).pop(i, None)
        fingerprint = fingerprint or (fingerprints.of(art) if fingerprints is not None else None)
    sink = JOB.get("sink")
    # A family page written to the output folder leaves its figures there: the main process reads them
    # back for the site's figures parts rather than holding every page's (most of its memory at scale)
    kept = chunk if sink is None or art.file not in JOB.get("family_files", ()) else None
    info = PageInfo(
        art,
        list(ctx.prices_checked),
        kept,
        bool(ctx.blocks.charts),
        out,
        list(ctx.providers),
        [i.what for i in ctx.inputs if not (i.source or "").strip()],
        fingerprint,
        folder=folder,
        answer=ctx.values.get("answer") if art.kind != "setup" else None,  # the home page shows it
    )
    if info.fingerprint is not None:  # the page-cache entry, encoded here rather than in the main process
        sizes = {rel: size for rel, size, _ in out} if sink is not None else {rel: len(data) for rel, data in out}
        info.cache = pagecache.entry_files(art.slug, sizes)
    return info


LOCAL_CHUNK = 32  # pages rendered together without workers (see chunk_results)


def page_results(pages: list[tuple], pool: Workers | None, progress: Callable[[int], None] | None) -> Iterator:
    """Each page's result in order, from this process or from the forked workers (sent to them at once)."""
    if pool is None:
        return _local_results(pages, progress)
    numbers = pool.submit(pages, chunksize=max(1, min(64, len(pages) // (len(pool) * 8))))
    return _pool_results(pool, numbers, progress)


def _local_results(pages: list[tuple], progress: Callable[[int], None] | None) -> Iterator:
    for start in range(0, len(pages), LOCAL_CHUNK):
        chunk = chunk_results(pages[start : start + LOCAL_CHUNK])
        yield from chunk
        if progress:
            progress(len(chunk))


def _pool_results(pool: Workers, numbers: list[int], progress: Callable[[int], None] | None) -> Iterator:
    for number in numbers:
        chunk = pool.results(number)
        yield from chunk
        if progress:
            progress(len(chunk))


# Kept pages taken between two looks for the workers' results (see in_order)
POLL_EVERY = 1024


class KeptRun(NamedTuple):
    """Pages in an untouched folder that keep their files, each as (article index, its entry in the last
    page cache, its figures entry when the main process needs it: Kept.figures), taken together
    (build._take_pages), not one by one."""

    pages: list[tuple[int, int, bytes | None]]


def in_order(last: pagecache.Cache, pool: Workers | None, progress: Callable[[int], None] | None) -> Iterator:
    """Every page's result, in order, as ((article index, its entry in `last` as a dict or None), result),
    except that in an output folder the last build left untouched the kept pages come first, as KeptRuns.

    There, keeping a page needs only its fingerprint: the pages that keep are
    found here, without a round trip to a worker (at 10,000 pages the round
    trips cost more than the fingerprints), and only the others are sent. The
    kept pages are then taken while the workers render the others (a price
    refresh's listing keeps one of them busy for a while), rather than in
    article order after the last rendered page came back. The caller orders
    pages by article index where the output depends on it.
    Every page's fingerprint was made before the workers forked (build.render_site), so the
    pages to render are known as soon as the page cache is read.
    """
    articles = JOB["articles"]
    ks = list(map(last.index.get, [art.slug for art in articles]))  # each page's entry in the last cache, if any
    if pool is None or not JOB.get("untouched"):
        tasks = [(i, last.entry(k) if k is not None else None) for i, k in enumerate(ks)]
        results = page_results(tasks, pool, progress)
        for task in tasks:
            yield task, next(results)
        if next(results, None) is not None:
            raise BuildError("a worker returned more pages than it was given")
        return
    fps = JOB.get("fingerprinted")  # every page's, made before the workers forked
    early = _kept_early(last, ks, fps)
    if progress and early:
        progress(len(early))
    kept = {i for i, _, _ in early}
    rest = [(i, None) for i in range(len(articles)) if i not in kept]  # a worker renders them, not checking again
    results = page_results(rest, pool, progress)
    for start in range(0, len(early), POLL_EVERY):
        yield KeptRun(early[start : start + POLL_EVERY])
        pool.poll()
    for task in rest:
        yield task, next(results)
    if next(results, None) is not None:
        raise BuildError("a worker returned more pages than it was given")


def _kept_early(last: pagecache.Cache, ks: list[int | None], fps: list[str | None] | None) -> list[tuple]:
    """The pages that keep their files in an untouched folder, as KeptRun.pages has them, in order.

    With the page cache the last build recorded (`verified`), a family page
    keeps when its fingerprint is its entry's: no entry is made as a dict.
    Any other page is asked of page_keeper."""
    articles, family_files = JOB["articles"], JOB.get("family_files", ())
    if fps is None:  # keep() makes them
        fps = [_UNKNOWN] * len(ks)
    keep, saved = page_keeper(), last.fingerprints
    verified = JOB.get("verified", False)
    early = []
    for i, (k, fp) in enumerate(zip(ks, fps, strict=True)):
        if k is None:
            continue
        if verified and fp and fp == saved[k] and articles[i].file in family_files:
            early.append((i, k, None))
            continue
        kept = keep(i, last.entry(k), fp)
        if kept is not None:
            early.append((i, k, kept.figures))
    return early
