"""The build pipeline: load and compute everything, then render, then write once."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import itertools
import multiprocessing as mp
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from generator import aliases, figures_parts, guard, links, pagecache, retired, search, state, static, tasks, theme
from generator.errors import ContentError
from generator.escape import slug_of
from generator.families import Listing, check_axes, family_listing, family_pages, fitting_rows, load_families
from generator.figures_json import figures_pieces
from generator.fingerprints import Fingerprints
from generator.lint import warnings as lint_warnings
from generator.load import display_path, load_content
from generator.pagemap import PageMap
from generator.parsecache import ParseCache
from generator.publish import Publisher
from generator.records import Article, Catalog
from generator.render import Renderer
from generator.rowcache import RowCache
from generator.sitefiles import reserved_folders
from generator.workers import Workers
from generator.write import Files

# plotly.min.js (with a chart) is plotly.js's "basic" bundle, scatter, bar and pie: every chart costpress
# draws, at a quarter of the full bundle's 4.8 MB (docs/themes.md)
ASSET_FILES = ("style.css", "favicon.svg")


@dataclass
class Result:
    catalog: Catalog
    pages: list[tasks.PageInfo]
    files: Files | Publisher
    warnings: list[str]
    workers: int = 1
    rendered: int = 0  # articles rendered this time (the rest kept their files)
    cache: pagecache.Next | None = None  # the page cache for the site just built, to commit once it is published
    parts: dict | None = None  # figures part -> [key, size], for the page cache (pagecache.part_key)
    written: int = 0  # pages at least one of whose files a Publisher wrote (the rest were as published)
    parsed: ParseCache | None = None  # the YAML files this build parsed, to save once the site is published
    rows: RowCache | None = None  # the families' rows, to save once the site is published


# Below this many pages a process pool costs more than it saves.
POOL_MIN_PAGES = 200


# The most worker processes a build starts, per CPU it may use (--jobs above it is lowered, with a warning)
JOBS_PER_CPU = 4


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def workers_for(count: int, jobs: int, pool_min: int) -> int:
    """How many processes render: a pool only for enough pages, and only where fork exists."""
    if jobs <= 1 or count < max(pool_min, 2) or "fork" not in mp.get_all_start_methods():
        return 1
    return min(jobs, count)


# A listing row costs about a fortieth of a page to render: what a listing weighs when choosing a pool.
LISTING_ROWS_PER_PAGE = 40


def _let_rows_go(listings) -> None:
    """Drop this process's copy of every combination's row (a third of its memory at 100,000 pages), once the
    process that renders the listings holds its own."""
    for listing in listings:
        listing.rows = []


def _weight(pages: int, listings) -> int:
    """What a build's pages and listings weigh, in pages, when choosing a pool (workers_for)."""
    return pages + sum(len(x.rows) for x in listings) // LISTING_ROWS_PER_PAGE


def _articles(
    content: Path,
    drafts: bool,
    base_url: str | None,
    parsed: ParseCache | None = None,
    rows: RowCache | None = None,
    listed: Callable[[Catalog, list[Listing]], None] | None = None,
) -> tuple[Catalog, list[Article], list, list[str]]:
    """The content loaded, and every article to build: the written ones (drafts only when asked for), then
    each page family's pages; the families' listings; the problems found so far (a list pages add to).
    `rows`: the families' rows kept from the last build (rowcache); `listed` is called with the catalog and
    the listings once they are whole, before the families' pages are made."""
    catalog = load_content(content, parsed)
    if base_url is not None:  # --base-url: this build only (a preview on another host)
        catalog.site = dataclasses.replace(catalog.site, base_url=base_url)
    held = [a for a in catalog.articles if a.draft and not drafts]
    if held:  # drafts stay out of the site unless asked for (--drafts; serve shows them)
        catalog.articles = tuple(a for a in catalog.articles if not a.draft)
        catalog.held_drafts = tuple(held)
    problems: list[str] = []
    listings = []
    families = load_families(catalog.root, problems)
    if not drafts:  # a draft family's listing and pages stay out as a draft article does; its axes are checked
        catalog.held_families = tuple(f for f in families if f.data["draft"])
        families = [f for f in families if not f.data["draft"]]
        for fam in catalog.held_families:
            check_axes(catalog, fam)
    for fam in families:
        listing = family_listing(catalog, fam, rows.family(catalog, fam) if rows is not None else None)
        if listing is not None:
            listings.append(listing)
    if rows is not None:
        rows.finish()  # the next row cache is whole: the old rows go before a worker forks
        rows.listings = len(listings)
    if listed is not None:
        listed(catalog, listings)
    family_articles = [art for listing in listings for art in family_pages(listing)]
    clashes = slug_clashes(catalog, family_articles, listings)
    if clashes:  # pages would write over each other's files: none is worth rendering
        raise ContentError(problems + clashes)
    problems += tag_problems(catalog.articles, listings)
    articles = [*catalog.articles, *family_articles]
    for art in articles:
        art.params_doc.problems = problems
    return catalog, articles, listings, problems


