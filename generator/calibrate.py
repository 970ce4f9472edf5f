"""`costpress calibrate`: a measured run's throughput as a benchmark record articles can use."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from generator import engine
from generator import formatting as fmt
from generator.errors import CostpressError
from generator.records import Catalog


@dataclass
class Measurement:
    tokens: float
    seconds: float
    how: str  # one line: where the figures came from

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CostpressError(f"{path}: cannot read as JSON ({exc})") from None


def from_trainer(folder: Path, sequence_length: int | None) -> Measurement:
    """A Hugging Face Trainer output folder: trainer_state.json and train_results.json."""
    state = _json(folder / "trainer_state.json")
    results = _json(folder / "train_results.json") if (folder / "train_results.json").exists() else {}
    history = state.get("log_history") or []
    final = next((h for h in reversed(history) if "train_runtime" in h), {})
    seconds = results.get("train_runtime") or final.get("train_runtime")
    if not seconds or seconds <= 0:
        raise CostpressError(f"{folder}: no train_runtime in train_results.json or trainer_state.json log_history")
    seen = next((h["num_input_tokens_seen"] for h in reversed(history) if h.get("num_input_tokens_seen")), None)
    if seen:
        return Measurement(float(seen), float(seconds), "num_input_tokens_seen ÷ train_runtime")
    samples = results.get("train_samples")
    epochs = results.get("epoch") or state.get("epoch") or final.get("epoch")
    if not (samples and epochs):
        raise CostpressError(
            f"{folder}: train_results.json needs train_samples and epoch (or log num_input_tokens_seen)"
        )
    if not sequence_length:
        raise CostpressError(f"{folder}: give --sequence-length: the log counts samples, not tokens")
    tokens = float(samples) * float(epochs) * sequence_length
    return Measurement(tokens, float(seconds), f"train_samples × epochs × {sequence_length} tokens ÷ train_runtime")


def from_csv(path: Path, skip_steps: int = 0) -> Measurement:
    """A CSV with columns step, seconds, tokens: one row per optimizer step."""
    try:
        rows = list(csv.DictReader(io.StringIO(path.read_text())))
    except OSError as exc:
        raise CostpressError(f"{path}: cannot read ({exc.strerror})") from None
    if not rows or not {"step", "seconds", "tokens"} <= set(rows[0]):
        raise CostpressError(f"{path}: expected a CSV with columns step, seconds, tokens")
    kept = [r for r in rows if int(r["step"]) > skip_steps]
    try:
        seconds = sum(float(r["seconds"]) for r in kept)
        tokens = sum(float(r["tokens"]) for r in kept)
    except ValueError as exc:
        raise CostpressError(f"{path}: {exc}") from None
    if seconds <= 0 or tokens <= 0:
        raise CostpressError(f"{path}: no steps left after skipping {skip_steps}")
    note = f", first {skip_steps} steps skipped as warm-up" if skip_steps else ""
    return Measurement(tokens, seconds, f"sum of tokens ÷ sum of seconds over {len(kept)} steps{note}")


def record(
    cat: Catalog,
    m: Measurement,
    bench_id: str,
    model: str,
    method: str,
    gpu: str,
    count: int,
    sequence_length: int | None,
    source: str,
) -> tuple[dict, float]:
    """The benchmark record, and the utilization of dense peak it implies."""
    for value, table, what in (
        (model, cat.models, "--model"),
        (method, cat.methods, "--method"),
        (gpu, cat.gpus, "--gpu"),
    ):
        if value not in table:
            raise CostpressError(f"{what}: unknown id {value!r}; known: {', '.join(sorted(table))}")
    util = engine.implied_utilization(
        cat.methods[method].ops_per_param,
        cat.models[model].parameters,
        m.tokens_per_second,
        cat.gpus[gpu].peak_tflops * count,
    )
    rec = {
        "id": bench_id,
        "model": model,
        "method": method,
        "gpu": gpu,
        "count": count,
        "tokens_per_second": round(m.tokens_per_second, 2),
        **({"sequence_length": sequence_length} if sequence_length else {}),
        "definition": f"measured: {m.how}",
        "notes": f"{fmt.number(m.tokens)} tokens in {fmt.number(m.seconds, 1)} s; implies {fmt.pct(util, 1)} "
        f"of the dense BF16 peak of {count} × {cat.gpus[gpu].name}",
        "source": source,
    }
    return rec, util


def dump(rec: dict) -> str:
    return "# Written by costpress calibrate.\n" + yaml.safe_dump(
        {"benchmarks": [rec]}, sort_keys=False, allow_unicode=True, width=1000
    )
