"""The cost engine's formulas against hand-worked values."""

from __future__ import annotations

import math
import operator
import types

import pandas as pd
import pytest

from generator import engine
from generator.engine import rows as rows_engine


def test_throughput_hours_and_cost():
    # 100 M tokens at 759.79 tokens/s: 100e6 / 759.79 = 131,615.3 s = 36.559 h
    hours = engine.throughput_hours(100e6, 759.79)
    assert hours == pytest.approx(36.5598, abs=1e-4)
    assert engine.run_cost(hours, 0.75) == pytest.approx(27.4199, abs=1e-4)


def test_flop_hours_a100_qlora():
    # 6 × 70,553,706,496 × 20e6 = 8.4664e18 operations; 312e12 × 0.3 × 3600 = 3.3696e17 per hour
    hours = engine.flop_hours(6, 70_553_706_496, 20e6, 312, 0.3)
    assert hours == pytest.approx(8.46644477952e18 / 3.3696e17, rel=1e-12)


def test_large_products_do_not_overflow():
    # 8 × 7e10 × 1e12 is far beyond int64; the engine must work in floats
    hours = engine.flop_hours(8, 70_553_706_496, 10**12, 18_000, 0.3)
    assert hours == pytest.approx(8 * 70_553_706_496 * 1e12 / (18_000e12 * 0.3 * 3600))


def test_startup_is_billed_at_the_setup_price():
    assert engine.run_cost(2.0, 44.0, 0.25) == pytest.approx(99.0)


def test_price_per_pflop_hour():
    assert engine.price_per_pflop_hour(5.50, 2250) == pytest.approx(5.50 / 2.25)


def test_fits():
    assert bool(engine.fits(1189, 180, 8))  # 1,440 GB
    assert not bool(engine.fits(1189, 141, 8))  # 1,128 GB


def test_grid_is_every_combination():
    setups = pd.DataFrame(
        {
            "key": ["a", "b"],
            "ops_per_param": [6, 8],
            "parameters": [1e9, 1e9],
            "peak_tflops": [100, 200],
            "usd_per_hour": [1.0, 3.0],
        }
    )
    grid = engine.flop_grid(setups, [1e6, 1e9], [0.3, 0.5], startup_hours=0.5)
    assert len(grid) == 8
    row = grid[(grid.key == "b") & (grid.tokens == 1e9) & (grid.utilization == 0.5)].iloc[0]
    hours = 8 * 1e9 * 1e9 / (200e12 * 0.5 * 3600)
    assert row.hours == pytest.approx(hours)
    assert row.cost_with_startup == pytest.approx((hours + 0.5) * 3.0)
    assert row.usd_per_million == pytest.approx(hours * 3.0 / 1000)


def test_leaders_detects_ties_at_display_precision():
    rows = [{"key": "x", "v": 1.004}, {"key": "y", "v": 1.001}, {"key": "z", "v": 2.0}, {"key": "n", "v": math.nan}]
    assert [r["key"] for r in rows_engine.leader_rows(rows, "v")] == ["x", "y"]
    assert [r["key"] for r in rows_engine.leader_rows(rows, "v", lowest=False)] == ["z"]
    # below ten cents a price shows two significant figures: 0.0312 and 0.0314 both read $0.031
    cents = [{"key": "a", "v": 0.0314}, {"key": "b", "v": 0.0312}, {"key": "c", "v": 0.0326}]
    assert [r["key"] for r in rows_engine.leader_rows(cents, "v")] == ["a", "b"]


@pytest.mark.parametrize(
    "x", [0.125, 0.375, 2.675, 1.005, -0.125, 1e300, 1e308, 123456.785, 0.0, -0.0, 5e-324, math.inf]
)
@pytest.mark.parametrize("places", [0, 1, 2, 3, -1, -2])
def test_rounding_is_numpy_rounding(x, places):
    """Ties at display precision are found as the frame version found them, by numpy's round."""
    import numpy as np

    with np.errstate(over="ignore"):  # 1e308 × 1000 is past the float range: numpy gives inf, and so must we
        expected = float(np.round(np.float64(x), places))
    assert rows_engine.rounded(x, places) == expected
    assert math.isnan(rows_engine.rounded(math.nan, places))


