"""What every article kind shares: the page context, the figure recorder, and lookups that fail with a params error."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from generator import charts
from generator import formatting as fmt
from generator.model import Blocks, Chart, Column, Figure, Input, Table
from generator.records import Article, Catalog
from generator.scenarios import price_input


class ParamError(Exception):
    """A problem in an article's params, already recorded on its document."""


@dataclass
class Context:
    """What one article's templates receive, besides the article record itself."""

    values: dict[str, Any]
    blocks: Blocks
    inputs: list[Input]
    figures: list[Figure]
    prices_checked: list[Any] = field(default_factory=list)  # dates of snapshots used
    providers: list[str] = field(default_factory=list)  # providers whose prices the page uses
    # the figures each decision rests on, by the id of the value that states it (see generator.claims)
    rests_on: dict[str, tuple[str, ...]] = field(default_factory=dict)


class Recorder:
    """Collects every figure a page shows, with its unit and inputs, for figures.json."""

    def __init__(self) -> None:
        self.figures: dict[str, Figure] = {}

    def __call__(self, fid: str, value: float, unit: str, *inputs: str) -> float:
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"figure {fid} is not finite: {value}")
        self.figures[fid] = Figure(fid, value, unit, tuple(inputs))
        return value


@dataclass
class Steps:
    """What a kind's build steps share besides its own fields: the figure recorder and the page's blocks (each
    kind's _Page adds its article, params and records)."""

    rec: Recorder = field(default_factory=Recorder, kw_only=True)
    blocks: Blocks = field(default_factory=Blocks, kw_only=True)


def fail(article: Article, path: tuple, message: str) -> None:
    article.params_doc.problem(("params", *path), message)
    raise ParamError(message)


def find_offer(cat: Catalog, article: Article, key: str, path: tuple):
    offer = cat.offer(key, article.prices_as_of)
    if offer is None:
        provider = key.split(":", 1)[0]
        snap = cat.snapshot(provider, article.prices_as_of)
        if snap is None:
            when = f" on or before {article.prices_as_of}" if article.prices_as_of else ""
            fail(article, path, f"no price snapshot for provider {provider!r}{when}")
        known = ", ".join(o.key for o in snap.offers)
        elsewhere = cat.offered_elsewhere(key, article.prices_as_of)
        fail(article, path, f"unknown offer {key!r} in {snap.file}; known: {known}{elsewhere}")
    return offer


def lookup(table: dict, key: str, what: str, article: Article, path: tuple):
    if key not in table:
        fail(article, path, f"unknown {what} {key!r}; known: {', '.join(sorted(table))}")
    return table[key]


def providers_phrase(offers) -> str:
    seen = {}
    for offer, _ in offers:
        seen[(offer.provider_name, offer.checked)] = None
    return "; ".join(f"{name}, checked {day.isoformat()}" for name, day in seen)


# --- helpers shared by the kinds that price many offers ------------------------------


def snapshots(cat: Catalog, art: Article, providers: list[str]) -> list:
    """Each listed provider's snapshot for this article, or a params error naming the provider."""
    snaps = []
    for i, provider in enumerate(providers):
        snap = cat.snapshot(provider, art.prices_as_of)
        if snap is None:
            when = f" on or before {art.prices_as_of}" if art.prices_as_of else ""
            fail(art, ("providers", i), f"no price snapshot for provider {provider!r}{when}")
        snaps.append(snap)
    return snaps


def offer_price_inputs(cat: Catalog, snaps: list, used: set[str]) -> list[Input]:
    """The hourly price of every offer a page uses, with its snapshot's notes."""
    inputs = []
    for snap in snaps:
        note = f" ({snap.notes})" if snap.notes else ""
        for offer in snap.offers:
            if offer.key in used:
                inputs.append(price_input(offer, cat.gpus[offer.gpu], offer.provider_name, note))
    return inputs


def cost_bars(chart_id: str, title: str, records: list[dict], key: str, axis: str, caption: str) -> Chart:
    """A horizontal bar per provider and setup, with the same numbers as a table."""
    fig = charts.bar(
        title,
        [r["label"] for r in records],
        [r[key] for r in records],
        [fmt.usd(r[key]) for r in records],
        "Provider and setup",
        axis,
    )
    table = Table(
        f"{chart_id}-data",
        caption,
        [Column("label", "Provider and setup"), Column(key, "USD", "usd", True)],
        records,
    )
    return Chart(chart_id, title, fig, table)


def shared_inputs(cat: Catalog, key: tuple, make) -> list[Input]:
    """The input figures `make()` gives for `key`, made once per catalog (pages share them, read-only)."""
    found = cat.shared_inputs.get(key)
    if found is None:
        found = cat.shared_inputs[key] = make()
    return found
