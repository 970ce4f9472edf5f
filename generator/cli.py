"""The costpress command line."""

from __future__ import annotations

import functools
import gc
import os
import re
import sys
import traceback
from pathlib import Path

import click

from generator import __version__
from generator.errors import ContentError, CostpressError

# Heavy modules (pandas, plotly, the renderer) are imported inside the commands,
# so that `costpress build` with nothing to do answers before loading them.

content_option = click.option(
    "--content",
    "content",
    default="content",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding the data and article sources.",
)
out_option = click.option(
    "--out",
    "out",
    default="site",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder the site is written to.",
)
templates_option = click.option(
    "--templates",
    "templates",
    default="templates",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The site's own templates and assets: a file here replaces the packaged theme's file of the same "
    "path. Optional; without it the theme is used as it ships.",
)


class CostpressGroup(click.Group):
    """Turns costpress errors into clean lines on stderr and exit status 1 (130 after Ctrl-C)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ContentError as exc:
            for line in exc.problems:
                click.echo(f"error: {line}", err=True)
            n = len(exc.problems)
            click.echo(f"{n} problem{'s' if n != 1 else ''} found; nothing was written.", err=True)
            ctx.exit(1)
        except CostpressError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:  # Ctrl-C: the shell's status for it (128 + SIGINT), not click's "Aborted!" and 1
            click.echo("interrupted; a build leaves the published folder as it was.", err=True)
            ctx.exit(130)


@click.group(cls=CostpressGroup)
@click.version_option(__version__, prog_name="costpress")
def cli() -> None:
    """Build GPU cost articles from price snapshots and benchmark data."""


@cli.command("import-results")
@click.argument("kind", type=click.Choice(["mlperf"]))
@click.argument("csv_file", metavar="CSV", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The suite file under content/benchmarks/; its time_to_train header is kept, its results replaced.",
)
@click.option("--count", default=8, show_default=True, type=click.IntRange(min=1), help="Accelerators per system.")
@content_option
def import_results(kind: str, csv_file: Path, out: Path, count: int, content: Path) -> None:
    """Refresh a time-to-train suite's results from a benchmark summary CSV (MLPerf Training)."""
    from generator.importers import import_mlperf
    from generator.load import display_path, load_hardware
    from generator.schema import parse_yaml, read_text, record, validate
    from generator.specs import TIME_TO_TRAIN

    problems: list[str] = []
    display = display_path(out)
    if not out.exists():
        raise CostpressError(
            f"{display}: file is missing; write its time_to_train header first (docs/articles.md, time-to-train)"
        )
    text = read_text(out, display, problems)
    doc = parse_yaml(text or "", display)
    header = None
    raw = doc.data.get("time_to_train") if isinstance(doc.data, dict) else None
    if not problems and not doc.problems:
        if isinstance(raw, dict):
            fields = {k: f for k, f in TIME_TO_TRAIN.record.items() if k != "results"}
            header = validate(doc, {k: v for k, v in raw.items() if k != "results"}, record(fields), ("time_to_train",))
        else:
            doc.problem(("time_to_train",), "missing; expected the suite header (id, name, model, method ...)")
    problems += doc.problems
    if problems or header is None:
        raise ContentError(problems)
    text, summary = import_mlperf(csv_file, header, load_hardware(content), count)
    out.write_text(text, encoding="utf-8")
    for line in summary.lines():
        click.echo(line)
    click.echo(f"wrote {out}")


