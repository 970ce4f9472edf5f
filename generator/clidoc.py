"""The command reference in docs/commands.md, generated from --help so it cannot drift."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from generator.cli import cli

START, END = "<!-- cli-reference:start -->", "<!-- cli-reference:end -->"


def reference() -> str:
    """Markdown with the --help text of the group and every command."""
    parts = []
    ctx = click.Context(cli, info_name="costpress", terminal_width=100, max_content_width=100)
    parts.append("```text\n$ costpress --help\n" + cli.get_help(ctx).rstrip() + "\n```")
    for name in sorted(cli.commands):
        command = cli.commands[name]
        sub = click.Context(command, parent=ctx, info_name=name, terminal_width=100, max_content_width=100)
        parts.append(f"```text\n$ costpress {name} --help\n" + command.get_help(sub).rstrip() + "\n```")
    return "\n\n".join(parts)


def update(page: Path, check: bool = False) -> bool:
    """Rewrite the marked section of a page; with check, only report whether it is current."""
    text = page.read_text()
    block = f"{START}\n{reference()}\n{END}"
    new = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    if check:
        return new == text
    page.write_text(new)
    return True


if __name__ == "__main__":
    ok = update(Path("docs/commands.md"), check="--check" in sys.argv)
    sys.exit(0 if ok else 1)
