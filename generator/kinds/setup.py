"""Kind `setup`: one model, one method, one offer; the page a family makes for each."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from generator import charts, engine
from generator import formatting as fmt
from generator.answer import answer
from generator.claims import on_page, own
from generator.kinds.common import Context, Steps, find_offer, shared_inputs
from generator.model import Chart, Column, Input, Table
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


@dataclass
class _Page(Steps):
    """What the steps share: the job (model, method, offer and its GPU), the params, the recorder and the blocks."""

    cat: Catalog
    p: dict
    model: Any
    method: Any
    offer: Any
    gpu: Any
    mem: Any  # the training state methods.yaml records for this model and method, or None
    parameters: float  # active parameters, plus attention when the family asks for it
    setup: str  # "8 × H100"


def build(cat: Catalog, art: Article, p: dict) -> Context:
    """One model, one method, one offer: budgets, a chart, and the same job on the other setups."""
    page = _page(cat, art, p)
    per_gpu = _per_gpu_memory(page)
    _budgets(page)
    ref = _reference(page)
    _chart(page)
    values = _values(page, per_gpu, ref)
    offer = page.offer
    rests_on = _rests_on(p["listing_slug"], page.model.id, page.method.id)
    return Context(
        values, page.blocks, _inputs(page), list(page.rec.figures.values()), [offer.checked], [offer.provider], rests_on
    )


@functools.lru_cache(maxsize=256)
def _rests_on(listing: str, model: str, method: str) -> dict[str, tuple[str, ...]]:
    """The figures the page's decisions rest on (one mapping for all pages of a model and method): its
    answer on its own run's cost; its rank, its neighbours and whether it is the cheapest on that cost
    and those of the other setups of its model and method, which its listing records."""
    ranked = (own("reference.cost_with_startup"), on_page(listing, f"{model}/{method}@*.cost_with_startup"))
    by_rank = dict.fromkeys(("neighbours", "more_neighbours", "rank", "of", "is_cheapest", "cheapest"), ranked)
    return {"answer": (own("reference.cost_with_startup"),), **by_rank}


def _page(cat: Catalog, art: Article, p: dict) -> _Page:
    """The job the page prices; the family has already checked that the offer holds it."""
    model, method = cat.models[p["model"]], cat.methods[p["method"]]
    offer = find_offer(cat, art, p["offer"], ("offer",))
    gpu = cat.gpus[offer.gpu]
    parameters = counted_parameters(model, method, p.get("attention_sequence_length"))
    mem = cat.memory.get((model.id, method.id))
    return _Page(cat, p, model, method, offer, gpu, mem, parameters, fmt.setup(offer.count, gpu.name))


def _per_gpu_memory(page: _Page) -> float:
    """Memory each GPU holds: the memory model's figure, or the recorded training state split evenly."""
    offer = page.offer
    need = memory_need(page.model, page.method, page.gpu.memory_gb, offer.count)
    return page.rec("memory.per_gpu", need.per_gpu_gb if need else page.mem.gb / offer.count, "GB")


def _costs(page: _Page, tokens: list[float]) -> list[dict]:
    """One setup at a few token counts: the engine's one-run arithmetic, no frame or array per page."""
    p, price = page.p, page.offer.usd_per_hour
    peak = page.gpu.peak_tflops * page.offer.count
    ops, parameters, util, startup = page.method.ops_per_param, page.parameters, p["utilization"], p["startup_hours"]
    out = []
    for t in tokens:
        h = engine.flop_hours(ops, parameters, float(t), peak, util)
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


def _budgets(page: _Page) -> None:
    """The table of the family's token budgets."""
    offer = page.offer
    page.blocks.add(
        Table(
            "budgets",
            f"{page.method.name} on {page.model.name}, {page.setup} at {offer.provider_name}, "
            f"{fmt.pct(page.p['utilization'])} utilization",
            [
                Column("tokens", "Training tokens", "tokens", True),
                Column("hours", "Hours", "hours", True),
                Column("training_cost", "Training cost (USD)", "usd", True),
                Column("cost_with_startup", "With startup (USD)", "usd", True),
            ],
            _costs(page, page.p["token_budgets"]),
        )
    )


def _reference(page: _Page) -> dict:
    """The run the page's answer and sentences are about, each figure recorded."""
    ref = _costs(page, [page.p["reference_tokens"]])[0]
    for key in ("hours", "training_cost", "cost_with_startup", "usd_per_million"):
        page.rec(f"reference.{key}", ref[key], "USD" if key != "hours" else "hours")
    return ref


def _chart(page: _Page) -> None:
    """Cost against training tokens, startup included, with its data table."""
    points = _costs(page, page.p["chart_tokens"])
    title = f"Cost against training tokens on {page.setup}, startup included"
    fig = charts.lines(
        title,
        [(page.setup, [r["tokens"] for r in points], [r["cost_with_startup"] for r in points])],
        "Training tokens (log scale)",
        "Cost in USD (log scale)",
    )
    data = Table(
        "cost-vs-tokens-data",
        "Cost in USD by training tokens, startup included",
        [Column("tokens", "Training tokens", "tokens", True), Column("cost_with_startup", "USD", "usd", True)],
        points,
    )
    page.blocks.add(Chart("cost-vs-tokens", title, fig, data))


def _values(page: _Page, per_gpu: float, ref: dict) -> dict:
    """What the templates read. The family computed the neighbours once for all its pages: the cheapest
    few, how many other setups there are and how many cost less at the cents shown."""
    p, model, method, offer, gpu, mem = page.p, page.model, page.method, page.offer, page.gpu, page.mem
    near = p["neighbours"]
    neighbours, others, n_cheaper = near["shown"], near["others"], near["cheaper"]
    return {
        "model": {"name": model.name, "parameters": model.parameters},
        "method": {"name": method.name, "ops": method.ops_per_param},
        "offer": {
            "provider": offer.provider_name,
            "setup": page.setup,
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
        "attention_sequence_length": p.get("attention_sequence_length"),
        "moe": model.architecture is not None and model.architecture.moe,
        "sharded": offer.count > 1,
        "utilization": p["utilization"],
        "startup_minutes": p["startup_hours"] * 60,
        "reference": ref,
        "reference_tokens": p["reference_tokens"],
        "answer": answer(
            ref["cost_with_startup"],
            "usd",
            f"for {fmt.tokens(p['reference_tokens'])} training tokens of {model.name} with {method.name}, "
            "startup included",
            f"{page.setup} at {offer.provider_name}",
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


def _inputs(page: _Page) -> list[Input]:
    """The page's input figures. The same few appear on many pages of a family: each is made (and
    formatted) once per build."""
    cat, model, method, offer, gpu, mem = page.cat, page.model, page.method, page.offer, page.gpu, page.mem
    util = page.p["utilization"]

    def work() -> list[Input]:
        if mem is None:
            return work_inputs(model, method)
        state = Input(f"Training state, {model.name} {method.name}", mem.gb, "num", "GB", mem.source, mem.url)
        return [*work_inputs(model, method), state]

    def utilization() -> list[Input]:
        return [Input("Utilization, planning figure", util, "pct", "", "Assumption of this page family")]

    return [
        *shared_inputs(cat, ("work", model.id, method.id), work),
        *shared_inputs(cat, ("gpu", gpu.id), lambda: gpu_inputs(gpu)),
        *shared_inputs(cat, ("offer", id(offer)), lambda: [price_input(offer, gpu)]),  # offers live with the catalog
        *shared_inputs(cat, ("utilization", util), utilization),
    ]
