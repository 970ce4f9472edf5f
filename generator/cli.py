"""The costpress command line: the command group and the entry point.

Each command lives in a module of generator/commands/ by what it is about
(build, changes, imports, authoring, engine); importing them here adds them
to the group.
"""

from __future__ import annotations

import os
import sys
import traceback

import click

from generator.commands import authoring, build, changes, engine, imports  # noqa: F401 - they add the commands
from generator.commands.base import Terminated, cli, stop_on_signals

__all__ = ["cli", "main"]


def main() -> None:
    """Entry point: clean one-line errors for bad input, a traceback only for bugs."""
    build.LEAVE_COLLECTOR_OFF = True  # this process ends when the command does (see _leave)
    stop_on_signals()
    try:
        cli.main(prog_name="costpress")
    except SystemExit as exc:
        _leave(exc.code)
    except Terminated:
        click.echo("stopped by SIGTERM", err=True)
        _leave(143)
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
