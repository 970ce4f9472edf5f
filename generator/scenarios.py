"""Rows for the cost engine, and the input figures pages cite, built one way for every page kind."""

from __future__ import annotations

from generator import engine
from generator.load import Catalog, Gpu, Method, Model, Offer
from generator.model import Input


def setup_row(cat: Catalog, model: Model, method: Method, offer: Offer) -> dict:
    """One model × method × offer as a row for engine.flop_grid, with the names pages print."""
    gpu = cat.gpus[offer.gpu]
    mem = cat.memory.get((model.id, method.id))
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
        "setup": f"{offer.count} × {gpu.name}",
        "peak_tflops": gpu.peak_tflops * offer.count,
        "memory_gb": gpu.memory_gb * offer.count,
        "state_gb": mem.gb if mem else None,
        "fits": bool(mem is not None and engine.fits(mem.gb, gpu.memory_gb, offer.count)),
        "usd_per_hour": offer.usd_per_hour,
        "ops_per_param": method.ops_per_param,
        "parameters": float(model.parameters),
    }


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
        f"Hourly price, {who}{offer.count} × {gpu.name}",
        offer.usd_per_hour,
        "usd",
        "",
        f"{offer.provider_name}: {offer.source}{note}",
        offer.url,
        offer.checked.isoformat(),
    )
