"""Article kinds: turn an article's parameters and the catalog into a page context.

Everything a page states — figures, rankings, ratios, the winner of each
comparison, the manifest's setup — is decided here, so that templates and
article prose only format what they are given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import yaml

from generator import charts, engine
from generator import formatting as fmt
from generator.answer import answer
from generator.load import Article, Catalog
from generator.model import Blocks, Chart, Code, Column, Figure, Input, Table
from generator.scenarios import (
    counted_parameters,
    gpu_inputs,
    memory_need,
    price_input,
    setup_row,
    training_job,
    work_inputs,
)
from generator.schema import F, list_of, opt, record, validate


class ParamError(Exception):
    """A problem in an article's params, already recorded on its document."""


@dataclass
class Context:
    """What one article's templates receive, besides the article record itself."""

    values: dict[str, Any]
    blocks: Blocks
    inputs: list[Input]
    figures: list[Figure]
    prices_checked: list[Any] = field(default_factory=list)  # dates of snapshots used
    providers: list[str] = field(default_factory=list)  # providers whose prices the page uses


class Recorder:
    """Collects every figure a page shows, with its unit and inputs, for figures.json."""

    def __init__(self) -> None:
        self.figures: dict[str, Figure] = {}

    def __call__(self, fid: str, value: float, unit: str, *inputs: str) -> float:
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"figure {fid} is not finite: {value}")
        self.figures[fid] = Figure(fid, value, unit, tuple(inputs))
        return value


def _fail(article: Article, path: tuple, message: str) -> None:
    article.params_doc.problem(("params", *path), message)
    raise ParamError(message)


def _offer(cat: Catalog, article: Article, key: str, path: tuple):
    offer = cat.offer(key, article.prices_as_of)
    if offer is None:
        provider = key.split(":", 1)[0]
        snap = cat.snapshot(provider, article.prices_as_of)
        if snap is None:
            when = f" on or before {article.prices_as_of}" if article.prices_as_of else ""
            _fail(article, path, f"no price snapshot for provider {provider!r}{when}")
        known = ", ".join(o.key for o in snap.offers)
        _fail(article, path, f"unknown offer {key!r} in {snap.file}; known: {known}")
    return offer


def _lookup(table: dict, key: str, what: str, article: Article, path: tuple):
    if key not in table:
        _fail(article, path, f"unknown {what} {key!r}; known: {', '.join(sorted(table))}")
    return table[key]


# --- throughput kind ---------------------------------------------------------

THROUGHPUT = record(
    {
        "benchmark": F("id"),
        "offer": F("text"),
        "token_budgets": list_of(F("tokens")),
        "snippet_tokens": F("tokens"),
        "compare_tokens": F("tokens"),
        "compare_benchmarks": list_of(F("id"), required=False),
        "chart_tokens": list_of(F("tokens")),
    }
)


def build_throughput(cat: Catalog, art: Article, p: dict) -> Context:
    """Cost from a published tokens/s figure and an hourly rate."""
    import pandas as pd  # only the kinds that make frames load it (see engine)

    rec = Recorder()
    blocks = Blocks()
    offer = _offer(cat, art, p["offer"], ("offer",))
    gpu = cat.gpus[offer.gpu]
    bench_ids = list(dict.fromkeys([p["benchmark"], *(p["compare_benchmarks"] or [])]))
    runs = []
    for i, bid in enumerate(bench_ids):
        path = ("benchmark",) if i == 0 else ("compare_benchmarks", i - 1)
        b = _lookup(cat.benchmarks, bid, "benchmark", art, path)
        if (b.gpu, b.count) != (offer.gpu, offer.count):
            _fail(
                art,
                path,
                f"benchmark {bid!r} ran on {b.count} x {b.gpu}, "
                f"but the offer {offer.key!r} is {offer.count} x {offer.gpu}",
            )
        model, method = cat.models[b.model], cat.methods[b.method]
        runs.append(
            {
                "key": b.id,
                "label": b.label or f"{model.name}, {method.name}",
                "model": model.name,
                "method": method.name,
                "tokens_per_second": b.tokens_per_second,
                "usd_per_hour": offer.usd_per_hour,
                "bench": b,
            }
        )
    frame = pd.DataFrame(runs)
    main = runs[0]
    bench = main["bench"]

    # Table: time and cost by training tokens, for the main run.
    budgets = engine.throughput_grid(frame.iloc[[0]], p["token_budgets"])
    rows = []
    for r in budgets.itertuples():
        t = fmt.tokens(r.tokens)
        rows.append(
            {
                "tokens": r.tokens,
                "hours": rec(f"estimate.{t}.hours", r.hours, "hours", bench.id, offer.key),
                "cost": rec(f"estimate.{t}.cost", r.cost, "USD", bench.id, offer.key),
                "days": rec(f"estimate.{t}.days", r.hours / 24, "days", bench.id),
            }
        )
    blocks.add(
        Table(
            "estimates",
            f"Time and cost by training tokens ({main['label']}, "
            f"{fmt.number(bench.tokens_per_second, 2)} tokens/s, "
            f"{fmt.usd(offer.usd_per_hour)} per hour)",
            [
                Column("tokens", "Training tokens", "tokens", True),
                Column("hours", "Hours", "hours", True),
                Column("cost", "Cost (USD)", "usd", True),
            ],
            rows,
        )
    )

    snippet_tokens = p["snippet_tokens"]
    s_hours = engine.throughput_hours(snippet_tokens, bench.tokens_per_second)
    s_cost = engine.run_cost(s_hours, offer.usd_per_hour)
    rec("snippet.hours", s_hours, "hours", bench.id)
    rec("snippet.cost", s_cost, "USD", bench.id, offer.key)
    checks = _throughput_checks(cat, rec, runs, gpu, offer, float(snippet_tokens), s_hours)
    blocks.add(
        Table(
            "checks",
            f"What each published throughput asks of {fmt.setup(offer.count, gpu.name)} "
            f"({fmt.number(gpu.peak_tflops * offer.count)} TFLOPS dense BF16 peak)",
            [
                Column("label", "Run"),
                Column("tokens_per_second", "Tokens per second", "num2", True),
                Column("tflops", "Work done (TFLOPS)", "num1", True),
                Column("utilization", "Share of dense peak", "pct", True),
                Column("verdict", "Check"),
            ],
            checks["rows"],
        )
    )
    code = (
        f"tokens = {snippet_tokens:_}\n"
        f"tokens_per_second = {bench.tokens_per_second!r}\n"
        f"usd_per_hour = {offer.usd_per_hour!r}\n"
        "\n"
        "hours = tokens / tokens_per_second / 3600\n"
        "cost = hours * usd_per_hour\n"
        'print(f"{hours:.1f} hours, ${cost:.2f}")\n'
    )
    output = f"{fmt.hours(s_hours)} hours, {fmt.usd(s_cost)}"
    blocks.add(Code("snippet", "python", code, output))

    # Table: one budget at each published throughput.
    compare = engine.throughput_grid(frame.drop(columns=["bench"]), [p["compare_tokens"]])
    compare = engine.rank(compare, "cost")
    crow = []
    for r in compare.itertuples():
        crow.append(
            {
                "label": r.label,
                "tokens_per_second": r.tokens_per_second,
                "hours": rec(f"compare.{r.key}.hours", r.hours, "hours", r.key),
                "cost": rec(f"compare.{r.key}.cost", r.cost, "USD", r.key, offer.key),
            }
        )
    blocks.add(
        Table(
            "compare",
            f"{fmt.tokens(p['compare_tokens'])} training tokens at each "
            f"published throughput ({fmt.usd(offer.usd_per_hour)} per hour)",
            [
                Column("label", "Run"),
                Column("tokens_per_second", "Tokens/s", "num2", True),
                Column("hours", "Hours", "hours", True),
                Column("cost", "Cost (USD)", "usd", True),
            ],
            crow,
        )
    )

    chart_grid = engine.throughput_grid(frame.drop(columns=["bench"]), p["chart_tokens"])
    series, chart_rows = [], []
    for r in runs:
        sub = chart_grid[chart_grid["key"] == r["key"]]
        series.append((r["label"], sub["tokens"].tolist(), sub["cost"].tolist()))
    for t in p["chart_tokens"]:
        row = {"tokens": t}
        for r in runs:
            row[r["key"]] = float(
                chart_grid[(chart_grid["key"] == r["key"]) & (chart_grid["tokens"] == t)]["cost"].iloc[0]
            )
        chart_rows.append(row)
    title = f"Cost against training tokens on {fmt.setup(offer.count, gpu.name)}"
    fig = charts.lines(title, series, "Training tokens (log scale)", "Cost in USD (log scale)")
    blocks.add(
        Chart(
            "cost-vs-tokens",
            title,
            fig,
            Table(
                "cost-vs-tokens-data",
                f"Cost in USD by training tokens on {gpu.name}",
                [Column("tokens", "Training tokens", "tokens", True)]
                + [Column(r["key"], r["label"], "usd", True) for r in runs],
                chart_rows,
            ),
        )
    )

    by_tokens = {fmt.tokens(r["tokens"]): r for r in rows}
    cheapest = crow[0]
    values = {
        "run": {
            "label": main["label"],
            "model": main["model"],
            "method": main["method"],
            "tokens_per_second": bench.tokens_per_second,
            "sequence_length": bench.sequence_length,
            "batch_size": bench.batch_size,
            "steps": bench.steps,
            "definition": bench.definition,
            "framework": bench.framework,
            "source": bench.source,
            "url": bench.url,
        },
        "offer": {
            "usd_per_hour": offer.usd_per_hour,
            "checked": offer.checked,
            "provider": offer.provider_name,
            "setup": fmt.setup(offer.count, gpu.name),
            "gpu": gpu.name,
        },
        "estimates": rows,
        "by_tokens": by_tokens,
        "snippet": {"tokens": snippet_tokens, "hours": s_hours, "cost": s_cost},
        "answer": answer(
            s_cost,
            "usd",
            f"for {fmt.tokens(snippet_tokens)} training tokens of {main['label']}",
            f"{fmt.setup(offer.count, gpu.name)} at {offer.provider_name}",
        ),
        "check": checks,
        "compare": crow,
        "compare_tokens": p["compare_tokens"],
        "cheapest_run": cheapest,
        "dearest_run": crow[-1],
        "dearest_vs_cheapest": rec("compare.dearest_vs_cheapest", crow[-1]["cost"] / cheapest["cost"], "ratio"),
    }
    inputs = [
        Input(
            f"Throughput, {r['label']}",
            r["tokens_per_second"],
            "num2",
            "tokens/s",
            r["bench"].source,
            r["bench"].url,
        )
        for r in runs
    ] + [price_input(offer, gpu)]
    return Context(values, blocks, inputs, list(rec.figures.values()), [offer.checked], [offer.provider])


