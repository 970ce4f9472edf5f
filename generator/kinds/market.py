"""Kind `market`: one run priced at every provider's offers."""

from __future__ import annotations

from generator import engine
from generator import formatting as fmt
from generator.answer import answer
from generator.engine import rows as rows_engine
from generator.kinds.common import Context, Recorder, cost_bars, fail, lookup, offer_price_inputs, snapshots
from generator.model import Blocks, Column, Input, Table
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


def build(cat: Catalog, art: Article, p: dict) -> Context:
    """One run priced at every provider's offers: the cheapest fitting setup per provider and GPU type."""
    rec = Recorder()
    blocks = Blocks()
    model = lookup(cat.models, p["model"], "model", art, ("model",))
    methods = [lookup(cat.methods, m, "method", art, ("methods", i)) for i, m in enumerate(p["methods"])]
    snaps = snapshots(cat, art, p["providers"])
    rows = []
    for method in methods:
        if cat.memory.get((model.id, method.id)) is None and training_job(model, method) is None:
            fail(art, ("methods",), f"no training-state memory recorded or modelled for {model.id} with {method.id}")
        for snap in snaps:
            for offer in snap.offers:
                row = setup_row(cat, model, method, offer)
                if row["fits"]:
                    rows.append({**row, "label": f"{offer.provider_name}, {row['setup']}"})
    if not rows:
        fail(art, ("providers",), "no offer of these providers holds the training state of any listed method")
    grid = rows_engine.flop_rows(rows_engine.records(rows), [p["tokens"]], p["utilization"], p["startup_hours"])
    for r in grid:
        r["price_per_pflop_hour"] = engine.price_per_pflop_hour(r["usd_per_hour"], r["peak_tflops"])
    per_method = {}
    for method in methods:
        sub = [r for r in grid if r["method"] == method.id]
        if not sub:
            per_method[method.id] = None
            continue
        # one row per provider and GPU type: the GPU count with the cheapest run
        ranked = engine.rank_rows(sub, "cost_with_startup")
        records = [dict(r) for r in rows_engine.first_of_each(ranked, ("provider", "gpu"))]
        best, worst = records[0], records[-1]
        leaders = [r["label"] for r in rows_engine.leader_rows(records, "cost_with_startup")]
        hour = dict(engine.rank_rows(records, "usd_per_hour")[0])
        per_method[method.id] = {
            "name": method.name,
            "state_gb": float(sub[0]["state_gb"]),
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
            cost_bars(
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
    inputs += offer_price_inputs(cat, snaps, {r["offer"] for r in rows})
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
