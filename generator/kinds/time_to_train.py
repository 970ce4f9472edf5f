"""Kind `time-to-train`: published MLPerf time-to-train results priced on rented setups."""

from __future__ import annotations

from generator import engine
from generator import formatting as fmt
from generator.answer import answer
from generator.claims import own
from generator.engine import rows as rows_engine
from generator.kinds.common import Context, Recorder, cost_bars, fail, lookup, offer_price_inputs, snapshots
from generator.model import Blocks, Column, Input, Table
from generator.records import Article, Catalog
from generator.scenarios import gpu_inputs, work_inputs
from generator.schema import F, list_of, record

SPEC = record({"suite": F("id"), "providers": list_of(F("slug"))})


def build(cat: Catalog, art: Article, p: dict) -> Context:
    """Published time-to-train results × the hourly price of a matching rented setup.

    A suite fixes the work (samples × sequence length on one model); each result is
    one system's wall time for it. A run on a rented offer of the same GPU type and
    count is priced at the fastest and at the median published time of that type.
    """
    rec = Recorder()
    blocks = Blocks()
    suite = lookup(cat.suites, p["suite"], "time-to-train suite", art, ("suite",))
    model, method = cat.models[suite.model], cat.methods[suite.method]
    snaps = snapshots(cat, art, p["providers"])
    results = _results(cat, rec, suite, model, method)
    groups = _groups(cat, rec, suite, model, method, results)
    rows = _offers(rec, suite, snaps, groups)
    if not rows:
        fail(art, ("providers",), f"no offer of these providers matches a GPU type and count in {suite.file}")
    ranking = _rank(rows)
    gpu_rows = sorted(groups.values(), key=lambda g: (g["median"], g["key"]))
    _tables(blocks, suite, ranking["records"], gpu_rows, results)
    values = _values(rec, suite, model, method, snaps, ranking, gpu_rows, results)
    inputs = _inputs(cat, suite, model, method, snaps, ranking["records"], gpu_rows, len(results))
    return Context(
        values,
        blocks,
        inputs,
        list(rec.figures.values()),
        sorted({s.checked for s in snaps}),
        [s.provider for s in snaps],
        RESTS_ON,
    )


# The figures each of the page's choices rests on (generator.claims): the offers ranked by the cost of a run
# at the median time, the cheapest hour by the hourly prices, the GPU types by their median time.
_COST, _HOUR = (own("offer.*.cost_median"),), (own("input.Hourly price, *"),)
RESTS_ON = {
    **dict.fromkeys(("offers", "best", "worst", "leaders", "is_tied", "answer"), _COST),
    "cheapest_hour": _HOUR,
    "best_is_cheapest_hour": _COST + _HOUR,
    **dict.fromkeys(("gpu_types", "fastest_gpu"), (own("gpu.*.median_minutes"), own("gpu.*.fastest_minutes"))),
}


def _values(rec: Recorder, suite, model, method, snaps: list, ranking: dict, gpu_rows: list[dict], results) -> dict:
    """What the templates read: the suite, the GPU types by median time, and the offers ranked by cost."""
    records, best, worst, leaders, hour = (ranking[k] for k in ("records", "best", "worst", "leaders", "hour"))
    priced = [g for g in gpu_rows if g["offers"]]
    return {
        "suite": {
            "name": suite.name,
            "samples": suite.samples,
            "sequence_length": suite.sequence_length,
            "tokens": suite.tokens,
            "definition": suite.definition,
            "notes": suite.notes,
            "results": len(results),
        },
        "model": {"name": model.name, "parameters": model.parameters},
        "method": {"name": method.name, "ops_per_param": method.ops_per_param},
        "gpu_types": gpu_rows,
        "fastest_gpu": priced[0],
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
        "spread": rec("offers.spread", worst["cost_median"] / best["cost_median"], "ratio", worst["key"], best["key"]),
        "cheapest_hour": hour,
        "best_is_cheapest_hour": hour["key"] == best["key"],
        "providers": [{"name": s.name, "checked": s.checked} for s in snaps],
    }


