"""Published peak-memory measurements (content/measurements/*.yaml) and the memory model's prediction for each.

A file names its source, what its counter measures and the conditions it
states; each measurement names a model of models.yaml, the GPU it ran on, the
peak per GPU and the job as the memory model describes it. The vendor guide's
training-state totals in methods.yaml (`memory:`) are set beside the model too.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from generator.engine import memory
from generator.schema import Doc, F, list_of, opt, record, validate_whole

GIB = 2**30 / 1e9  # GB in a GiB

JOB = record(
    {
        "weights": F("choice", choices=tuple(memory.WEIGHT_BYTES)),
        "trainable": F("choice", choices=("all", "lora")),
        "optimizer": F("choice", choices=tuple(memory.OPTIMIZER_BYTES)),
        "master_weights": F("bool"),
        "checkpointing": F("bool"),
        "lora_rank": opt("count"),
        "lora_targets": list_of(F("choice", choices=memory.LORA_TARGETS), required=False, nonempty=True),
        "sequence_length": F("count", most=10_000_000),
        "micro_batch": F("count", most=100_000),
        "chunked_loss": opt("bool"),
        "flash_attention": opt("bool"),
        "sharding": opt("choice", choices=("single", "ddp", "fsdp")),
        "optimizer_on_gpu": opt("choice", choices=("yes", "cpu", "paged")),
        "weights_on_cpu": opt("bool"),
        "optimizer_in_backward": opt("bool"),
    }
)

FILE = record(
    {
        "source": F("text"),
        "url": opt("url"),
        "counter": F("choice", choices=("pytorch-reserved", "total")),
        "conditions": F("para"),
        "measurements": list_of(
            record(
                {
                    "id": F("id"),
                    "model": F("id"),
                    "label": F("text"),
                    "gpu_name": F("text"),
                    "gpu_memory_gb": F("positive"),
                    "count": F("count", most=100_000),
                    "peak": F("positive"),
                    "unit": F("choice", choices=("GB", "GiB")),
                    "job": JOB,
                    "explanation": F("para"),
                }
            )
        ),
    }
)


@dataclass(frozen=True)
class Measurement:
    id: str
    model: str
    label: str
    gpu_name: str
    gpu_memory_gb: float
    count: int
    peak_gb: float  # in GB whatever unit the source used
    unit: str
    peak_as_published: float
    job: tuple  # (key, value) pairs for memory.Job
    explanation: str
    counter: str
    source: str
    url: str | None
    conditions: str
    file: str
    line: int | None


def load(
    folder: Path, models: dict, problems: list[str], load_doc, broken: Collection[str] = ()
) -> tuple[Measurement, ...]:
    """Every measurement under folder; problems recorded (unknown models, duplicate ids). A measurement of a
    model in `broken` (its architecture block has a problem, reported in models.yaml) is left out quietly:
    a line for each, listed before the one naming the cause, sent readers to the wrong file."""
    out: list[Measurement] = []
    seen: set[str] = set()
    if not folder.is_dir():
        return ()
    for path in sorted(folder.glob("*.yaml")):
        doc: Doc | None = load_doc(path, problems)
        if doc is None:
            continue
        data = validate_whole(doc, doc.data, FILE)
        if not data:
            continue
        for i, m in enumerate(data["measurements"]):
            if not m or any(v is None for k, v in m.items() if k in ("id", "model", "peak", "unit", "job")):
                continue
            if m["id"] in seen:
                doc.problem(("measurements", i, "id"), f"duplicate measurement id {m['id']!r}")
                continue
            seen.add(m["id"])
            if models and m["model"] not in models:
                doc.problem(("measurements", i, "model"), f"unknown model {m['model']!r}")
                continue
            if models and models[m["model"]].architecture is None:
                if m["model"] not in broken:
                    doc.problem(
                        ("measurements", i, "model"), f"model {m['model']!r} has no architecture to predict from"
                    )
                continue
            job = {k: tuple(v) if isinstance(v, list) else v for k, v in m["job"].items() if v is not None}
            factor = GIB if m["unit"] == "GiB" else 1.0
            out.append(
                Measurement(
                    id=m["id"], model=m["model"], label=m["label"], gpu_name=m["gpu_name"],
                    gpu_memory_gb=m["gpu_memory_gb"], count=m["count"], peak_gb=m["peak"] * factor,
                    unit=m["unit"], peak_as_published=m["peak"], job=tuple(sorted(job.items())),
                    explanation=" ".join(m["explanation"].split()), counter=data["counter"],
                    source=data["source"], url=data["url"], conditions=" ".join(data["conditions"].split()),
                    file=doc.file, line=doc.line(("measurements", i, "peak")),
                )
            )  # fmt: skip
    return tuple(out)


def predict(m: Measurement, models: dict) -> memory.Breakdown:
    job = memory.Job(models[m.model].architecture, gpus=m.count, **dict(m.job))
    return memory.breakdown(job, m.gpu_memory_gb)


def predicted_gb(m: Measurement, b: memory.Breakdown) -> float:
    """What the measurement's counter would show: PyTorch's counters leave out the CUDA context."""
    return b.measured_gb if m.counter == "pytorch-reserved" else b.per_gpu_gb
