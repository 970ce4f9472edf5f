"""Errors a user can act on. Only cli.py turns them into exit codes."""

from __future__ import annotations


class CostpressError(Exception):
    """Root of every error caused by input or usage rather than by a bug."""


class ContentError(CostpressError):
    """One or more problems in content files, each a complete one-line message."""

    def __init__(self, problems: list[str]):
        self.problems = sorted(dict.fromkeys(problems))
        super().__init__("\n".join(self.problems))


class BuildError(CostpressError):
    """The build could not finish (output folder, writer, check)."""
