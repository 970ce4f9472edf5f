"""The build pipeline: load and compute everything, then render, then write once."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import multiprocessing as mp
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from generator import figures_parts, guard, pagecache, search, state, tasks, theme
from generator.errors import ContentError
from generator.escape import slug_of
from generator.families import Listing, family_listing, family_pages, fitting_rows, load_families
from generator.figures_json import figures_pieces
from generator.fingerprints import Fingerprints
from generator.lint import warnings as lint_warnings
from generator.load import display_path, load_content
from generator.parsecache import ParseCache
from generator.publish import Publisher
from generator.records import Article, Catalog
from generator.render import Renderer
from generator.rowcache import RowCache
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
    for fam in load_families(catalog.root, problems):
        listing = family_listing(catalog, fam, rows.family(catalog, fam) if rows is not None else None)
        if listing is not None:
            listings.append(listing)
    if rows is not None:
        rows.finish()  # the next row cache is whole: the old rows go before a worker forks
        rows.listings = len(listings)
    if listed is not None:
        listed(catalog, listings)
    family_articles = [art for listing in listings for art in family_pages(listing)]
    reserved, owners = reserved_folders(catalog), {}
    for slug, owner in [(a.slug, a.file) for a in (*catalog.articles, *family_articles)] + [
        (x.slug, x.family.file) for x in listings
    ]:
        if slug in reserved:
            problems.append(f"{owner}: slug {slug!r} names the folder of the site's {reserved[slug]}; choose another")
        elif slug in owners:
            problems.append(f"{owner}: slug {slug!r} is already used by {owners[slug]}")
        owners[slug] = owner
    problems += tag_problems(catalog.articles, listings)
    articles = [*catalog.articles, *family_articles]
    for art in articles:
        art.params_doc.problems = problems
    return catalog, articles, listings, problems


def reserved_folders(catalog: Catalog) -> dict[str, str]:
    """The output folders a build writes besides the pages' own, by name: no page's slug may be one of them
    (its files would mix with theirs, or the same path be written twice)."""
    folders = {"assets": "stylesheet and scripts", "figures": "figures data", "tags": "tag pages"}
    if catalog.site.search:
        folders |= {"search": "search page", search.FOLDER: "search index"}
    if catalog.about is not None:
        folders["about"] = "about page"
    return folders


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
    """
    odd = state.odd_inputs(templates, "templates")
    if odd:
        raise ContentError(odd)
    parsed = ParseCache(cache) if cache is not None else None  # files parsed by the last build into `cache`
    code = state.code_digest(templates)  # costpress's code and templates: what every page and template shares
    rows = RowCache(cache, code, read=reuse) if cache is not None else None  # the last build's family rows
    with contextlib.ExitStack() as stack:
        if rows is not None:  # the next row cache, written while the families expand: a failed build keeps none
            stack.push(lambda kind, _exc, _tb: kind is not None and rows.discard())
        stack.callback(tasks.JOB.clear)
        lister: list = []  # the process that renders the listings and their chunks, when a pool renders the pages

        def listed(catalog: Catalog, listings: list[Listing]) -> None:
            """With a pool, fork a process for the listings as soon as their rows are made: it renders them
            while this process makes the families' pages (a tenth of a second at 10,000 pages)."""
            pages = len(catalog.articles) + sum(map(fitting_rows, listings))
            if not listings or workers_for(_weight(pages, listings), jobs, pool_min) <= 1:
                return
            if sink is not None:
                sink.settle()  # before the fork: the process gets the folder's files as they are known
            tasks.JOB.update(
                catalog=catalog,
                renderer=Renderer(templates, catalog, code),
                sink=sink,
                listings=listings,
                code=code,
                reuse=reuse,
                cache=cache,
            )
            process = stack.enter_context(Workers(1, tasks.chunk_results))
            lister[:] = [process, process.submit([-1 - k for k in range(len(listings))], 1)]
            process.stop()  # it exits once the listings are done

        catalog, articles, listings, problems = _articles(content, drafts, base_url, parsed, rows, listed)
        renderer = tasks.JOB["renderer"] if lister else Renderer(templates, catalog, code)
        family_files = {x.family.file for x in listings}
        tasks.JOB.update(
            catalog=catalog,
            renderer=renderer,
            articles=articles,
            sink=sink,
            listings=listings,
            family_files=family_files,
            code=code,
            reuse=reuse,
            content_checks=lambda: (stray_files(catalog), lint_warnings(catalog)),  # what depends only on the content
        )
        files = sink if sink is not None else Files()  # a Publisher writes pages as they come
        fingerprints = Fingerprints(catalog, code) if cache is not None else None
        # A page whose page-cache entry still holds is kept (tasks.page_keeper); in a folder as the last build left it
        # (Publisher.trusted) its files are not looked at, and this process decides it (tasks.in_order)
        tasks.JOB.update(fingerprints=fingerprints, cache=cache, known={}, untouched=sink is not None and sink.trusted)
        # (asking `trusted` waited for the folder check: the workers forked below get its answer)
        workers = workers_for(_weight(len(articles), listings), jobs, pool_min)
        if workers > 1 and tasks.JOB["untouched"] and reuse and fingerprints is not None and pagecache.exists(cache):
            # Every page's fingerprint, here before the pool forks (while the listings' process renders), so
            # the pages that keep are known as soon as the page cache is read (tasks.in_order) and the workers
            # have only the pages that changed to render, each with its fingerprint made.
            tasks.JOB["fingerprinted"] = list(map(fingerprints.of, articles))
        if lister:
            _let_rows_go(listings)  # before the pool forks: its workers need not hold them either
        pool = stack.enter_context(Workers(workers, tasks.chunk_results)) if workers > 1 else None
        if (pool is not None or lister) and sink is not None:
            sink.start_flushing()  # after the forks: a thread is not copied into the workers
        # the next page cache, made as pages are taken (a kept page's entry as the last cache holds it)
        nextcache = pagecache.Next(cache) if cache is not None and sink is not None else None
        if nextcache is not None:  # a build that fails leaves no cache file
            stack.push(lambda kind, _exc, _tb: kind is not None and nextcache.discard())
        listers = lister[0] if lister else pool  # who renders the listings (none: this process)
        if lister:
            pending = lister[1]
        else:
            pending = pool.submit([-1 - k for k in range(len(listings))], 1) if pool else []
        if pool is not None and not lister:
            _let_rows_go(listings)
        # read while the listing renders
        last, verified = (
            pagecache.read(cache, sink.page_cache_digest if sink is not None else None)
            if cache is not None and reuse
            else (pagecache.Cache(), False)
        )
        tasks.JOB["verified"] = verified
        # the search index needs only titles and descriptions: Pagefind indexes them while pages render
        index, kept_index = None, None
        if catalog.site.search:
            index = stack.enter_context(
                contextlib.closing(search.Index(_searched(articles, listings), catalog.site.language))
            )
            if cache is not None and sink is not None and reuse:
                kept_index = search.published(cache, index.key, sink.have)
            if kept_index is None:
                index.start()
        tick = progress(len(articles), workers) if progress and articles else None
        rendered, cached, written = _take_pages(
            tasks.in_order(last, pool, tick), articles, files, nextcache, problems, verified, last
        )
        saved_parts = last.parts
        del last  # the last page cache's columns: not needed past this point
        order = [i for i in range(len(articles)) if i in rendered or i in cached]
        pages = [rendered.get(i) or cached[i] for i in order]
        if problems:
            raise ContentError(problems)
        site = tasks.SiteFiles(
            [(i, [d.toordinal() for d in p.prices_checked]) for i, p in zip(order, pages, strict=True)],
            {i: p.answer for i, p in zip(order, pages, strict=True) if p.answer is not None},
        )
        site_job = pool.submit([site], 1) if pool else None  # rendered beside the work below
        checks_job = pool.submit([tasks.ContentChecks()], 1) if pool else None  # by the other worker
        kept_slugs = {cached[i].article.slug for i in cached}
        parts = figures_parts.Parts(listings, pages, order, kept_slugs, files, cache, saved_parts)
        if pool:
            parts.send(pool)  # the figures parts that changed and hold no listing: put together by the workers
            pool.stop()  # each worker exits after its last task (site files, checks) while this process goes on

        def listing_chunks() -> dict[str, tuple]:
            """Each listing's figures entry, once its worker is done (the parts without one are written first)."""
            if listers:
                listed = [listers.results(number)[0][0] for number in pending]
            else:
                listed = [tasks.other_task(-1 - k)[0] for k in range(len(listings))]
            return _record_listings(listings, listed, files)

        assets = ASSET_FILES + (("sort.js",) if listings else ()) + (("search.js",) if catalog.site.search else ())
        assets += ("plotly.min.js",) if any(page.has_charts for page in pages) else ()
        for name in assets:  # the site's own file (templates/assets/) over the theme's
            files.add(f"assets/{name}", theme.find(templates, f"assets/{name}").read_bytes())
        entries = [(p.article.slug, p.figures) for p in pages if p.article.file not in family_files]
        part_names, part_keys = parts.finish(listing_chunks, pool)
        by_slug = [data for _, data in sorted(entries)]
        pieces = figures_pieces(by_slug, part_names)
        files.add("figures.json", pieces if sink is not None else b"".join(pieces))
        stray, linted = pool.results(checks_job[0])[0][0] if pool else tasks.JOB["content_checks"]()
        found = content_warnings(catalog, pages, stray) + linted
        for name, data in (pool.results(site_job[0])[0][0] if pool else tasks.site_files(site)).items():
            files.add(name, data)
        if kept_index is not None:  # made from the same titles and descriptions: the published one stays
            for rel in kept_index:
                files.keep(rel)
        elif index is not None:
            for rel, data in index.files():
                files.add(rel, data)
        if sink is not None and sink.same_files():  # the published marker lists exactly these files
            files.keep(guard.MARKER)
        else:
            marker = guard.manifest_pieces(files.paths())
            files.add(guard.MARKER, marker if sink is not None else b"".join(marker))  # last: it names every other file
    return Result(catalog, pages, files, found, workers, len(rendered), nextcache, part_keys, written, parsed, rows)


