"""The build pipeline: load and compute everything, then render, then write once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import plotly.offline

from generator import svg
from generator.articles import build_context
from generator.errors import ContentError
from generator.families import expand, load_families
from generator.lint import warnings as lint_warnings
from generator.load import Catalog, display_path, load_content
from generator.render import Page, Renderer, RenderProblem, table_csv
from generator.write import Files

ASSET_FILES = ("style.css",)


@dataclass
class Result:
    catalog: Catalog
    pages: list[Page]
    files: Files
    warnings: list[str]


def render_site(content: Path, templates: Path) -> Result:
    """Build every output file in memory; raise ContentError listing every problem."""
    catalog = load_content(content)
    problems: list[str] = []
    family_articles, listings = [], []
    for fam in load_families(catalog.root, problems):
        arts, listing = expand(catalog, fam)
        family_articles += arts
        if listing is not None:
            listings.append(listing)
    owners: dict[str, str] = {}
    for slug, owner in [(a.slug, a.file) for a in (*catalog.articles, *family_articles)] + [
        (x.slug, x.family.file) for x in listings
    ]:
        if slug in owners:
            problems.append(f"{owner}: slug {slug!r} is already used by {owners[slug]}")
        owners[slug] = owner
    contexts = []
    for art in (*catalog.articles, *family_articles):
        art.params_doc.problems = problems
        ctx = build_context(catalog, art)
        if ctx is not None:
            contexts.append((art, ctx))
    if problems:
        raise ContentError(problems)

    renderer = Renderer(templates, catalog)
    pages: list[Page] = []
    for art, ctx in contexts:
        try:
            pages.append(renderer.render_article(art, ctx))
        except RenderProblem as exc:
            problems.append(str(exc))
    if problems:
        raise ContentError(problems)

    files = Files()
    files.add("index.html", renderer.render_index(pages, listings))
    for name, data in renderer.render_site_files(pages, listings).items():
        files.add(name, data)
    for listing in listings:
        html, table = renderer.render_listing(listing)
        files.add(f"{listing.slug}/index.html", html)
        files.add(f"{listing.slug}/{table.id}.csv", table_csv(table))
    for page in pages:
        slug = page.article.slug
        files.add(f"{slug}/index.html", page.html)
        files.add(f"{slug}/index.md", page.markdown)
        files.add(f"{slug}/figures.json", figures_json([page]))
        blocks = page.context.blocks
        for table in [*blocks.tables.values(), *(c.table for c in blocks.charts.values())]:
            files.add(f"{slug}/{table.id}.csv", table_csv(table))
        for chart in blocks.charts.values():
            files.add(
                f"{slug}/{chart.id}.svg",
                svg.render(chart.figure, f"{slug}-{chart.id}-svg", chart.title).encode("utf-8"),
            )
    for name in ASSET_FILES + (("sort.js",) if listings else ()):
        files.add(f"assets/{name}", (templates / "assets" / name).read_bytes())
    if any(page.context.blocks.charts for page in pages):
        files.add("assets/plotly.min.js", plotly.offline.get_plotlyjs().encode("utf-8"))
    files.add("figures.json", figures_json(pages))
    found = content_warnings(catalog, contexts) + lint_warnings(catalog)
    return Result(catalog, pages, files, found)


KNOWN_FILES = {"site.yaml", "hardware.yaml", "models.yaml", "methods.yaml", "benchmarks.yaml"}


def content_warnings(catalog: Catalog, contexts: list) -> list[str]:
    """Things that are not wrong but deserve a look; --strict makes them errors."""
    root = catalog.root
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or any(part.startswith(".") for part in rel.parts):
            continue
        parts = rel.parts
        known = (
            (len(parts) == 1 and parts[0] in KNOWN_FILES)
            or (len(parts) == 2 and parts[0] == "articles" and path.suffix == ".md")
            or (len(parts) == 3 and parts[0] == "prices" and path.suffix == ".yaml")
            or (len(parts) == 2 and parts[0] == "benchmarks" and path.suffix == ".yaml")
            or (len(parts) == 2 and parts[0] == "families" and path.suffix == ".md")
        )
        if not known:
            out.append(f"{display_path(path)}: not a file costpress reads; remove it or move it out of content/")
    used = {p for _, ctx in contexts for p in ctx.providers}
    for provider in catalog.snapshots:
        if provider not in used:
            out.append(f"{display_path(root / 'prices' / provider)}: no article uses provider {provider!r}")
    newest = max((s.checked for snaps in catalog.snapshots.values() for s in snaps), default=None)
    limit = catalog.site.stale_after_days
    for art, ctx in contexts:
        for day in ctx.prices_checked:
            if newest is not None and (newest - day).days > limit:
                out.append(
                    f"{art.file}: uses prices checked {day.isoformat()}, {(newest - day).days} days "
                    f"older than the newest snapshot ({newest.isoformat()}); the limit is {limit} days"
                )
        for item in ctx.inputs:
            if not (item.source or "").strip():
                out.append(f"{art.file}: the figure '{item.what}' has no source")
    return out


def figures_json(pages: list[Page]) -> bytes:
    """Every figure every page shows, sorted, one figure per line.

    Each figure is encoded by the C JSON encoder: an indent would force the slow
    pure-Python one, which dominated the profile of a 1,000-page build.
    """

    def enc(value) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)

    articles = []
    for page in sorted(pages, key=lambda p: p.article.slug):
        figures = ",\n".join(
            "   " + enc({"id": f.id, "inputs": list(f.inputs), "unit": f.unit, "value": f.value})
            for f in sorted(page.context.figures, key=lambda f: f.id)
        )
        checked = enc([d.isoformat() for d in page.context.prices_checked])
        articles.append(
            f' {enc(page.article.slug)}: {{\n  "figures": [\n{figures}\n  ],\n'
            f'  "prices_checked": {checked},\n  "title": {enc(page.article.title)}\n }}'
        )
    return ('{"articles": {\n' + ",\n".join(articles) + "\n}}\n").encode("utf-8")