# --- FLOP kind -----------------------------------------------------------------

FLOPS = record(
    {
        "model": F("id"),
        "small_model": F("id"),
        "utilization": F("share"),
        "low_utilization": F("share"),
        "reference_utilization": record({"value": F("share"), "source": F("text"), "url": opt("url")}),
        "examples": F("count"),
        "tokens_per_example": F("count"),
        "epochs": F("count"),
        "startup_hours": F("nonnegative"),
        "larger_tokens": list_of(F("tokens")),
        "chart_tokens": list_of(F("tokens")),
        "trial_runs": list_of(F("count")),
        "budget_usd": F("positive"),
        "sensitivity": list_of(F("share"), required=False),
        "setups": list_of(record({"method": F("id"), "offer": F("text")})),
        "manifest": record(
            {
                "name_prefix": F("slug"),
                "runtime": F("text"),
                "model_uri": F("text"),
                "secret": F("text"),
                "volume": F("text"),
                "path": F("text"),
                "format": F("text"),
                "columns": F("any"),
                "lora": F("any"),
                "method_names": F("any"),
                "budget_margin": F("nonnegative"),
                "budget_step_usd": F("positive"),
                "save_steps": F("count"),
            }
        ),
    }
)


def _throughput_checks(cat, rec, runs, gpu, offer, tokens, hours) -> dict:
    """Each published throughput set against the hardware: the work it implies, its share of the dense peak,
    and, for the main run, what the FLOP method of the other articles gives for the same job."""
    peak = gpu.peak_tflops * offer.count
    planning = cat.site.planning_utilization
    rows = []
    for r in runs:
        b = r["bench"]
        model, method = cat.models[b.model], cat.methods[b.method]
        util = rec(f"check.{b.id}.utilization", engine.implied_utilization(method.ops_per_param, model.parameters,
                   b.tokens_per_second, peak), "share", b.id, gpu.id)  # fmt: skip
        rows.append(
            {
                "key": b.id,
                "label": r["label"],
                "tokens_per_second": b.tokens_per_second,
                "tflops": rec(f"check.{b.id}.tflops", util * peak, "TFLOPS", b.id),
                "utilization": util,
                "doubtful": util > 1.0,
                "verdict": "above the dense peak" if util > 1.0 else "plausible",
                "ops": method.ops_per_param,
            }
        )
    main = rows[0]
    b = runs[0]["bench"]
    model, method = cat.models[b.model], cat.methods[b.method]
    flop_hours = engine.flop_hours(method.ops_per_param, model.parameters, tokens, peak, planning)
    return {
        "rows": rows,
        "main": main,
        "doubtful": [r for r in rows if r["doubtful"]],
        "peak": peak,
        "planning": planning,
        "flop_hours": rec("check.flop.hours", flop_hours, "hours", b.id, gpu.id),
        "flop_cost": rec("check.flop.cost", engine.run_cost(flop_hours, offer.usd_per_hour), "USD", offer.key),
        "flop_vs_throughput": rec("check.flop.ratio", flop_hours / hours, "ratio"),
        # the two methods agree when the run sustains this share of peak, or the peak is this many times higher
        "peak_factor": rec("check.peak_factor", main["utilization"] / planning, "ratio"),
    }


