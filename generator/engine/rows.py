"""The frame functions of `flops` for lists of row dicts, so that building a page loads neither pandas nor numpy.

A written article prices a few dozen setups; pandas and numpy cost a worker
0.3 s to import for that. These functions give what their frame versions
give: the same rows in the same order, the same float64 operations in the
same order (a float times a float is the same IEEE operation in numpy and in
Python), and the same rounding. `tests/test_engine.py` holds each against
its frame version, or against pandas itself where the frame version is no
longer the engine's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from generator.engine.flops import cost_per_million, flop_costs, run_cost, throughput_hours


def records(rows: Iterable[dict]) -> list[dict]:
    """Rows typed as a pandas frame made from them types its columns (what `frame.to_dict("records")` gives).

    A column of numbers that mixes int and float, or holds a None among numbers,
    is float there (None becomes NaN); a column of ints only, of bools only, or
    of anything else keeps its values as they are.
    """
    rows = [dict(r) for r in rows]
    for name in dict.fromkeys(k for r in rows for k in r):
        values = [r.get(name) for r in rows]
        numbers = [v for v in values if v is not None]
        if not numbers or any(type(v) not in (int, float) for v in numbers):
            continue  # text, dates, bools, objects: pandas keeps them (an object column)
        if len(numbers) == len(values) and all(type(v) is int for v in values):
            continue  # int64
        for r in rows:
            v = r.get(name)
            r[name] = math.nan if v is None else float(v)
    return rows


def flop_rows(
    setups: Sequence[dict], tokens: Sequence[float], utilization: float | Sequence[float], startup_hours: float = 0.0
) -> list[dict]:
    """`flop_grid` for row dicts: each setup × token count × utilization, in that order, with its costs."""
    utils = list(utilization) if isinstance(utilization, (list, tuple)) else [utilization]
    out = []
    for s in setups:
        ops, params, peak, price = (float(s[c]) for c in ("ops_per_param", "parameters", "peak_tflops", "usd_per_hour"))
        for t in tokens:
            for u in utils:
                row = {**s, "tokens": float(t), "utilization": float(u)}
                row.update(flop_costs(ops, params, float(t), peak, float(u), price, startup_hours))
                out.append(row)
    return out


def throughput_rows(runs: Sequence[dict], tokens: Sequence[float]) -> list[dict]:
    """Every measured run × token count, as the frame version did: hours and cost from tokens_per_second and
    usd_per_hour, and the cost per million tokens."""
    out = []
    for r in runs:
        for t in tokens:
            t = float(t)
            hours = throughput_hours(t, float(r["tokens_per_second"]))
            cost = run_cost(hours, float(r["usd_per_hour"]))
            out.append({**r, "tokens": t, "hours": hours, "cost": cost, "usd_per_million": cost_per_million(cost, t)})
    return out


def first_of_each(rows: Iterable[dict], fields: tuple[str, ...]) -> list[dict]:
    """The first row of each combination of the fields' values, in the order given (a frame's
    `drop_duplicates(fields)`)."""
    seen, out = set(), []
    for r in rows:
        if (values := tuple(r[f] for f in fields)) not in seen:
            seen.add(values)
            out.append(r)
    return out


def rounded(x: float, places: int) -> float:
    """x rounded as numpy rounds to `places` decimals: x × 10^places to the nearest integer (halves to even),
    divided again (and the reverse for negative places)."""
    if places >= 0:
        scale = 10.0**places
        y = x * scale
        return (round(y) if math.isfinite(y) else y) / scale  # past the float range: inf, as numpy gives
    scale = 10.0**-places
    y = x / scale
    return (round(y) if math.isfinite(y) else y) * scale


def leader_rows(rows: Sequence[dict], column: str, places: int = 2, lowest: bool = True) -> list[dict]:
    """`leaders` for row dicts: the rows that share the best value of a column once rounded to display precision
    (ties are decided at the precision a reader sees). NaN never leads."""
    values = [float(r[column]) for r in rows]
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return []
    if places == 2:  # amounts below ten cents are shown to two significant figures
        from generator.formatting import usd_places

        places = usd_places(min(finite) if lowest else max(finite))
    shown = [rounded(v, places) for v in values]
    best = (min if lowest else max)(v for v in shown if not math.isnan(v))
    return [r for r, v in zip(rows, shown, strict=True) if v == best]


def median(values: Sequence[float]) -> float:
    """The middle value, or the mean of the two middle values, as pandas' median computes it (NaN skipped)."""
    ordered = sorted(float(v) for v in values if not math.isnan(v))
    if not ordered:
        return math.nan
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def time_spread_rows(results: Sequence[dict], by: str, column: str = "minutes") -> list[dict]:
    """Per group (in sorted order): how many results, and the fastest, median and slowest value of a time column."""
    groups: dict[object, list] = {}
    for r in results:
        groups.setdefault(r[by], []).append(r[column])
    out = []
    for key in sorted(groups):
        values = [v for v in groups[key] if not (type(v) is float and math.isnan(v))]
        out.append(
            {
                by: key,
                "systems": len(groups[key]),
                "fastest": min(values) if values else math.nan,
                "median": median(values),
                "slowest": max(values) if values else math.nan,
            }
        )
    return out