def slug_clashes(catalog: Catalog, family_articles: list[Article], listings) -> list[str]:
    """A problem for each slug that names a folder the build writes for itself, or that a page shares with
    another page (two pages of one family with one slug are told to their family's page.slug); then for each
    alias that cannot be published (aliases.problems)."""
    reserved, owners = reserved_folders(catalog), {}
    pattern_at = {}  # a family's file -> where its page.slug is
    for x in listings:
        line = x.family.doc.line(("page", "slug"))
        pattern_at[x.family.file] = f"{x.family.file}:{line}" if line else x.family.file
    clashes = []
    shared: dict[tuple[str, str], list[str]] = {}  # (a family's page.slug, the other family's file) -> slugs
    entries = [(a.slug, a.file, False) for a in catalog.articles] + [(a.slug, a.file, True) for a in family_articles]
    for slug, owner, family_page in entries + [(x.slug, x.family.file, False) for x in listings]:
        if slug in reserved:
            clashes.append(f"{owner}: slug {slug!r} names the folder of the site's {reserved[slug]}; choose another")
        elif slug in owners:
            first, first_family_page = owners[slug]
            if family_page and first_family_page and first == owner:
                clashes.append(
                    f"{pattern_at[owner]}: page.slug gives more than one page the slug {slug!r}; use placeholders "
                    "that tell its pages apart, such as {model}, {method}, {provider}, {gpu} and {count}"
                )
            elif family_page and first_family_page:  # two families' patterns meet: said once, not per page
                shared.setdefault((pattern_at[owner], first), []).append(slug)
            else:
                clashes.append(f"{owner}: slug {slug!r} is already used by {first}")
        owners[slug] = (owner, family_page)
    for (at, first), slugs in shared.items():
        if len(slugs) == 1:
            clashes.append(f"{at}: slug {slugs[0]!r} is already used by {first}")
        else:
            clashes.append(
                f"{at}: page.slug gives {len(slugs):,} pages slugs that pages of {first} already use, such as "
                f"{slugs[0]!r}; leave the shared models, methods or providers out of one family's axes, or "
                "make the two page.slug patterns differ"
            )
    clashes += aliases.problems(itertools.chain(catalog.articles, family_articles), listings, owners, reserved)
    return list(dict.fromkeys(clashes))


def tag_problems(articles, listings) -> list[str]:
    """A tag whose name leaves nothing to name its page, and two tags that would share one page (tags/<slug>/:
    'C++' and 'C#' are both 'c'), each as a problem with its file and line."""
    problems: list[str] = []
    named: dict[str, str] = {}  # a tag page's slug -> the tag that names it
    sources = [(a.file, a.tags, a.params_doc) for a in articles]
    sources += [(x.family.file, x.tags, x.family.doc) for x in listings]
    for file, tags, doc in sources:
        for i, name in enumerate(tags):
            line = doc.line(("tags", i)) if doc is not None else None
            at = f"{file}:{line}" if line else file
            slug = slug_of(name)
            if not slug:
                problems.append(f"{at}: tags: {name!r} has no letter or digit to name its page; expected one that has")
            elif _written_alike(named.setdefault(slug, name)) != _written_alike(name):
                problems.append(
                    f"{at}: tags: {name!r} and {named[slug]!r} would share one page (tags/{slug}/); rename one"
                )
    return list(dict.fromkeys(problems))