def build_flops(cat: Catalog, art: Article, p: dict) -> Context:
    """Cost from operation counts, dense peak and a utilization figure, per setup."""
    import pandas as pd  # only the kinds that make frames load it (see engine)

    rec = Recorder()
    blocks = Blocks()
    model = _lookup(cat.models, p["model"], "model", art, ("model",))
    small = _lookup(cat.models, p["small_model"], "model", art, ("small_model",))
    rows, offers = [], []
    for i, s in enumerate(p["setups"]):
        path = ("setups", i)
        method = _lookup(cat.methods, s["method"], "method", art, path + ("method",))
        offer = _offer(cat, art, s["offer"], path + ("offer",))
        gpu = cat.gpus[offer.gpu]
        mem = cat.memory.get((model.id, method.id))
        if mem is None:
            _fail(
                art,
                path + ("method",),
                f"no training-state memory recorded for {model.id} with {method.id} in methods.yaml",
            )
        row = setup_row(cat, model, method, offer)
        if not row["fits"]:
            _fail(
                art,
                path,
                f"{method.name} on {model.name} needs {fmt.number(row['per_gpu_gb'], 1)} GB per GPU, but "
                f"{offer.count} x {gpu.name} holds {fmt.number(gpu.memory_gb)} GB each",
            )
        offers.append((offer, gpu))
        rows.append({**row, "label": f"{method.name}, {row['setup']}"})
    keys = [r["key"] for r in rows]
    if len(set(keys)) != len(keys):
        _fail(art, ("setups",), "the same method and offer are listed twice")
    for r in rows:  # the memory model's estimate, shown beside the guide's figure
        rec(f"memory.{r['key']}.per_gpu", r["per_gpu_gb"], "GB")
    setups = pd.DataFrame(rows)
    util, startup = p["utilization"], p["startup_hours"]
    run_tokens = p["examples"] * p["tokens_per_example"] * p["epochs"]

    run = engine.flop_grid(setups, [run_tokens], util, startup)
    run["price_per_pflop_hour"] = engine.price_per_pflop_hour(run["usd_per_hour"], run["peak_tflops"])
    for r in run.itertuples():
        rec(f"run.{r.key}.hours", r.hours, "hours", model.id, r.method, r.offer)
        rec(f"run.{r.key}.training_cost", r.training_cost, "USD", model.id, r.method, r.offer)
        rec(f"run.{r.key}.cost_with_startup", r.cost_with_startup, "USD", model.id, r.method, r.offer)
        rec(f"run.{r.key}.usd_per_million", r.usd_per_million, "USD per million tokens", r.offer)
    records = {r["key"]: r for r in run.to_dict("records")}

    by_token = engine.rank(run, "usd_per_million")
    by_hour = engine.rank(run, "usd_per_hour")
    best = by_token.iloc[0].to_dict()
    best_ties = engine.leaders(run, "usd_per_million")["label"].tolist()
    cheapest_hour = by_hour.iloc[0].to_dict()
    dearest_hour = by_hour.iloc[-1].to_dict()
    adapters = run[run["family"] == "adapter"]
    fulls = run[run["family"] == "full"]
    best_adapter = engine.rank(adapters, "usd_per_million").iloc[0].to_dict() if len(adapters) else None
    best_full = engine.rank(fulls, "usd_per_million").iloc[0].to_dict() if len(fulls) else None

    # Price per PFLOP-hour, one bar per GPU type (its cheapest offer).
    per_gpu = engine.rank(
        run.sort_values(["price_per_pflop_hour", "count", "key"]).drop_duplicates("gpu"), "price_per_pflop_hour"
    )
    pflop_rows = []
    for r in per_gpu.itertuples():
        pflop_rows.append(
            {
                "gpu": r.gpu_name,
                "usd_per_gpu_hour": r.usd_per_hour / r.count,
                "peak_pflops": r.peak_tflops / r.count / 1000,
                "price_per_pflop_hour": rec(f"pflop.{r.gpu}", r.price_per_pflop_hour, "USD per PFLOP-hour", r.offer),
            }
        )
    pflop_leaders = engine.leaders(per_gpu, "price_per_pflop_hour")["gpu_name"].tolist()

    peak_ratio = rec("compare.peak_ratio", best["peak_tflops"] / cheapest_hour["peak_tflops"], "ratio")
    price_ratio = rec("compare.price_ratio", best["usd_per_hour"] / cheapest_hour["usd_per_hour"], "ratio")
    break_even = rec("compare.break_even_hours", engine.break_even_hours(best["hours"], price_ratio), "hours")
    per_million = by_token["usd_per_million"]
    range_low = rec("headline.low", per_million.min(), "USD per million tokens")
    range_high = rec("headline.high", per_million.max(), "USD per million tokens")

    # Larger runs: the cheapest adapter and full setups at more tokens, with startup.
    pair = [r for r in (best_adapter, best_full) if r is not None]
    larger = engine.flop_grid(setups[setups["key"].isin([r["key"] for r in pair])], p["larger_tokens"], util, startup)
    larger_rows = []
    for t in p["larger_tokens"]:
        row = {"tokens": t}
        for r in pair:
            cell = larger[(larger["key"] == r["key"]) & (larger["tokens"] == t)].iloc[0]
            row[r["key"]] = rec(f"larger.{fmt.tokens(t)}.{r['key']}", cell["cost_with_startup"], "USD")
        larger_rows.append(row)
    startup_share = []
    for r in pair:
        first = records[r["key"]]
        last = larger[(larger["key"] == r["key"]) & (larger["tokens"] == max(p["larger_tokens"]))].iloc[0]
        startup_share.append(
            {
                "label": r["label"],
                "at_run": rec(
                    f"startup_share.run.{r['key']}", first["startup_cost"] / first["cost_with_startup"], "share"
                ),
                "at_largest": rec(
                    f"startup_share.largest.{r['key']}", last["startup_cost"] / last["cost_with_startup"], "share"
                ),
            }
        )

    trials = sorted(p["trial_runs"])
    trial_costs = [rec(f"trials.{n}", engine.trial_budget(best["cost_with_startup"], n), "USD") for n in trials]
    eval_share = rec("eval.share", cat.evaluation.forward / best["ops_per_param"], "share")
    eval_per_million = rec("eval.usd_per_million", best["usd_per_million"] * eval_share, "USD per million tokens")
    low_factor = rec("utilization.low_factor", util / p["low_utilization"], "ratio")
    budget_tokens = float(fmt.sig(engine.tokens_for_budget(p["budget_usd"], best["usd_per_million"]), 2))
    rec("budget.tokens", budget_tokens, "tokens")
    budget_examples = rec("budget.examples", budget_tokens / (p["tokens_per_example"] * p["epochs"]), "examples")
    size_ratio = rec("small_model.ratio", model.parameters / small.parameters, "ratio")

    full_ratio = None
    if best_full is not None and best_adapter is not None:
        full_ratio = rec("compare.full_vs_adapter", best_full["training_cost"] / best_adapter["training_cost"], "ratio")

    # Ops per token by method family.
    fam_rows = []
    used = set(setups["method"])
    for family in ("adapter", "full"):
        ms = [m for m in cat.methods.values() if m.family == family and m.id in used]
        if not ms:
            continue
        m = ms[0]
        names = dict.fromkeys(x.name.split(",")[0] for x in ms)
        fam_rows.append(
            {
                "methods": ", ".join(names),
                "forward": m.forward,
                "recompute": m.recompute,
                "backward": m.backward,
                "total": m.ops_per_param,
                "source": m.source,
                "url": m.url,
                "per_token": rec(f"ops.{family}", m.ops_per_param * model.parameters, "operations"),
            }
        )
    blocks.add(
        Table(
            "methods",
            "Operations per parameter per training token, with gradient checkpointing",
            [
                Column("methods", "Method"),
                Column("forward", "Forward", "num", True),
                Column("recompute", "Recompute", "num", True),
                Column("backward", "Backward", "num", True),
                Column("total", "Total", "num", True),
                Column("per_token", f"Operations per token ({model.name})", "billions", True),
            ],
            fam_rows,
        )
    )

    blocks.add(
        Table(
            "setups",
            f"Setups, dense BF16 peak and hourly price ({_providers(offers)})",
            [
                Column("method_name", "Method"),
                Column("setup", "Setup"),
                Column("state_gb", "Training state (GB)", "int", True),
                Column("per_gpu_gb", "Memory model, per GPU (GB)", "int", True),
                Column("memory_gb", "Setup memory (GB)", "int", True),
                Column("peak_tflops", "Dense BF16 peak (TFLOPS)", "int", True),
                Column("usd_per_hour", "Price per hour (USD)", "usd", True),
            ],
            run.to_dict("records"),
        )
    )
    sens = None
    run_columns = [
        Column("label", "Setup"),
        Column("hours", "Hours", "hours", True),
        Column("training_cost", "Training cost (USD)", "usd", True),
        Column("cost_with_startup", "With startup (USD)", "usd", True),
    ]
    run_rows = run.to_dict("records")
    if p["sensitivity"]:
        if len(p["sensitivity"]) != 2 or min(p["sensitivity"]) == max(p["sensitivity"]):
            _fail(art, ("sensitivity",), "expected two different utilization shares, e.g. [0.15, 0.5]")
        lo, hi = sorted(p["sensitivity"])
        bounds = engine.flop_grid(setups, [run_tokens], [lo, hi], startup)
        for row in run_rows:
            mine = bounds[bounds["key"] == row["key"]]
            row["at_high"] = float(mine[mine["utilization"] == hi]["cost_with_startup"].iloc[0])
            row["at_low"] = float(mine[mine["utilization"] == lo]["cost_with_startup"].iloc[0])
        run_columns += [
            Column("at_high", f"At {fmt.pct(hi)} (USD)", "usd", True),
            Column("at_low", f"At {fmt.pct(lo)} (USD)", "usd", True),
        ]
        best_row = next(r for r in run_rows if r["key"] == best["key"])
        sens = {
            "low": lo,
            "high": hi,
            "best_cheap": rec("sensitivity.best_at_high", best_row["at_high"], "USD"),
            "best_dear": rec("sensitivity.best_at_low", best_row["at_low"], "USD"),
            "factor": rec("sensitivity.factor", best_row["at_low"] / best_row["at_high"], "ratio"),
        }
    blocks.add(
        Table(
            "run-cost",
            f"One run of {fmt.tokens(run_tokens)} training tokens at {fmt.pct(util)} utilization"
            + (f", with the range for {fmt.pct(sens['low'])} to {fmt.pct(sens['high'])}" if sens else ""),
            run_columns,
            run_rows,
        )
    )
    blocks.add(
        Table(
            "per-million",
            "Cost per million training tokens, before startup",
            [Column("label", "Setup"), Column("usd_per_million", "USD per million tokens", "usd", True)],
            by_token.to_dict("records"),
        )
    )
    blocks.add(
        Table(
            "larger",
            "Larger runs, startup included",
            [Column("tokens", "Training tokens", "tokens", True)]
            + [Column(r["key"], f"{r['label']} (USD)", "usd", True) for r in pair],
            larger_rows,
        )
    )

    title = "Price per PFLOP-hour of dense BF16 peak, by GPU"
    fig = charts.bar(
        title,
        [r["gpu"] for r in pflop_rows],
        [r["price_per_pflop_hour"] for r in pflop_rows],
        [fmt.usd(r["price_per_pflop_hour"]) for r in pflop_rows],
        "GPU",
        "USD per PFLOP-hour",
    )
    blocks.add(
        Chart(
            "price-per-pflop",
            title,
            fig,
            Table(
                "price-per-pflop-data",
                "Price per PFLOP-hour by GPU (hourly price ÷ dense peak in PFLOPS)",
                [
                    Column("gpu", "GPU"),
                    Column("usd_per_gpu_hour", "Price per GPU-hour (USD)", "usd", True),
                    Column("peak_pflops", "Dense peak per GPU (PFLOPS)", "num3", True),
                    Column("price_per_pflop_hour", "USD per PFLOP-hour", "usd", True),
                ],
                pflop_rows,
            ),
        )
    )

    grid = engine.flop_grid(setups, p["chart_tokens"], util, startup)
    series = []
    chart_rows = [{"tokens": t} for t in p["chart_tokens"]]
    for r in run.itertuples():
        sub = grid[grid["key"] == r.key]
        series.append((r.label, sub["tokens"].tolist(), sub["cost_with_startup"].tolist()))
        for row, cost in zip(chart_rows, sub["cost_with_startup"].tolist(), strict=True):
            row[r.key] = cost
    band = None
    if sens:
        spread = engine.flop_grid(
            setups[setups["key"] == best["key"]], p["chart_tokens"], [sens["low"], sens["high"]], startup
        )
        upper = spread[spread["utilization"] == sens["low"]]["cost_with_startup"].tolist()
        lower = spread[spread["utilization"] == sens["high"]]["cost_with_startup"].tolist()
        band = (
            f"{best['label']}, {fmt.pct(sens['low'])} to {fmt.pct(sens['high'])} utilization",
            list(p["chart_tokens"]),
            lower,
            upper,
        )
        for row, lo_cost, hi_cost in zip(chart_rows, lower, upper, strict=True):
            row["band_low"], row["band_high"] = lo_cost, hi_cost
    title = f"Cost against training tokens, {fmt.pct(util)} utilization, startup included"
    fig = charts.lines(title, series, "Training tokens (log scale)", "Cost in USD (log scale)", band=band)
    blocks.add(
        Chart(
            "cost-vs-tokens",
            title,
            fig,
            Table(
                "cost-vs-tokens-data",
                "Cost in USD by training tokens, startup included",
                [Column("tokens", "Training tokens", "tokens", True)]
                + [Column(r.key, f"{r.label}", "usd", True) for r in run.itertuples()]
                + (
                    [
                        Column("band_low", f"{best['label']} at {fmt.pct(sens['high'])}", "usd", True),
                        Column("band_high", f"{best['label']} at {fmt.pct(sens['low'])}", "usd", True),
                    ]
                    if sens
                    else []
                ),
                chart_rows,
            ),
        )
    )

    dearest_pflop = per_gpu.iloc[-1].to_dict()
    gpu_hour = run["usd_per_hour"] / run["count"]
    dearest_gpu = run.loc[gpu_hour.round(2) == gpu_hour.round(2).max(), "gpu"].tolist()
    full_method = next((x for x in cat.methods.values() if x.family == "full"), None)
    m = p["manifest"]
    manifest_name = f"{m['name_prefix']}-{best['method']}"
    max_cost = (
        math.ceil(best["cost_with_startup"] * (1 + m["budget_margin"]) / m["budget_step_usd"]) * m["budget_step_usd"]
    )
    rec("manifest.max_cost", max_cost, "USD")
    blocks.add(Code("manifest", "yaml", _manifest(m, manifest_name, best, p["epochs"], max_cost)))

    values = {
        "model": {"name": model.name, "parameters": model.parameters, "weights_gb": model.weights_gb},
        "small_model": {"name": small.name, "parameters": small.parameters},
        "size_ratio": size_ratio,
        "utilization": util,
        "low_utilization": p["low_utilization"],
        "low_factor": low_factor,
        "reference_utilization": p["reference_utilization"],
        "run_tokens": run_tokens,
        "examples": p["examples"],
        "tokens_per_example": p["tokens_per_example"],
        "epochs": p["epochs"],
        "startup_hours": startup,
        "startup_minutes": startup * 60,
        "ops": {r["methods"]: r for r in fam_rows},
        "adapter_ops": fam_rows[0] if fam_rows else None,
        "full_ops": fam_rows[-1] if len(fam_rows) > 1 else None,
        "eval_ops": cat.evaluation.forward,
        "setups": records,
        "best": best,
        "answer": answer(
            best["usd_per_million"],
            "usd",
            f"per million training tokens of {model.name}, the cheapest of {len(records)} setups",
            f"{best['label']} at {best['provider_name']}",
        ),
        "best_ties": best_ties,
        "best_is_tied": len(best_ties) > 1,
        "cheapest_hour": cheapest_hour,
        "dearest_hour": dearest_hour,
        "best_is_cheapest_hour": best["key"] == cheapest_hour["key"],
        "best_is_dearest_hour": best["key"] == dearest_hour["key"],
        "best_adapter": best_adapter,
        "best_full": best_full,
        "pflop": pflop_rows,
        "pflop_best": pflop_rows[0],
        "pflop_worst": pflop_rows[-1],
        "pflop_leaders": pflop_leaders,
        "pflop_is_tied": len(pflop_leaders) > 1,
        "dearest_pflop": dearest_pflop,
        "best_gpu_dearest": dearest_gpu == [best["gpu"]] or set(dearest_gpu) == {best["gpu"]},
        "cheapest_hour_price_share": cheapest_hour["usd_per_hour"] / best["usd_per_hour"],
        "rule_ops": (full_method.forward + full_method.backward) if full_method else None,
        "providers": _providers(offers),
        "range_single": fmt.dround(range_low, 0) == fmt.dround(range_high, 0),
        "memory_sequence_length": next(
            iter(v.sequence_length for k, v in sorted(cat.memory.items()) if k[0] == model.id), None
        ),
        "peak_ratio": peak_ratio,
        "price_ratio": price_ratio,
        "break_even_hours": break_even,
        "cheap_hour_beats_best": cheapest_hour["hours"] < break_even,
        "range_low": range_low,
        "range_high": range_high,
        "range_low_whole": float(fmt.dround(range_low, 0)),
        "range_high_whole": float(fmt.dround(range_high, 0)),
        "larger": larger_rows,
        "larger_tokens": p["larger_tokens"],
        "pair": pair,
        "startup_share": startup_share,
        "full_ratio": full_ratio,
        "full_under_double": full_ratio is not None and full_ratio < 2,
        "full_startup_cost": best_full["startup_cost"] if best_full else None,
        "trials": list(zip(trials, trial_costs, strict=True)),
        "trials_low": trial_costs[0],
        "trials_high": trial_costs[-1],
        "trial_runs_low": trials[0],
        "trial_runs_high": trials[-1],
        "eval_share": eval_share,
        "eval_per_million": eval_per_million,
        "sensitivity": sens,
        "budget_usd": p["budget_usd"],
        "budget_tokens": budget_tokens,
        "budget_examples": budget_examples,
        "has_qlora": "qlora" in setups["method"].values,
        "manifest": {
            "name": manifest_name,
            "max_cost": max_cost,
            "save_steps": m["save_steps"],
            "gpu": best["gpu_short"],
            "count": int(best["count"]),
            "method": _method_name(m, best),
        },
        "memory": {k[1]: v.gb for k, v in cat.memory.items() if k[0] == model.id},
    }
    inputs = [
        Input(f"Parameters, {model.name}", model.parameters, "int", "", model.source, model.url),
        Input(f"Parameters, {small.name}", small.parameters, "int", "", small.source, small.url),
    ]
    for fam in fam_rows:
        inputs.append(
            Input(
                f"Operations per parameter per token, {fam['methods']}",
                fam["total"],
                "num",
                "",
                fam["source"],
                fam["url"],
            )
        )
    inputs.append(Input("Utilization, planning figure", util, "pct", "", "Assumption of this article"))
    inputs.append(
        Input(
            "Utilization, Llama 3.1 70B pre-training",
            p["reference_utilization"]["value"],
            "pct",
            "",
            p["reference_utilization"]["source"],
            p["reference_utilization"]["url"],
        )
    )
    seen_gpu = set()
    for offer, gpu in offers:
        if gpu.id not in seen_gpu:
            seen_gpu.add(gpu.id)
            inputs += gpu_inputs(gpu)
        inputs.append(price_input(offer, gpu))
    for (mid, meth), mem in sorted(cat.memory.items()):
        if mid == model.id:
            inputs.append(
                Input(
                    f"Training state, {model.name} {cat.methods[meth].name}",
                    mem.gb,
                    "num",
                    "GB",
                    mem.source,
                    mem.url,
                )
            )
    checked = sorted({o.checked for o, _ in offers})
    return Context(values, blocks, inputs, list(rec.figures.values()), checked, sorted({o.provider for o, _ in offers}))