# The last build's result and output, kept until the process exits or builds again. A
# 10,000-page build holds about a million objects (articles, a listing row per combination,
# page results, 60,000 paths); freeing them one by one as `build` returns took ~45 ms, and
# `main` then leaves with os._exit, which skips that work. In-process callers (tests) keep
# at most one build's objects.
_KEPT: list = []


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
            if enabled:
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
    help="Worker processes for rendering (default: one per CPU). The output is the same for any number.",
)
@click.option("--force", is_flag=True, help="Render everything even when no input changed since the last build.")
@click.option("--drafts", is_flag=True, help="Include articles whose front matter says draft: true (marked as drafts).")
@click.option(
    "--base-url",
    default=None,
    metavar="URL",
    help="Use this address for canonical links, the sitemap and the feed instead of site.yaml's base_url "
    "(a preview on another host).",
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
        _build(content, out, dest, templates, check, strict, jobs, force, start, drafts, base_url)


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
) -> None:
    """`build` holding the lock on the output folder; `dest` is where it publishes (a link's target)."""
    import time

    from generator import state

    digest = state.inputs_digest(content, templates, f"drafts={drafts} base_url={base_url}")
    if not check and not force and not strict and digest is not None:
        found = state.unchanged(dest, digest)
        if found is not None:
            count, warnings = found
            for line in warnings:  # the same inputs warn the same way: say it again
                click.echo(f"warning: {line}", err=True)
            click.echo(
                f"nothing to build: inputs unchanged since the last build of {out} "
                f"({count} files) in {time.perf_counter() - start:.2f} s"
            )
            return

    from generator import pagecache
    from generator.build import POOL_MIN_PAGES, default_jobs, render_site
    from generator.sandbox import memory_budget
    from generator.write import Publisher, compare

    # A plain build streams each page into a Publisher, which writes only what changed beside
    # the site and swaps it in at the end; --check renders into memory and compares.
    sink = None if check else Publisher(dest, str(out))  # also restores a site an earlier build left mid-swap
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
            raise ContentError(result.warnings)
    except BaseException:
        if sink is not None:
            sink.abort()
        raise
    for line in result.warnings:
        click.echo(f"warning: {line}", err=True)
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
    diff = sink.finish()
    pagecache.save(dest, result.cache or {}, result.parts)
    if digest is not None:
        state.record(dest, digest, result.warnings, sink.folder_stats())
    _KEPT[:] = [result, sink]  # see _KEPT
    written = len(diff.changed) + len(diff.added)
    pages = len(result.pages)
    click.echo(
        f"built {pages} articles into {out} in {time.perf_counter() - start:.2f} s "
        f"({result.workers} worker{'s' if result.workers != 1 else ''}): "
        f"{result.rendered} rendered, {result.written} pages written, {pages - result.written} unchanged "
        f"({written} files written, {diff.unchanged} unchanged, {len(diff.removed)} removed)"
    )


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


