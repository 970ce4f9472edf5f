"""Errors a user can act on. Only cli.py turns them into exit codes."""

from __future__ import annotations

import re
from pathlib import Path


class CostpressError(Exception):
    """Root of every error caused by input or usage rather than by a bug."""


class ContentError(CostpressError):
    """One or more problems in content files, each a complete one-line message."""

    def __init__(self, problems: list[str]):
        self.problems = sorted(dict.fromkeys(problems))
        super().__init__("\n".join(self.problems))


class BuildError(CostpressError):
    """The build could not finish (output folder, writer, check)."""


# Characters that would break a message's one line or act on the terminal: C0 and C1 controls (a line feed,
# an escape sequence), DEL, the Unicode line and paragraph separators, and bidirectional overrides and isolates.
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(message: str) -> str:
    """`message` as one line a terminal shows as written: each character of _UNSHOWABLE as its Python escape
    (a file named "a<line feed>b.md" is shown as a\\nb.md). Values quoted with !r are escaped already; this
    covers what is not, such as a file's name."""
    return _UNSHOWABLE.sub(lambda m: repr(m.group())[1:-1], message)


def unmade_folder(folder: Path) -> str | None:
    """Make `folder` and its parents; None when that worked (or it was there), else why not, in a few words
    for a one-line error: "a file is there" where a file has its name, else the system's reason."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return "a file is there"
    except OSError as exc:
        return str(exc.strerror or exc)
    return None
