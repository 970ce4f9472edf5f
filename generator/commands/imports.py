"""The import commands: benchmark results, model configs and provider price lists into content/."""

from __future__ import annotations

import re
from pathlib import Path

import click

from generator import authored
from generator.commands.base import cli, content_option
from generator.errors import ContentError, CostpressError


@cli.command("import-results")
@click.argument("kind", metavar="FORMAT", type=click.Choice(["mlperf"]))
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
    """Refresh a time-to-train suite's results from a benchmark summary CSV (MLPerf Training).

    FORMAT is the summary's format; one is known: mlperf.
    """
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
    authored.write_whole(out, text.encode("utf-8"))
    for line in summary.lines():
        click.echo(line)
    click.echo(f"wrote {out}")


@cli.command("import-model")
@click.argument("config", metavar="CONFIG.json", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--id", "model_id", required=True, help="Model id for models.yaml, e.g. qwen2.5-32b.")
@click.option(
    "--name",
    default=None,
    help="Name shown on pages, e.g. 'Qwen2.5 32B' (needed for a new model; default: the entry's).",
)
@click.option("--published", type=click.IntRange(1, 10**14), default=None, help="Published parameter total, checked.")
@click.option(
    "--source",
    default=None,
    help="Where the config comes from (default: the entry's source, or for a new model the file's name).",
)
@click.option("--url", default=None, help="Public address of the model or its config.")
@click.option(
    "--replace",
    is_flag=True,
    help="Update the model's entry when one with this id says something else (its other keys and comments stay).",
)
@content_option
def import_model(
    config: Path,
    model_id: str,
    name: str | None,
    published: int | None,
    source: str | None,
    url: str | None,
    replace: bool,
    content: Path,
) -> None:
    """Add a model to content/models.yaml from its Hugging Face config.json, with its parameters counted."""
    from generator import models_file
    from generator.escape import yaml_scalar
    from generator.schema import LINE_RE, NAME_MAX, is_name

    if not is_name(model_id, "id"):
        raise CostpressError(
            f"--id: expected at most {NAME_MAX} lower-case letters, digits, '.' and '-', got {model_id!r}"
        )
    if name is not None and (not name.strip() or LINE_RE.search(name)):
        raise CostpressError("--name: expected one line of text without control characters")
    if url is not None and not re.match(r"^https?://[^\s<>\"']+\Z", url):
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
    keys = models_file.entry_keys(name, arch, published, source, url)
    new_source = {"source": yaml_scalar(f"config.json ({config.name})")}  # an entry that is there keeps its own
    try:
        merged, replaced = models_file.merge(text, model_id, keys, str(target), if_new=new_source)
    except models_file.Unmergeable as exc:
        click.echo(exc.entry, nl=False)
        raise CostpressError(f"{exc}; nothing written; the lines above are what it would write") from None
    moe = f", {active:,} active per token" if arch.moe else ""
    if merged == text:
        click.echo(f"unchanged {model_id} in {target}: {total:,} parameters{moe}")
        return
    if replaced and not replace:  # an id typed for another model would put this config over that one's entry
        raise CostpressError(
            f"{target}: model {model_id!r} is already there and says something else; --replace updates its entry "
            "(its other keys and comments stay), or choose another --id"
        )
    authored.write_whole(target, merged.encode("utf-8"))
    click.echo(f"{'replaced' if replaced else 'added'} {model_id} in {target}: {total:,} parameters{moe}")


@cli.command("import-prices")
@click.argument("kind", metavar="FORMAT", type=click.Choice(["skypilot"]))
@click.argument("csv_file", metavar="CSV", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--provider", required=True, help="Provider id: the folder under prices/ (lower-case, digits, '-').")
@click.option(
    "--name", default=None, help="Provider name shown on pages (default: the provider's latest snapshot's, or the id)."
)
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
    help="Folder holding the provider folders; '-' prints the snapshot instead.",
)
@click.option(
    "--commit",
    default=None,
    help="The catalog repository's commit the CSV comes from (default: read from an extract's file name).",
)
@click.option("--replace", is_flag=True, help="Overwrite a snapshot of that day that holds something else.")
@content_option
def import_prices(
    kind: str,
    csv_file: Path,
    provider: str,
    name: str | None,
    checked,
    out: Path,
    commit: str | None,
    replace: bool,
    content: Path,
) -> None:
    """Turn a cloud price catalog (a SkyPilot vms.csv) into a dated price snapshot.

    FORMAT is the catalog's format; one is known: skypilot.
    """
    from generator.importers import import_skypilot
    from generator.load import load_hardware
    from generator.schema import NAME_MAX, is_name

    if not is_name(provider, "slug"):
        raise CostpressError(
            f"--provider: expected at most {NAME_MAX} lower-case letters, digits and '-', got {provider!r}"
        )
    if commit is not None and not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise CostpressError(f"--commit: expected a git commit hash (7 to 40 hex digits), got {commit!r}")
    printed = str(out) == "-"  # as calibrate's --out -: it made a folder named '-'
    folder = (content / "prices" if printed else out) / provider
    if name is None:
        name = _latest_name(folder)
    text, summary = import_skypilot(csv_file, provider, checked.date(), load_hardware(content), name, commit)
    if printed:
        for line in summary.lines():
            click.echo(line, err=True)
        click.echo(text, nl=False)
        return
    target = folder / f"{checked.date().isoformat()}.yaml"
    done = authored.write_new(target, text, replace, "--replace overwrites it (a hand edit in it is lost)")
    for line in summary.lines():
        click.echo(line)
    click.echo(f"{done} {target}")


def _latest_name(folder: Path) -> str | None:
    """The `name` of the provider's newest snapshot (a refresh keeps what pages call the provider), or None
    when it has none yet: the import then names it by its id. A newest snapshot whose name cannot be read is
    an error, not a guess (naming the provider by its id would outlive the fix to that file)."""
    from generator.schema import parse_yaml, read_text

    for path in sorted(folder.glob("*.yaml"), reverse=True):
        problems: list[str] = []  # read and parsed as the build does, with its messages
        text = read_text(path, str(path), problems)
        doc = parse_yaml(text, str(path)) if text is not None else None
        problems += doc.problems if doc is not None else []
        if problems:
            raise CostpressError(f"{problems[0]}; give --name to name the provider")
        name = doc.data.get("name") if isinstance(doc.data, dict) else None
        if not (isinstance(name, str) and name.strip()):
            raise CostpressError(f"{path}: no provider name in it to keep; give --name to name the provider")
        return name
    return None
