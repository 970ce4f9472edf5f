"""Commands that ask the cost engine directly: estimate, memory and calibrate."""

from __future__ import annotations

from pathlib import Path

import click

from generator import authored
from generator.commands.base import Number, cli, content_option
from generator.errors import CostpressError


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
@click.option(
    "--provider", "providers", multiple=True, help="Rank only this provider's offers (repeatable), e.g. nodus."
)
@click.option("--gpu", "gpus", multiple=True, help="Rank only offers of this GPU (repeatable), e.g. h100.")
# at least the floor content's positive numbers have (schema.NUMBER_FLOOR): 1e-300 made hours no figure can show
@click.option("--utilization", default=0.3, show_default=True, type=Number(0.000001, 1))
@click.option("--startup-hours", default=0.25, show_default=True, type=Number(0, 10_000))
@click.option("--runs", default=1, show_default=True, type=click.IntRange(1, 1_000_000))
@click.option(
    "--attention-sequence-length",
    "attention",
    type=click.IntRange(1, 10_000_000),
    default=None,
    help="Count attention operations for sequences of this length (default: the per-parameter rule alone).",
)
@click.option(
    "--sequence-length",
    type=click.IntRange(1, 10_000_000),
    default=None,
    help="Tokens per sequence, for the memory each GPU needs [the method's, or 4096] (FLOPs: see above).",
)
@click.option(
    "--micro-batch",
    type=click.IntRange(1, 100_000),
    default=None,
    help="Sequences per GPU per step [the method's, or 1].",
)
@click.option("--checkpointing/--no-checkpointing", default=None, help="Activation checkpointing [the method's].")
@click.option("--lora-rank", type=click.IntRange(1, 65_536), default=None, help="LoRA rank [the method's, or 16].")
@click.option("--lora-targets", default=None, help="Projections LoRA adapts, e.g. q,k,v,o,gate,up,down.")
@click.option("--format", "form", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
def estimate(
    content: Path,
    model: str,
    method: str,
    tokens: int,
    setups: tuple[str, ...],
    providers: tuple[str, ...],
    gpus: tuple[str, ...],
    utilization: float,
    startup_hours: float,
    runs: int,
    attention: int | None,
    sequence_length: int | None,
    micro_batch: int | None,
    checkpointing: bool | None,
    lora_rank: int | None,
    lora_targets: str | None,
    form: str,
) -> None:
    """Price one scenario the way the articles do, ranked by cost.

    Which offers hold the job comes from the memory model, with the method's training settings unless
    --sequence-length, --micro-batch, --checkpointing, --lora-rank or --lora-targets change them (as for
    costpress memory).
    """
    from generator import estimate as est
    from generator.load import load_content

    overrides = dict(
        sequence_length=sequence_length,
        micro_batch=micro_batch,
        checkpointing=checkpointing,
        lora_rank=lora_rank,
        lora_targets=_targets(lora_targets),
    )
    frame = est.estimate(
        load_content(content),
        model,
        method,
        tokens,
        list(setups),
        utilization,
        startup_hours,
        runs,
        attention,
        list(providers),
        list(gpus),
        overrides,
    )
    click.echo(est.render(frame, form), nl=False)


def _targets(lora_targets: str | None) -> tuple[str, ...] | None:
    """--lora-targets as a tuple, each named once in the order given."""
    if lora_targets is None:
        return None
    targets = tuple(dict.fromkeys(t.strip() for t in lora_targets.split(",") if t.strip()))
    if not targets:
        raise CostpressError(f"--lora-targets: expected some of q, k, v, o, gate, up, down, got {lora_targets!r}")
    return targets


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
    job, result = memory_report.report(
        cat, model, method, gpu, count, sequence_length, micro_batch, checkpointing, lora_rank, _targets(lora_targets)
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
    help="A CSV with columns step, seconds, tokens: one row per step, with that step's own time and tokens.",
)
@click.option("--tokens", "tokens", default=None, help="Tokens processed (with --seconds): 20M, 1.5B, ...")
@click.option("--seconds", type=Number(0, min_open=True), default=None, help="Training time in seconds.")
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
@click.option("--replace", is_flag=True, help="Overwrite that file when it holds something else.")
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
    replace: bool,
) -> None:
    """Turn a short measured run into a benchmark record with its implied utilization."""
    from generator import calibrate as cal
    from generator.load import load_content
    from generator.schema import NAME_MAX, is_name, parse_tokens

    if not is_name(bench_id, "id"):
        raise CostpressError(
            f"--id: expected at most {NAME_MAX} lower-case letters, digits, '.' and '-', got {bench_id!r}"
        )
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
        m = cal.Measurement(float(n), seconds, "tokens ÷ seconds given on the command line").checked(
            "--tokens/--seconds"
        )
        where = "command line"
    cat = load_content(content)
    rec, util = cal.record(
        cat, m, bench_id, model, method, gpu, count, sequence_length, source or f"Measured run ({where})"
    )
    text = cal.dump(rec)
    if out is not None and str(out) == "-":
        click.echo(text, nl=False)
        return
    target = out or content / "benchmarks" / f"{bench_id}.yaml"
    if bench_id in cat.benchmarks and bench_id not in cal.ids_in(target):
        raise CostpressError(f"--id: {bench_id!r} is already a benchmark record in {content}; choose another id")
    done = authored.write_new(target, text, replace, "--replace overwrites it, or choose another --id or --out")
    click.echo(f"{fmt_rate(m.tokens_per_second)} tokens/s, {util:.1%} of dense peak; {done} {target}")


def fmt_rate(x: float) -> str:
    return f"{x:,.2f}"
