"""Page families: one content file declares axes, and the build makes a page per fitting combination.

`content/families/<name>.md` holds the axes (models, methods, providers), the
slug and title patterns, the shared parameters and one body template. The
whole family's grid is computed in one vectorized pass; each fitting
combination becomes an article of kind `setup`, and the family gets a listing
page with every combination, fitting or not.
"""

from __future__ import annotations

import bisect
import datetime as dt
import operator
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator import engine, rowsahead
from generator.kinds.setup import NEIGHBOURS_SHOWN
from generator.load import read_front_matter
from generator.records import Article, Catalog
from generator.scenarios import setup_row
from generator.schema import MAX_ALIASES, MAX_ROWS, MAX_TAGS, Doc, F, list_of, opt, record, validate_whole

if TYPE_CHECKING:
    from generator.rowcache import FamilyRows

MAX_PATTERN_ALIASES = 10  # each is an alias page for every page of the family

FAMILY = record(
    {
        "date": F("date"),
        "draft": opt("bool"),  # the listing and its pages are kept out of the site unless built with --drafts
        "tags": list_of(F("text"), required=False, most=MAX_TAGS),
        "listing": record(
            {
                "slug": F("slug"),
                "title": F("text"),
                "description": F("text"),
                "aliases": list_of(F("path"), required=False, most=MAX_ALIASES),
            }
        ),
        "page": record(
            {
                "slug": F("text"),
                "title": F("text"),
                "description": F("text"),
                # slug patterns the pages had before: each page keeps the address each gives it (aliases.py)
                "aliases": list_of(F("text"), required=False, most=MAX_PATTERN_ALIASES),
            }
        ),
        "axes": record({"models": list_of(F("id")), "methods": list_of(F("id")), "providers": list_of(F("slug"))}),
        "params": record(
            {
                "reference_tokens": F("tokens"),
                "token_budgets": list_of(F("tokens"), most=MAX_ROWS),
                "chart_tokens": list_of(F("tokens"), most=MAX_ROWS),
                "utilization": F("share"),
                "startup_hours": F("nonnegative"),
                # with it, operations per token include attention over sequences of this length
                "attention_sequence_length": opt("count", most=10_000_000),
            }
        ),
        "faq": list_of(record({"q": F("text"), "a": F("para")}), required=False),
        "sources": list_of(record({"name": F("text"), "url": F("url", required=False)}), required=False),
    }
)


@dataclass
class Family:
    name: str
    file: str
    doc: Doc
    data: dict
    body: str
    body_line: int


@dataclass
class Listing:
    """One family's listing page: every combination, fitting or not."""

    family: Family
    slug: str
    title: str
    description: str
    date: dt.date
    rows: list[Row]
    prices_checked: list[dt.date]
    tags: tuple[str, ...] = ()
    kind: str = "listing"  # made from the family's inputs, as its pages are
    row_keys: dict[str, str] | None = None  # per provider, the row cache's keys of its rows (listingcache)
    # per (model, method), what every page of that group reads of the group (family_pages: Group)
    groups: dict[tuple[str, str], Group] | None = None
    first_page: Article | None = None  # the first of the family's pages (family_pages), for what they all share
    aliases: tuple[str, ...] = ()  # addresses the listing had before (generator/aliases.py)
    draft: bool = False  # its family says draft: true (built only with --drafts)
    # per model, in the order its rows first come: what the listing opens with (cheapest_by_model)
    cheapest: tuple[Cheapest, ...] = ()


@dataclass(frozen=True)
class Cheapest:
    """One model of a listing, as the listing's answer and its figures.json claims state it: how many of its
    setups hold the job and how many do not, and the one of those that do which costs least per million
    training tokens (its first fitting row: the rows come ranked), with `setup` naming it."""

    model: str
    name: str
    fitting: int
    not_fitting: int
    best: Row | None
    setup: str | None
    imported: bool = False  # the best row's price is dated by a catalog's import, not by a reading


