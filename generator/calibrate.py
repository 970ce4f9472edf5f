"""`costpress calibrate`: a measured run's throughput as a benchmark record articles can use."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
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

    def checked(self, where: str) -> Measurement:
        """This measurement, when it can be a run's: tokens, seconds and their rate within what content holds
        (schema.TOKENS_CEILING, NUMBER_FLOOR, NUMBER_CEILING); CostpressError naming `where` otherwise."""
        from generator.schema import NUMBER_CEILING, NUMBER_FLOOR, TOKENS_CEILING

        for what, value, least, most in (
            ("tokens", self.tokens, 1, TOKENS_CEILING),
            ("seconds", self.seconds, NUMBER_FLOOR, NUMBER_CEILING),
            ("tokens per second", self.tokens_per_second, NUMBER_FLOOR, NUMBER_CEILING),
        ):
            if not least <= value <= most:
                raise CostpressError(f"{where}: {what} {value:g}; expected {least:g} to {most:g} for a measured run")
        return self


def _json(path: Path) -> dict:
    """A Trainer's JSON file, which holds one object."""
    try:
        found = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise CostpressError(f"{path}: cannot read as JSON ({exc})") from None
    except RecursionError:  # the decoder recurses once a level
        raise CostpressError(f"{path}: cannot read as JSON (nested too deeply)") from None
    if not isinstance(found, dict):
        raise CostpressError(f"{path}: expected a JSON object, as the Trainer writes, got a {type(found).__name__}")
    return found


def _number(value, where: str, positive: bool = True) -> float:
    """`value` as a finite float (above zero, or at least zero); CostpressError naming `where` otherwise."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if type(value) is bool or not math.isfinite(number) or number < 0 or (positive and number == 0):
        raise CostpressError(
            f"{where}: expected a finite number {'above' if positive else 'of at least'} 0, got {value!r}"
        )
    return number


def from_trainer(folder: Path, sequence_length: int | None) -> Measurement:
    """A Hugging Face Trainer output folder: trainer_state.json and train_results.json."""
    state = _json(folder / "trainer_state.json")
    results = _json(folder / "train_results.json") if (folder / "train_results.json").exists() else {}
    history = state.get("log_history") or []
    if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
        raise CostpressError(f"{folder}/trainer_state.json: log_history: expected a list of log entries (objects)")
    final = next((h for h in reversed(history) if "train_runtime" in h), {})
    seconds = results.get("train_runtime") or final.get("train_runtime")
    if not seconds:
        raise CostpressError(f"{folder}: no train_runtime in train_results.json or trainer_state.json log_history")
    seconds = _number(seconds, f"{folder}: train_runtime")
    seen = next((h["num_input_tokens_seen"] for h in reversed(history) if h.get("num_input_tokens_seen")), None)
    if seen:
        return Measurement(
            _number(seen, f"{folder}: num_input_tokens_seen"), seconds, "num_input_tokens_seen ÷ train_runtime"
        ).checked(str(folder))
    samples = results.get("train_samples")
    epochs = results.get("epoch") or state.get("epoch") or final.get("epoch")
    if not (samples and epochs):
        raise CostpressError(
            f"{folder}: train_results.json needs train_samples and epoch (or log num_input_tokens_seen)"
        )
    if not sequence_length:
        raise CostpressError(f"{folder}: give --sequence-length: the log counts samples, not tokens")
    tokens = _number(samples, f"{folder}: train_samples") * _number(epochs, f"{folder}: epoch") * sequence_length
    how = f"train_samples × epochs × {sequence_length} tokens ÷ train_runtime"
    return Measurement(tokens, seconds, how).checked(str(folder))


def _refuse_running_totals(path: Path, kept: list[tuple[float, float]]) -> None:
    """Stop on a log of elapsed time and tokens seen so far: summed as steps, its rate looks plausible and is wrong.

    Each step's own seconds and tokens stay about the same from step to step;
    running totals grow on every row. Three or more rows in which both grow
    each time, the last at least twice the first, are taken for totals."""
    if len(kept) < 3 or not all(a[0] < b[0] and a[1] < b[1] for a, b in itertools.pairwise(kept)):
        return
    (s0, t0), (s1, t1) = kept[0], kept[-1]
    if s1 >= 2 * s0 > 0 and t1 >= 2 * t0 > 0:
        raise CostpressError(
            f"{path}: seconds and tokens grow on every row ({fmt.number(s0, 1)} to {fmt.number(s1, 1)} s, "
            f"{fmt.number(t0)} to {fmt.number(t1)} tokens), as running totals do; expected each step's own "
            f"seconds and tokens (the differences between consecutive rows)"
        )


def from_csv(path: Path, skip_steps: int = 0) -> Measurement:
    """A CSV with columns step, seconds, tokens: one row per optimizer step."""
    try:
        reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig")))  # Excel starts its CSV with a BOM
        rows = list(reader)
    except OSError as exc:
        raise CostpressError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise CostpressError(f"{path}: expected UTF-8 text") from None
    except csv.Error as exc:  # a field past the csv module's 131,072 characters
        raise CostpressError(
            f"{path}:{reader.line_num + 1}: expected a CSV with columns step, seconds, tokens ({exc})"
        ) from None
    if not rows or not {"step", "seconds", "tokens"} <= set(rows[0]):
        raise CostpressError(f"{path}: expected a CSV with columns step, seconds, tokens")
    kept = []  # (seconds, tokens) of each step after the warm-up
    for line, r in enumerate(rows, 2):
        if not (r["step"] or "").strip().isdigit():
            raise CostpressError(f"{path}:{line}: step: expected a whole number, got {r['step']!r}")
        if int(r["step"]) > skip_steps:
            kept.append(tuple(_number(r[c], f"{path}:{line}: {c}", positive=False) for c in ("seconds", "tokens")))
    _refuse_running_totals(path, kept)
    seconds = sum(s for s, _ in kept)
    tokens = sum(t for _, t in kept)
    if seconds <= 0 or tokens <= 0:
        raise CostpressError(f"{path}: no steps left after skipping {skip_steps}")
    note = f", first {skip_steps} steps skipped as warm-up" if skip_steps else ""
    how = f"sum of tokens ÷ sum of seconds over {len(kept)} steps{note}"
    return Measurement(tokens, seconds, how).checked(str(path))


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


def ids_in(path: Path) -> set[str]:
    """The ids of the benchmark records `path` holds, if it is a readable benchmarks file; else none."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeError, yaml.YAMLError):
        return set()
    records = doc.get("benchmarks") if isinstance(doc, dict) else None
    return (
        {r["id"] for r in records if isinstance(r, dict) and isinstance(r.get("id"), str)}
        if isinstance(records, list)
        else set()
    )