def test_records_type_columns_as_a_frame_does():
    """None among numbers is NaN and an int among floats a float, as in a frame; other columns keep their values."""
    import datetime as dt

    rows = [
        {"a": 1, "b": 2.5, "c": "x", "d": True, "e": None, "f": dt.date(2026, 1, 1), "g": 3, "h": None, "i": None},
        {"a": 2, "b": 3.5, "c": "y", "d": False, "e": 1.5, "f": dt.date(2026, 1, 2), "g": 4.0, "h": None, "i": True},
    ]
    typed = rows_engine.records(rows)
    expected = pd.DataFrame(rows).to_dict("records")
    for mine, theirs in zip(typed, expected, strict=True):
        assert list(mine) == list(theirs)
        for name in mine:
            a, b = mine[name], theirs[name]
            assert type(a) is type(b) and (a == b or (a != a and b != b)), (name, a, b)
    assert rows[0]["e"] is None  # the rows given are not changed


def test_flop_rows_equal_the_frame_grid_bit_for_bit():
    setups = [
        {"key": "a", "ops_per_param": 6, "parameters": 70_553_706_496, "peak_tflops": 989, "usd_per_hour": 2.49},
        {"key": "b", "ops_per_param": 8, "parameters": 70_553_706_496, "peak_tflops": 7916.0, "usd_per_hour": 31.9},
    ]
    tokens, utils = [2e7, 1e9, 123_456_789], [0.15, 0.3, 0.55]
    rows = rows_engine.flop_rows(rows_engine.records(setups), tokens, utils, 0.25)
    frame = engine.flop_grid(pd.DataFrame(setups), tokens, utils, 0.25).to_dict("records")
    assert len(rows) == len(frame) == 18
    for mine, theirs in zip(rows, frame, strict=True):
        assert mine == theirs  # every value, floats compared exactly
    # and one row by hand: 8 × 70,553,706,496 × 1e9 / (7,916e12 × 0.55 × 3600)
    row = next(r for r in rows if r["key"] == "b" and r["tokens"] == 1e9 and r["utilization"] == 0.55)
    hours = 8 * 70_553_706_496 * 1e9 / (7916e12 * 0.55 * 3600)
    assert row["hours"] == pytest.approx(hours, rel=1e-15)
    assert row["cost_with_startup"] == pytest.approx((hours + 0.25) * 31.9, rel=1e-15)
    # one utilization given as a number, not a list
    assert len(rows_engine.flop_rows(setups, [1e6], 0.3)) == 2


def test_first_of_each_is_drop_duplicates():
    rows = [
        {"p": "a", "g": "x", "n": 1},
        {"p": "a", "g": "y", "n": 2},
        {"p": "a", "g": "x", "n": 3},
        {"p": "b", "g": "x", "n": 4},
    ]
    assert [r["n"] for r in rows_engine.first_of_each(rows, ("p", "g"))] == [1, 2, 4]
    expected = pd.DataFrame(rows).drop_duplicates(["p", "g"])["n"].tolist()
    assert [r["n"] for r in rows_engine.first_of_each(rows, ("p", "g"))] == expected
    assert [r["n"] for r in rows_engine.first_of_each(rows, ("g",))] == [1, 2]


def test_throughput_rows_follow_the_formula():
    runs = [{"key": "r", "tokens_per_second": 759.79, "usd_per_hour": 0.75}]
    (row,) = rows_engine.throughput_rows(runs, [100_000_000])
    hours = 100e6 / 759.79 / 3600
    assert row["tokens"] == 1e8 and type(row["tokens"]) is float
    assert row["hours"] == pytest.approx(36.5598, abs=1e-4) and row["hours"] == hours
    assert row["cost"] == hours * 0.75
    assert row["usd_per_million"] == hours * 0.75 / 1e8 * 1e6


def test_time_spread_is_pandas_groupby():
    results = [
        {"group": "h100x8", "minutes": 10.5},
        {"group": "a100x8", "minutes": 30.0},
        {"group": "h100x8", "minutes": 12.25},
        {"group": "h100x8", "minutes": 11.0},
        {"group": "h100x8", "minutes": 9.75},
        {"group": "a100x8", "minutes": 31.5},
        {"group": "b200x8", "minutes": 5.0},
    ]
    spread = rows_engine.time_spread_rows(results, "group")
    # by hand: h100x8 sorted 9.75, 10.5, 11.0, 12.25: median (10.5 + 11.0) / 2 = 10.75
    assert spread[1] == {"group": "b200x8", "systems": 1, "fastest": 5.0, "median": 5.0, "slowest": 5.0}
    assert spread[2] == {"group": "h100x8", "systems": 4, "fastest": 9.75, "median": 10.75, "slowest": 12.25}
    frame = pd.DataFrame(results).groupby("group", sort=True)["minutes"]
    assert [r["median"] for r in spread] == frame.median().tolist()
    assert [r["group"] for r in spread] == ["a100x8", "b200x8", "h100x8"]


