"""`costpress build`: the one command that publishes, with its no-op shortcut, lock and progress lines."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
from pathlib import Path

import click

from generator.commands.base import Terminated, cli, content_option, out_option, templates_option
from generator.errors import ContentError, CostpressError, one_line

# The last build's result and output, kept until the process exits or builds again. A
# 10,000-page build holds about a million objects (articles, a listing row per combination,
# page results, 60,000 paths); freeing them one by one as `build` returns took ~45 ms, and
# `main` then leaves with os._exit, which skips that work. In-process callers (tests) keep
# at most one build's objects.
_KEPT: list = []


# Set by the console entry point, whose process ends right after the command (cli._leave): the collector
# is then not turned back on, since the first full collection after a build walked every object it kept
# (0.03 s at 10,000 pages, 0.29 s at 100,000) just before the process exited. In-process callers (tests)
# get it back as it was.
LEAVE_COLLECTOR_OFF = False


def _without_cyclic_gc(command):
    """Run a command with Python's cycle collector paused (as it was before, afterwards).

    A build holds about a million long-lived objects (the catalog, every
    article, every page's result) and makes almost no cyclic garbage; each
    full collection walked all of them, ~60 ms of a 10,000-page build in this
    one process at start and end, while a core stood idle. Memory is freed by
    reference counting as before (peak RSS went down, 207 → 194 MiB). Worker
    processes collect as usual (see workers._serve).
    """

    @functools.wraps(command)
    def run(*args, **kwargs):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return command(*args, **kwargs)
        finally:
            if enabled and not LEAVE_COLLECTOR_OFF:
                gc.enable()

    return run


@cli.command()
@content_option
@out_option
@templates_option
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 and list the files that differ "
    "when the output folder is not what a build would produce.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Treat warnings (stale snapshots, unused data, figures without a source) as errors.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes for rendering (default: one per CPU; at most four per CPU). The output is the same "
    "for any number.",
)
@click.option("--force", is_flag=True, help="Render everything even when no input changed since the last build.")
@click.option(
    "--drafts", is_flag=True, help="Include articles and page families whose front matter says draft: true (marked)."
)
@click.option(
    "--base-url",
    default=None,
    metavar="URL",
    help="Use this address for canonical links, the sitemap and the feed instead of site.yaml's base_url "
    "(a preview on another host).",
)
@click.option(
    "--swap",
    is_flag=True,
    help="Publish by exchanging the whole output folder for a new one even when few files changed, so a web "
    "server reading it never serves a mix of old and new pages (slower: every unchanged file is linked anew).",
)
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="When another build of the same output folder is running: wait for it, or stop at once.",
)
@_without_cyclic_gc
def build(
    content: Path,
    out: Path,
    templates: Path,
    check: bool,
    strict: bool,
    jobs: int | None,
    force: bool,
    drafts: bool,
    base_url: str | None,
    swap: bool,
    wait: bool,
) -> None:
    """Build every article into the output folder (HTML, Markdown, figures.json)."""
    import time

    from generator import guard

    start = time.perf_counter()
    need_folders(content, templates)
    base_url = checked_base_url(base_url)
    dest = guard.target(out)
    guard.refuse_place(dest, str(out), [("content", content), ("templates", templates)])
    with guard.build_lock(dest, str(out), wait, lambda line: click.echo(line, err=True)):
        _build(content, out, dest, templates, check, strict, jobs, force, start, drafts, base_url, swap)


def checked_base_url(url: str | None) -> str | None:
    """--base-url as site.yaml's base_url would be accepted: an http(s) address, ending in '/'."""
    if url is None:
        return None
    from generator.schema import URL_RE

    if not URL_RE.match(url):
        raise CostpressError(f"--base-url: expected an http:// or https:// address, got {url!r}")
    return url if url.endswith("/") else url + "/"


def need_folders(content: Path, templates: Path) -> None:
    """A clean error for a content folder that is not there, or a templates folder asked for by name and missing.

    A site without a templates folder of its own builds with the packaged theme.
    """
    ctx = click.get_current_context(silent=True)
    named = ctx is not None and ctx.get_parameter_source("templates") not in (
        None,
        click.core.ParameterSource.DEFAULT,
    )
    for option, folder in (("--content", content), ("--templates", templates)):
        if option == "--templates" and not named:
            continue
        if not folder.is_dir():
            raise ContentError([f"{option}: {folder} is not a folder (expected the site's {option[2:]} folder)"])


def _build(
    content: Path,
    out: Path,
    dest: Path,
    templates: Path,
    check: bool,
    strict: bool,
    jobs: int | None,
    force: bool,
    start: float,
    drafts: bool = False,
    base_url: str | None = None,
    swap: bool = False,
) -> None:
    """`build` holding the lock on the output folder; `dest` is where it publishes (a link's target)."""
    import time

    from generator import durable, state

    if not check and not force and dest.is_dir() and durable.restarted(dest):  # a page may have come back empty
        click.echo(f"{out} was published before the machine restarted: comparing every file with a full build")
        force = True
    digest = state.inputs_digest(content, templates, f"drafts={drafts} base_url={base_url}")
    if not check and not force and not strict and digest is not None:
        found = state.unchanged(dest, digest)
        if found is not None:
            count, warnings = found
            for line in warnings:  # the same inputs warn the same way: say it again
                click.echo(f"warning: {one_line(line)}", err=True)
            click.echo(
                f"nothing to build: inputs unchanged since the last build of {out} "
                f"({count} files) in {time.perf_counter() - start:.2f} s"
            )
            return

    from generator.workers import reap

    try:
        from generator.build import JOBS_PER_CPU, POOL_MIN_PAGES, default_jobs, render_site
        from generator.publish import Publisher
        from generator.sandbox import memory_budget

        if jobs is not None and jobs > JOBS_PER_CPU * default_jobs():
            # each worker holds a copy of what it renders from: 500 of them could exhaust a machine's memory
            most = JOBS_PER_CPU * default_jobs()
            click.echo(f"warning: --jobs {jobs} is more than {JOBS_PER_CPU} per CPU; using {most}", err=True)
            jobs = most

        # A plain build streams each page into a Publisher, which writes only what changed beside
        # the site and swaps it in at the end; --check renders into memory and compares.
        # also restores a site an earlier build left mid-swap, or finishes one it left mid-move
        sink = None if check else Publisher(dest, str(out), "swap" if swap else "auto")
        try:
            # --jobs N asks for N workers whatever the size; by default small sites render in one process.
            # --check and --force render every page; a plain build reuses unchanged family pages.
            with memory_budget():
                result = render_site(
                    content,
                    templates,
                    jobs or default_jobs(),
                    _progress,
                    0 if jobs else POOL_MIN_PAGES,
                    cache=None if check else dest,
                    reuse=not force,
                    sink=sink,
                    drafts=drafts,
                    base_url=base_url,
                )
            if strict and result.warnings:
                if result.cache is not None:
                    result.cache.discard()
                if result.rows is not None:
                    result.rows.discard()
                raise ContentError(result.warnings)
        except BaseException:
            if sink is not None:
                with held_signals():  # a second Ctrl-C would stop the clean-up halfway and leave the staging folder
                    sink.abort()
            raise
        try:
            _publish(result, sink, check, out, dest, content, digest, start)
        except BaseException:
            with held_signals():  # the next page and row caches, not published: nothing to keep
                if result.cache is not None:
                    result.cache.discard()
                if result.rows is not None:
                    result.rows.discard()
            raise
    finally:
        reap()  # the workers of a build that went well exit on their own while the site is published


def _publish(result, sink, check: bool, out: Path, dest: Path, content: Path, digest: str | None, start: float) -> None:
    """After a build that rendered: compare (--check), or swap the new site in and save the caches."""
    import time

    from generator import guard, pagecache, publish, state
    from generator.write import compare

    for line in result.warnings:
        click.echo(f"warning: {one_line(line)}", err=True)
    if check:
        diff = compare(result.files, dest)
        if not diff.clean:
            for line in diff.lines():
                click.echo(line)
            raise CostpressError(
                f"{out} is not what a build of {content} produces "
                f"({len(diff.lines())} files differ); run 'costpress build'"
            )
        click.echo(f"{out} is up to date ({len(result.files)} files)")
        return
    state.forget(dest)
    pagecache.forget(dest)
    try:
        with held_signals() as caught:  # Ctrl-C now would stop between the old site and the new one
            diff = sink.finish()
            if result.cache is not None:
                result.cache.commit(result.parts)
            if result.parsed is not None:
                result.parsed.save()
            if result.rows is not None:
                result.rows.save()
            strays = publish.strays_said(diff, str(out))
            if digest is not None and not strays:  # else the next build reads the folder, and finds them
                page_cache = result.cache.digest if result.cache is not None else None
                state.record(
                    dest,
                    digest,
                    result.warnings,
                    sink.folder_stats(),
                    guard.MARKER,
                    page_cache,
                    sink.kept_marker_digest(),
                )
    except Terminated:  # held until the site was whole (held_signals), then raised
        click.echo(f"stopped by SIGTERM after publishing; {out} is the new site, complete.", err=True)
        raise click.exceptions.Exit(143) from None
    if caught:
        click.echo(f"interrupted after publishing; {out} is the new site, complete.", err=True)
        raise click.exceptions.Exit(130)
    for line in strays:
        click.echo(f"warning: {line}", err=True)
    _KEPT[:] = [result, sink]  # see _KEPT
    from generator.formatting import count

    written = len(diff.changed) + len(diff.added)
    pages = len(result.pages)
    click.echo(  # digits ungrouped: scripts and the benchmark read them
        f"built {count(pages, 'article', False)} into {out} in {time.perf_counter() - start:.2f} s "
        f"({count(result.workers, 'worker', False)}): {result.rendered} rendered, "
        f"{count(result.written, 'page', False)} written, {pages - result.written} unchanged "
        f"({count(written, 'file', False)} written, {diff.unchanged} unchanged, {len(diff.removed)} removed)"
    )


@contextlib.contextmanager
def held_signals():
    """Hold Ctrl-C (SIGINT) and SIGTERM while the site is published; yields a list of the signals that came.

    Publishing takes from milliseconds (a few files moved in) to a second or
    two (a swap at 10,000 pages); stopping halfway would leave the new site
    without its caches, or a move for the next build to finish. The signals'
    handlers only note them meanwhile; a SIGTERM that came is then acted on
    (the process ends) once the site is whole, and the caller reports a
    SIGINT. Outside the main thread nothing is held.
    """
    import signal
    import threading

    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    held = (signal.SIGINT, signal.SIGTERM)
    before = {number: signal.signal(number, lambda number, _frame: caught.append(number)) for number in held}
    try:
        yield caught
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
        if signal.SIGTERM in caught:
            os.kill(os.getpid(), signal.SIGTERM)


PROGRESS_MIN_PAGES = 300


def _progress(total: int, jobs: int):
    """A progress bar on a terminal, a line per tenth in logs; nothing for small sites.

    It counts every page, rendered or kept from the last build.
    """
    if total < PROGRESS_MIN_PAGES:
        return None
    import time

    stream = sys.stderr
    done = [0]
    started = time.perf_counter()
    if stream.isatty():
        bar = click.progressbar(length=total, label=f"building {total} pages ({jobs} workers)", file=stream)
        bar.__enter__()

        def tick(n: int) -> None:
            done[0] += n
            bar.update(n)
            if done[0] >= total:
                bar.__exit__(None, None, None)

        return tick
    step = max(1, total // 10)

    def tick_lines(n: int) -> None:
        before = done[0]
        done[0] += n
        if done[0] // step != before // step or done[0] == total:
            click.echo(
                f"built {done[0]}/{total} pages ({jobs} workers, {time.perf_counter() - started:.1f} s)", err=True
            )

    return tick_lines