def _system_name(submitter: str, system: str) -> str:
    """'NVIDIA DGX H200', not 'NVIDIA NVIDIA DGX H200': many systems already start with their submitter."""
    return system if system.lower().startswith(submitter.lower()) else f"{submitter} {system}"


# MLPerf results state availability in several spellings across rounds; pages use one word for each
_AVAILABILITY = (("prem", "on-premise"), ("cloud", "cloud"), ("preview", "preview"), ("research", "research"))


def _availability(text: str) -> str:
    low = text.lower()
    return next((word for key, word in _AVAILABILITY if key in low), "available, kind not stated")


def _market_answer(model, methods, per_method: dict, tokens: float) -> dict | None:
    """The cheapest run of the article's first method that any provider can hold."""
    for method in methods:
        m = per_method.get(method.id)
        if m is not None:
            best = m["best"]
            return answer(
                best["cost_with_startup"],
                "usd",
                f"for {fmt.tokens(tokens)} training tokens of {model.name} with {m['name']}, startup included, "
                f"the cheapest of {m['count']} setups",
                best["label"],
            )
    return None


def _providers(offers) -> str:
    seen = {}
    for offer, _ in offers:
        seen[(offer.provider_name, offer.checked)] = None
    return "; ".join(f"{name}, checked {day.isoformat()}" for name, day in seen)


