"""A page family's listing page: per model, the setups that fit (priced, sortable, filterable) and,
apart and unpriced, those that do not; the rows of long tables in files of their own; one CSV of all."""

from __future__ import annotations

import operator

from generator import formatting
from generator.answer import answer
from generator.figures_json import NO_TEXTS
from generator.render import page_dates


def render_listing(renderer, listing, texts=NO_TEXTS):
    """A family's listing page, in HTML and in Markdown: per model, the setups that fit (priced, sortable) and
    apart, unpriced, those that do not; and one CSV of every combination. `texts` (listingcache.RowTexts) keeps the
    rows' lines of the rows files from the last build."""
    from generator.model import Column, Table

    p = listing.family.data["params"]
    fit_columns = [
        Column("label", "Setup"),
        Column("method_name", "Method"),
        Column("usd_per_hour", "USD per hour", "usd", True),
        Column("usd_per_million", "USD per million tokens", "usd", True),
        Column("cost_with_startup", "Reference run (USD)", "usd", True),
        Column("per_gpu_gb", "GB per GPU", "int", True),
    ]
    groups, order = {}, []
    for r in listing.rows:  # families.Row: read by attribute (a subscript is a Python-level call)
        model = r.model
        g = groups.get(model)
        if g is None:
            order.append(model)
            g = groups[model] = {"id": model.replace(".", "-"), "name": r.model_name, "fit": [], "out": []}
        # Each row gains its display text in place. A copy of every row (32 keys) for each of the
        # page's two tables was most of what rendering a 100,000-page family's listing held.
        r.label = f"{r.setup} at {r.provider_name}"
        if r.fits:
            r.need = "fits"
            g["fit"].append(r)
        else:
            r.need = _need_text(r)  # what each GPU would need
            g["out"].append(r)
    sections, extra = [], []
    cheapest = {c.model: c for c in listing.cheapest}
    for model in order:
        g = groups[model]
        g["cheapest"] = cheapest[model]  # what the page opens with, when it lists several models
        g["table"] = Table(f"fits-{g['id']}", f"{g['name']}: setups that hold the job", fit_columns, g["fit"])
        # A phone gets the cheapest rows of each model; the rest come from a file of table rows when
        # the reader sorts or filters (and are all in the CSV), so the page stays small at any size.
        g["shown"], g["out_shown"] = g["fit"][:LISTING_SHOWN], g["out"][:LISTING_SHOWN]
        g["count"], g["shown_count"] = len(g["fit"]), len(g["shown"])
        g["hidden"], g["out_more"] = g["count"] - g["shown_count"], len(g["out"]) - len(g["out_shown"])
        g["rows_file"] = f"rows-{g['id']}.txt" if g["hidden"] else None  # HTML table rows, not a page
        if g["rows_file"]:  # the same rows as the page's table, every one of them
            rows_file = _rows_file(renderer, g["fit"], g["table"].columns[1:], texts)
            extra.append((f"{listing.slug}/{g['rows_file']}", rows_file))
        sections.append(g)
    table = Table(
        "combinations",
        f"{formatting.tokens(p['reference_tokens'])} training tokens at {formatting.pct(p['utilization'])} "
        "utilization, startup included; every combination of the family's axes",
        [
            Column("model_name", "Model"),
            Column("method_name", "Method"),
            Column("provider_name", "Provider"),
            Column("setup", "Setup"),
            Column("usd_per_hour", "USD per hour", "usd", True),
            Column("usd_per_million", "USD per million tokens", "usd", True),
            Column("cost_with_startup", "Reference run (USD)", "usd", True),
            Column("per_gpu_gb", "GB per GPU", "int", True),
            Column("need", "Memory"),
        ],
        listing.rows,
    )
    site = renderer.catalog.site
    page = {
        "root": ROOT,
        "listing": listing,
        "sections": sections,
        "table": table,
        "fitting": sum(len(g["fit"]) for g in sections),
        # what the page opens with: the answer of a one-model listing, or each model's cheapest setup
        "answer": listing_answer(listing),
        "filters": _listing_filters(listing.rows),
        # the rows come cheapest per token first; a phone (no table headings) sorts with this choice
        "sorted_by": SORTED_BY,
        "sorts": _sort_choices(fit_columns, SORTED_BY),
        "url": f"{site.base_url.rstrip('/')}/{listing.slug}/",
        **dict(zip(("published", "modified", "updated"), page_dates(listing, listing.prices_checked), strict=True)),
    }
    html = renderer.html.get_template("listing.html").render(page=page).encode("utf-8")
    md = renderer.md.get_template("listing.md").render(page=page).encode("utf-8")  # for other blog engines
    return html, md, table, extra


