"""The costpress command line."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import click

from generator import __version__
from generator.build import render_site
from generator.errors import ContentError, CostpressError
from generator.write import compare, publish

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
    help="Folder holding the Jinja templates and assets.",
)


class CostpressGroup(click.Group):
    """Turns costpress errors into clean lines on stderr and exit status 1."""

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


@click.group(cls=CostpressGroup)
@click.version_option(__version__, prog_name="costpress")
def cli() -> None:
    """Build GPU cost articles from price snapshots and benchmark data."""


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
def build(content: Path, out: Path, templates: Path, check: bool) -> None:
    """Build every article into the output folder (HTML, Markdown, figures.json)."""
    result = render_site(content, templates)
    if check:
        diff = compare(result.files, out)
        if not diff.clean:
            for line in diff.lines():
                click.echo(line)
            raise CostpressError(
                f"{out} is not what a build of {content} produces "
                f"({len(diff.lines())} files differ); run 'costpress build'"
            )
        click.echo(f"{out} is up to date ({len(result.files)} files)")
        return
    diff = publish(result.files, out)
    written = len(diff.changed) + len(diff.added)
    click.echo(
        f"built {len(result.pages)} articles into {out}: {written} files written, "
        f"{diff.unchanged} unchanged, {len(diff.removed)} removed"
    )


def main() -> None:
    """Entry point: clean one-line errors for bad input, a traceback only for bugs."""
    try:
        cli.main(prog_name="costpress")
    except KeyboardInterrupt:
        click.echo("interrupted; the output folder is unchanged.", err=True)
        sys.exit(130)
    except Exception:
        traceback.print_exc()
        click.echo(
            "This is a bug in costpress, not in your content. Please report it with the traceback above.", err=True
        )
        sys.exit(2)