def _method_name(m: dict, best: dict) -> str:
    names = m["method_names"] if isinstance(m["method_names"], dict) else {}
    return str(names.get(best["method"], best["method_name"]))


def _manifest(m: dict, name: str, best: dict, epochs: int, max_cost: float) -> str:
    params: dict[str, Any] = {"method": _method_name(m, best), "epochs": epochs}
    if best["family"] == "adapter" and m["lora"]:
        params["lora"] = m["lora"]
    doc = {
        "apiVersion": "nodus.dev/v1beta1",
        "kind": "TrainingJob",
        "metadata": {"name": name},
        "spec": {
            "runtime": m["runtime"],
            "model": {"uri": m["model_uri"], "secret": m["secret"]},
            "data": {"volume": m["volume"], "path": m["path"], "format": m["format"], "columns": m["columns"]},
            "parameters": params,
            "resources": {"gpu": {"type": [best["gpu_short"]], "count": int(best["count"])}},
            "maxCostUSD": f"{max_cost:.2f}",
        },
    }
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)


# --- helpers shared by the kinds that price many offers ------------------------------


def _snapshots(cat: Catalog, art: Article, providers: list[str]) -> list:
    """Each listed provider's snapshot for this article, or a params error naming the provider."""
    snaps = []
    for i, provider in enumerate(providers):
        snap = cat.snapshot(provider, art.prices_as_of)
        if snap is None:
            when = f" on or before {art.prices_as_of}" if art.prices_as_of else ""
            _fail(art, ("providers", i), f"no price snapshot for provider {provider!r}{when}")
        snaps.append(snap)
    return snaps


def _offer_price_inputs(cat: Catalog, snaps: list, used: set[str]) -> list[Input]:
    """The hourly price of every offer a page uses, with its snapshot's notes."""
    inputs = []
    for snap in snaps:
        note = f" ({snap.notes})" if snap.notes else ""
        for offer in snap.offers:
            if offer.key in used:
                inputs.append(price_input(offer, cat.gpus[offer.gpu], offer.provider_name, note))
    return inputs


def _cost_bars(chart_id: str, title: str, records: list[dict], key: str, axis: str, caption: str) -> Chart:
    """A horizontal bar per provider and setup, with the same numbers as a table."""
    fig = charts.bar(
        title,
        [r["label"] for r in records],
        [r[key] for r in records],
        [fmt.usd(r[key]) for r in records],
        "Provider and setup",
        axis,
    )
    table = Table(
        f"{chart_id}-data",
        caption,
        [Column("label", "Provider and setup"), Column(key, "USD", "usd", True)],
        records,
    )
    return Chart(chart_id, title, fig, table)


# --- market kind -----------------------------------------------------------------

MARKET = record(
    {
        "model": F("id"),
        "methods": list_of(F("id")),
        "providers": list_of(F("slug")),
        "tokens": F("tokens"),
        "utilization": F("share"),
        "startup_hours": F("nonnegative"),
    }
)


