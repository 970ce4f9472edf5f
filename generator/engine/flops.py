"""The cost engine: pure functions over numbers and pandas frames, no rendering.

Arithmetic is done in float64 on unrounded inputs; rounding happens only when a
figure is formatted for display. pandas and numpy are imported by the functions
that work on frames and arrays, which `estimate` uses; a build computes with
plain floats (the same IEEE operations in the same order: page families here,
written articles through `engine.rows`) and never loads either (importing
pandas is 0.3 s of a worker's time, numpy 0.075 s).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


class _Numpy:
    """numpy, imported on first use; the import then replaces this stand-in as the module's `np`."""

    def __getattr__(self, name: str):
        import numpy

        globals()["np"] = numpy
        return getattr(numpy, name)


np = _Numpy()

SECONDS_PER_HOUR = 3600.0
TERA = 1e12
MILLION = 1e6


def throughput_hours(tokens, tokens_per_second):
    """Hours to process tokens at a measured throughput: tokens / tokens_per_s / 3600."""
    return tokens / tokens_per_second / SECONDS_PER_HOUR


def flop_hours(ops_per_param, parameters, tokens, peak_tflops, utilization):
    """Setup-hours from operation count: ops × params × tokens / (peak × utilization × 3600)."""
    if type(tokens) is float and type(peak_tflops) in (int, float):
        # one run: the same float64 operations in the same order, without numpy's per-call cost
        ops = float(ops_per_param) * parameters * tokens
        return ops / (float(peak_tflops) * TERA * utilization * SECONDS_PER_HOUR)
    ops = np.multiply(np.multiply(np.asarray(ops_per_param, float), parameters), tokens)
    return ops / (np.asarray(peak_tflops, float) * TERA * utilization * SECONDS_PER_HOUR)


def attention_ops_per_token(layers, heads, head_dim, sequence_length, forward, recompute):
    """Operations per training token for attention scores and their weighted sum, which grow with sequence length.

    The per-parameter rule (6 or 8 per parameter) counts only the weight
    matrices. One forward pass also computes QKᵀ and the weighted sum of V:
    2 products × 2 operations per multiply-add × heads × head_dim × sequence
    length per layer (the causal mask's saving is not taken, as in the PaLM
    paper's appendix B). Training adds the recompute pass (recompute ÷
    forward of a forward pass) and a backward pass of twice the forward.
    """
    forward_ops = 4 * layers * heads * head_dim * sequence_length
    return forward_ops * (1 + recompute / forward + 2)


def run_cost(hours, usd_per_hour, startup_hours=0.0):
    """What a run bills: (hours + startup) × hourly price of the whole setup."""
    return (hours + startup_hours) * usd_per_hour


def cost_per_million(cost, tokens):
    """Dollars per million training tokens."""
    return cost / tokens * MILLION


def price_per_pflop_hour(usd_per_hour, peak_tflops):
    """Hourly price divided by the setup's dense peak in PFLOPS."""
    if type(peak_tflops) in (int, float):  # one setup: float64 math without numpy's call
        return usd_per_hour / (float(peak_tflops) / 1000.0)
    return usd_per_hour / (np.asarray(peak_tflops, float) / 1000.0)


def fits(state_gb, gpu_memory_gb, count):
    """Whether a setup's total GPU memory holds a method's training state: memory × count ≥ state."""
    if type(gpu_memory_gb) in (int, float) and type(count) is int:  # one setup: float64 math without numpy's call
        return float(gpu_memory_gb) * count >= state_gb
    return np.asarray(gpu_memory_gb, float) * count >= state_gb


def implied_utilization(ops_per_param, parameters, tokens_per_second, peak_tflops):
    """Share of dense peak that a measured throughput implies."""
    return ops_per_param * parameters * tokens_per_second / (peak_tflops * TERA)