def _written_alike(tag: str) -> str:
    """What two tags written alike share: 'GPU cost', 'gpu-cost' and 'gpu_cost' are one tag, 'C++' and 'C#' not."""
    return re.sub(r"[\s_-]+", " ", tag.casefold()).strip()


def render_site(
    content: Path,
    templates: Path,
    jobs: int = 1,
    progress: Callable[[int, int], Callable] | None = None,
    pool_min: int = POOL_MIN_PAGES,
    cache: Path | None = None,
    reuse: bool = True,
    sink: Publisher | None = None,
    drafts: bool = False,
    base_url: str | None = None,
) -> Result:
    """Build every output file, into `sink` as pages finish or else in memory; raise ContentError on problems.

    With jobs > 1 and enough pages, articles are rendered by forked worker
    processes, and the listings by one more, forked as soon as their rows
    are made; results come back in article order, so the bytes are the same
    whatever the number of workers. With `cache` (the output folder), family
    pages get fingerprints for the page cache, and with `reuse` those whose
    inputs did not change since the build that wrote the folder keep their
    files and are not rendered (see pagecache).

    The steps: load and expand the content (_articles, forking the listings'
    process on the way: _Run.fork_lister); read the last page cache
    (_last_cache); share the content with the workers (_share, where the
    page map reads that cache); fork them (_start); read the search index
    (_search_index); take every page, kept or rendered
    (_take_pages); queue the work that needs every page (_queue_site_work);
    add the site's own files (_site_files).
    """
    odd = state.odd_inputs(templates, "templates")
    if odd:
        raise ContentError(odd)
    parsed = ParseCache(cache) if cache is not None else None  # files parsed by the last build into `cache`
    code = state.code_digest(templates)  # costpress's code and templates: what every page and template shares
    if parsed is not None:
        parsed.code = code  # snapshots are kept as their records too: how records are made is code
        if not reuse:  # --force and --check make every snapshot's records again (and keep them, as rows)
            parsed.old_records = {}
    rows = RowCache(cache, code, read=reuse) if cache is not None else None  # the last build's family rows
    if parsed is not None and rows is not None:  # a build of one process forks none to load ahead either
        parsed.ahead = rows.ahead = jobs > 1 and "fork" in mp.get_all_start_methods()
    with contextlib.ExitStack() as stack:
        if rows is not None:  # the next row cache, written while the families expand: a failed build keeps none
            stack.push(lambda kind, _exc, _tb: kind is not None and rows.discard())
        stack.callback(tasks.JOB.clear)
        run = _Run(templates, code, jobs, pool_min, cache, reuse, sink, stack)
        catalog, articles, listings, problems = _articles(content, drafts, base_url, parsed, rows, run.fork_lister)
        last, verified = _last_cache(run)  # read while the listing renders, before the pool forks (the page map)
        workers = _share(run, catalog, articles, listings, last if verified else None)
        _start(run, workers, listings)
        tasks.JOB["verified"] = verified
        index, kept_index = _search_index(run, catalog, articles, listings)
        index_files = _IndexFiles(run, index) if index is not None and kept_index is None else None
        tick = progress(len(articles), workers) if progress and articles else None
        rendered, cached, written = _take_pages(
            tasks.in_order(last, run.pool, tick),
            articles,
            run.files,
            run.nextcache,
            problems,
            verified,
            last,
            index_files,
        )
        saved_parts = last.parts
        del last  # the last page cache's columns: not needed past this point
        order = [i for i in range(len(articles)) if i in rendered or i in cached]
        pages = [rendered.get(i) or cached[i] for i in order]
        if problems:
            raise ContentError(problems)
        queued = _queue_site_work(run, order, pages, cached, listings, saved_parts)
        found, part_keys = _site_files(run, catalog, listings, pages, queued, index_files, kept_index)
    return Result(
        catalog, pages, run.files, found, workers, len(rendered), run.nextcache, part_keys, written, parsed, rows
    )