def build_market(cat: Catalog, art: Article, p: dict) -> Context:
    """One run priced at every provider's offers: the cheapest fitting setup per provider and GPU type."""
    import pandas as pd  # only the kinds that make frames load it (see engine)

    rec = Recorder()
    blocks = Blocks()
    model = _lookup(cat.models, p["model"], "model", art, ("model",))
    methods = [_lookup(cat.methods, m, "method", art, ("methods", i)) for i, m in enumerate(p["methods"])]
    snaps = _snapshots(cat, art, p["providers"])
    rows = []
    for method in methods:
        if cat.memory.get((model.id, method.id)) is None and training_job(model, method) is None:
            _fail(art, ("methods",), f"no training-state memory recorded or modelled for {model.id} with {method.id}")
        for snap in snaps:
            for offer in snap.offers:
                row = setup_row(cat, model, method, offer)
                if row["fits"]:
                    rows.append({**row, "label": f"{offer.provider_name}, {row['setup']}"})
    if not rows:
        _fail(art, ("providers",), "no offer of these providers holds the training state of any listed method")
    grid = engine.flop_grid(pd.DataFrame(rows), [p["tokens"]], p["utilization"], p["startup_hours"])
    grid["price_per_pflop_hour"] = engine.price_per_pflop_hour(grid["usd_per_hour"], grid["peak_tflops"])
    per_method = {}
    for method in methods:
        sub = grid[grid["method"] == method.id]
        if sub.empty:
            per_method[method.id] = None
            continue
        # one row per provider and GPU type: the GPU count with the cheapest run
        sub = engine.rank(sub, "cost_with_startup").drop_duplicates(["provider", "gpu"])
        ranked = engine.rank(sub, "cost_with_startup")
        records = ranked.to_dict("records")
        best, worst = records[0], records[-1]
        leaders = engine.leaders(ranked, "cost_with_startup")["label"].tolist()
        hour = engine.rank(ranked, "usd_per_hour").iloc[0].to_dict()
        per_method[method.id] = {
            "name": method.name,
            "state_gb": float(sub["state_gb"].iloc[0]),
            "best": best,
            "worst": worst,
            "leaders": leaders,
            "is_tied": len(leaders) > 1,
            "count": len(records),
            "cheapest_hour": hour,
            "best_is_cheapest_hour": hour["key"] == best["key"],
            "spread": rec(f"{method.id}.spread", worst["cost_with_startup"] / best["cost_with_startup"], "ratio"),
            "providers": len({r["provider"] for r in records}),
        }
        for r in records:
            rec(f"{method.id}.{r['offer']}.cost_with_startup", r["cost_with_startup"], "USD", r["offer"])
        blocks.add(
            Table(
                f"offers-{method.id}",
                f"{method.name} on {model.name}, {fmt.tokens(p['tokens'])} tokens at {fmt.pct(p['utilization'])} "
                "utilization: the cheapest setup of each GPU type at each provider",
                [
                    Column("label", "Provider and setup"),
                    Column("usd_per_hour", "Price per hour (USD)", "usd", True),
                    Column("price_per_pflop_hour", "USD per PFLOP-hour", "usd", True),
                    Column("hours", "Hours", "hours", True),
                    Column("cost_with_startup", "Run cost with startup (USD)", "usd", True),
                    Column("usd_per_million", "USD per million tokens", "usd", True),
                ],
                records,
            )
        )
        blocks.add(
            _cost_bars(
                f"cost-{method.id}",
                f"{method.name}: run cost by provider and setup",
                records,
                "cost_with_startup",
                "Run cost with startup (USD)",
                f"{method.name}: run cost with startup by provider and setup",
            )
        )
    values = {
        "model": {"name": model.name, "parameters": model.parameters},
        "tokens": p["tokens"],
        "utilization": p["utilization"],
        "startup_minutes": p["startup_hours"] * 60,
        "methods": per_method,
        "providers": [{"name": s.name, "checked": s.checked, "offers": len(s.offers), "notes": s.notes} for s in snaps],
        "answer": _market_answer(model, methods, per_method, p["tokens"]),
    }
    inputs = [
        Input(f"Parameters, {model.name}", model.parameters, "int", "", model.source, model.url),
        Input("Utilization, planning figure", p["utilization"], "pct", "", "Assumption of this article"),
    ]
    inputs += _offer_price_inputs(cat, snaps, {r["offer"] for r in rows})
    for gpu_id in sorted({r["gpu"] for r in rows}):
        inputs += gpu_inputs(cat.gpus[gpu_id])
    for method in methods:
        mem = cat.memory.get((model.id, method.id))
        if mem is not None:
            inputs.append(
                Input(f"Training state, {model.name} {method.name}", mem.gb, "num", "GB", mem.source, mem.url)
            )
    return Context(
        values,
        blocks,
        inputs,
        list(rec.figures.values()),
        sorted({s.checked for s in snaps}),
        [s.provider for s in snaps],
    )


# --- setup kind (one page of a family) ------------------------------------------

SETUP = record(
    {
        "model": F("id"),
        "method": F("id"),
        "offer": F("text"),
        "reference_tokens": F("tokens"),
        "token_budgets": list_of(F("tokens")),
        "chart_tokens": list_of(F("tokens")),
        "utilization": F("share"),
        "startup_hours": F("nonnegative"),
        "neighbours": F("any"),
        "listing_slug": F("slug"),
    }
)


NEIGHBOURS_SHOWN = 8


def build_setup(cat: Catalog, art: Article, p: dict) -> Context:
    """One model, one method, one offer: budgets, a chart, and the same job on the other setups."""
    rec = Recorder()
    blocks = Blocks()
    model, method = cat.models[p["model"]], cat.methods[p["method"]]
    offer = _offer(cat, art, p["offer"], ("offer",))
    gpu = cat.gpus[offer.gpu]
    mem = cat.memory.get((model.id, method.id))
    need = memory_need(model, method, gpu.memory_gb, offer.count)
    util, startup = p["utilization"], p["startup_hours"]
    peak, price = gpu.peak_tflops * offer.count, offer.usd_per_hour
    per_gpu = rec("memory.per_gpu", need.per_gpu_gb if need else mem.gb / offer.count, "GB")

    attention = p.get("attention_sequence_length")
    parameters = counted_parameters(model, method, attention)  # active parameters (+ attention, if asked)

    def costs(tokens: list[float]) -> list[dict]:
        # one setup, a few token counts: the engine's one-run arithmetic, no frame or array per page
        out = []
        for t in tokens:
            h = engine.flop_hours(method.ops_per_param, parameters, float(t), peak, util)
            out.append(
                {
                    "tokens": t,
                    "hours": h,
                    "training_cost": engine.run_cost(h, price),
                    "cost_with_startup": engine.run_cost(h, price, startup),
                    "usd_per_million": engine.cost_per_million(engine.run_cost(h, price), t),
                }
            )
        return out

    budgets = costs(p["token_budgets"])
    blocks.add(
        Table(
            "budgets",
            f"{method.name} on {model.name}, {fmt.setup(offer.count, gpu.name)} at {offer.provider_name}, "
            f"{fmt.pct(util)} utilization",
            [
                Column("tokens", "Training tokens", "tokens", True),
                Column("hours", "Hours", "hours", True),
                Column("training_cost", "Training cost (USD)", "usd", True),
                Column("cost_with_startup", "With startup (USD)", "usd", True),
            ],
            budgets,
        )
    )
    ref = costs([p["reference_tokens"]])[0]
    for key in ("hours", "training_cost", "cost_with_startup", "usd_per_million"):
        rec(f"reference.{key}", ref[key], "USD" if key != "hours" else "hours")
    chart = costs(p["chart_tokens"])
    title = f"Cost against training tokens on {fmt.setup(offer.count, gpu.name)}, startup included"
    fig = charts.lines(
        title,
        [(fmt.setup(offer.count, gpu.name), [r["tokens"] for r in chart], [r["cost_with_startup"] for r in chart])],
        "Training tokens (log scale)",
        "Cost in USD (log scale)",
    )
    blocks.add(
        Chart(
            "cost-vs-tokens",
            title,
            fig,
            Table(
                "cost-vs-tokens-data",
                "Cost in USD by training tokens, startup included",
                [Column("tokens", "Training tokens", "tokens", True), Column("cost_with_startup", "USD", "usd", True)],
                chart,
            ),
        )
    )
    # The family computed the neighbours once for all its pages: the cheapest few, how many
    # other setups there are and how many cost less at the cents shown.
    near = p["neighbours"]
    neighbours, others, n_cheaper = near["shown"], near["others"], near["cheaper"]
    values = {
        "model": {"name": model.name, "parameters": model.parameters},
        "method": {"name": method.name, "ops": method.ops_per_param},
        "offer": {
            "provider": offer.provider_name,
            "setup": fmt.setup(offer.count, gpu.name),
            "gpu": gpu.name,
            "count": offer.count,
            "usd_per_hour": offer.usd_per_hour,
            "checked": offer.checked,
            "date_phrase": offer.date_phrase,
        },
        "state_gb": mem.gb if mem else None,
        "memory_gb": gpu.memory_gb * offer.count,
        "per_gpu_gb": per_gpu,
        "gpu_memory_gb": gpu.memory_gb,
        "attention_sequence_length": attention,
        "moe": model.architecture is not None and model.architecture.moe,
        "sharded": offer.count > 1,
        "utilization": util,
        "startup_minutes": startup * 60,
        "reference": ref,
        "reference_tokens": p["reference_tokens"],
        "answer": answer(
            ref["cost_with_startup"],
            "usd",
            f"for {fmt.tokens(p['reference_tokens'])} training tokens of {model.name} with {method.name}, "
            "startup included",
            f"{fmt.setup(offer.count, gpu.name)} at {offer.provider_name}",
        ),
        # the cheapest alternatives only: a page lists a handful, the listing page has them all
        "neighbours": neighbours,
        "more_neighbours": max(0, others - len(neighbours)),
        "rank": n_cheaper + 1,
        "of": others + 1,
        "is_cheapest": not n_cheaper,
        "cheapest": (neighbours[0] if n_cheaper else None),
        "listing_slug": p["listing_slug"],
    }
    # The same few input figures appear on many pages of a family: each is made (and formatted) once.
    inputs = [
        *_shared_inputs(
            cat,
            ("work", model.id, method.id),
            lambda: [
                *work_inputs(model, method),
                *(
                    [Input(f"Training state, {model.name} {method.name}", mem.gb, "num", "GB", mem.source, mem.url)]
                    if mem
                    else []
                ),
            ],
        ),
        *_shared_inputs(cat, ("gpu", gpu.id), lambda: gpu_inputs(gpu)),
        *_shared_inputs(cat, ("offer", id(offer)), lambda: [price_input(offer, gpu)]),  # offers live with the catalog
        *_shared_inputs(
            cat,
            ("utilization", util),
            lambda: [
                Input("Utilization, planning figure", util, "pct", "", "Assumption of this page family"),
            ],
        ),
    ]
    return Context(values, blocks, inputs, list(rec.figures.values()), [offer.checked], [offer.provider])


