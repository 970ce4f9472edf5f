"""`costpress changes`: what a build would change in the published figures and claims."""

from __future__ import annotations

from pathlib import Path

import click

from generator.commands.base import _read, cli, content_option, out_option, templates_option
from generator.errors import CostpressError, one_line


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
    help="Read the new figures from this figures.json instead of building (the report then has no build warnings).",
)
@click.option("--format", "form", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option(
    "--max-chars",
    type=click.IntRange(min=1000),
    help="Markdown only: at most this many characters (a pull request body holds 65536); lists of pages and "
    "sections shared by pages with the same changes name ten of them first, and whole pages are left off if need "
    "be.",
)
def changes(
    content: Path,
    out: Path,
    templates: Path,
    ref: str,
    old_file: Path | None,
    new_file: Path | None,
    form: str,
    max_chars: int | None,
) -> None:
    """Compare figures and claims: the site at a git ref against a fresh build. Exit 0 if none changed, else 3."""
    from generator import changes as ch

    if max_chars is not None and form != "markdown":
        raise CostpressError(f"--max-chars applies to --format markdown, not --format {form}")

    # figures.json names the parts that hold the family pages; each is read from where the file came from
    if old_file is not None:
        old_raw, old_name = _read(old_file), str(old_file)
        old_part = _part_reader(old_file.parent)
    else:
        old_raw, old_name = ch.at_ref(ref, out / "figures.json"), f"{ref}:{out}/figures.json"
        old_part = lambda rel: ch.at_ref(ref, out / rel)  # noqa: E731
    written: set[str] = set()  # the written articles, listed first (a cut report keeps them)
    old = ch.parse(old_raw, old_name, old_part, written) if old_raw is not None else {}
    warnings: list[str] = []  # the fresh build's: a report for a pull request opens with them
    if new_file is not None:
        new = ch.parse(_read(new_file), str(new_file), _part_reader(new_file.parent), written)
        answers = lambda slug: (new_file.parent / slug / "index.html").is_file()  # noqa: E731
    else:
        from generator.build import render_site

        result = render_site(content, templates)
        built, warnings = result.files, [one_line(w) for w in result.warnings]
        new = ch.parse(
            built["figures.json"], "the fresh build", lambda rel: built[rel] if rel in built else None, written
        )
        answers = lambda slug: f"{slug}/index.html" in built  # noqa: E731
    found = ch.compare(old, new, answers, written)
    if form == "markdown":
        report = ch.render_markdown(found, max_chars, warnings)
    elif form == "json":
        report = ch.render_json(found, warnings)
    else:
        report = ch.render_text(found)
    click.echo(report, nl=False)
    if form == "text":
        for line in warnings:  # after the report, as the build says them
            click.echo(f"warning: {line}", err=True)
    if found:
        raise click.exceptions.Exit(3)


def _part_reader(folder: Path):
    def read(rel: str) -> bytes | None:
        path = folder / rel
        return _read(path) if path.is_file() else None

    return read