@cli.command()
@content_option
@out_option
@templates_option
@click.option("--ref", default="HEAD", show_default=True, help="Git ref whose committed figures.json is the old side.")
@click.option(
    "--old",
    "old_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the old figures from this figures.json instead of git.",
)
@click.option(
    "--new",
    "new_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the new figures from this figures.json instead of building.",
)
@click.option("--format", "form", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
def changes(
    content: Path, out: Path, templates: Path, ref: str, old_file: Path | None, new_file: Path | None, form: str
) -> None:
    """Compare figures and claims: the site at a git ref against a fresh build. Exit 0 if none changed, else 3."""
    from generator import changes as ch

    # figures.json names the parts that hold the family pages; each is read from where the file came from
    if old_file is not None:
        old_raw, old_name = _read(old_file), str(old_file)
        old_part = _part_reader(old_file.parent)
    else:
        old_raw, old_name = ch.at_ref(ref, out / "figures.json"), f"{ref}:{out}/figures.json"
        old_part = lambda rel: ch.at_ref(ref, out / rel)  # noqa: E731
    old = ch.parse(old_raw, old_name, old_part) if old_raw is not None else {}
    if new_file is not None:
        new = ch.parse(_read(new_file), str(new_file), _part_reader(new_file.parent))
    else:
        from generator.build import render_site

        built = render_site(content, templates).files
        new = ch.parse(built["figures.json"], "the fresh build", lambda rel: built[rel] if rel in built else None)
    found = ch.compare(old, new)
    render = {"markdown": ch.render_markdown, "json": ch.render_json}.get(form, ch.render_text)
    click.echo(render(found), nl=False)
    if found:
        raise click.exceptions.Exit(3)


def _part_reader(folder: Path):
    def read(rel: str) -> bytes | None:
        path = folder / rel
        return _read(path) if path.is_file() else None

    return read


@cli.command("import-model")
@click.argument("config", metavar="CONFIG.json", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--id", "model_id", required=True, help="Model id for models.yaml, e.g. qwen2.5-32b.")
@click.option("--name", required=True, help="Name shown on pages, e.g. 'Qwen2.5 32B'.")
@click.option("--published", type=click.IntRange(1, 10**14), default=None, help="Published parameter total, checked.")
@click.option("--source", default=None, help="Where the config comes from (default: the file's name).")
@click.option("--url", default=None, help="Public address of the model or its config.")
@content_option
def import_model(
    config: Path, model_id: str, name: str, published: int | None, source: str | None, url: str | None, content: Path
) -> None:
    """Add a model to content/models.yaml from its Hugging Face config.json, with its parameters counted."""
    from generator import models_file
    from generator.schema import ID_RE, LINE_RE

    if not ID_RE.match(model_id):
        raise CostpressError(f"--id: expected lower-case letters, digits, '.' and '-', got {model_id!r}")
    if not name.strip() or LINE_RE.search(name):
        raise CostpressError("--name: expected one line of text without control characters")
    if url is not None and not re.match(r"^https?://[^\s<>\"']+$", url):
        raise CostpressError(f"--url: expected an http(s) address, got {url!r}")
    arch = models_file.read_config(config)
    total, active = arch.parameters(), arch.parameters(active=True)
    if published is not None and published != total:
        raise CostpressError(
            f"{config}: the architecture gives {total:,} parameters, --published says {published:,}; not written"
        )
    target = content / "models.yaml"
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as exc:
        raise CostpressError(f"{target}: cannot read ({exc.strerror})") from None
    entry = models_file.entry_text(model_id, name, arch, published, source or f"config.json ({config.name})", url)
    merged, replaced = models_file.merge(text, model_id, entry)
    target.write_text(merged, encoding="utf-8")
    moe = f", {active:,} active per token" if arch.moe else ""
    click.echo(f"{'replaced' if replaced else 'added'} {model_id} in {target}: {total:,} parameters{moe}")


@cli.command("import-prices")
@click.argument("kind", type=click.Choice(["skypilot"]))
@click.argument("csv_file", metavar="CSV", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--provider", required=True, help="Provider id: the folder under prices/ (lower-case, digits, '-').")
@click.option("--name", default=None, help="Provider name shown on pages (default: the id).")
@click.option(
    "--checked",
    required=True,
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="Date the prices were read, YYYY-MM-DD: the snapshot's file name.",
)
@click.option(
    "--out",
    "out",
    default="content/prices",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding the provider folders.",
)
@click.option(
    "--commit",
    default=None,
    help="The catalog repository's commit the CSV comes from (default: read from an extract's file name).",
)
@content_option
def import_prices(
    kind: str, csv_file: Path, provider: str, name: str | None, checked, out: Path, commit: str | None, content: Path
) -> None:
    """Turn a cloud price catalog (a SkyPilot vms.csv) into a dated price snapshot."""
    from generator.importers import import_skypilot
    from generator.load import load_hardware
    from generator.schema import SLUG_RE

    if not SLUG_RE.match(provider):
        raise CostpressError(f"--provider: expected lower-case letters, digits and '-', got {provider!r}")
    if commit is not None and not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise CostpressError(f"--commit: expected a git commit hash (7 to 40 hex digits), got {commit!r}")
    text, summary = import_skypilot(csv_file, provider, checked.date(), load_hardware(content), name, commit)
    target = out / provider / f"{checked.date().isoformat()}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    for line in summary.lines():
        click.echo(line)
    click.echo(f"wrote {target}")


@cli.command()
@content_option
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder the preview is written to. Default: a new temporary folder, removed when serve stops, so "
    "site/ stays what 'costpress build' wrote.",
)
@templates_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port to listen on (0 picks a free one).")
@click.option(
    "--drafts/--no-drafts",
    default=True,
    show_default=True,
    help="Build articles marked draft: true too, each marked as a draft on its page.",
)
def serve(content: Path, out: Path | None, templates: Path, host: str, port: int, drafts: bool) -> None:
    """Build, serve the site locally, rebuild on every edit and reload the browser."""
    import shutil
    import tempfile
    import time

    from generator.serve import start

    say = lambda line: click.echo(line, err=True)  # noqa: E731
    # A preview (drafts included) never lands in the published folder unless asked for with --out
    scratch = None if out is not None else Path(tempfile.mkdtemp(prefix="costpress-serve-"))
    try:
        server, _state, stop = start(content, out or scratch / "site", templates, host, port, say, drafts)
        address = server.server_address
        shown = out if out is not None else "a preview"
        click.echo(f"serving {shown} at http://{address[0]}:{address[1]}/ (Ctrl-C to stop)")
        if drafts and out is not None:
            say(f"drafts are shown: run 'costpress build' before publishing or committing {out}")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
            server.shutdown()
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)  # made by this command, holding only its preview


@cli.command()
@click.argument("what", type=click.Choice(["article"]))
@click.argument("slug")
@click.option(
    "--kind",
    type=click.Choice(["throughput", "flops", "market", "time-to-train", "memory-check"]),
    default="throughput",
    show_default=True,
)
@click.option("--date", "day", default=None, help="Publication date, YYYY-MM-DD (default: today).")
@content_option
def new(what: str, slug: str, kind: str, day: str | None, content: Path) -> None:
    """Scaffold a new article source under content/articles/ from a short template."""
    import datetime as dt

    from generator.scaffold import scaffold

    try:
        when = dt.date.fromisoformat(day) if day else dt.date.today()
    except ValueError:
        raise CostpressError(f"--date: expected a real date as YYYY-MM-DD, got {day!r}") from None
    path = scaffold(content, slug, kind, when)
    click.echo(f"wrote {path}; edit it, then run 'costpress build'")


@cli.command()
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--title", default="GPU cost notes", show_default=True, help="The new site's title.")
def init(folder: Path, title: str) -> None:
    """Create a new site in DIR (new or empty) that builds as it is: settings, data, one article of each kind."""
    import datetime as dt

    from generator.starter import init_site

    if "\n" in title or not title.strip():
        raise CostpressError("--title: expected one line of text")
    written = init_site(folder, dt.date.today(), title)
    click.echo(f"wrote {len(written)} files into {folder}; next: cd {folder} && costpress build")


@cli.command("lint")
@content_option
@click.option("--strict", is_flag=True, help="Exit 1 when a finding is flagged and not acknowledged.")
@click.option("--verbose", is_flag=True, help="Print every check, the ones that passed too.")
def lint_command(content: Path, strict: bool, verbose: bool) -> None:
    """Check the data against itself: implied utilization of each benchmark, price outliers."""
    from generator.lint import lint
    from generator.load import load_content

    findings = lint(load_content(content))
    for finding in findings:
        if verbose or finding.shown:
            click.echo(finding.line())
    open_flags = [f for f in findings if f.flagged and not f.acknowledged]
    click.echo(
        f"{len(findings)} checks, {sum(f.flagged for f in findings)} flagged, {len(open_flags)} not acknowledged"
    )
    if strict and open_flags:
        raise click.exceptions.Exit(1)


def _tokens(ctx, param, value):
    from generator.schema import parse_tokens

    n = parse_tokens(value)
    if n is None:
        raise click.BadParameter(f"expected a token count such as 20M, 1.5B or 20_000_000, got {value!r}")
    return n


@cli.command()
@content_option
@click.option("--model", required=True, help="Model id from models.yaml, e.g. llama-3.3-70b.")
@click.option("--method", required=True, help="Method id from methods.yaml, e.g. lora.")
@click.option("--tokens", required=True, callback=_tokens, help="Training tokens: 20M, 1.5B or 20_000_000.")
@click.option(
    "--setup",
    "setups",
    multiple=True,
    help="Offer provider:gpuxcount (repeatable); default: every offer that holds the training state.",
)
@click.option("--utilization", default=0.3, show_default=True, type=click.FloatRange(0, 1, min_open=True))
@click.option("--startup-hours", default=0.25, show_default=True, type=click.FloatRange(0))
@click.option("--runs", default=1, show_default=True, type=click.IntRange(1))
@click.option(
    "--attention-sequence-length",
    "attention",
    type=click.IntRange(1, 10_000_000),
    default=None,
    help="Count attention operations for sequences of this length (default: the per-parameter rule alone).",
)
@click.option("--format", "form", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
def estimate(
    content: Path,
    model: str,
    method: str,
    tokens: int,
    setups: tuple[str, ...],
    utilization: float,
    startup_hours: float,
    runs: int,
    attention: int | None,
    form: str,
) -> None:
    """Price one scenario the way the articles do, ranked by cost."""
    from generator import estimate as est
    from generator.load import load_content

    frame = est.estimate(
        load_content(content), model, method, tokens, list(setups), utilization, startup_hours, runs, attention
    )
    click.echo(est.render(frame, form), nl=False)


@cli.command("memory")
@content_option
@click.option("--model", required=True, help="Model id from models.yaml (with an architecture).")
@click.option("--method", required=True, help="Method id from methods.yaml (with a training block).")
@click.option("--gpu", required=True, help="GPU id from hardware.yaml.")
@click.option("--count", default=1, show_default=True, type=click.IntRange(1, 4096), help="GPUs in the setup.")
@click.option("--sequence-length", type=click.IntRange(1, 10_000_000), default=None, help="Tokens per sequence [4096].")
@click.option("--micro-batch", type=click.IntRange(1, 100_000), default=None, help="Sequences per GPU per step [1].")
@click.option("--checkpointing/--no-checkpointing", default=None, help="Activation checkpointing [the method's].")
@click.option("--lora-rank", type=click.IntRange(1, 65_536), default=None, help="LoRA rank [the method's, or 16].")
@click.option("--lora-targets", default=None, help="Projections LoRA adapts, e.g. q,k,v,o,gate,up,down.")
@click.option("--format", "form", type=click.Choice(["text", "json"]), default="text", show_default=True)
def memory_command(
    content: Path,
    model: str,
    method: str,
    gpu: str,
    count: int,
    sequence_length: int | None,
    micro_batch: int | None,
    checkpointing: bool | None,
    lora_rank: int | None,
    lora_targets: str | None,
    form: str,
) -> None:
    """Memory per GPU of one training job, part by part, and whether it fits."""
    from generator import memory_report
    from generator.load import load_content

    cat = load_content(content)
    targets = tuple(t.strip() for t in lora_targets.split(",") if t.strip()) if lora_targets else None
    job, result = memory_report.report(
        cat, model, method, gpu, count, sequence_length, micro_batch, checkpointing, lora_rank, targets
    )
    click.echo(memory_report.render(cat, model, method, gpu, job, result, form), nl=False)


@cli.command()
@content_option
@click.option(
    "--trainer",
    "trainer",
    type=click.Path(file_okay=False, path_type=Path),
    help="A Hugging Face Trainer output folder (trainer_state.json, train_results.json).",
)
@click.option(
    "--csv",
    "csv_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A CSV with columns step, seconds, tokens.",
)
@click.option("--tokens", "tokens", default=None, help="Tokens processed (with --seconds): 20M, 1.5B, ...")
@click.option("--seconds", type=click.FloatRange(0, min_open=True), default=None, help="Training time in seconds.")
@click.option(
    "--skip-steps", default=0, show_default=True, type=click.IntRange(0), help="Warm-up steps to ignore (CSV)."
)
@click.option("--sequence-length", type=click.IntRange(1), default=None, help="Tokens per sample (Trainer logs).")
@click.option("--id", "bench_id", required=True, help="Id of the new benchmark record.")
@click.option("--model", required=True)
@click.option("--method", required=True)
@click.option("--gpu", required=True, help="GPU id from hardware.yaml.")
@click.option("--count", default=1, show_default=True, type=click.IntRange(1))
@click.option("--source", default=None, help="Where the run was measured (default: the log's name).")
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="File to write (default: content/benchmarks/<id>.yaml); '-' prints it.",
)
def calibrate(
    content: Path,
    trainer: Path | None,
    csv_file: Path | None,
    tokens: str | None,
    seconds: float | None,
    skip_steps: int,
    sequence_length: int | None,
    bench_id: str,
    model: str,
    method: str,
    gpu: str,
    count: int,
    source: str | None,
    out: Path | None,
) -> None:
    """Turn a short measured run into a benchmark record with its implied utilization."""
    from generator import calibrate as cal
    from generator.load import load_content
    from generator.schema import ID_RE, parse_tokens

    if not ID_RE.match(bench_id):
        raise CostpressError(f"--id: expected lower-case letters, digits, '.' and '-', got {bench_id!r}")
    given = [x for x in (trainer, csv_file, tokens) if x is not None]
    if len(given) != 1:
        raise CostpressError("give exactly one of --trainer DIR, --csv FILE, or --tokens N with --seconds S")
    if trainer is not None:
        m = cal.from_trainer(trainer, sequence_length)
        where = trainer.name
    elif csv_file is not None:
        m = cal.from_csv(csv_file, skip_steps)
        where = csv_file.name
    else:
        n = parse_tokens(tokens)
        if n is None or seconds is None:
            raise CostpressError("--tokens needs a count such as 20M and --seconds")
        m, where = cal.Measurement(float(n), seconds, "tokens ÷ seconds given on the command line"), "command line"
    cat = load_content(content)
    rec, util = cal.record(
        cat, m, bench_id, model, method, gpu, count, sequence_length, source or f"Measured run ({where})"
    )
    text = cal.dump(rec)
    if out is not None and str(out) == "-":
        click.echo(text, nl=False)
        return
    target = out or content / "benchmarks" / f"{bench_id}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    click.echo(f"{fmt_rate(m.tokens_per_second)} tokens/s, {util:.1%} of dense peak; wrote {target}")


def fmt_rate(x: float) -> str:
    return f"{x:,.2f}"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CostpressError(f"{path}: cannot read ({exc.strerror})") from None


def main() -> None:
    """Entry point: clean one-line errors for bad input, a traceback only for bugs."""
    try:
        cli.main(prog_name="costpress")
    except SystemExit as exc:
        _leave(exc.code)
    except KeyboardInterrupt:  # before or after a command runs (inside one, CostpressGroup says it)
        click.echo("interrupted", err=True)
        _leave(130)
    except Exception:
        traceback.print_exc()
        click.echo(
            "This is a bug in costpress, not in your content. Please report it with the traceback above.", err=True
        )
        sys.exit(2)


def _leave(code) -> None:
    """Exit with click's status once the output is flushed, without tearing down every object.

    A 10,000-page build holds ~200 MB of Python objects that the interpreter
    would free one by one on the way out (45 ms). Nothing of ours runs at
    exit: the workers have been joined and every file is written and synced.
    """
    if isinstance(code, str):  # how sys.exit reports a message: print it, status 1
        click.echo(code, err=True)
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe: nothing more can be said
        pass
    os._exit(code or 0)