def _shared_inputs(cat: Catalog, key: tuple, make) -> list[Input]:
    """The input figures `make()` gives for `key`, made once per catalog (pages share them, read-only)."""
    found = cat.shared_inputs.get(key)
    if found is None:
        found = cat.shared_inputs[key] = make()
    return found


# --- time-to-train kind ----------------------------------------------------------

TIME_TO_TRAIN = record({"suite": F("id"), "providers": list_of(F("slug"))})


def build_time_to_train(cat: Catalog, art: Article, p: dict) -> Context:
    """Published time-to-train results × the hourly price of a matching rented setup.

    A suite fixes the work (samples × sequence length on one model); each result is
    one system's wall time for it. A run on a rented offer of the same GPU type and
    count is priced at the fastest and at the median published time of that type.
    """
    import pandas as pd  # only the kinds that make frames load it (see engine)

    rec = Recorder()
    blocks = Blocks()
    suite = _lookup(cat.suites, p["suite"], "time-to-train suite", art, ("suite",))
    model, method = cat.models[suite.model], cat.methods[suite.method]
    snaps = _snapshots(cat, art, p["providers"])
    tokens = suite.tokens
    results = []
    for r in suite.results:
        gpu = cat.gpus[r.gpu]
        hours = r.minutes / 60
        util = engine.utilization_over_run(
            method.ops_per_param, model.parameters, tokens, gpu.peak_tflops * r.count, hours
        )
        key = f"{r.round} {r.submitter} {r.system}"  # the figure ids' part: as the results name it
        results.append(
            {
                "key": key,
                "name": f"{r.round} {_system_name(r.submitter, r.system)}",
                "gpu": r.gpu,
                "gpu_name": gpu.name,
                "count": r.count,
                "setup": fmt.setup(r.count, gpu.name),
                "system": r.system,
                "submitter": r.submitter,
                "round": r.round,
                "availability": _availability(r.availability),
                "minutes": r.minutes,
                "utilization": rec(f"result.{key}.utilization", util, "share", suite.id),
                "url": r.url,
            }
        )
    frame = pd.DataFrame(results)
    frame["group"] = frame["gpu"] + "x" + frame["count"].astype(str)
    spread = engine.time_spread(frame, "group").to_dict("records")
    groups = {}
    for g in spread:
        first = frame[frame["group"] == g["group"]].iloc[0]
        gpu = cat.gpus[first["gpu"]]
        peak = gpu.peak_tflops * int(first["count"])
        fastest = engine.rank(frame[frame["group"] == g["group"]], "minutes").iloc[0]
        groups[g["group"]] = {
            "key": g["group"],
            "gpu": gpu.id,
            "setup": str(first["setup"]),
            "systems": int(g["systems"]),
            "fastest": rec(f"gpu.{g['group']}.fastest_minutes", g["fastest"], "minutes", suite.id),
            "fastest_system": f"{_system_name(fastest['submitter'], fastest['system'])} ({fastest['round']})",
            "median": rec(f"gpu.{g['group']}.median_minutes", g["median"], "minutes", suite.id),
            "slowest": rec(f"gpu.{g['group']}.slowest_minutes", g["slowest"], "minutes", suite.id),
            "median_utilization": rec(
                f"gpu.{g['group']}.median_utilization",
                engine.utilization_over_run(method.ops_per_param, model.parameters, tokens, peak, g["median"] / 60),
                "share",
                suite.id,
            ),
            "offers": 0,
        }
    rows = []
    for snap in snaps:
        for offer in snap.offers:
            group = groups.get(f"{offer.gpu}x{offer.count}")
            if group is None:
                continue
            group["offers"] += 1
            label = f"{offer.provider_name}, {group['setup']}"
            rows.append(
                {
                    "key": offer.key,
                    "label": label,
                    "provider": offer.provider,
                    "provider_name": offer.provider_name,
                    "gpu": offer.gpu,
                    "usd_per_hour": offer.usd_per_hour,
                    "median_minutes": group["median"],
                    "systems": group["systems"],
                    "cost_median": rec(
                        f"offer.{offer.key}.cost_median",
                        engine.run_cost(group["median"] / 60, offer.usd_per_hour),
                        "USD",
                        offer.key,
                        suite.id,
                    ),
                    "cost_fastest": rec(
                        f"offer.{offer.key}.cost_fastest",
                        engine.run_cost(group["fastest"] / 60, offer.usd_per_hour),
                        "USD",
                        offer.key,
                        suite.id,
                    ),
                    "offer": offer,
                }
            )
    if not rows:
        _fail(art, ("providers",), f"no offer of these providers matches a GPU type and count in {suite.file}")
    ranked = engine.rank(pd.DataFrame(rows), "cost_median")
    records = ranked.drop(columns=["offer"]).to_dict("records")
    best, worst = records[0], records[-1]
    leaders = engine.leaders(ranked, "cost_median")["label"].tolist()
    hour = engine.rank(ranked, "usd_per_hour").iloc[0].drop(labels=["offer"]).to_dict()
    priced = [g for g in groups.values() if g["offers"]]
    fastest_gpu = min(priced, key=lambda g: (g["median"], g["key"]))

    blocks.add(
        Table(
            "offers",
            f"One {suite.name} run on each matching rented setup, priced at the median and the fastest "
            "published time of its GPU type",
            [
                Column("label", "Provider and setup"),
                Column("usd_per_hour", "Price per hour (USD)", "usd", True),
                Column("median_minutes", "Median time (minutes)", "num2", True),
                Column("cost_median", "Run cost at the median time (USD)", "usd", True),
                Column("cost_fastest", "Run cost at the fastest time (USD)", "usd", True),
            ],
            records,
        )
    )
    gpu_rows = sorted(groups.values(), key=lambda g: (g["median"], g["key"]))
    blocks.add(
        Table(
            "gpu-types",
            f"Published times to train by setup ({suite.name})",
            [
                Column("setup", "Setup"),
                Column("systems", "Systems", "int", True),
                Column("fastest", "Fastest (minutes)", "num2", True),
                Column("median", "Median (minutes)", "num2", True),
                Column("slowest", "Slowest (minutes)", "num2", True),
                Column("median_utilization", "Implied utilization at the median", "pct", True),
            ],
            gpu_rows,
        )
    )
    all_rows = sorted(results, key=lambda r: (r["gpu_name"], r["minutes"], r["key"]))
    blocks.add(
        Table(
            "results",
            f"Every result used: {suite.name}, {len(all_rows)} systems",
            [
                Column("name", "Round, submitter and system"),
                Column("setup", "Setup"),
                Column("availability", "Availability"),
                Column("minutes", "Time to train (minutes)", "num2", True),
                Column("utilization", "Implied utilization", "pct", True),
            ],
            all_rows,
        )
    )
    blocks.add(
        _cost_bars(
            "cost-median",
            f"Cost of one {suite.name} run at the median published time",
            records,
            "cost_median",
            "Run cost (USD)",
            "Run cost at the median published time by provider and setup",
        )
    )
    values = {
        "suite": {
            "name": suite.name,
            "samples": suite.samples,
            "sequence_length": suite.sequence_length,
            "tokens": tokens,
            "definition": suite.definition,
            "notes": suite.notes,
            "results": len(results),
        },
        "model": {"name": model.name, "parameters": model.parameters},
        "method": {"name": method.name, "ops_per_param": method.ops_per_param},
        "gpu_types": gpu_rows,
        "fastest_gpu": fastest_gpu,
        "unpriced": [g for g in gpu_rows if not g["offers"]],
        "offers": records,
        "best": best,
        "answer": answer(
            best["cost_median"],
            "usd",
            f"for one {suite.name} run at the median published time, the cheapest of {len(records)} setups",
            best["label"],
        ),
        "worst": worst,
        "leaders": leaders,
        "is_tied": len(leaders) > 1,
        "spread": rec("offers.spread", worst["cost_median"] / best["cost_median"], "ratio"),
        "cheapest_hour": hour,
        "best_is_cheapest_hour": hour["key"] == best["key"],
        "providers": [{"name": s.name, "checked": s.checked} for s in snaps],
    }
    inputs = [
        *work_inputs(model, method),
        Input(
            f"Samples per run, {suite.name}", suite.samples, "num1", "samples", suite.samples_source, suite.samples_url
        ),
        Input(
            f"Tokens per sample, {suite.name}",
            suite.sequence_length,
            "int",
            "tokens",
            suite.sequence_source,
            suite.sequence_url,
        ),
        Input(
            f"Times to train, {suite.name}",
            len(results),
            "int",
            "results",
            f"{suite.source}; {suite.definition}",
            suite.url,
        ),
    ]
    inputs += _offer_price_inputs(cat, snaps, {r["key"] for r in records})
    for gpu_id in sorted({g["gpu"] for g in gpu_rows}):
        inputs += gpu_inputs(cat.gpus[gpu_id])[:1]
    return Context(
        values,
        blocks,
        inputs,
        list(rec.figures.values()),
        sorted({s.checked for s in snaps}),
        [s.provider for s in snaps],
    )


