"""The build pipeline: load and compute everything, then render, then write once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import plotly.offline

from generator.articles import build_context
from generator.errors import ContentError
from generator.load import Catalog, load_content
from generator.render import Page, Renderer, RenderProblem
from generator.write import Files

ASSET_FILES = ("style.css",)


@dataclass
class Result:
    catalog: Catalog
    pages: list[Page]
    files: Files


def render_site(content: Path, templates: Path) -> Result:
    """Build every output file in memory; raise ContentError listing every problem."""
    catalog = load_content(content)
    problems: list[str] = []
    contexts = []
    for art in catalog.articles:
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
    files.add("index.html", renderer.render_index(pages))
    for page in pages:
        files.add(f"{page.article.slug}/index.html", page.html)
        files.add(f"{page.article.slug}/index.md", page.markdown)
    for name in ASSET_FILES:
        files.add(f"assets/{name}", (templates / "assets" / name).read_bytes())
    if any(page.context.blocks.charts for page in pages):
        files.add("assets/plotly.min.js", plotly.offline.get_plotlyjs().encode("utf-8"))
    files.add("figures.json", figures_json(pages))
    return Result(catalog, pages, files)


def figures_json(pages: list[Page]) -> bytes:
    """Every figure every page shows, sorted, as a stable JSON document."""
    doc = {}
    for page in sorted(pages, key=lambda p: p.article.slug):
        doc[page.article.slug] = {
            "title": page.article.title,
            "prices_checked": [d.isoformat() for d in page.context.prices_checked],
            "figures": [
                {"id": f.id, "value": f.value, "unit": f.unit, "inputs": list(f.inputs)}
                for f in sorted(page.context.figures, key=lambda f: f.id)
            ],
        }
    text = json.dumps({"articles": doc}, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")