def test_flop_costs_on_plain_columns_follow_the_formula():
    import numpy as np

    costs = engine.flop_costs(
        np.array([6.0, 8.0]), np.array([7e10, 7e10]), 2e7, np.array([989.0, 1979.0]), 0.3, np.array([2.5, 9.0]), 0.25
    )
    for i, (ops, peak, price) in enumerate([(6.0, 989.0, 2.5), (8.0, 1979.0, 9.0)]):
        hours = ops * 7e10 * 2e7 / (peak * 1e12 * 0.3 * 3600)
        assert costs["hours"][i] == pytest.approx(hours, rel=1e-12)
        assert costs["training_cost"][i] == pytest.approx(hours * price, rel=1e-12)
        assert costs["startup_cost"][i] == pytest.approx(0.25 * price, rel=1e-12)
        assert costs["cost_with_startup"][i] == pytest.approx((hours + 0.25) * price, rel=1e-12)
        assert costs["usd_per_million"][i] == pytest.approx(hours * price / 2e7 * 1e6, rel=1e-12)


def test_rank_rows_sorts_like_rank_on_a_frame():
    import pandas as pd

    rows = [{"key": k, "v": v} for k, v in [("b", 2.0), ("a", 2.0), ("c", float("nan")), ("d", 1.0)]]
    assert [r["key"] for r in engine.rank_rows(rows, "v")] == ["d", "a", "b", "c"]
    assert [r["key"] for r in engine.rank_rows(rows, "v")] == engine.rank(pd.DataFrame(rows), "v")["key"].tolist()
    # rows read by attribute (a family's grid) rank the same, with and without a NaN among them
    as_attributes = [types.SimpleNamespace(**r) for r in rows]
    assert [r.key for r in engine.rank_rows(as_attributes, "v", read=operator.attrgetter)] == ["d", "a", "b", "c"]
    finite = [r for r in as_attributes if r.key != "c"]
    assert [r.key for r in engine.rank_rows(finite, "v", read=operator.attrgetter)] == ["d", "a", "b"]


@pytest.mark.parametrize("memory, count, state", [(80, 2, 152), (80.0, 2, 160), (141, 1, 141.0), (80, 1, 80.5)])
def test_fits_for_one_setup_equals_the_array_form(memory, count, state):
    import numpy as np

    one = engine.fits(state, memory, count)
    assert one == (memory * count >= state)
    assert one == bool(engine.fits(state, np.array([memory]), count)[0])


def test_flop_hours_for_one_run_equals_the_array_form_exactly():
    import random

    import numpy as np

    rng = random.Random(3)
    for _ in range(2000):
        ops, params = rng.choice([2, 6, 8, 6.5]), rng.choice([7e10, 70_553_706_496, 8.03e9])
        tokens, peak, util = rng.uniform(1e5, 1e12), rng.choice([989, 1979.0, 312.5, 4500]), rng.uniform(0.05, 0.9)
        one = engine.flop_hours(ops, params, tokens, peak, util)
        assert type(one) is float
        assert one == float(engine.flop_hours(ops, params, np.asarray([tokens]), peak, util)[0])
        assert one == pytest.approx(ops * params * tokens / (peak * 1e12 * util * 3600), rel=1e-12)


def test_flop_costs_on_plain_floats_match_the_array_path_exactly():
    """Family grids call flop_costs row by row with floats: the same IEEE operations as the array path."""
    import numpy as np

    rows = [(6.0, 7.05e10, 989.0, 2.49), (8.0, 7.05e10, 1979.0 * 8, 31.92), (6.0, 8.03e9, 312.0 * 4, 7.0)]
    columns = (np.array(c) for c in zip(*rows, strict=True))
    ops_a, params_a, peak_a, price_a = columns
    arrays = engine.flop_costs(ops_a, params_a, 2e7, peak_a, 0.35, price_a, 0.5)
    for i, (ops, params, peak, price) in enumerate(rows):
        one = engine.flop_costs(ops, params, 2e7, peak, 0.35, price, 0.5)
        assert all(type(v) is float for v in one.values())
        assert one == {k: float(arrays[k][i]) for k in one}
        hours = ops * params * 2e7 / (peak * 1e12 * 0.35 * 3600)
        assert one["hours"] == hours and one["cost_with_startup"] == (hours + 0.5) * price
        assert one["usd_per_million"] == hours * price / 2e7 * 1e6