KINDS = {
    "throughput": (THROUGHPUT, build_throughput),
    "flops": (FLOPS, build_flops),
    "market": (MARKET, build_market),
    "setup": (SETUP, build_setup),
    "time-to-train": (TIME_TO_TRAIN, build_time_to_train),
}


def _register_kinds() -> None:
    """Kinds that live in generator/kinds/ (they import this module's Context and Recorder)."""
    from generator.kinds import memory_check

    KINDS["memory-check"] = (memory_check.SPEC, memory_check.build)


PRICE_HISTORY = 'chart("price-history")'


def build_context(cat: Catalog, art: Article) -> Context | None:
    """Validate an article's params for its kind and compute its context; None if it failed."""
    if "memory-check" not in KINDS:
        _register_kinds()
    if art.kind not in KINDS:
        art.params_doc.problem(("kind",), f"unknown article kind {art.kind!r}; known: {', '.join(sorted(KINDS))}")
        return None
    spec, build = KINDS[art.kind]
    before = len(art.params_doc.problems)
    params = art.params if art.params_checked else validate(art.params_doc, art.params, spec, ("params",))
    if len(art.params_doc.problems) > before or params is None:
        return None
    try:
        ctx = build(cat, art, params)
    except ParamError:
        return None
    # only a page whose prose places the chart gets it (and its figures in figures.json)
    history = price_history(cat, ctx.providers, art.prices_as_of) if PRICE_HISTORY in art.body else None
    ctx.values["has_price_history"] = history is not None
    if history is not None:
        ctx.blocks.add(history)
    inputs = [Figure(f"input.{i.what}", float(i.number), i.unit or unit_of(i.fmt)) for i in ctx.inputs]
    merged = ctx.figures + _table_figures(ctx.blocks) + inputs
    ctx.figures = sorted({f.id: f for f in merged}.values(), key=lambda f: f.id)
    return ctx


def price_history(cat: Catalog, providers: list[str], as_of) -> Chart | None:
    """Price per GPU-hour over time for each provider and GPU type, when a provider has 2+ snapshots."""
    series, rows = [], {}
    for provider in sorted(set(providers)):
        snaps = [s for s in cat.snapshots.get(provider, ()) if as_of is None or s.checked <= as_of]
        if len(snaps) < 2:
            continue
        points: dict[str, dict] = {}
        for snap in snaps:
            for gpu in sorted({o.gpu for o in snap.offers}):
                cheapest = min(o.usd_per_hour / o.count for o in snap.offers if o.gpu == gpu)
                points.setdefault(gpu, {})[snap.checked.isoformat()] = cheapest
        name = snaps[-1].name
        for gpu, by_day in sorted(points.items()):
            label = f"{name}, {cat.gpus[gpu].name}"
            series.append((label, list(by_day), list(by_day.values())))
            for day, value in by_day.items():
                rows.setdefault(day, {"day": day})[f"{provider}:{gpu}"] = value
    if not series:
        return None
    keys = sorted({k for row in rows.values() for k in row if k != "day"})
    labels = {f"{p}:{g}": f"{cat.snapshots[p][-1].name}, {cat.gpus[g].name}" for p, g in (k.split(":") for k in keys)}
    title = "Price per GPU-hour over time (cheapest offer of each GPU type)"
    fig = charts.dated_lines(title, series, "Snapshot date", "USD per GPU-hour")
    table = Table(
        "price-history-data",
        "Price per GPU-hour by snapshot date",
        [Column("day", "Snapshot")] + [Column(k, labels[k], "usd", True) for k in keys],
        [rows[d] for d in sorted(rows)],
    )
    return Chart("price-history", title, fig, table)


UNITS = {
    "usd": "USD",
    "usd0": "USD",
    "hours": "hours",
    "tokens": "tokens",
    "pct": "share",
    "ratio": "ratio",
    "billions": "number",
}


def unit_of(form: str) -> str:
    """The unit figures.json records for a value shown with a given format."""
    return UNITS.get(form, "number")


def _table_figures(blocks: Blocks) -> list[Figure]:
    """Every number in every table (chart data included), so figures.json holds all a page shows."""
    out = []
    tables = list(blocks.tables.values()) + [c.table for c in blocks.charts.values()]
    for table in tables:
        first = table.columns[0]
        numeric = [(col.key, unit_of(col.fmt)) for col in table.columns[1:] if col.numeric]
        for row in table.rows:
            label = row.get("key") or fmt.cell(row[first.key], first.fmt)
            prefix = f"table.{table.id}.{label}."
            for key, unit in numeric:
                value = row.get(key)
                if value is not None:
                    out.append(Figure(prefix + key, float(value), unit))
    return out