def cheapest_by_model(cat: Catalog, rows: list[Row]) -> tuple[Cheapest, ...]:
    """Each model's Cheapest, in the order its rows first come (the listing's sections' order)."""
    seen: dict[str, list] = {}
    for r in rows:  # read by attribute (a subscript is a Python-level call)
        s = seen.get(r.model)
        if s is None:
            s = seen[r.model] = [r.model_name, 0, 0, None]
        if r.fits:
            s[1] += 1
            if s[3] is None:
                s[3] = r
        else:
            s[2] += 1
    out = []
    for model, (name, fit, unfit, best) in seen.items():
        if best is None:
            out.append(Cheapest(model, name, fit, unfit, None, None))
            continue
        setup = f"{best.method_name}, {best.setup} at {best.provider_name}"
        out.append(Cheapest(model, name, fit, unfit, best, setup, _imported(cat, best.provider, best.checked)))
    return tuple(out)


@dataclass(frozen=True)
class Group:
    """What the pages of one model and method of a family read of their group, beside their own rows: its
    size, the cards of its cheapest few rows (every neighbour list they show is drawn from them) and every
    row's cost rounded to the cents shown, in order (a page's count of cheaper setups). The page map
    (pagemap.py) compares them with the last build's."""

    size: int
    cards: tuple[dict, ...]
    rounded: list[float]


def load_families(root: Path, problems: list[str]) -> list[Family]:
    out = []
    folder = root / "families"
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.md")):
        parsed = read_front_matter(path, problems)
        if parsed is None:
            continue
        doc, body, body_line = parsed
        data = validate_whole(doc, doc.data, FAMILY)
        if data is None:
            continue
        unknown = False
        for axis in ("models", "methods", "providers"):  # one listed twice makes the same pages twice
            seen: set[str] = set()
            for i, name in enumerate(data["axes"][axis]):
                if name in seen:
                    doc.problem(("axes", axis, i), f"{name!r} is listed twice; list each once")
                    unknown = True
                seen.add(name)
        for key in ("slug", "title", "description"):
            for problem in pattern_problems(data["page"][key]):
                doc.problem(("page", key), problem)
                unknown = True
        for i, pattern in enumerate(data["page"]["aliases"] or ()):
            for problem in pattern_problems(pattern):
                doc.problem(("page", "aliases", i), problem)
                unknown = True
        if not unknown:  # one with an unknown placeholder or a repeated axis is not expanded: its problem is reported
            out.append(Family(path.stem, doc.file, doc, data, body, body_line))
    return out


PLACES = ("model", "model_name", "method", "method_name", "provider", "provider_name", "gpu", "gpu_name", "count")


# A pattern holds text and plain {name} placeholders; '{{' and '}}' stand for braces.
PATTERN_PART = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


def pattern_problems(pattern: str) -> list[str]:
    """What is wrong with a title, description or slug pattern: only plain {name} placeholders may appear."""
    out = []
    for m in PATTERN_PART.finditer(pattern):
        text, name = m.group(0), m.group(1)
        if text in ("{{", "}}"):
            continue
        if name is None:
            out.append(f"a lone {text!r}; write '{text * 2}' for a brace, or {{name}} for a placeholder")
        elif name not in PLACES:
            out.append(f"unknown placeholder {{{name}}}; expected a plain placeholder, one of: {', '.join(PLACES)}")
    return out


def fill(pattern: str, row: dict) -> str:
    """The pattern with each {name} replaced by the row's value, '{{' and '}}' by a brace.

    pattern_problems passed it, so it holds only plain names of PLACES (text or
    whole numbers, which format as str() does): str.format_map fills it in C,
    three times a page of a family.
    """
    return pattern.format_map(row)


SLUG_GAPS = re.compile(r"[^a-z0-9]+")
# The most model × method × offer combinations one family may have: 100,000 pages take 450 MiB and a
# minute and a half to build cold on two cores; ten times that would exhaust the build's memory budget.
MAX_COMBINATIONS = 500_000


def slug_text(text: str) -> str:
    # one dash per run of other characters, dashes included: no double dash can remain
    return SLUG_GAPS.sub("-", text.lower()).strip("-")