def _take_pages(
    results: Iterator,
    articles: list[Article],
    files,
    nextcache: pagecache.Next | None,
    problems: list[str],
    verified: bool,
    last: pagecache.Cache,
) -> tuple[dict[int, tasks.PageInfo], dict[int, tasks.PageInfo], int]:
    """Take each page's result as tasks.in_order gives it: record its files (a kept page's as they are, a
    rendered page's as its worker stored them or as bytes), add its entry to the next page cache, and note
    its problems. Returns the rendered pages and the kept ones by article index, and how many pages had a
    file written. `verified`: the last page cache, `last`, is the one the last build wrote (its paths are
    not checked again)."""
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
        pages.append((slugs[k], pagecache.kept_files(slugs[k], names[k])))
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


def stray_files(catalog: Catalog) -> list[str]:
    """A warning for each file under content/ that costpress does not read."""
    root = catalog.root
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or any(part.startswith(".") for part in rel.parts):
            continue
        parts = rel.parts
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


def content_warnings(catalog: Catalog, pages: list[tasks.PageInfo], stray: list[str] | None = None) -> list[str]:
    """Things that are not wrong but deserve a look; --strict makes them errors.

    `stray` is stray_files(catalog) when the caller already has it (a large
    build walks content/ while its workers render).
    """
    out = stray_files(catalog) if stray is None else list(stray)
    root = catalog.root
    used = {p for page in pages for p in page.providers}
    # a draft kept out of this build may be the article that will use a new provider
    drafts = " ".join(repr(a.params) for a in catalog.held_drafts)
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
