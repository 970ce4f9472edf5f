"""Kind `flops`: cost from operation counts, dense peak and a utilization figure, per setup."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import yaml

from generator import charts, engine
from generator import formatting as fmt
from generator.answer import answer
from generator.claims import own
from generator.engine import rows as rows_engine
from generator.kinds.common import Context, Steps, fail, find_offer, lookup, providers_phrase
from generator.model import Chart, Code, Column, Input, Table
from generator.records import Article, Catalog
from generator.scenarios import gpu_inputs, price_input, setup_row
from generator.schema import MAX_ROWS, F, list_of, opt, record

SPEC = record(
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
        "larger_tokens": list_of(F("tokens"), most=MAX_ROWS),
        "chart_tokens": list_of(F("tokens"), most=MAX_ROWS),
        "trial_runs": list_of(F("count"), most=MAX_ROWS),
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


@dataclass
class _Page(Steps):
    """What the steps share: the article, its params, the figure recorder and the page's blocks."""

    cat: Catalog
    art: Article
    p: dict
    model: Any
    small: Any


def build(cat: Catalog, art: Article, p: dict) -> Context:
    """Cost from operation counts, dense peak and a utilization figure, per setup."""
    model = lookup(cat.models, p["model"], "model", art, ("model",))
    small = lookup(cat.models, p["small_model"], "model", art, ("small_model",))
    page = _Page(cat, art, p, model, small)
    setups, offers = _setups(page)
    run, run_tokens = _run_cost(page, setups)
    lead = _leaders(run)
    pflop = _pflop_by_gpu(page, run)
    compare = _comparisons(page, run, lead)
    larger = _larger_runs(page, setups, run, lead)
    planning = _planning(page, lead)
    fam_rows = _ops_by_family(page, setups)
    sens = _sensitivity(page, setups, run, run_tokens, lead["best"])
    _tables(page, run, run_tokens, lead, fam_rows, offers, larger, sens)
    _charts(page, setups, run, lead["best"], pflop["rows"], sens)
    manifest = _manifest_block(page, lead["best"])
    values = _values(page, setups, run, run_tokens, lead, pflop, compare, larger, planning, fam_rows, sens, offers)
    values["manifest"] = manifest
    inputs = _inputs(page, fam_rows, offers)
    checked = sorted({o.checked for o, _ in offers})
    providers = sorted({o.provider for o, _ in offers})
    figures = list(page.rec.figures.values())
    return Context(values, page.blocks, inputs, figures, checked, providers, _rests_on(setups))


# what the page's choices rank by: cost per million tokens, then the run's cost (_leaders); the hourly price
BY_TOKEN = (own("run.*.usd_per_million"), own("run.*.cost_with_startup"))
BY_HOUR = (own("input.Hourly price, *"),)


def _rests_on(setups) -> dict[str, tuple[str, ...]]:
    """The figures each of the page's choices rests on (generator.claims)."""
    out = dict.fromkeys(("best", "answer", "best_ties", "best_is_tied", "best_adapter", "best_full", "pair"), BY_TOKEN)
    out |= dict.fromkeys(("cheapest_hour", "dearest_hour"), BY_HOUR)
    out |= dict.fromkeys(("best_is_cheapest_hour", "best_is_dearest_hour", "best_gpu_dearest"), BY_TOKEN + BY_HOUR)
    out["cheap_hour_beats_best"] = BY_HOUR + (own("run.*.hours"), own("compare.break_even_hours"))
    pflop = ("pflop", "pflop_best", "pflop_worst", "pflop_leaders", "pflop_is_tied", "dearest_pflop")
    out |= dict.fromkeys(pflop, (own("pflop.*"),))
    out["range_single"] = (own("headline.*"),)
    out["manifest"] = BY_TOKEN + (own("manifest.max_cost"),)
    out["full_under_double"] = (own("compare.full_vs_adapter"),)
    out |= {"larger": (own("larger.*"),), "startup_share": (own("startup_share.*"),), "trials": (own("trials.*"),)}
    for s in setups:  # each listed setup holds the job: its memory per GPU against its GPU's
        out[f"setups.{s['key']}.fits"] = (own(f"memory.{s['key']}.per_gpu"), own(f"input.Memory, {s['gpu_name']}"))
    return out