def family_grid(cat: Catalog, fam: Family, kept: FamilyRows | None = None) -> list[Row]:
    """Every model × method × offer of the family, with fit and reference-run cost, in one pass, ranked.

    The costs are the engine's flop_costs (what engine.flop_grid computes for a
    frame) on each row's plain floats, so a site of families loads neither
    pandas nor numpy. With `kept` (rowcache), a provider whose offers and
    whose family inputs are as the last build had them takes that build's
    rows; the rows computed are handed to it for the next build. When many
    rows are to be made, a second process makes some providers' rows
    meanwhile (rowsahead).
    """
    axes, p = fam.data["axes"], fam.data["params"]
    offers = sum(len(snap.offers) for snap in map(cat.snapshot, axes["providers"]) if snap is not None)
    combinations = len(axes["models"]) * len(axes["methods"]) * offers
    if combinations > MAX_COMBINATIONS:  # before any row is made: the build would run out of memory after hours
        fam.doc.problem(
            ("axes",),
            f"{combinations:,} combinations of model, method and offer; a family may have at most "
            f"{MAX_COMBINATIONS:,} (split it, or list fewer models, methods or providers)",
        )
        return []
    tokens, util, startup = float(p["reference_tokens"]), float(p["utilization"]), p["startup_hours"]
    page = fam.data["page"]
    pattern, title, description = page["slug"], page["title"], page["description"]
    memo, dates = {}, Dates()
    attention = p.get("attention_sequence_length")

    def compute(model, method, snap) -> list[Row]:
        """The rows of one model and method on one snapshot's offers."""
        out = []
        for offer in snap.offers:
            row = setup_row(cat, model, method, offer, attention, memo)
            row["key"] = f"{model.id}/{row['key']}"
            row["setup"] = sys.intern(row["setup"])  # a few GPU counts and names
            row["tokens"], row["utilization"] = tokens, util
            costs = engine.flop_costs(
                float(row["ops_per_param"]), row["parameters"], tokens, float(row["peak_tflops"]), util,
                float(row["usd_per_hour"]), startup,
            )  # fmt: skip
            row.update(costs)
            if row["fits"]:  # a page: its texts filled from the dict (on a Row, format_map is 5x slower)
                row["slug"] = slug_text(fill(pattern, row))
                row["title"], row["description"] = fill(title, row), fill(description, row)
            else:
                row["slug"] = None
            out.append(Row.of_grid(row))
        return out

    # a second process makes the last providers' rows no cache holds, when there are many (rowsahead)
    ahead = rowsahead.start(cat, axes, kept, compute) if kept is not None else None
    try:
        parts = _grid_parts(cat, fam, kept, ahead, compute, dates)
    finally:
        if ahead is not None:
            ahead.close()  # (done with it: it has exited, or is stopped now)
    rows = [row for part in parts for row in part]
    if kept is not None:
        kept.done()
    # Cheapest per token first; at the same cost per token (a provider whose price grows with the GPU count),
    # the one whose reference run costs less, startup included: a reader asking what is cheapest meant that
    # one, not the largest machine of the price.
    if not rows:
        return []
    return engine.rank_rows(rows, "usd_per_million", read=operator.attrgetter, then=("cost_with_startup",))


def check_axes(cat: Catalog, fam: Family) -> None:
    """Tell each model, method and provider of the family's axes that the content does not have (a draft family
    this build leaves out is checked so, without computing its rows)."""
    axes = fam.data["axes"]
    for i, model_id in enumerate(axes["models"]):
        if model_id not in cat.models:
            fam.doc.problem(("axes", "models", i), f"unknown model {model_id!r}")
    for j, method_id in enumerate(axes["methods"]):
        if method_id not in cat.methods:
            fam.doc.problem(("axes", "methods", j), f"unknown method {method_id!r}")
    for k, provider in enumerate(axes["providers"]):
        if cat.snapshot(provider) is None:
            fam.doc.problem(("axes", "providers", k), f"no price snapshot for provider {provider!r}")


