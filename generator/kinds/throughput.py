"""Kind `throughput`: cost from a published tokens/s figure and an hourly rate."""

from __future__ import annotations

from generator import charts, engine
from generator import formatting as fmt
from generator.answer import answer
from generator.claims import own
from generator.engine import rows as rows_engine
from generator.kinds.common import Context, Recorder, fail, find_offer, lookup
from generator.model import Blocks, Chart, Code, Column, Input, Table
from generator.records import Article, Catalog
from generator.scenarios import price_input
from generator.schema import MAX_ROWS, F, list_of, record

SPEC = record(
    {
        "benchmark": F("id"),
        "offer": F("text"),
        "token_budgets": list_of(F("tokens"), most=MAX_ROWS),
        "snippet_tokens": F("tokens"),
        "compare_tokens": F("tokens"),
        "compare_benchmarks": list_of(F("id"), required=False),
        "chart_tokens": list_of(F("tokens"), most=MAX_ROWS),
    }
)


def build(cat: Catalog, art: Article, p: dict) -> Context:
    """Cost from a published tokens/s figure and an hourly rate."""
    rec, blocks = Recorder(), Blocks()
    offer = find_offer(cat, art, p["offer"], ("offer",))
    gpu = cat.gpus[offer.gpu]
    runs = _runs(cat, art, p, offer)
    rows = _budgets(rec, blocks, p, runs[0], offer)
    snippet = _snippet(rec, blocks, p, runs[0]["bench"], offer)
    checks = _throughput_checks(cat, rec, runs, gpu, offer, float(snippet["tokens"]), snippet["hours"])
    _checks_table(blocks, checks, gpu, offer)
    crow = _compare(rec, blocks, p, runs, offer)
    _chart(blocks, p, runs, gpu, offer)
    values = _values(rec, p, runs[0], offer, gpu, rows, snippet, checks, crow)
    inputs = [_throughput_input(r) for r in runs] + [price_input(offer, gpu)]
    return Context(values, blocks, inputs, list(rec.figures.values()), [offer.checked], [offer.provider], RESTS_ON)


# The figures each of the page's choices rests on (generator.claims): the answer on the snippet's cost, the
# runs' order on their cost at one budget, the plausibility verdicts on the utilization each run implies.
RESTS_ON = {
    "answer": (own("snippet.cost"),),
    **dict.fromkeys(("compare", "cheapest_run", "dearest_run"), (own("compare.*.cost"),)),
    "check": (own("check.*.utilization"),),
    "estimates": (own("estimate.*"),),
}


def _throughput_input(run: dict) -> Input:
    bench = run["bench"]
    return Input(f"Throughput, {run['label']}", run["tokens_per_second"], "num2", "tokens/s", bench.source, bench.url)