def _setups(page: _Page):
    """Each listed method and offer as an engine row; a setup that cannot hold the job is a params error."""
    cat, art, model = page.cat, page.art, page.model
    rows, offers = [], []
    for i, s in enumerate(page.p["setups"]):
        path = ("setups", i)
        method = lookup(cat.methods, s["method"], "method", art, path + ("method",))
        offer = find_offer(cat, art, s["offer"], path + ("offer",))
        gpu = cat.gpus[offer.gpu]
        if cat.memory.get((model.id, method.id)) is None:
            fail(
                art,
                path + ("method",),
                f"no training-state memory recorded for {model.id} with {method.id} in methods.yaml",
            )
        row = setup_row(cat, model, method, offer)
        if not row["fits"]:
            fail(
                art,
                path,
                f"{method.name} on {model.name} needs {fmt.number(row['per_gpu_gb'], 1)} GB per GPU, but "
                f"{offer.count} x {gpu.name} holds {fmt.number(gpu.memory_gb)} GB each",
            )
        offers.append((offer, gpu))
        rows.append({**row, "label": f"{method.name}, {row['setup']}"})
    keys = [r["key"] for r in rows]
    if len(set(keys)) != len(keys):
        fail(art, ("setups",), "the same method and offer are listed twice")
    for r in rows:  # the memory model's estimate, shown beside the guide's figure
        page.rec(f"memory.{r['key']}.per_gpu", r["per_gpu_gb"], "GB")
    return rows_engine.records(rows), offers


def _run_cost(page: _Page, setups):
    """The article's run (examples × tokens × epochs) on every setup."""
    p, rec, model = page.p, page.rec, page.model
    run_tokens = p["examples"] * p["tokens_per_example"] * p["epochs"]
    run = rows_engine.flop_rows(setups, [run_tokens], p["utilization"], p["startup_hours"])
    for r in run:
        r["price_per_pflop_hour"] = engine.price_per_pflop_hour(r["usd_per_hour"], r["peak_tflops"])
        key, method, offer = r["key"], r["method"], r["offer"]
        rec(f"run.{key}.hours", r["hours"], "hours", model.id, method, offer)
        rec(f"run.{key}.training_cost", r["training_cost"], "USD", model.id, method, offer)
        rec(f"run.{key}.cost_with_startup", r["cost_with_startup"], "USD", model.id, method, offer)
        rec(f"run.{key}.usd_per_million", r["usd_per_million"], "USD per million tokens", offer)
    return run, run_tokens


def _leaders(run) -> dict:
    """The cheapest setup per token and per hour, the dearest per hour, and the best of each method family."""
    # at one cost per token, the cheaper run (startup included) first, as a family's listing ranks them
    by_token = [dict(r) for r in engine.rank_rows(run, "usd_per_million", then=("cost_with_startup",))]
    by_hour = engine.rank_rows(run, "usd_per_hour")
    adapters = [r for r in by_token if r["family"] == "adapter"]  # by_token's order: ranked as they are
    fulls = [r for r in by_token if r["family"] == "full"]
    best_adapter = dict(adapters[0]) if adapters else None
    best_full = dict(fulls[0]) if fulls else None
    return {
        "by_token": by_token,
        "best": dict(by_token[0]),
        "best_ties": [r["label"] for r in rows_engine.leader_rows(by_token, "usd_per_million")],  # best first
        "cheapest_hour": dict(by_hour[0]),
        "dearest_hour": dict(by_hour[-1]),
        "best_adapter": best_adapter,
        "best_full": best_full,
        "pair": [r for r in (best_adapter, best_full) if r is not None],
    }


def _pflop_by_gpu(page: _Page, run) -> dict:
    """Price per PFLOP-hour, one bar per GPU type (its cheapest offer)."""
    # each GPU's cheapest setup, the fewest GPUs first on a tie
    cheapest = sorted(run, key=lambda r: (r["price_per_pflop_hour"], r["count"], r["key"]))
    per_gpu = engine.rank_rows(rows_engine.first_of_each(cheapest, ("gpu",)), "price_per_pflop_hour")
    rows = []
    for r in per_gpu:
        rows.append(
            {
                "gpu": r["gpu_name"],
                "usd_per_gpu_hour": r["usd_per_hour"] / r["count"],
                "peak_pflops": r["peak_tflops"] / r["count"] / 1000,
                "price_per_pflop_hour": page.rec(
                    f"pflop.{r['gpu']}", r["price_per_pflop_hour"], "USD per PFLOP-hour", r["offer"]
                ),
            }
        )
    return {
        "per_gpu": per_gpu,
        "rows": rows,
        "leaders": [r["gpu_name"] for r in rows_engine.leader_rows(per_gpu, "price_per_pflop_hour")],
    }


