"""`costpress estimate`: the article arithmetic for one ad-hoc scenario."""

from __future__ import annotations

import json

import pandas as pd

from generator import engine
from generator import formatting as fmt
from generator.errors import CostpressError
from generator.memory_report import checked_training
from generator.records import Catalog
from generator.scenarios import setup_row, training_job


def estimate(
    cat: Catalog,
    model: str,
    method: str,
    tokens: int,
    setups: list[str] | None = None,
    utilization: float = 0.3,
    startup_hours: float = 0.25,
    runs: int = 1,
    attention: int | None = None,
    providers: list[str] | None = None,
    gpus: list[str] | None = None,
    overrides: dict | None = None,
) -> pd.DataFrame:
    """Cost of one scenario on the named offers, or on every fitting offer (of the named providers and GPUs,
    when some are named), cheapest first. `overrides`: training settings that replace the method's for the
    memory model (sequence_length, micro_batch, checkpointing, lora_rank, lora_targets; None: the method's)."""
    _known("--model", "model", [model], cat.models)
    _known("--method", "method", [method], cat.methods)
    _known("--provider", "provider", providers, cat.snapshots)
    _known("--gpu", "GPU", gpus, cat.gpus)
    training = checked_training(cat, model, method, overrides or {})
    if setups and (providers or gpus):
        option = "--provider" if providers else "--gpu"
        raise CostpressError(f"{option}: not with --setup, which names the setups to price itself")
    if setups:
        offers = []
        for key in dict.fromkeys(setups):  # a setup named twice is one row
            offer = cat.offer(key)
            if offer is None:
                raise CostpressError(unknown_setup(cat, key))
            offers.append(offer)
    else:
        offers = [
            o
            for provider, snaps in cat.snapshots.items()
            if not providers or provider in providers
            for o in snaps[-1].offers
            if not gpus or o.gpu in gpus
        ]
    rows, short = [], []
    for offer in offers:
        row = setup_row(cat, cat.models[model], cat.methods[method], offer, attention, training=training)
        if row["per_gpu_gb"] is None:  # with no memory figure or model, a named setup is taken at its word
            row["fits"] = True
        if row["fits"] or setups:
            rows.append({**row, "key": offer.key})
        else:
            short.append(row)
    job = training_job(cat.models[model], cat.methods[method], 1, **dict(training))
    if not rows:
        raise CostpressError(
            _none_fits(cat, model, method, short, _narrowed(cat, providers, gpus), job if training else None)
        )
    grid = engine.flop_grid(pd.DataFrame(rows), [tokens], utilization, startup_hours)
    grid["runs"] = runs
    grid["attention_sequence_length"] = attention or 0
    grid["total"] = engine.trial_budget(grid["cost_with_startup"], runs)
    ranked = engine.rank(grid, "cost_with_startup")
    ranked.attrs["job"] = job  # one job for every row: what the GB per GPU assume
    return ranked


def _known(option: str, what: str, named: list[str] | None, known: dict) -> None:
    for name in named or ():
        if name not in known:
            raise CostpressError(f"{option}: unknown {what} {name!r}; known: {', '.join(sorted(known))}")


def _narrowed(cat: Catalog, providers: list[str] | None, gpus: list[str] | None) -> str:
    """' of Nodus and Lambda, with H100 SXM GPUs': what --provider and --gpu kept, for a line about none."""
    out = ""
    if providers:
        out += f" of {fmt.series([cat.snapshots[p][-1].name for p in dict.fromkeys(providers)])}"
    if gpus:
        out += f" with {fmt.series([cat.gpus[g].name for g in dict.fromkeys(gpus)], 'or')} GPUs"
    return out


def _none_fits(cat: Catalog, model: str, method: str, rows: list[dict], narrowed: str = "", job=None) -> str:
    """Why no offer is listed: the one that comes nearest to holding the job, and what it would need (`job`:
    the memory model's, when options changed its settings: they are named)."""
    what = f"{cat.models[model].name} with {cat.methods[method].name}"
    if job:  # the settings that made it not fit
        what += f" ({_settings(job)})"
    if not rows:
        return (
            f"no offer{narrowed} in the newest price snapshots"
            if narrowed
            else f"no offer we have prices for holds {what}"
        )
    near = min(rows, key=lambda r: (r["per_gpu_gb"] / r["gpu_memory_gb"], r["offer"]))
    return (
        f"no offer{narrowed} we have prices for holds {what}: the nearest, {near['offer']} ({near['setup']}), "
        "would need "
        f"{fmt.number(near['per_gpu_gb'], 1)} GB on each GPU of {fmt.number(near['gpu_memory_gb'])} GB "
        "(costpress memory shows the parts; --setup prices a setup that does not hold it)"
    )


