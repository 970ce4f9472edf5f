"""`costpress memory`: one training job's memory per GPU, part by part, as text or JSON."""

from __future__ import annotations

import json

from generator import formatting as fmt
from generator.engine import memory
from generator.errors import CostpressError
from generator.records import Catalog
from generator.scenarios import training_job

LABELS = {
    "weights": "weights",
    "adapters": "LoRA adapters",
    "gradients": "gradients",
    "optimizer": "optimizer state",
    "activations": "activations",
    "logits": "logits and loss",
    "overhead": "CUDA context",
}


def report(
    cat: Catalog,
    model: str,
    method: str,
    gpu: str,
    count: int,
    sequence_length: int | None = None,
    micro_batch: int | None = None,
    checkpointing: bool | None = None,
    lora_rank: int | None = None,
    lora_targets: tuple[str, ...] | None = None,
) -> tuple[memory.Job, memory.Breakdown]:
    for option, value, table in (("--model", model, cat.models), ("--method", method, cat.methods),
                                 ("--gpu", gpu, cat.gpus)):  # fmt: skip
        if value not in table:
            raise CostpressError(f"{option}: unknown {option[2:]} {value!r}; known: {', '.join(sorted(table))}")
    overrides = dict(sequence_length=sequence_length, micro_batch=micro_batch, checkpointing=checkpointing,
                     lora_rank=lora_rank, lora_targets=lora_targets)  # fmt: skip
    training = checked_training(cat, model, method, overrides, always=True)
    job = training_job(cat.models[model], cat.methods[method], count, **dict(training))
    return job, memory.breakdown(job, cat.gpus[gpu].memory_gb)


def checked_training(cat: Catalog, model: str, method: str, overrides: dict, always: bool = False) -> tuple:
    """The options that replace the method's training settings (None: not given) as scenarios.memory_need takes
    them, or a one-line error when the memory model cannot take them: a model with no architecture, a method
    with no training block (checked only when some are given, unless `always`), LoRA options for a method that
    trains every parameter, an unknown LoRA target."""
    given = {k: v for k, v in overrides.items() if v is not None}
    if not given and not always:
        return ()
    m, meth = cat.models[model], cat.methods[method]
    if m.architecture is None:
        raise CostpressError(f"--model: {model} has no architecture in models.yaml; add one with import-model")
    if not meth.training:
        raise CostpressError(f"--method: {method} has no training block in methods.yaml")
    job = training_job(m, meth, 1, **given)
    lora_option = next((f"--{k.replace('_', '-')}" for k in ("lora_rank", "lora_targets") if k in given), None)
    if lora_option and job.trainable != "lora":  # it would be ignored without a word
        lora = [k for k, v in sorted(cat.methods.items()) if dict(v.training or ()).get("trainable") == "lora"]
        raise CostpressError(
            f"{lora_option}: method {method} trains every parameter, so it has no LoRA adapters; "
            f"LoRA options apply to {', '.join(lora) or 'a method whose training says trainable: lora'}"
        )
    if job.trainable == "lora":
        try:
            memory.lora_parameters(job.arch, job.lora_rank, job.lora_targets)
        except ValueError as exc:  # an unknown LoRA target
            raise CostpressError(f"--lora-targets: {exc}") from None
    return tuple(sorted(given.items()))


def render(cat: Catalog, model: str, method: str, gpu: str, job: memory.Job, b: memory.Breakdown, form: str) -> str:
    g = cat.gpus[gpu]
    if form == "json":
        doc = {
            "model": model,
            "method": method,
            "gpu": gpu,
            "count": job.gpus,
            "layout": job.layout,
            "sequence_length": job.sequence_length,
            "micro_batch": job.micro_batch,
            "checkpointing": job.checkpointing,
            "parts": {k: round(v, 6) for k, v in b.parts.items()},
            "per_gpu_gb": round(b.per_gpu_gb, 6),
            "gpu_memory_gb": g.memory_gb,
            "usable_gb": round(b.usable_gb, 6),
            "fits": b.fits,
            "notes": list(b.notes),
        }
        return json.dumps(doc, indent=1) + "\n"
    name = f"{cat.models[model].name}, {cat.methods[method].name}, {job.gpus} × {g.name}"
    layout = {"single": "one GPU", "ddp": "data parallel", "fsdp": "fully sharded, FSDP"}[job.layout]
    lines = [
        f"{name} ({layout}); {fmt.number(job.sequence_length)} tokens × micro-batch {job.micro_batch}, "
        f"activation checkpointing {'on' if job.checkpointing else 'off'}",
        "",
    ]
    width = max(len(v) for v in LABELS.values())
    for key, value in b.parts.items():
        if key == "adapters" and job.trainable != "lora":  # a full fine-tune has none: no line of zeros
            continue
        lines.append(f"  {LABELS[key].ljust(width)}  {fmt.number(value, 1).rjust(8)} GB")
    lines.append(f"  {'per GPU'.ljust(width)}  {fmt.number(b.per_gpu_gb, 1).rjust(8)} GB")
    verdict = "fits" if b.fits else "does not fit"
    lines += ["", f"{verdict}: {g.name} has {fmt.number(g.memory_gb)} GB, {fmt.number(b.usable_gb, 1)} GB usable "
                  f"after a {memory.RESERVE:.0%} reserve"]  # fmt: skip
    if job.layout == "fsdp":
        lines.append(
            "note: weights, gradients and optimizer state are this GPU's shard; weights add two gathered layers"
        )
    if job.weights != "bf16":
        lines.append(f"note: {job.weights} weights inside the layers; embeddings, output layer and norms in bf16")
    lines += [f"note: {n}" for n in b.notes]
    return "\n".join(lines) + "\n"