def _runs(cat: Catalog, art: Article, p: dict, offer) -> list[dict]:
    """The article's benchmark and those it compares, each of which must have run on the offer's GPUs."""
    bench_ids = list(dict.fromkeys([p["benchmark"], *(p["compare_benchmarks"] or [])]))
    runs = []
    for i, bid in enumerate(bench_ids):
        path = ("benchmark",) if i == 0 else ("compare_benchmarks", i - 1)
        b = lookup(cat.benchmarks, bid, "benchmark", art, path)
        if (b.gpu, b.count) != (offer.gpu, offer.count):
            fail(
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
    return runs


def _grid(runs: list[dict], tokens) -> list[dict]:
    """Each run × token count with its hours and cost (the benchmark records left out)."""
    return rows_engine.throughput_rows(
        rows_engine.records({k: v for k, v in r.items() if k != "bench"} for r in runs), tokens
    )


def _budgets(rec: Recorder, blocks: Blocks, p: dict, main: dict, offer) -> list[dict]:
    """Time and cost of the main run at each token budget."""
    bench = main["bench"]
    rows = []
    for r in _grid([main], p["token_budgets"]):
        t = fmt.tokens(r["tokens"])
        rows.append(
            {
                "tokens": r["tokens"],
                "hours": rec(f"estimate.{t}.hours", r["hours"], "hours", bench.id, offer.key),
                "cost": rec(f"estimate.{t}.cost", r["cost"], "USD", bench.id, offer.key),
                "days": rec(f"estimate.{t}.days", r["hours"] / 24, "days", bench.id),
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
    return rows


def _snippet(rec: Recorder, blocks: Blocks, p: dict, bench, offer) -> dict:
    """The arithmetic as a few lines of Python, with the output the engine computed."""
    tokens = p["snippet_tokens"]
    hours = engine.throughput_hours(tokens, bench.tokens_per_second)
    cost = engine.run_cost(hours, offer.usd_per_hour)
    rec("snippet.hours", hours, "hours", bench.id)
    rec("snippet.cost", cost, "USD", bench.id, offer.key)
    code = (
        f"tokens = {tokens:_}\n"
        f"tokens_per_second = {bench.tokens_per_second!r}\n"
        f"usd_per_hour = {offer.usd_per_hour!r}\n"
        "\n"
        "hours = tokens / tokens_per_second / 3600\n"
        "cost = hours * usd_per_hour\n"
        'print(f"{hours:.1f} hours, ${cost:.2f}")\n'
    )
    blocks.add(Code("snippet", "python", code, f"{fmt.hours(hours)} hours, {fmt.usd(cost)}"))
    return {"tokens": tokens, "hours": hours, "cost": cost}


def _checks_table(blocks: Blocks, checks: dict, gpu, offer) -> None:
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


def _compare(rec: Recorder, blocks: Blocks, p: dict, runs: list[dict], offer) -> list[dict]:
    """One token budget at each published throughput, cheapest first."""
    crow = []
    for r in engine.rank_rows(_grid(runs, [p["compare_tokens"]]), "cost"):
        crow.append(
            {
                "_key": r["key"],  # what compare.dearest_vs_cheapest names (not "key": it would rename the cells)
                "label": r["label"],
                "tokens_per_second": r["tokens_per_second"],
                "hours": rec(f"compare.{r['key']}.hours", r["hours"], "hours", r["key"]),
                "cost": rec(f"compare.{r['key']}.cost", r["cost"], "USD", r["key"], offer.key),
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
    return crow


def _chart(blocks: Blocks, p: dict, runs: list[dict], gpu, offer) -> None:
    """Cost against training tokens, one line per published throughput."""
    chart_grid = _grid(runs, p["chart_tokens"])
    series, chart_rows = [], []
    by_key: dict[str, list] = {}  # each run's rows, in order (a search of the grid per run grew with runs squared)
    for g in chart_grid:
        by_key.setdefault(g["key"], []).append(g)
    for r in runs:
        sub = by_key.get(r["key"], [])
        series.append((r["label"], [g["tokens"] for g in sub], [g["cost"] for g in sub]))
    cost_at: dict[tuple, float] = {}  # (run, tokens) -> its cost, the first of a repeated count as before
    for g in chart_grid:
        cost_at.setdefault((g["key"], g["tokens"]), g["cost"])
    for t in p["chart_tokens"]:  # (a search of the grid for each cell took 96 s for 20,000 token counts)
        row = {"tokens": t}
        for r in runs:
            row[r["key"]] = cost_at[(r["key"], t)]
        chart_rows.append(row)
    title = f"Cost against training tokens on {fmt.setup(offer.count, gpu.name)}"
    fig = charts.lines(title, series, "Training tokens (log scale)", "Cost in USD (log scale)")
    columns = [Column("tokens", "Training tokens", "tokens", True)]
    columns += [Column(r["key"], r["label"], "usd", True) for r in runs]
    table = Table("cost-vs-tokens-data", f"Cost in USD by training tokens on {gpu.name}", columns, chart_rows)
    blocks.add(Chart("cost-vs-tokens", title, fig, table))


def _values(rec: Recorder, p: dict, main: dict, offer, gpu, rows, snippet, checks, crow) -> dict:
    """The names the article's prose reads."""
    bench = main["bench"]
    cheapest = crow[0]
    setup = fmt.setup(offer.count, gpu.name)
    return {
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
            "setup": setup,
            "gpu": gpu.name,
        },
        "estimates": rows,
        "by_tokens": {fmt.tokens(r["tokens"]): r for r in rows},
        "snippet": snippet,
        "answer": answer(
            snippet["cost"],
            "usd",
            f"for {fmt.tokens(snippet['tokens'])} training tokens of {main['label']}",
            f"{setup} at {offer.provider_name}",
        ),
        "check": checks,
        "compare": crow,
        "compare_tokens": p["compare_tokens"],
        "cheapest_run": cheapest,
        "dearest_run": crow[-1],
        "dearest_vs_cheapest": rec(
            "compare.dearest_vs_cheapest",
            crow[-1]["cost"] / cheapest["cost"],
            "ratio",
            crow[-1]["_key"],
            cheapest["_key"],
        ),
    }


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