@dataclass
class _Run:
    """What render_site's steps share: how the build was asked for, and the processes and files it opened."""

    templates: Path
    code: str
    jobs: int
    pool_min: int
    cache: Path | None
    reuse: bool
    sink: Publisher | None
    stack: contextlib.ExitStack
    files: Files | Publisher | None = None  # a Publisher writes pages as they come
    family_files: set[str] = dataclasses.field(default_factory=set)
    lister: Workers | None = None  # the process that renders the listings, when a pool renders the pages
    pending: list[int] = dataclasses.field(default_factory=list)  # the listings' chunks, wherever they render
    checks: list[int] | None = None  # the content checks' chunk, when the listings' process makes them
    pool: Workers | None = None
    nextcache: pagecache.Next | None = None  # the next page cache, made as pages are taken
    pagemap: PageMap | None = None  # this build's page map, for the next page cache

    def fork_lister(self, catalog: Catalog, listings: list[Listing]) -> None:
        """With a pool, fork a process for the listings as soon as their rows are made: it renders them
        while this process makes the families' pages (a tenth of a second at 10,000 pages)."""
        pages = len(catalog.articles) + sum(map(fitting_rows, listings))
        if not listings or workers_for(_weight(pages, listings), self.jobs, self.pool_min) <= 1:
            return
        if self.sink is not None:
            self.sink.settle()  # before the fork: the process gets the folder's files as they are known
        self.share_content(catalog, listings, Renderer(self.templates, catalog, self.code))
        self.lister = self.stack.enter_context(Workers(1, tasks.chunk_results, tasks.describe_chunk))
        self.pending = self.lister.submit([-1 - k for k in range(len(listings))], 1)
        # then the content checks: this process is done with the listings long before the last page is in
        # (a price refresh's pages waited on them in a worker, after the pages)
        self.checks = self.lister.submit([tasks.ContentChecks()], 1)
        self.lister.stop()  # it exits once the listings and the checks are done

    def share_content(self, catalog: Catalog, listings: list[Listing], renderer: Renderer) -> None:
        """Set what every forked process inherits (tasks.JOB): the content, its listings, the renderer, where
        pages go and how the content's own warnings are made."""
        tasks.JOB.update(
            catalog=catalog,
            renderer=renderer,
            sink=self.sink,
            listings=listings,
            code=self.code,
            reuse=self.reuse,
            cache=self.cache,
            content_checks=functools.partial(content_checks, catalog),
        )


def _share(
    run: _Run, catalog: Catalog, articles: list[Article], listings: list[Listing], recorded: pagecache.Cache | None
) -> int:
    """Set what the workers inherit (tasks.JOB) and return how many render. In a folder as the last build
    left it with a page cache, every page's fingerprint is made here, before the pool forks; with the page
    cache that build recorded (`recorded`), the page map takes the unchanged pages' from it."""
    renderer = tasks.JOB["renderer"] if run.lister is not None else Renderer(run.templates, catalog, run.code)
    run.family_files = {x.family.file for x in listings}
    run.share_content(catalog, listings, renderer)
    tasks.JOB.update(articles=articles, family_files=run.family_files)
    run.files = run.sink if run.sink is not None else Files()
    fingerprints = Fingerprints(catalog, run.code) if run.cache is not None else None
    # A page whose page-cache entry still holds is kept (tasks.page_keeper); in a folder as the last build left it
    # (Publisher.trusted) its files are not looked at, and this process decides it (tasks.in_order)
    untouched = run.sink is not None and run.sink.trusted
    tasks.JOB.update(fingerprints=fingerprints, known={}, untouched=untouched)
    # (asking `trusted` waited for the folder check: the workers forked below get its answer)
    workers = workers_for(_weight(len(articles), listings), run.jobs, run.pool_min)
    # what the pages' fingerprints are made from, for the next build (kept in the page cache: pagemap)
    run.pagemap = PageMap(listings, fingerprints) if fingerprints is not None and run.sink is not None else None
    if workers > 1 and untouched and run.reuse and run.pagemap is not None and pagecache.exists(run.cache):
        # Every page's fingerprint, here before the pool forks (while the listings' process renders), so
        # the pages that keep are known as soon as the page cache is read (tasks.in_order) and the workers
        # have only the pages that changed to render, each with its fingerprint made. With the page cache
        # the last build recorded, a page none of whose inputs changed takes its fingerprint from there.
        tasks.JOB["fingerprinted"] = run.pagemap.fingerprints_of(articles, recorded)
    return workers


