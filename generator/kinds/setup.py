"""Kind `setup`: one model, one method, one offer; the page a family makes for each."""

from __future__ import annotations

from generator import charts, engine
from generator import formatting as fmt
from generator.answer import answer
from generator.kinds.common import Context, Recorder, find_offer, shared_inputs
from generator.model import Blocks, Chart, Column, Input, Table
from generator.records import Article, Catalog
from generator.scenarios import counted_parameters, gpu_inputs, memory_need, price_input, work_inputs
from generator.schema import MAX_ROWS, F, list_of, record

SPEC = record(
    {
        "model": F("id"),
        "method": F("id"),
        "offer": F("text"),
        "reference_tokens": F("tokens"),
        "token_budgets": list_of(F("tokens"), most=MAX_ROWS),
        "chart_tokens": list_of(F("tokens"), most=MAX_ROWS),
        "utilization": F("share"),
        "startup_hours": F("nonnegative"),
        "neighbours": F("any"),
        "listing_slug": F("slug"),
    }
)


NEIGHBOURS_SHOWN = 8


def build(cat: Catalog, art: Article, p: dict) -> Context:
    """One model, one method, one offer: budgets, a chart, and the same job on the other setups."""
    rec = Recorder()
    blocks = Blocks()
    model, method = cat.models[p["model"]], cat.methods[p["method"]]
    offer = find_offer(cat, art, p["offer"], ("offer",))
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
        *shared_inputs(
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
        *shared_inputs(cat, ("gpu", gpu.id), lambda: gpu_inputs(gpu)),
        *shared_inputs(cat, ("offer", id(offer)), lambda: [price_input(offer, gpu)]),  # offers live with the catalog
        *shared_inputs(
            cat,
            ("utilization", util),
            lambda: [
                Input("Utilization, planning figure", util, "pct", "", "Assumption of this page family"),
            ],
        ),
    ]
    return Context(values, blocks, inputs, list(rec.figures.values()), [offer.checked], [offer.provider])
