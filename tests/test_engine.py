"""The cost engine's formulas against hand-worked values."""

from __future__ import annotations

import operator
import types

import pandas as pd
import pytest

from generator import engine


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
    frame = pd.DataFrame({"key": ["x", "y", "z"], "v": [1.004, 1.001, 2.0]})
    assert engine.leaders(frame, "v")["key"].tolist() == ["x", "y"]


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