def _start(run: _Run, workers: int, listings: list[Listing]) -> None:
    """Fork the pool (with more than one worker), start the Publisher's writes, open the next page cache,
    and queue the listings with the pool when no process of their own renders them."""
    if run.lister is not None:
        _let_rows_go(listings)  # before the pool forks: its workers need not hold them either
    pool = run.pool = (
        run.stack.enter_context(Workers(workers, tasks.chunk_results, tasks.describe_chunk)) if workers > 1 else None
    )
    if (pool is not None or run.lister is not None) and run.sink is not None:
        run.sink.start_flushing()  # after the forks: a thread is not copied into the workers
    # a kept page's entry goes to the next cache as the last cache holds it
    run.nextcache = pagecache.Next(run.cache) if run.cache is not None and run.sink is not None else None
    if run.nextcache is not None:  # a build that fails leaves no cache file
        nextcache = run.nextcache
        nextcache.pagemap = run.pagemap.body() if run.pagemap is not None else None
        run.stack.push(lambda kind, _exc, _tb: kind is not None and nextcache.discard())
    if pool is not None and run.lister is None:
        run.pending = pool.submit([-1 - k for k in range(len(listings))], 1)
        _let_rows_go(listings)


def _last_cache(run: _Run) -> tuple[pagecache.Cache, bool]:
    """The last build's page cache, and whether it is the one that build recorded (pagecache.read)."""
    if run.cache is None or not run.reuse:
        return pagecache.Cache(), False
    return pagecache.read(run.cache, run.sink.page_cache_digest if run.sink is not None else None)


def _search_index(run: _Run, catalog: Catalog, articles: list[Article], listings) -> tuple:
    """The search index (None without `search: true`), started now: Pagefind indexes titles and
    descriptions while pages render; and the published index's files when it can stand as it is."""
    if not catalog.site.search:
        return None, None
    index = run.stack.enter_context(
        contextlib.closing(search.Index(_searched(articles, listings), catalog.site.language))
    )
    kept_index = None
    if run.cache is not None and run.sink is not None and run.reuse:
        kept_index = search.published(run.cache, index.key, run.sink.have)
    if kept_index is None:
        index.start()
    return index, kept_index


class _IndexFiles:
    """The search index's files, added to the output as soon as Pagefind has sent them back.

    Pagefind has its documents before the first page renders and sends the
    index back about halfway through the pages; this process then only waits
    on the workers. `step` adds a slice of the index's files at a time between
    two pages (a look for the workers' results between slices keeps them fed),
    rather than all of them after the last page, when this process wrote them
    alone (0.03-0.05 s of the default site's build). `finish` adds what is left.
    A failed index is left for `finish` to report, after the pages' problems.
    """

    SLICE = 128

    def __init__(self, run: _Run, index: search.Index):
        self.run, self.index = run, index
        self.found: list[tuple[str, bytes]] | None = None  # the index's files, in order, once it is in
        self.added = 0  # how many of them are in the output

    @property
    def done(self) -> bool:
        return self.found is not None and self.added == len(self.found)

    def step(self) -> None:
        if self.found is None:
            if not self.index.ready():
                return
            self.found = self.index.files()
        self._add(self.SLICE)
        if not self.done and self.run.pool is not None:
            self.run.pool.poll()

    def finish(self) -> None:
        if self.found is None:
            self.found = self.index.files()
        self._add(len(self.found))

    def _add(self, count: int) -> None:
        files, found = self.run.files, self.found
        end = min(self.added + count, len(found))
        for rel, data in found[self.added : end]:
            files.add(rel, data)
        self.added = end


