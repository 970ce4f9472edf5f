"""What every command shares: the command group, its error handling, and the common options."""

from __future__ import annotations

from pathlib import Path

import click

from generator import __version__
from generator.errors import ContentError, CostpressError, one_line

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


class Number(click.FloatRange):
    """A float option within a range, and never NaN: every comparison with NaN is false, so click's own
    range check lets it through (and `inf` past a range with no upper end), and the engine's figures then
    cannot be formatted. `most` defaults to the ceiling content's numbers have (schema.NUMBER_CEILING)."""

    def __init__(self, least: float | None = None, most: float | None = None, **kwargs) -> None:
        from generator.schema import NUMBER_CEILING

        super().__init__(least, NUMBER_CEILING if most is None else most, **kwargs)

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail(f"{value!r} is not a number", param, ctx)
        return number


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job's time limit, `kill`, a service stopping), raised as Ctrl-C is: the same clean-up runs,
    and the build's temporary folders and staging tree go with it (the console command installs it: cli.main)."""


def stop_on_signals() -> None:
    """Raise KeyboardInterrupt on Ctrl-C (SIGINT), as Python does, and Terminated on SIGTERM (whose default
    ends the process on the spot, with no clean-up); after the first of them, ignore both.

    After the first, the process is on its way out and its clean-up takes
    milliseconds; a second signal meanwhile interrupted whatever finalizer
    was running and printed its traceback. SIGKILL still ends it at once.
    """
    import signal

    def stopping(number, _frame):
        for each in (signal.SIGINT, signal.SIGTERM):
            signal.signal(each, signal.SIG_IGN)
        raise Terminated if number == signal.SIGTERM else KeyboardInterrupt

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, stopping)


READ_ONLY = {"estimate", "memory", "lint", "changes"}  # commands that write no file


class CostpressGroup(click.Group):
    """Turns costpress errors into clean lines on stderr and exit status 1 (130 after Ctrl-C, 143 after
    SIGTERM)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ContentError as exc:
            for line in exc.problems:
                click.echo(f"error: {one_line(line)}", err=True)
            n = len(exc.problems)
            # only where the command would have written something does it say that nothing was
            written = "" if ctx.invoked_subcommand in READ_ONLY else "; nothing was written"
            click.echo(f"{n} problem{'s' if n != 1 else ''} found{written}.", err=True)
            ctx.exit(1)
        except CostpressError as exc:
            click.echo(f"error: {one_line(str(exc))}", err=True)
            ctx.exit(1)
        except Terminated:  # 128 + SIGTERM, as a shell reports it
            click.echo("stopped by SIGTERM; a build leaves the published folder as it was.", err=True)
            ctx.exit(143)
        except KeyboardInterrupt:  # Ctrl-C: the shell's status for it (128 + SIGINT), not click's "Aborted!" and 1
            click.echo("interrupted; a build leaves the published folder as it was.", err=True)
            ctx.exit(130)


@click.group(cls=CostpressGroup)
@click.version_option(__version__, prog_name="costpress")
def cli() -> None:
    """Build GPU cost articles from price snapshots and benchmark data."""


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CostpressError(f"{path}: cannot read ({exc.strerror})") from None