def _inputs(cat: Catalog, suite, model, method, snaps: list, records, gpu_rows, n_results: int) -> list[Input]:
    """The page's input figures: the work, the suite's sizes and results, the prices used and each GPU's peak."""
    inputs = [
        *work_inputs(model, method),
        Input(
            f"Samples per run, {suite.name}", suite.samples, "int", "samples", suite.samples_source, suite.samples_url
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
            n_results,
            "int",
            "results",
            f"{suite.source}; {suite.definition}",
            suite.url,
        ),
    ]
    inputs += offer_price_inputs(cat, snaps, {r["key"] for r in records})
    for gpu_id in sorted({g["gpu"] for g in gpu_rows}):
        inputs += gpu_inputs(cat.gpus[gpu_id])[:1]
    return inputs


def _results(cat: Catalog, rec: Recorder, suite, model, method) -> list[dict]:
    """Every published result, with the utilization its time implies."""
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
    return results


def _groups(cat: Catalog, rec: Recorder, suite, model, method, results: list[dict]) -> dict:
    """Results grouped by GPU type and count: fastest, median and slowest time of each."""
    tokens = suite.tokens
    typed = rows_engine.records(results)
    for r in typed:
        r["group"] = f"{r['gpu']}x{r['count']}"
    groups = {}
    for g in rows_engine.time_spread_rows(typed, "group"):
        members = [r for r in typed if r["group"] == g["group"]]
        first = members[0]
        gpu = cat.gpus[first["gpu"]]
        peak = gpu.peak_tflops * int(first["count"])
        fastest = engine.rank_rows(members, "minutes")[0]
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
    return groups


def _offers(rec: Recorder, suite, snaps: list, groups: dict) -> list[dict]:
    """Each rented offer with the GPU type and count of a group, priced at the group's median and fastest time."""
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
    return rows


def _rank(rows: list[dict]) -> dict:
    ranked = engine.rank_rows(rows_engine.records(rows), "cost_median")
    records = [{k: v for k, v in r.items() if k != "offer"} for r in ranked]
    return {
        "records": records,
        "best": records[0],
        "worst": records[-1],
        "leaders": [r["label"] for r in rows_engine.leader_rows(ranked, "cost_median")],
        "hour": dict(engine.rank_rows(records, "usd_per_hour")[0]),
    }


def _tables(blocks: Blocks, suite, records: list[dict], gpu_rows: list[dict], results: list[dict]) -> None:
    """The offers, the published times by setup, every result used, and the cost bars."""
    blocks.add(
        Table(
            "offers",
            f"One {suite.name} run on each matching rented setup, priced at the median and the fastest "
            "published time of its GPU type",
            [
                Column("label", "Provider and setup"),
                Column("usd_per_hour", "Price per hour (USD)", "usd", True),
                Column("median_minutes", "Median time (minutes)", "num1", True),
                Column("cost_median", "Run cost at the median time (USD)", "usd", True),
                Column("cost_fastest", "Run cost at the fastest time (USD)", "usd", True),
            ],
            records,
        )
    )
    blocks.add(
        Table(
            "gpu-types",
            f"Published times to train by setup ({suite.name})",
            [
                Column("setup", "Setup"),
                Column("systems", "Systems", "int", True),
                Column("fastest", "Fastest (minutes)", "num1", True),
                Column("median", "Median (minutes)", "num1", True),
                Column("slowest", "Slowest (minutes)", "num1", True),
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
        cost_bars(
            "cost-median",
            f"Cost of one {suite.name} run at the median published time",
            records,
            "cost_median",
            "Run cost (USD)",
            "Run cost at the median published time by provider and setup",
        )
    )


def _system_name(submitter: str, system: str) -> str:
    """'NVIDIA DGX H200', not 'NVIDIA NVIDIA DGX H200': many systems already start with their submitter."""
    return system if system.lower().startswith(submitter.lower()) else f"{submitter} {system}"


# MLPerf results state availability in several spellings across rounds; pages use one word for each
_AVAILABILITY = (("prem", "on-premise"), ("cloud", "cloud"), ("preview", "preview"), ("research", "research"))


def _availability(text: str | None) -> str:
    if text is None:  # a result may leave it out (it is optional); it stopped the build with a traceback
        return "not stated"
    low = text.lower()
    return next((word for key, word in _AVAILABILITY if key in low), "available, kind not stated")