class _Queued(NamedTuple):
    """Work _queue_site_work handed out: the site files' task, the pool's chunks for it and for the content
    checks (None without a pool), and the figures parts."""

    site: tasks.SiteFiles
    site_job: list[int] | None
    checks_job: list[int] | None
    parts: figures_parts.Parts


def _queue_site_work(run: _Run, order: list[int], pages: list, cached: dict, listings, saved_parts: dict) -> _Queued:
    """Once every page is in, queue with the pool what needs them all: the site files, the content checks,
    then the figures parts that changed; the workers exit after these while this process goes on."""
    pool = run.pool
    site = tasks.SiteFiles([], [], {i: p.answer for i, p in zip(order, pages, strict=True) if p.answer is not None})
    numbers: dict[tuple, int] = {}  # each list of dates, once: pages share them (_take_kept, PageInfo.unpacked)
    for i, page in zip(order, pages, strict=True):
        days = tuple(page.prices_checked)
        n = numbers.get(days)
        if n is None:
            n = numbers[days] = len(site.dates)
            site.dates.append([d.toordinal() for d in days])
        site.pages.append((i, n))
    site_job = pool.submit([site], 1) if pool else None  # rendered beside the work below
    # by the other worker, unless the listings' process made them
    checks_job = pool.submit([tasks.ContentChecks()], 1) if pool and run.checks is None else None
    parts = figures_parts.Parts(listings, pages, order, cached, run.files, run.cache, saved_parts)
    if pool:
        parts.send(pool)  # the figures parts that changed and hold no listing: put together by the workers
        pool.stop()  # each worker exits after its last task while this process goes on
    return _Queued(site, site_job, checks_job, parts)


def _site_files(
    run: _Run, catalog: Catalog, listings, pages: list, queued: _Queued, index: _IndexFiles | None, kept_index
) -> tuple:
    """Add the assets, the figures parts and figures.json, the site files, the search index and the marker;
    return the content's warnings and the figures parts' keys for the page cache."""
    files, pool = run.files, run.pool
    listers = run.lister if run.lister is not None else pool  # who renders the listings (None: this process)

    def listing_chunks() -> dict[str, tuple]:
        """Each listing's figures entry, once its worker is done (the parts without one are written first)."""
        if listers is not None:
            listed = [listers.results(number)[0][0] for number in run.pending]
        else:
            listed = [tasks.other_task(-1 - k)[0] for k in range(len(listings))]
        return _record_listings(listings, listed, files)

    assets = ASSET_FILES + (("sort.js",) if listings else ()) + (("search.js",) if catalog.site.search else ())
    assets += ("plotly.min.js",) if any(page.has_charts for page in pages) else ()
    for name in assets:  # the site's own file (templates/assets/) over the theme's
        files.add(f"assets/{name}", theme.find(run.templates, f"assets/{name}").read_bytes())
    # the search index first (what the pages left of it): this process writes its files while the workers put
    # the parts together
    if kept_index is not None:  # made from the same titles and descriptions: the published one stays
        for rel in kept_index:
            files.keep(rel)
    elif index is not None:
        index.finish()
    entries = [(p.article.slug, p.figures) for p in pages if p.article.file not in run.family_files]
    part_names, part_keys = queued.parts.finish(listing_chunks, pool)
    by_slug = [data for _, data in sorted(entries)]
    pieces = figures_pieces(by_slug, part_names)
    files.add("figures.json", pieces if run.sink is not None else b"".join(pieces))
    if run.checks is not None:
        stray, linted = run.lister.results(run.checks[0])[0][0]
    elif pool:
        stray, linted = pool.results(queued.checks_job[0])[0][0]
    else:
        stray, linted = tasks.JOB["content_checks"]()
    found = content_warnings(catalog, pages, stray, listings) + linted
    for name, data in (pool.results(queued.site_job[0])[0][0] if pool else tasks.site_files(queued.site)).items():
        files.add(name, data)
    if catalog.static:  # after everything the build makes, which they must not meet
        static.place(files, catalog.root, catalog.static, display_path(catalog.root / static.FOLDER))
    if run.sink is not None and run.sink.same_files():  # the published marker lists exactly these files
        files.keep(guard.MARKER)
    else:
        marker = guard.manifest_pieces(files.paths())
        files.add(guard.MARKER, marker if run.sink is not None else b"".join(marker))  # last: it names every other file
    return found, part_keys