def listing_answer(listing) -> dict | None:
    """The figure a listing of one model opens with, as an article does (and the home page shows it): the
    setup that costs least per million training tokens, of how many that hold the job, with its page and the
    day its price was checked ("verb": "imported" when that day is a catalog's import date). None for a
    listing of several models (it opens with each model's cheapest: families.Cheapest) and for one whose model
    no setup holds."""
    if len(listing.cheapest) != 1 or listing.cheapest[0].best is None:
        return None
    c = listing.cheapest[0]
    among = "the only setup" if c.fitting == 1 else f"the cheapest of {c.fitting:,} setups"
    what = f"per million training tokens of {c.name}, {among} that hold{'s' if c.fitting == 1 else ''} the job"
    dated = {"slug": c.best.slug, "checked": c.best.checked, "verb": "imported" if c.imported else "checked"}
    return {**answer(c.best.usd_per_million, "usd", what, c.setup), **dated}


def _rows_file(renderer, rows: list, columns: list, texts) -> list[bytes]:
    """A long table's rows file, as pieces of ROWS_PER_PIECE rows: the rows macro's output for each row.

    The macro is called for one row at a time, so that a row's line can be
    kept for the next build (listingcache); with the theme's macro that is the
    same text as a call for all of them. One piece for 100,000 rows held every
    piece of text the macro made at once (about 300 MB).
    """
    macro = renderer.html.get_template("_listing_rows.html").module.rows

    def line(row) -> str:
        return str(macro((row,), columns, ROOT))

    return [
        "".join(texts.each("html", rows[start : start + ROWS_PER_PIECE], line)).encode("utf-8")
        for start in range(0, len(rows), ROWS_PER_PIECE)
    ]


ROWS_PER_PIECE = 2000  # rows of a rows file rendered at a time
ROOT = "../"  # from a listing (and the rows it loads) to the site's root
LISTING_SHOWN = 100  # a listing's rows per model in its page; the rest load on demand (rows-<model>.txt)
SORTED_BY = 3  # a listing's rows come in the order of its fourth column, USD per million tokens (families.py)


def _sort_choices(columns, sorted_by: int) -> list[dict]:
    """A listing's "Sort by" choices: each column, lowest or highest first (A to Z for text)."""
    out = []
    for i, col in enumerate(columns):
        ways = (("asc", "lowest first"), ("desc", "highest first")) if col.numeric else (("asc", "A to Z"),)
        for way, words in ways:
            out.append(
                {"value": f"{i}:{way}", "text": f"{col.label}, {words}", "selected": (i, way) == (sorted_by, "asc")}
            )
    return out


def _listing_filters(rows: list) -> list[dict]:
    """The choices of a listing's filters: each model (in the listing's order, when there are two or more),
    method, GPU and provider that has a setup that fits. (Rows are families.Row, read by attribute.)"""
    fit = [r for r in rows if r.fits]
    out = []
    models = dict.fromkeys(map(operator.attrgetter("model", "model_name"), fit))
    if len(models) > 1:
        out.append({"key": "model", "label": "Model", "choices": [{"value": v, "text": t} for v, t in models]})
    for key, name, label in (
        ("method", "method_name", "Method"),
        ("gpu", "gpu_name", "GPU"),
        ("provider", "provider_name", "Provider"),
    ):
        choices = sorted(set(map(operator.attrgetter(name, key), fit)))
        out.append({"key": key, "label": label, "choices": [{"value": v, "text": t} for t, v in choices]})
    return out


def _need_text(row) -> str:
    """Why a combination that does not fit has no page: what each GPU would need, or that nothing says (a row
    that fits reads "fits": render_listing gives it that)."""
    if row.get("per_gpu_gb") is None:
        return "no memory figure"
    return f"needs {formatting.number(row['per_gpu_gb'])} GB per GPU, has {formatting.number(row['gpu_memory_gb'])}"