def _comparisons(page: _Page, run, lead: dict) -> dict:
    """The best setup against the cheapest hour (peak, price, break-even), and the range per million tokens."""
    rec, best, cheapest_hour, by_token = page.rec, lead["best"], lead["cheapest_hour"], lead["by_token"]
    # each figure names the setups it compares: when another is cheapest, the report shows a new comparison
    pair = (best["key"], cheapest_hour["key"])
    price_ratio = rec("compare.price_ratio", best["usd_per_hour"] / cheapest_hour["usd_per_hour"], "ratio", *pair)
    low, high = by_token[0], by_token[-1]  # ranked by cost per million tokens
    return {
        "peak_ratio": rec("compare.peak_ratio", best["peak_tflops"] / cheapest_hour["peak_tflops"], "ratio", *pair),
        "price_ratio": price_ratio,
        "break_even_hours": rec(
            "compare.break_even_hours", engine.break_even_hours(best["hours"], price_ratio), "hours", *pair
        ),
        "range_low": rec("headline.low", low["usd_per_million"], "USD per million tokens", low["key"]),
        "range_high": rec("headline.high", high["usd_per_million"], "USD per million tokens", high["key"]),
    }


def _by_key(rows: list[dict]) -> dict[str, list[dict]]:
    """Grid rows by their setup's key, each setup's in their order: a setup's rows are picked from this
    rather than by a search of the whole grid for each setup (which grew with the square of the setups)."""
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(row["key"], []).append(row)
    return out


def _larger_runs(page: _Page, setups, run, lead: dict) -> dict:
    """The cheapest adapter and full setups at more tokens, with startup, and startup's share of each run."""
    p, rec, pair = page.p, page.rec, lead["pair"]
    records = {r["key"]: r for r in run}
    keys = {r["key"] for r in pair}
    larger = rows_engine.flop_rows(
        [s for s in setups if s["key"] in keys], p["larger_tokens"], p["utilization"], p["startup_hours"]
    )

    cells: dict[tuple, dict] = {}  # (setup, tokens) -> its row, the first of a repeated count as before
    for x in larger:
        cells.setdefault((x["key"], x["tokens"]), x)

    def cell(key: str, tokens: float) -> dict:
        return cells[(key, tokens)]  # (a search of every row for each cell grew with the square of the counts)

    rows = []
    for t in p["larger_tokens"]:
        row = {"tokens": t}
        for r in pair:
            row[r["key"]] = rec(f"larger.{fmt.tokens(t)}.{r['key']}", cell(r["key"], t)["cost_with_startup"], "USD")
        rows.append(row)
    startup_share = []
    for r in pair:
        first = records[r["key"]]
        last = cell(r["key"], max(p["larger_tokens"]))
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
    return {"rows": rows, "startup_share": startup_share}


def _planning(page: _Page, lead: dict) -> dict:
    """Trial budgets, evaluation cost, a low-utilization factor, what a budget buys, model size and method ratios."""
    cat, p, rec, best = page.cat, page.p, page.rec, lead["best"]
    on = best["key"]  # the setup these figures are of
    trials = sorted(p["trial_runs"])
    trial_costs = [rec(f"trials.{n}", engine.trial_budget(best["cost_with_startup"], n), "USD", on) for n in trials]
    eval_share = rec("eval.share", cat.evaluation.forward / best["ops_per_param"], "share", on)
    budget_tokens = float(fmt.sig(engine.tokens_for_budget(p["budget_usd"], best["usd_per_million"]), 2))
    rec("budget.tokens", budget_tokens, "tokens", on)
    best_full, best_adapter = lead["best_full"], lead["best_adapter"]
    full_ratio = None
    if best_full is not None and best_adapter is not None:
        full_ratio = rec(
            "compare.full_vs_adapter",
            best_full["training_cost"] / best_adapter["training_cost"],
            "ratio",
            best_full["key"],
            best_adapter["key"],
        )
    examples = budget_tokens / (p["tokens_per_example"] * p["epochs"])
    return {
        "trials": trials,
        "trial_costs": trial_costs,
        "eval_share": eval_share,
        "eval_per_million": rec(
            "eval.usd_per_million", best["usd_per_million"] * eval_share, "USD per million tokens", on
        ),
        "low_factor": rec("utilization.low_factor", p["utilization"] / p["low_utilization"], "ratio"),
        "budget_tokens": budget_tokens,
        "budget_examples": rec("budget.examples", examples, "examples", on),
        "size_ratio": rec("small_model.ratio", page.model.parameters / page.small.parameters, "ratio"),
        "full_ratio": full_ratio,
    }


