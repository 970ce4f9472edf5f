"""Rows for the cost engine, and the input figures pages cite, built one way for every page kind."""

from __future__ import annotations

import functools

from generator import engine
from generator import formatting as fmt
from generator.engine import memory
from generator.model import Input
from generator.records import Catalog, Gpu, Method, Model, Offer


def training_job(model: Model, method: Method, count: int = 1, **overrides) -> memory.Job | None:
    """The memory model's job for a model trained by a method on `count` GPUs; None without an architecture
    or a training block. `overrides` (None values ignored) set sequence length, micro-batch, LoRA, sharding."""
    if model.architecture is None or not method.training:
        return None
    fields = dict(method.training)
    if "lora_targets" in fields:
        fields["lora_targets"] = tuple(fields["lora_targets"])
    fields.update({k: v for k, v in overrides.items() if v is not None})
    return memory.Job(model.architecture, gpus=count, **fields)


@functools.lru_cache(maxsize=4096)  # a family repeats each model × method × GPU × count across providers
def memory_need(
    model: Model, method: Method, gpu_memory_gb: float, count: int, training: tuple = ()
) -> memory.Breakdown | None:
    """The memory model's breakdown of the job on `count` GPUs of that memory; `training`, (name, value) pairs
    that replace the method's training settings (training_job's overrides)."""
    job = training_job(model, method, count, **dict(training))
    return None if job is None else memory.breakdown(job, gpu_memory_gb)


def counted_parameters(model: Model, method: Method, attention_sequence_length: int | None = None) -> float:
    """What the FLOP rule multiplies by ops_per_param: the parameters a token trains (active ones for a mixture
    of experts), plus, when asked, the attention term for sequences of that length expressed in parameters."""
    counted = float(model.active_parameters)
    arch = model.architecture
    if attention_sequence_length and arch is not None:
        extra = engine.attention_ops_per_token(
            arch.layers,
            arch.attention_heads,
            arch.head_dim,
            attention_sequence_length,
            method.forward,
            method.recompute,
        )
        counted += extra / method.ops_per_param
    return counted


def setup_row(
    cat: Catalog,
    model: Model,
    method: Method,
    offer: Offer,
    attention: int | None = None,
    memo: dict | None = None,
    training: tuple = (),
) -> dict:
    """One model × method × offer as a row for engine.flop_grid, with the names pages print.

    It fits when the memory model puts each GPU's share within its memory
    (less the reserve); for a model or method the memory model cannot
    describe, when the recorded training state fits the setup's memory.
    What depends only on the job and the GPUs (not the price) is worked out
    once per model, method, GPU and count when a `memo` dict is given (a
    family repeats each across providers). `training`: see memory_need.
    """
    key = (model.id, method.id, offer.gpu, offer.count, attention, training)
    job = memo.get(key) if memo is not None else None
    if job is None:
        job = _job_fields(cat, model, method, offer.gpu, offer.count, attention, training)
        if memo is not None:
            memo[key] = job
    gpu, setup, peak, memory_gb, state, per_gpu, fits, parameters = job
    return {
        "key": f"{method.id}@{offer.key}",
        "model": model.id,
        "model_name": model.name,
        "method": method.id,
        "method_name": method.name,
        "family": method.family,
        "provider": offer.provider,
        "provider_name": offer.provider_name,
        "offer": offer.key,
        "checked": offer.checked,
        "gpu": gpu.id,
        "gpu_name": gpu.name,
        "gpu_short": gpu.short_name,
        "count": offer.count,
        "setup": setup,
        "peak_tflops": peak,
        "memory_gb": memory_gb,
        "state_gb": state,
        "per_gpu_gb": per_gpu,
        "gpu_memory_gb": gpu.memory_gb,
        "fits": fits,
        "usd_per_hour": offer.usd_per_hour,
        "ops_per_param": method.ops_per_param,
        "parameters": parameters,  # active parameters (+ attention, if asked)
    }


def _job_fields(
    cat: Catalog, model: Model, method: Method, gpu_id: str, count: int, attention: int | None, training: tuple = ()
) -> tuple:
    """setup_row's values that do not depend on the offer's price or provider."""
    gpu = cat.gpus[gpu_id]
    mem = None if training else cat.memory.get((model.id, method.id))  # a recorded total is of the method's job
    need = memory_need(model, method, gpu.memory_gb, count, training)
    if need is not None:
        fits, per_gpu = bool(need.fits), need.per_gpu_gb
        state = mem.gb if mem else memory_need(model, method, gpu.memory_gb, 1, training).per_gpu_gb
    else:
        fits = bool(mem is not None and engine.fits(mem.gb, gpu.memory_gb, count))
        per_gpu = mem.gb / count if mem else None
        state = mem.gb if mem else None
    return (
        gpu,
        fmt.setup(count, gpu.name),
        gpu.peak_tflops * count,
        gpu.memory_gb * count,
        state,
        per_gpu,
        fits,
        counted_parameters(model, method, attention),
    )


def work_inputs(model: Model, method: Method) -> list[Input]:
    """A model's parameter count and a method's operations per parameter per token, with their sources."""
    return [
        Input(f"Parameters, {model.name}", model.parameters, "int", "", model.source, model.url),
        Input(
            f"Operations per parameter per token, {method.name}",
            method.ops_per_param,
            "num",
            "",
            method.source,
            method.url,
        ),
    ]


def gpu_inputs(gpu: Gpu) -> list[Input]:
    """A GPU's dense peak and memory, with their sources."""
    return [
        Input(f"Dense BF16 peak, {gpu.name}", gpu.peak_tflops, "num", "TFLOPS", gpu.peak_source, gpu.peak_url),
        Input(f"Memory, {gpu.name}", gpu.memory_gb, "num", "GB", gpu.memory_source, gpu.memory_url),
    ]


def price_input(offer: Offer, gpu: Gpu, name: str = "", note: str = "") -> Input:
    """An offer's hourly price with its snapshot as source and date."""
    who = f"{name} " if name else ""
    return Input(
        f"Hourly price, {who}{fmt.setup(offer.count, gpu.name)}",
        offer.usd_per_hour,
        "usd",
        "",
        f"{offer.provider_name}: {offer.source}{note}",
        offer.url,
        offer.date_phrase.removeprefix("prices "),
    )
