"""From an article to its page context: check its params against its kind, run the kind, collect its figures.

Everything a page states — figures, rankings, ratios, the winner of each
comparison, the manifest's setup — is decided by the kind (generator/kinds/),
so that templates and article prose only format what they are given. This
module adds what every kind shares: the price-history chart where the prose
places it, and every table number in the page's figures.
"""

from __future__ import annotations

from generator import charts
from generator import formatting as fmt
from generator.kinds import KINDS
from generator.kinds.common import Context, ParamError
from generator.model import Blocks, Chart, Column, Figure, Table
from generator.records import Article, Catalog
from generator.schema import validate

PRICE_HISTORY = 'chart("price-history")'


def build_context(cat: Catalog, art: Article) -> Context | None:
    """Validate an article's params for its kind and compute its context; None if it failed."""
    if art.kind not in KINDS:
        art.params_doc.problem(("kind",), f"unknown article kind {art.kind!r}; known: {', '.join(sorted(KINDS))}")
        return None
    spec, build = KINDS[art.kind]
    before = len(art.params_doc.problems)
    given = art.all_params()
    params = given if art.params_checked else validate(art.params_doc, given, spec, ("params",))
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
            label = row.get("key") or fmt.data_cell(row[first.key], first.fmt)  # ids keep the data's text
            prefix = f"table.{table.id}.{label}."
            for key, unit in numeric:
                value = row.get(key)
                if value is not None:
                    out.append(Figure(prefix + key, float(value), unit))
    return out