def _ops_by_family(page: _Page, setups) -> list[dict]:
    """Operations per token for each method family the setups use."""
    fam_rows = []
    used = {s["method"] for s in setups}
    for family in ("adapter", "full"):
        ms = [m for m in page.cat.methods.values() if m.family == family and m.id in used]
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
                "per_token": page.rec(f"ops.{family}", m.ops_per_param * page.model.parameters, "operations"),
            }
        )
    return fam_rows


def _sensitivity(page: _Page, setups, run, run_tokens: float, best: dict) -> dict | None:
    """The run at the two utilization shares of `sensitivity`, kept on the run rows for the run-cost table."""
    shares = page.p["sensitivity"]
    if not shares:
        return None
    if len(shares) != 2 or min(shares) == max(shares):
        fail(page.art, ("sensitivity",), "expected two different utilization shares, e.g. [0.15, 0.5]")
    lo, hi = sorted(shares)
    bounds = rows_engine.flop_rows(setups, [run_tokens], [lo, hi], page.p["startup_hours"])
    at, by_key = {}, _by_key(bounds)
    for r in run:
        mine = by_key.get(r["key"], [])
        at[r["key"]] = {
            "at_high": next(b["cost_with_startup"] for b in mine if b["utilization"] == hi),
            "at_low": next(b["cost_with_startup"] for b in mine if b["utilization"] == lo),
        }
    mine = at[best["key"]]
    return {
        "low": lo,
        "high": hi,
        "by_key": at,
        "best_cheap": page.rec("sensitivity.best_at_high", mine["at_high"], "USD", best["key"]),
        "best_dear": page.rec("sensitivity.best_at_low", mine["at_low"], "USD", best["key"]),
        "factor": page.rec("sensitivity.factor", mine["at_low"] / mine["at_high"], "ratio", best["key"]),
    }