def _grid_parts(cat: Catalog, fam: Family, kept, ahead, compute, dates) -> list[list[Row]]:
    """family_grid's rows, one list per model, method and provider in the grid's order (problems told)."""
    axes = fam.data["axes"]
    parts: list[list[Row] | None] = []
    later = []  # (place in parts, provider, model, method) of the rows the other process makes
    check_axes(cat, fam)  # what follows leaves out the names it told
    for model_id in axes["models"]:
        if model_id not in cat.models:
            continue
        model = cat.models[model_id]
        for method_id in axes["methods"]:
            if method_id not in cat.methods:
                continue
            method = cat.methods[method_id]
            for provider in axes["providers"]:
                snap = cat.snapshot(provider)
                if snap is None:
                    continue
                if kept is not None:
                    found = kept.kept_rows(provider, snap)
                    if found is not None:  # the provider's rows as the last build computed them
                        parts.append([row_from_values(Row, values, dates) for values in found[(model_id, method_id)]])
                        continue
                    if ahead is not None and provider in ahead.providers:
                        later.append((len(parts), provider, model, method))
                        parts.append(None)
                        continue
                parts.append(compute(model, method, snap))
                if kept is not None:
                    kept.computed(provider, model_id, method_id, parts[-1])
    jobs: dict = {}  # a job's values, from its first row taken back (_shared_job)
    first = {provider: n for n, provider in enumerate(dict.fromkeys(provider for _, provider, _, _ in later))}
    for at, provider, model, method in sorted(later, key=lambda part: first[part[1]]):  # a provider at a time
        found = ahead.rows(provider)
        if found is not None:
            parts[at] = [
                _shared_job(row_from_values(Row, values, dates), jobs) for values in found[(model.id, method.id)]
            ]
        else:  # the other process failed: made here
            parts[at] = compute(model, method, cat.snapshot(provider))
            kept.computed(provider, model.id, method.id, parts[at])
    return parts


# A row's values that depend only on its model, method, GPU and count (its job), not on its offer
JOB_VALUES = (
    *("model", "model_name", "method", "method_name", "family", "gpu", "gpu_name", "gpu_short"),
    *("peak_tflops", "memory_gb", "state_gb", "per_gpu_gb", "gpu_memory_gb", "parameters"),
)
_job_of = operator.attrgetter(*JOB_VALUES)
_namespace: dict = {}
exec(f"def _set_job(r, job):\n    {', '.join(f'r.{name}' for name in JOB_VALUES)} = job", _namespace)  # noqa: S102
_set_job = _namespace["_set_job"]  # one assignment of every job value (a setattr call each was 3x slower)


def _shared_job(row: Row, jobs: dict) -> Row:
    """A row another process made, its job's values shared with the first such row taken: computed rows
    share them through the catalog's records and setup_row's memo, while rows read back had each their
    own (at 100,000 pages, 14 MB more in every process of the build)."""
    key = (row.model, row.method, row.gpu, row.count)
    job = jobs.get(key)
    if job is None:
        jobs[key] = _job_of(row)  # the first row of its job keeps its own values
    elif job == _job_of(row):
        _set_job(row, job)
    return row


class Row:
    """One combination of a family's grid: the values of setup_row and its reference-run costs.

    Read as a mapping (`row["cost_with_startup"]`, `row.get(...)`) or by
    attribute, as templates do. A 100,000-page family has about 180,000 of
    them, held by the listing's worker: as dicts they were 830 bytes each
    before their values, in slots 290.
    """

    __slots__ = (
        *("key", "model", "model_name", "method", "method_name", "family", "provider", "provider_name", "offer"),
        *("checked", "gpu", "gpu_name", "gpu_short", "count", "setup", "peak_tflops", "memory_gb", "state_gb"),
        *("per_gpu_gb", "gpu_memory_gb", "fits", "usd_per_hour", "ops_per_param", "parameters", "tokens"),
        *("utilization", "hours", "training_cost", "startup_cost", "cost_with_startup", "usd_per_million", "slug"),
        *("label", "need"),  # the listing's display text (listing.py)
        *("title", "description"),  # a fitting row's page title and description (unset for the others)
    )

    @classmethod
    def of_grid(cls, values: dict) -> Row:
        """A row from family_grid's dict, which has every slot but the listing's display text (and, for a
        row that does not fit, the page's title and description): each set by name, which Python does
        without a call per slot (twice as fast as a setattr call for each)."""
        return _row_of_grid(cls, values)

    # row[name] is the attribute (a missing one raises AttributeError, which Jinja and format_map report too)
    __getitem__ = object.__getattribute__
    __setitem__ = object.__setattr__

    def get(self, name: str, default=None):
        return getattr(self, name, default)

    def __contains__(self, name: str) -> bool:
        return hasattr(self, name)

    def keys(self) -> list[str]:
        return [name for name in self.__slots__ if hasattr(self, name)]

    def items(self) -> list[tuple[str, object]]:
        return [(name, getattr(self, name)) for name in self.keys()]

    def __iter__(self):
        return iter(self.keys())

    def __repr__(self) -> str:
        return f"Row({self.key!r})"