def _settings(job) -> str:
    """'4,096-token sequences, micro-batch 1, activation checkpointing on' (and the LoRA rank, for LoRA)."""
    said = f"{fmt.number(job.sequence_length)}-token sequences, micro-batch {job.micro_batch}, "
    said += f"activation checkpointing {'on' if job.checkpointing else 'off'}"
    return said + (f", LoRA rank {job.lora_rank} on {','.join(job.lora_targets)}" if job.trainable == "lora" else "")


def unknown_setup(cat: Catalog, key: str) -> str:
    """Why --setup KEY names no offer, with what would: the provider's offers, and who offers that GPU."""
    provider = key.partition(":")[0]
    snap = cat.snapshot(provider)
    if snap is None:
        known = ", ".join(sorted(cat.snapshots))
        form = "expected provider:gpuxcount, e.g. nodus:b200x1"
        return f"--setup: no provider {provider!r} in {key!r} ({form}); known: {known}"
    offers = ", ".join(o.key for o in snap.offers)
    return f"--setup: {snap.name} has no offer {key!r}; its offers: {offers}{cat.offered_elsewhere(key)}"


COLUMNS = [
    ("offer", "Setup", "text"),
    ("setup", "GPUs", "text"),
    ("per_gpu_gb", "GB/GPU", "num1"),
    ("usd_per_hour", "USD/h", "usd"),
    ("hours", "Hours", "hours"),
    ("training_cost", "Training", "usd"),
    ("cost_with_startup", "With startup", "usd"),
    ("usd_per_million", "Per M tokens", "usd"),
    ("total", "All runs", "usd"),
]


def render(frame: pd.DataFrame, form: str) -> str:
    """Table, Markdown or JSON text of an estimate."""
    job = frame.attrs.get("job")  # the memory model's job (estimate), or None
    if form == "json":
        settings = {k: getattr(job, k, None) for k in ("sequence_length", "micro_batch", "checkpointing")}
        numbers = [
            "fits",
            "per_gpu_gb",
            "gpu_memory_gb",
            "tokens",
            "utilization",
            "usd_per_hour",
            "hours",
            "training_cost",
            "cost_with_startup",
            "usd_per_million",
            "runs",
            "total",
            "attention_sequence_length",
        ]
        records = [
            {
                "setup": r["offer"],
                "provider": r["provider_name"],
                "gpus": r["setup"],
                "checked": r["checked"].isoformat(),
                **{k: r[k] for k in numbers},
                **settings,
            }
            for r in frame.to_dict("records")
        ]
        return json.dumps(records, indent=1, ensure_ascii=False) + "\n"
    cells = [  # the setup as --setup takes it (a data cell: not capitalized like a phrase)
        [fmt.data_cell(r[key], kind) if key == "offer" else fmt.cell(r[key], kind) for key, _, kind in COLUMNS]
        + (["" if r["fits"] else "does not fit"])
        for r in frame.to_dict("records")
    ]
    header = [label for _, label, _ in COLUMNS] + [""]
    if form == "markdown":
        lines = ["| " + " | ".join(header[:-1]) + " | Note |", "|" + "---|" * (len(header) - 1) + "---|"]
        lines += ["| " + " | ".join(c.replace("|", "\\\\|") for c in row) + " |" for row in cells]
        return "\n".join(lines) + "\n"
    first = frame.iloc[0]
    seq = int(first["attention_sequence_length"])
    convention = f"operations: {fmt.number(first['ops_per_param'])} per parameter per token" + (
        f", plus attention over {fmt.number(seq)}-token sequences" if seq else "; attention term not counted"
    )
    if job is not None:
        convention += f"\nmemory: {_settings(job)}"
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(header)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    out += [
        "  ".join(
            c.rjust(w) if i >= 2 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in cells
    ]
    return "\n".join([*out, "", convention]) + "\n"