def utilization_over_run(ops_per_param, parameters, tokens, peak_tflops, hours):
    """Share of dense peak that finishing `tokens` in `hours` implies: ops × params × tokens / (peak × seconds)."""
    peak = float(peak_tflops) if type(peak_tflops) in (int, float) else np.asarray(peak_tflops, float)
    return ops_per_param * parameters * tokens / (peak * TERA * hours * SECONDS_PER_HOUR)


def tokens_for_budget(budget_usd, usd_per_million):
    """Training tokens a budget buys at a given cost per million tokens."""
    return budget_usd / usd_per_million * MILLION


def trial_budget(cost_per_run, runs):
    """Total bill for a number of runs of the same project."""
    if type(runs) in (int, float):  # one count: float64 math without numpy's call
        return float(runs) * cost_per_run
    return np.asarray(runs, float) * cost_per_run


def break_even_hours(reference_hours, price_ratio):
    """Hours a cheaper-per-hour setup may take before it costs more than the reference."""
    return reference_hours * price_ratio


def flop_costs(ops_per_param, parameters, tokens, peak_tflops, utilization, usd_per_hour, startup_hours=0.0) -> dict:
    """Hours and costs of runs from operation counts, element by element (arrays or numbers).

    hours = ops × params × tokens / (peak × utilization × 3600); training_cost =
    hours × price; startup_cost = startup × price; cost_with_startup = (hours +
    startup) × price; usd_per_million = training_cost / tokens × 10⁶.
    """
    hours = flop_hours(ops_per_param, parameters, tokens, peak_tflops, utilization)
    if type(hours) is float:  # one run (flop_hours' scalar path): plain floats, no numpy
        price, tokens = float(usd_per_hour), float(tokens)
    else:
        price, tokens = np.asarray(usd_per_hour, float), np.asarray(tokens, float)
    training = run_cost(hours, price)
    return {
        "hours": hours,
        "training_cost": training,
        "startup_cost": startup_hours * price,
        "cost_with_startup": run_cost(hours, price, startup_hours),
        "usd_per_million": cost_per_million(training, tokens),
    }


def flop_grid(
    setups: pd.DataFrame,
    tokens: Sequence[float],
    utilization: float | Sequence[float],
    startup_hours: float = 0.0,
) -> pd.DataFrame:
    """Every setup × token count (× utilization) in one vectorized pass.

    `setups` needs the columns ops_per_param, parameters, peak_tflops and
    usd_per_hour (whole setup). Returns one row per combination with hours,
    training_cost, startup_cost, cost_with_startup and usd_per_million.
    """
    import pandas as pd

    axis = pd.DataFrame({"tokens": np.asarray(tokens, float)})
    grid = setups.merge(axis, how="cross")
    utils = np.atleast_1d(np.asarray(utilization, float))
    grid = grid.merge(pd.DataFrame({"utilization": utils}), how="cross")
    columns = ("ops_per_param", "parameters", "tokens", "peak_tflops", "utilization", "usd_per_hour")
    costs = flop_costs(*(grid[c].to_numpy(float) for c in columns), startup_hours)
    for name, values in costs.items():
        grid[name] = values
    return grid


def rank(frame: pd.DataFrame, column: str, key: str = "key") -> pd.DataFrame:
    """Sort by a column with a stable tie-break on the key column."""
    return frame.sort_values([column, key], kind="mergesort").reset_index(drop=True)


def rank_rows(rows: list, column: str, key: str = "key", read=operator.itemgetter, then: tuple[str, ...] = ()) -> list:
    """`rank` for a list of rows: by a column (NaN last, as pandas sorts), ties broken by the `then` columns
    and last by the key.

    `read` makes a getter of the values: itemgetter for row dicts, attrgetter for rows whose values are
    attributes (families.Row, for which a subscript costs a Python-level call).
    """
    get = read(column, *then, key)
    if any(math.isnan(get(r)[0]) for r in rows):
        return sorted(rows, key=lambda r: (math.isnan(get(r)[0]), *get(r)))
    return sorted(rows, key=get)