# A row's values in the row cache (rowcache), in this order: every slot but the listing's display text, the
# date checked as its ordinal, and None for the title and description of a row that does not fit.
ROW_VALUES = tuple(name for name in Row.__slots__ if name not in ("label", "need"))


def _make_row_code():
    """Row.of_grid's body, and row_values and row_from_values (a row as a tuple of ROW_VALUES and back): one
    statement per slot, written out from the slot names as namedtuple and dataclasses write theirs."""
    at = {name: i for i, name in enumerate(ROW_VALUES)}
    plain = [name for name in ROW_VALUES if name not in ("checked", "title", "description")]
    made = [f"r.{name}" for name in ROW_VALUES]
    made[at["checked"]] = "r.checked.toordinal()"
    made[at["title"]], made[at["description"]] = "get(r, 'title', None)", "get(r, 'description', None)"
    lines = [
        "def row_of_grid(cls, v):",
        "    r = new(cls)",
        *(f"    r.{name} = v[{name!r}]" for name in (*plain, "checked")),
        "    if 'title' in v:",
        "        r.title, r.description = v['title'], v['description']",
        "    return r",
        "def values_of(r):",
        f"    return ({', '.join(made)},)",
        "def row_of_values(cls, v, dates):",
        "    r = new(cls)",
        *(f"    r.{name} = v[{at[name]}]" for name in plain),
        f"    r.checked = dates[v[{at['checked']}]]",
        f"    if v[{at['title']}] is not None:",
        f"        r.title, r.description = v[{at['title']}], v[{at['description']}]",
        "    return r",
    ]
    namespace = {"new": object.__new__, "get": getattr}
    exec("\n".join(lines), namespace)  # noqa: S102 (code made from the slot names above, nothing else)
    return namespace["row_of_grid"], namespace["values_of"], namespace["row_of_values"]


_row_of_grid, row_values, row_from_values = _make_row_code()


class Dates(dict):
    """Dates by ordinal, each made once: a provider's kept rows share the date its prices were checked."""

    def __missing__(self, ordinal: int) -> dt.date:
        day = self[ordinal] = dt.date.fromordinal(ordinal)
        return day


# A family page's own parameters, beside its family's: what Article.page_inputs holds, in this order
PAGE_INPUTS = ("model", "method", "offer", "shown", "others", "cheaper", "listing_slug")


def page_params(family: dict, inputs: tuple) -> dict:
    """A family page's parameters: its family's, and its own from `inputs` (PAGE_INPUTS).

    The page's fingerprint is made from `inputs` alone beside the family's
    (fingerprints.Fingerprints), so every parameter a page gets must come from
    here; tests/test_families.py checks that each page's params are exactly
    what this gives for its inputs.
    """
    model, method, offer, shown, others, cheaper, listing_slug = inputs
    return {
        **family,
        "model": model,
        "method": method,
        "offer": offer,
        "neighbours": {"shown": shown, "others": others, "cheaper": cheaper},
        "listing_slug": listing_slug,
    }


def family_listing(cat: Catalog, fam: Family, kept: FamilyRows | None = None) -> Listing | None:
    """The family's listing page, with every row of its grid (None when it has none); `kept`: see family_grid.

    The listing needs only the rows, so a large build can start rendering it
    before the family's pages (family_pages) are made."""
    records = family_grid(cat, fam, kept)
    if not records:
        return None
    listing = fam.data["listing"]
    return Listing(
        fam,
        listing["slug"],
        listing["title"],
        listing["description"],
        fam.data["date"],
        records,
        sorted({r["checked"] for r in records}),
        tuple(fam.data["tags"] or ()),
        row_keys=kept.row_keys() if kept is not None else None,
        aliases=tuple(listing["aliases"] or ()),
        draft=bool(fam.data["draft"]),
        cheapest=cheapest_by_model(cat, records),
    )


