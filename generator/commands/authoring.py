"""Commands for writing a site: serve a preview, scaffold an article or a site, lint the content."""

from __future__ import annotations

from pathlib import Path

import click

from generator.commands.base import cli, content_option, templates_option
from generator.errors import CostpressError, one_line


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
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0 picks a free one).",
)
@click.option(
    "--drafts/--no-drafts",
    default=True,
    show_default=True,
    help="Build articles and page families marked draft: true too, each marked as a draft on its page.",
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
@click.argument("what", metavar="WHAT", type=click.Choice(["article", "family"]))
@click.argument("slug")
@click.option(
    "--kind",
    type=click.Choice(["throughput", "flops", "market", "time-to-train", "memory-check"]),
    default=None,
    help="The article's kind.  [default: throughput]",
)
@click.option("--date", "day", default=None, help="Publication date, YYYY-MM-DD (default: today).")
@click.option("--model", "models", multiple=True, help="A family's model id (repeatable; at least one).")
@click.option(
    "--method", "methods", multiple=True, help="A family's method id (repeatable; default: each with a training block)."
)
@click.option("--provider", "providers", multiple=True, help="A family's provider id (repeatable; default: every one).")
@content_option
def new(
    what: str,
    slug: str,
    kind: str | None,
    day: str | None,
    models: tuple[str, ...],
    methods: tuple[str, ...],
    providers: tuple[str, ...],
    content: Path,
) -> None:
    """Scaffold a new article under content/articles/, or a page family under content/families/, from a short
    template.

    WHAT is article or family. A family makes one page per model, method and offer whose GPUs hold the job,
    and a listing at SLUG; name its models with --model.
    """
    import datetime as dt

    from generator.scaffold import scaffold, scaffold_family

    try:
        when = dt.date.fromisoformat(day) if day else dt.date.today()
    except ValueError:
        raise CostpressError(f"--date: expected a real date as YYYY-MM-DD, got {day!r}") from None
    if what == "article":
        for option, given in (("--model", models), ("--method", methods), ("--provider", providers)):
            if given:  # an article names its model in its front matter
                raise CostpressError(f"{option}: only 'new family' takes it; an article names it in its params")
        path = scaffold(content, slug, kind or "throughput", when)
        click.echo(f"wrote {path}; edit it, then run 'costpress build'")
        return
    if kind is not None:
        raise CostpressError("--kind: only 'new article' takes it; a family's pages are of kind setup")
    if not models:
        raise CostpressError("--model: name the family's models, e.g. --model llama-3.1-8b")
    path, covers = scaffold_family(content, slug, when, models, methods, providers)
    click.echo(f"wrote {path}: {covers}; edit it, then run 'costpress build'")


@cli.command()
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--title", default="GPU cost notes", show_default=True, help="The new site's title.")
def init(folder: Path, title: str) -> None:
    """Create a new site in DIR (new or empty) that builds as it is: settings, data, one article of each kind."""
    import datetime as dt
    import shlex

    from generator.schema import LINE_RE
    from generator.starter import init_site

    if not title.strip() or LINE_RE.search(title):  # what site.yaml's title may be
        raise CostpressError("--title: expected one line of text without control characters")
    written = init_site(folder, dt.date.today(), title)
    # the folder as a shell reads it ("my site" would be two words); a name with a control character in
    # ANSI-C quotes ($'my\nsite', bash and zsh), which read its escapes back as the characters
    text = str(folder)
    if one_line(text) == text:
        shown = shlex.quote(text)
    else:
        shown = "$'" + one_line(text.replace("\\", "\\\\").replace("'", "\\'")) + "'"
    here = folder.resolve() == Path.cwd().resolve()  # `init .`: "cd ." is no step
    click.echo(f"wrote {len(written)} files into {shown}; next: {'' if here else f'cd {shown} && '}costpress build")


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
