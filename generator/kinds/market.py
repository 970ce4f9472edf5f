"""Kind `market`: one run priced at every provider's offers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator import engine
from generator import formatting as fmt
from generator.answer import answer
from generator.claims import own
from generator.engine import rows as rows_engine
from generator.kinds.common import Context, Steps, cost_bars, fail, lookup, offer_price_inputs, snapshots
from generator.model import Column, Input, Table
from generator.records import Article, Catalog
from generator.scenarios import gpu_inputs, setup_row, training_job
from generator.schema import F, list_of, record

SPEC = record(
    {
        "model": F("id"),
        "methods": list_of(F("id")),
        "providers": list_of(F("slug")),
        "tokens": F("tokens"),
        "utilization": F("share"),
        "startup_hours": F("nonnegative"),
    }
)


@dataclass
class _Page(Steps):
    """What the steps share: the article, its params, the model, methods and snapshots, the recorder and blocks."""

    cat: Catalog
    art: Article
    p: dict
    model: Any
    methods: list
    snaps: list


def build(cat: Catalog, art: Article, p: dict) -> Context:
    """One run priced at every provider's offers: the cheapest fitting setup per provider and GPU type."""
    model = lookup(cat.models, p["model"], "model", art, ("model",))
    methods = [lookup(cat.methods, m, "method", art, ("methods", i)) for i, m in enumerate(p["methods"])]
    page = _Page(cat, art, p, model, methods, snapshots(cat, art, p["providers"]))
    rows = _fitting_rows(page)
    grid = _priced(page, rows)
    per_method = {m.id: _method_summary(page, m, [r for r in grid if r["method"] == m.id]) for m in methods}
    values = _values(page, per_method)
    snaps = page.snaps
    return Context(
        values,
        page.blocks,
        _inputs(page, rows),
        list(page.rec.figures.values()),
        sorted({s.checked for s in snaps}),
        [s.provider for s in snaps],
        _rests_on(page, per_method),
    )


def _rests_on(page: _Page, per_method: dict) -> dict[str, tuple[str, ...]]:
    """The figures each of the page's choices rests on (generator.claims): a method's setups are ranked by
    their run's cost, its cheapest hour by the hourly prices; the answer is the first priced method's best."""
    out: dict[str, tuple[str, ...]] = {}
    hour = (own("input.Hourly price, *"),)
    for method in page.methods:
        if per_method.get(method.id) is None:
            continue
        cost = (own(f"{method.id}.*.cost_with_startup"),)
        out.setdefault("answer", cost)
        at = f"methods.{method.id}"
        out |= {f"{at}.{key}": cost for key in ("best", "worst", "leaders", "is_tied")}
        out |= {f"{at}.cheapest_hour": hour, f"{at}.best_is_cheapest_hour": cost + hour}
    return out


def _fitting_rows(page: _Page) -> list[dict]:
    """Every offer of the listed providers that holds each method's training state, as an engine row."""
    cat, art, model = page.cat, page.art, page.model
    rows = []
    for method in page.methods:
        if cat.memory.get((model.id, method.id)) is None and training_job(model, method) is None:
            fail(art, ("methods",), f"no training-state memory recorded or modelled for {model.id} with {method.id}")
        for snap in page.snaps:
            for offer in snap.offers:
                row = setup_row(cat, model, method, offer)
                if row["fits"]:
                    rows.append({**row, "label": f"{offer.provider_name}, {row['setup']}"})
    if not rows:
        fail(art, ("providers",), "no offer of these providers holds the training state of any listed method")
    return rows


def _priced(page: _Page, rows: list[dict]) -> list[dict]:
    """The one run on each row: hours, cost with startup, cost per million tokens and price per PFLOP-hour."""
    p = page.p
    grid = rows_engine.flop_rows(rows_engine.records(rows), [p["tokens"]], p["utilization"], p["startup_hours"])
    for r in grid:
        r["price_per_pflop_hour"] = engine.price_per_pflop_hour(r["usd_per_hour"], r["peak_tflops"])
    return grid


def _method_summary(page: _Page, method, sub: list[dict]) -> dict | None:
    """One method's offers, one row per provider and GPU type (the GPU count with the cheapest run), its
    table and chart, and the figures the sentences compare; None when no offer holds the method."""
    if not sub:
        return None
    rec = page.rec
    ranked = engine.rank_rows(sub, "cost_with_startup")
    records = [dict(r) for r in rows_engine.first_of_each(ranked, ("provider", "gpu"))]
    best, worst = records[0], records[-1]
    leaders = [r["label"] for r in rows_engine.leader_rows(records, "cost_with_startup")]
    hour = dict(engine.rank_rows(records, "usd_per_hour")[0])
    summary = {
        "name": method.name,
        "state_gb": float(sub[0]["state_gb"]),
        "best": best,
        "worst": worst,
        "leaders": leaders,
        "is_tied": len(leaders) > 1,
        "count": len(records),
        "cheapest_hour": hour,
        "best_is_cheapest_hour": hour["key"] == best["key"],
        "spread": rec(
            f"{method.id}.spread",
            worst["cost_with_startup"] / best["cost_with_startup"],
            "ratio",
            worst["key"],
            best["key"],
        ),
        "providers": len({r["provider"] for r in records}),
    }
    for r in records:
        rec(f"{method.id}.{r['offer']}.cost_with_startup", r["cost_with_startup"], "USD", r["offer"])
    _method_blocks(page, method, records)
    return summary


def _method_blocks(page: _Page, method, records: list[dict]) -> None:
    """One method's table of offers and its bar chart of run costs."""
    p = page.p
    page.blocks.add(
        Table(
            f"offers-{method.id}",
            f"{method.name} on {page.model.name}, {fmt.tokens(p['tokens'])} tokens at {fmt.pct(p['utilization'])} "
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
    page.blocks.add(
        cost_bars(
            f"cost-{method.id}",
            f"{method.name}: run cost by provider and setup",
            records,
            "cost_with_startup",
            "Run cost with startup (USD)",
            f"{method.name}: run cost with startup by provider and setup",
        )
    )


def _values(page: _Page, per_method: dict) -> dict:
    """What the templates read."""
    p, model = page.p, page.model
    return {
        "model": {"name": model.name, "parameters": model.parameters},
        "tokens": p["tokens"],
        "utilization": p["utilization"],
        "startup_minutes": p["startup_hours"] * 60,
        "methods": per_method,
        "providers": [
            {"name": s.name, "checked": s.checked, "offers": len(s.offers), "notes": s.notes} for s in page.snaps
        ],
        "answer": _market_answer(model, page.methods, per_method, p["tokens"]),
    }


def _inputs(page: _Page, rows: list[dict]) -> list[Input]:
    """The page's input figures: the model, the utilization, every price used, its GPUs and training states."""
    cat, model, p = page.cat, page.model, page.p
    inputs = [
        Input(f"Parameters, {model.name}", model.parameters, "int", "", model.source, model.url),
        Input("Utilization, planning figure", p["utilization"], "pct", "", "Assumption of this article"),
    ]
    inputs += offer_price_inputs(cat, page.snaps, {r["offer"] for r in rows})
    for gpu_id in sorted({r["gpu"] for r in rows}):
        inputs += gpu_inputs(cat.gpus[gpu_id])
    for method in page.methods:
        mem = cat.memory.get((model.id, method.id))
        if mem is not None:
            inputs.append(
                Input(f"Training state, {model.name} {method.name}", mem.gb, "num", "GB", mem.source, mem.url)
            )
    return inputs


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