def _imported(cat: Catalog, provider: str, checked: dt.date) -> bool:
    """Whether the provider's snapshot of that date is an imported catalog's (its date is the import's)."""
    return any(s.imported for s in cat.snapshots.get(provider, ()) if s.checked == checked)


def fitting_rows(listing: Listing) -> int:
    """How many of the listing's rows fit: the pages family_pages makes."""
    return sum(1 for r in listing.rows if r.fits)


def family_pages(listing: Listing) -> list[Article]:
    """The articles (kind 'setup') of the listing's family: one per fitting row, in the rows' order."""
    fam, records = listing.family, listing.rows
    p = fam.data["params"]
    fitting = [r for r in records if r.fits]  # rows read by attribute: a Row's r["x"] costs a call
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in fitting:
        groups.setdefault((r.model, r.method), []).append(r)
    for rows in groups.values():
        rows.sort(key=lambda r: (r.cost_with_startup, r.key))
    # Per group, the rounded costs in order: a page's rank is how many cost less at the cents shown.
    rounded = {g: [round(r.cost_with_startup, 2) for r in rows] for g, rows in groups.items()}
    # How a neighbour is shown, made once for the few that any page of its group can list.
    cards = {
        n["key"]: {
            "label": f"{n['provider_name']}, {n['setup']}",
            "slug": n["slug"],
            "cost": n["cost_with_startup"],
            "usd_per_million": n["usd_per_million"],
        }
        for rows in groups.values()
        for n in rows[: NEIGHBOURS_SHOWN + 1]
    }
    # one tuple each for the whole family: pages share them (and the page cache digests them once)
    tags, sources, faq = (tuple(fam.data[k] or ()) for k in ("tags", "sources", "faq"))
    articles = []
    top = NEIGHBOURS_SHOWN + 1
    listing.groups = {
        g: Group(len(rows), tuple(cards[n.key] for n in rows[:top]), rounded[g]) for g, rows in groups.items()
    }
    lists: dict[tuple, list[dict]] = {}
    date, listing_slug = fam.data["date"], fam.data["listing"]["slug"]
    # The cheapest few keys of each group: a page shows them, less its own.
    tops = {g: tuple(n["key"] for n in rows[: NEIGHBOURS_SHOWN + 1]) for g, rows in groups.items()}
    earlier = fam.data["page"]["aliases"] or ()  # the slug patterns its pages had before
    for r in fitting:
        model, method, key = r.model, r.method, r.key
        group = groups[(model, method)]
        # Only what the page shows travels with it: copying every neighbour into every page
        # made memory and time grow with the square of the family size.
        top = tops[(model, method)]
        shown = tuple(k for k in top if k != key)[:NEIGHBOURS_SHOWN] if key in top else top[:NEIGHBOURS_SHOWN]
        # A group's pages show one of a few lists: share each (the page cache digests it once).
        neighbours = lists.get(shown)
        if neighbours is None:
            neighbours = lists[shown] = [cards[k] for k in shown]
        cheaper = bisect.bisect_left(rounded[(model, method)], round(r.cost_with_startup, 2))
        inputs = (model, method, r.offer, neighbours, len(group) - 1, cheaper, listing_slug)  # PAGE_INPUTS
        articles.append(
            Article(
                file=fam.file,
                title=r.title,  # filled in family_grid (the record holds every placeholder: checked on load)
                slug=r.slug,
                date=date,
                description=r.description,
                kind="setup",
                tags=tags,
                prices_as_of=None,
                params=None,  # its family's and its inputs' (Article.all_params)
                params_doc=fam.doc,
                sources=sources,
                faq=faq,
                attribution=None,
                body=fam.body,
                body_line=fam.body_line,
                params_checked=True,  # the family's front matter was validated, the rest is computed
                family_params=p,
                page_inputs=inputs,
                aliases=tuple(slug_text(fill(pattern, r)) for pattern in earlier) if earlier else (),
                draft=listing.draft,
            )
        )
    listing.first_page = articles[0] if articles else None
    return articles