def _take_pages(
    results: Iterator,
    articles: list[Article],
    files,
    nextcache: pagecache.Next | None,
    problems: list[str],
    verified: bool,
    last: pagecache.Cache,
    index: _IndexFiles | None = None,
) -> tuple[dict[int, tasks.PageInfo], dict[int, tasks.PageInfo], int]:
    """Take each page's result as tasks.in_order gives it: record its files (a kept page's as they are, a
    rendered page's as its worker stored them or as bytes), add its entry to the next page cache, and note
    its problems. Returns the rendered pages and the kept ones by article index, and how many pages had a
    file written. `verified`: the last page cache, `last`, is the one the last build wrote (its paths are
    not checked again). `index`: the search index's files, added between pages once they are in."""
    sink = files if isinstance(files, Publisher) else None
    rendered: dict[int, tasks.PageInfo] = {}
    cached: dict[int, tasks.PageInfo] = {}
    shared: dict[tuple, list] = {}  # lists that pages repeat, one of each (tasks.PageInfo.unpacked)
    written = 0
    kept: list[tuple[int, int, bytes | None]] = []  # pages a worker kept, not yet recorded: recorded together
    days: dict[tuple, list] = {}  # a family's pages share a few tuples of days: each parsed once
    KeptRun, Kept, PageInfo = tasks.KeptRun, tasks.Kept, tasks.PageInfo
    for item in results:
        if type(item) is KeptRun:  # taken now, while the workers render the pages that changed
            _take_kept(item.pages, articles, last, cached, days, files, nextcache, verified)
            continue
        (i, _entry), (packed, found) = item
        if found:
            problems.extend(p for p in found if p not in problems)
        if type(packed) is Kept:
            kept.append((i, last.index[articles[i].slug], packed.figures))
        elif packed is not None:
            if kept:
                _take_kept(kept, articles, last, cached, days, files, nextcache, verified)
                kept = []
            info = rendered[i] = PageInfo.unpacked(articles[i], packed, shared)
            if sink is not None:
                written += sink.record_page(info.article.slug, info.files)
                if info.folder is not None:
                    sink.seen(f"{info.article.slug}/", info.folder)
            else:
                for rel, data in info.files:
                    files.add(rel, data)
            if info.cache is not None and nextcache is not None:
                nextcache.add(info, info.cache)
            info.files, info.cache = (), None  # the bytes live in `files` now, the entry in the next cache
            if index is not None and not index.done:
                index.step()
    if kept:
        _take_kept(kept, articles, last, cached, days, files, nextcache, verified)
    return rendered, cached, written


def _take_kept(
    kept: list[tuple[int, int, bytes | None]],
    articles: list[Article],
    last: pagecache.Cache,
    cached: dict[int, tasks.PageInfo],
    days: dict[tuple, list],
    files,
    nextcache: pagecache.Next | None,
    verified: bool,
) -> None:
    """Kept pages, each (article index, its entry in `last`, its figures entry or None): their PageInfos
    from the last cache's columns, their files recorded and their entries carried over, all at once."""
    PageInfo, fromisoformat = tasks.PageInfo, dt.date.fromisoformat
    slugs, fingerprints, names, checked = last.slugs, last.fingerprints, last.files, last.checked
    charts, providers, unsourced = last.charts, last.providers, last.unsourced
    pages = []
    for i, k, figures in kept:
        on = checked[k]
        known = days.get(on)
        if known is None:
            known = days[on] = [fromisoformat(d) for d in on]
        cached[i] = PageInfo(
            articles[i], known, figures, charts[k] == 1, [], providers[k], unsourced[k], fingerprints[k]
        )
        pages.append((slugs[k], names[k]))
    files.keep_pages(pages, verified)
    if nextcache is not None:
        nextcache.keep(last, [k for _, k, _ in kept])