def _tables(page: _Page, run, run_tokens, lead, fam_rows, offers, larger, sens) -> None:
    """Operations by method, the setups, the run's cost (with its utilization range), cost per million, larger runs."""
    add, model, util = page.blocks.add, page.model, page.p["utilization"]
    add(
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
    add(
        Table(
            "setups",
            f"Setups, dense BF16 peak and hourly price ({providers_phrase(offers)})",
            [
                Column("method_name", "Method"),
                Column("setup", "Setup"),
                Column("state_gb", "Training state (GB)", "int", True),
                Column("per_gpu_gb", "Memory model, per GPU (GB)", "int", True),
                Column("memory_gb", "Setup memory (GB)", "int", True),
                Column("peak_tflops", "Dense BF16 peak (TFLOPS)", "int", True),
                Column("usd_per_hour", "Price per hour (USD)", "usd", True),
            ],
            [dict(r) for r in run],
        )
    )
    run_columns = [
        Column("label", "Setup"),
        Column("hours", "Hours", "hours", True),
        Column("training_cost", "Training cost (USD)", "usd", True),
        Column("cost_with_startup", "With startup (USD)", "usd", True),
    ]
    run_rows = [dict(r) for r in run]
    caption = f"One run of {fmt.tokens(run_tokens)} training tokens at {fmt.pct(util)} utilization"
    if sens:
        for row in run_rows:
            row.update(sens["by_key"][row["key"]])
        run_columns += [
            Column("at_high", f"At {fmt.pct(sens['high'])} (USD)", "usd", True),
            Column("at_low", f"At {fmt.pct(sens['low'])} (USD)", "usd", True),
        ]
        caption += f", with the range for {fmt.pct(sens['low'])} to {fmt.pct(sens['high'])}"
    add(Table("run-cost", caption, run_columns, run_rows))
    add(
        Table(
            "per-million",
            "Cost per million training tokens, before startup",
            [Column("label", "Setup"), Column("usd_per_million", "USD per million tokens", "usd", True)],
            [dict(r) for r in lead["by_token"]],
        )
    )
    add(
        Table(
            "larger",
            "Larger runs, startup included",
            [Column("tokens", "Training tokens", "tokens", True)]
            + [Column(r["key"], f"{r['label']} (USD)", "usd", True) for r in lead["pair"]],
            larger["rows"],
        )
    )


def _charts(page: _Page, setups, run, best: dict, pflop_rows: list[dict], sens) -> None:
    """Price per PFLOP-hour by GPU, and cost against training tokens (with the utilization band when asked)."""
    p, util, startup = page.p, page.p["utilization"], page.p["startup_hours"]
    title = "Price per PFLOP-hour of dense BF16 peak, by GPU"
    fig = charts.bar(
        title,
        [r["gpu"] for r in pflop_rows],
        [r["price_per_pflop_hour"] for r in pflop_rows],
        [fmt.usd(r["price_per_pflop_hour"]) for r in pflop_rows],
        "GPU",
        "USD per PFLOP-hour",
    )
    page.blocks.add(
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

    grid = rows_engine.flop_rows(setups, p["chart_tokens"], util, startup)
    series = []
    chart_rows = [{"tokens": t} for t in p["chart_tokens"]]
    by_key = _by_key(grid)
    for r in run:
        sub = by_key.get(r["key"], [])
        series.append((r["label"], [g["tokens"] for g in sub], [g["cost_with_startup"] for g in sub]))
        for row, g in zip(chart_rows, sub, strict=True):
            row[r["key"]] = g["cost_with_startup"]
    band = None
    columns = [Column("tokens", "Training tokens", "tokens", True)]
    columns += [Column(r["key"], f"{r['label']}", "usd", True) for r in run]
    if sens:
        spread = rows_engine.flop_rows(
            [s for s in setups if s["key"] == best["key"]], p["chart_tokens"], [sens["low"], sens["high"]], startup
        )
        upper = [g["cost_with_startup"] for g in spread if g["utilization"] == sens["low"]]
        lower = [g["cost_with_startup"] for g in spread if g["utilization"] == sens["high"]]
        band = (
            f"{best['label']}, {fmt.pct(sens['low'])} to {fmt.pct(sens['high'])} utilization",
            list(p["chart_tokens"]),
            lower,
            upper,
        )
        for row, lo_cost, hi_cost in zip(chart_rows, lower, upper, strict=True):
            row["band_low"], row["band_high"] = lo_cost, hi_cost
        columns += [
            Column("band_low", f"{best['label']} at {fmt.pct(sens['high'])}", "usd", True),
            Column("band_high", f"{best['label']} at {fmt.pct(sens['low'])}", "usd", True),
        ]
    title = f"Cost against training tokens, {fmt.pct(util)} utilization, startup included"
    fig = charts.lines(title, series, "Training tokens (log scale)", "Cost in USD (log scale)", band=band)
    table = Table("cost-vs-tokens-data", "Cost in USD by training tokens, startup included", columns, chart_rows)
    page.blocks.add(Chart("cost-vs-tokens", title, fig, table))


def _manifest_block(page: _Page, best: dict) -> dict:
    """A training-job manifest for the best setup, with a cost cap above its run cost."""
    m = page.p["manifest"]
    name = f"{m['name_prefix']}-{best['method']}"
    step = m["budget_step_usd"]
    max_cost = math.ceil(best["cost_with_startup"] * (1 + m["budget_margin"]) / step) * step
    page.rec("manifest.max_cost", max_cost, "USD")
    page.blocks.add(Code("manifest", "yaml", _manifest(m, name, best, page.p["epochs"], max_cost)))
    return {
        "name": name,
        "max_cost": max_cost,
        "save_steps": m["save_steps"],
        "gpu": best["gpu_short"],
        "count": int(best["count"]),
        "method": _method_name(m, best),
    }


def _values(page: _Page, setups, run, run_tokens, lead, pflop, compare, larger, planning, fam_rows, sens, offers):
    """The names the article's prose reads."""
    cat, p, model, small = page.cat, page.p, page.model, page.small
    best, cheapest_hour, dearest_hour = lead["best"], lead["cheapest_hour"], lead["dearest_hour"]
    records = {r["key"]: dict(r) for r in run}
    gpu_hour = [rows_engine.rounded(r["usd_per_hour"] / r["count"], 2) for r in run]
    top = max(gpu_hour)
    dearest_gpu = [r["gpu"] for r, price in zip(run, gpu_hour, strict=True) if price == top]
    full_method = next((x for x in cat.methods.values() if x.family == "full"), None)
    pflop_rows, best_full = pflop["rows"], lead["best_full"]
    trials, trial_costs, full_ratio = planning["trials"], planning["trial_costs"], planning["full_ratio"]
    return {
        "model": {"name": model.name, "parameters": model.parameters, "weights_gb": model.weights_gb},
        "small_model": {"name": small.name, "parameters": small.parameters},
        "size_ratio": planning["size_ratio"],
        "utilization": p["utilization"],
        "low_utilization": p["low_utilization"],
        "low_factor": planning["low_factor"],
        "reference_utilization": p["reference_utilization"],
        "run_tokens": run_tokens,
        "examples": p["examples"],
        "tokens_per_example": p["tokens_per_example"],
        "epochs": p["epochs"],
        "startup_hours": p["startup_hours"],
        "startup_minutes": p["startup_hours"] * 60,
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
        "best_ties": lead["best_ties"],
        "best_is_tied": len(lead["best_ties"]) > 1,
        "cheapest_hour": cheapest_hour,
        "dearest_hour": dearest_hour,
        "best_is_cheapest_hour": best["key"] == cheapest_hour["key"],
        "best_is_dearest_hour": best["key"] == dearest_hour["key"],
        "best_adapter": lead["best_adapter"],
        "best_full": best_full,
        "pflop": pflop_rows,
        "pflop_best": pflop_rows[0],
        "pflop_worst": pflop_rows[-1],
        "pflop_leaders": pflop["leaders"],
        "pflop_is_tied": len(pflop["leaders"]) > 1,
        "dearest_pflop": dict(pflop["per_gpu"][-1]),
        "best_gpu_dearest": dearest_gpu == [best["gpu"]] or set(dearest_gpu) == {best["gpu"]},
        "cheapest_hour_price_share": cheapest_hour["usd_per_hour"] / best["usd_per_hour"],
        "rule_ops": (full_method.forward + full_method.backward) if full_method else None,
        "providers": providers_phrase(offers),
        "range_single": fmt.dround(compare["range_low"], 0) == fmt.dround(compare["range_high"], 0),
        "memory_sequence_length": next(
            iter(v.sequence_length for k, v in sorted(cat.memory.items()) if k[0] == model.id), None
        ),
        **compare,
        "cheap_hour_beats_best": cheapest_hour["hours"] < compare["break_even_hours"],
        "range_low_whole": float(fmt.dround(compare["range_low"], 0)),
        "range_high_whole": float(fmt.dround(compare["range_high"], 0)),
        "larger": larger["rows"],
        "larger_tokens": p["larger_tokens"],
        "pair": lead["pair"],
        "startup_share": larger["startup_share"],
        "full_ratio": full_ratio,
        "full_under_double": full_ratio is not None and full_ratio < 2,
        "full_startup_cost": best_full["startup_cost"] if best_full else None,
        "trials": list(zip(trials, trial_costs, strict=True)),
        "trials_low": trial_costs[0],
        "trials_high": trial_costs[-1],
        "trial_runs_low": trials[0],
        "trial_runs_high": trials[-1],
        "eval_share": planning["eval_share"],
        "eval_per_million": planning["eval_per_million"],
        "sensitivity": sens and {k: v for k, v in sens.items() if k != "by_key"},
        "budget_usd": p["budget_usd"],
        "budget_tokens": planning["budget_tokens"],
        "budget_examples": planning["budget_examples"],
        "has_qlora": any(s["method"] == "qlora" for s in setups),
        "memory": {k[1]: v.gb for k, v in cat.memory.items() if k[0] == model.id},
    }


def _inputs(page: _Page, fam_rows: list[dict], offers) -> list[Input]:
    """Every input figure the page cites, with its source."""
    cat, p, model, small = page.cat, page.p, page.model, page.small
    ref = p["reference_utilization"]
    inputs = [
        Input(f"Parameters, {model.name}", model.parameters, "int", "", model.source, model.url),
        Input(f"Parameters, {small.name}", small.parameters, "int", "", small.source, small.url),
    ]
    for fam in fam_rows:
        what = f"Operations per parameter per token, {fam['methods']}"
        inputs.append(Input(what, fam["total"], "num", "", fam["source"], fam["url"]))
    inputs.append(Input("Utilization, planning figure", p["utilization"], "pct", "", "Assumption of this article"))
    inputs.append(Input("Utilization, Llama 3.1 70B pre-training", ref["value"], "pct", "", ref["source"], ref["url"]))
    seen_gpu = set()
    for offer, gpu in offers:
        if gpu.id not in seen_gpu:
            seen_gpu.add(gpu.id)
            inputs += gpu_inputs(gpu)
        inputs.append(price_input(offer, gpu))
    for (mid, meth), mem in sorted(cat.memory.items()):
        if mid == model.id:
            what = f"Training state, {model.name} {cat.methods[meth].name}"
            inputs.append(Input(what, mem.gb, "num", "GB", mem.source, mem.url))
    return inputs


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