def _record_listings(listings, listed: list[tasks.ListingOut], files: Files | Publisher) -> dict[str, tuple]:
    """Add each listing's files, or record those its worker wrote into a Publisher;
    per listing slug, its figures entry (None: in its figures.json) and that entry's digest."""
    for listing, out in zip(listings, listed, strict=True):
        if out.chunk is None:  # its worker wrote the files
            files.record_page(listing.slug, out.files)
            if out.folder is not None:
                files.seen(f"{listing.slug}/", out.folder)
        else:
            for rel, data in out.files:
                files.add(rel, data)
    return {listing.slug: (out.chunk, out.digest) for listing, out in zip(listings, listed, strict=True)}


KNOWN_FILES = {"site.yaml", "hardware.yaml", "models.yaml", "methods.yaml", "benchmarks.yaml", "about.md"}


def _searched(articles: list[Article], listings) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """What the search index holds of each page: slug, title, description, tags."""
    return [(a.slug, a.title, a.description, tuple(a.tags)) for a in (*articles, *listings)]


def content_checks(catalog: Catalog) -> tuple[list[str], list[str]]:
    """The warnings that depend only on the content: stray files, and lint's."""
    return stray_files(catalog), lint_warnings(catalog)


def stray_files(catalog: Catalog) -> list[str]:
    """A warning for each file under content/ that costpress does not read."""
    root = catalog.root
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or any(part.startswith(".") for part in rel.parts):
            continue
        parts = rel.parts
        if parts[0] == static.FOLDER:  # published as they are
            continue
        known = (
            (len(parts) == 1 and parts[0] in KNOWN_FILES)
            or (len(parts) == 2 and parts[0] == "articles" and path.suffix == ".md")
            or (len(parts) == 3 and parts[0] == "prices" and path.suffix == ".yaml")
            or (len(parts) == 2 and parts[0] == "benchmarks" and path.suffix == ".yaml")
            or (len(parts) == 2 and parts[0] == "families" and path.suffix == ".md")
            or (len(parts) == 2 and parts[0] == "measurements" and path.suffix == ".yaml")
        )
        if not known:
            out.append(f"{display_path(path)}: not a file costpress reads; remove it or move it out of content/")
    return out


def content_warnings(
    catalog: Catalog, pages: list[tasks.PageInfo], stray: list[str] | None = None, listings=()
) -> list[str]:
    """Things that are not wrong but deserve a look; --strict makes them errors.

    `stray` is stray_files(catalog) when the caller already has it (a large
    build walks content/ while its workers render).
    """
    out = stray_files(catalog) if stray is None else list(stray)
    reached = links.addresses(pages, listings, reserved_folders(catalog), catalog.static)
    out += links.problems(
        links.sources(catalog, listings),
        reached,
        lambda: {gone["slug"]: gone for gone in retired.found(catalog, pages, listings)},
    )
    for listing in listings:  # a listing with no page: nothing it names holds the job, perhaps since a price went
        if not any(c.fitting for c in listing.cheapest):
            out.append(
                f"{listing.family.file}: no combination of its models, methods and offers holds the job; "
                f"its listing prices none and no page is made"
            )
    root = catalog.root
    used = {p for page in pages for p in page.providers}
    # a draft kept out of this build may be the article that will use a new provider
    drafts = " ".join(repr(a.params) for a in catalog.held_drafts)
    used |= {p for f in catalog.held_families for p in f.data["axes"]["providers"]}  # a draft family's, named
    for provider in catalog.snapshots:
        if provider not in used and not re.search(rf"\b{re.escape(provider)}\b", drafts):
            out.append(f"{display_path(root / 'prices' / provider)}: no article uses provider {provider!r}")
    newest = max((s.checked for snaps in catalog.snapshots.values() for s in snaps), default=None)
    limit = catalog.site.stale_after_days
    for page in pages:
        art = page.article
        for day in page.prices_checked:
            if newest is not None and (newest - day).days > limit:
                out.append(
                    f"{art.file}: uses prices checked {day.isoformat()}, {(newest - day).days} days "
                    f"older than the newest snapshot ({newest.isoformat()}); the limit is {limit} days"
                )
        for what in page.unsourced:
            out.append(f"{art.file}: the figure '{what}' has no source")
    return out
