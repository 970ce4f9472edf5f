"""Pages rendered stage by stage (Renderer.render_articles, tasks.chunk_results) come out as each would alone."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import CONTENT, TEMPLATES

from generator import tasks
from generator.articles import build_context
from generator.build import _articles
from generator.render import Page, Renderer, RenderProblem


@pytest.fixture(scope="module")
def loaded():
    catalog, articles, _, problems = _articles(CONTENT, False, None)
    assert not problems, problems
    return catalog, articles


def _items(catalog, renderer, articles):
    """(article, context, prose) for each article: what render_articles takes."""
    out = []
    for art in articles:
        ctx = build_context(catalog, art)
        out.append((art, ctx, renderer.prose(art, ctx)))
    return out


def _mixed(articles, n: int = 6) -> list:
    """Written articles of several kinds and family pages of several families, interleaved."""
    written = [a for a in articles if a.page_inputs is None][:n]
    family = [a for a in articles if a.page_inputs is not None]
    family = family[:: max(1, len(family) // n)][:n]
    return [a for pair in zip(written, family, strict=False) for a in pair]


def test_pages_rendered_together_are_byte_for_byte_those_rendered_alone(loaded):
    catalog, articles = loaded
    chosen = _mixed(articles)
    assert len({a.kind for a in chosen}) >= 3 and any(a.page_inputs for a in chosen)
    together = Renderer(TEMPLATES, catalog).render_articles(_items(catalog, Renderer(TEMPLATES, catalog), chosen))
    for art, page in zip(chosen, together, strict=True):
        alone_renderer = Renderer(TEMPLATES, catalog)  # nothing carried over from the other pages
        alone = alone_renderer.render_article(*_items(catalog, alone_renderer, [art])[0])
        assert isinstance(page, Page) and page.article is art
        assert (page.html, page.markdown) == (alone.html, alone.markdown), art.slug


def test_a_page_whose_theme_template_fails_gets_its_problem_and_the_others_render(loaded, tmp_path):
    catalog, articles = loaded
    chosen = _mixed(articles, 3)
    bad = chosen[1].slug
    # a site's own article.html that fails for one page only, on its second line
    (tmp_path / "article.html").write_text(
        '{% extends "base.html" %}{% block main %}\n'
        f"{{% if page.article.slug == {bad!r} %}}{{{{ page.nope.x }}}}{{% endif %}}{{{{ page.body_html }}}}"
        "{% endblock %}\n"
    )
    renderer = Renderer(tmp_path, catalog)
    done = renderer.render_articles(_items(catalog, renderer, chosen))
    assert isinstance(done[1], RenderProblem)
    assert "article.html:2: template error:" in str(done[1]) and "nope" in str(done[1])
    for art, page in zip(chosen, done, strict=True):
        if art.slug != bad:
            alone = renderer.render_article(*_items(catalog, renderer, [art])[0])
            assert (page.html, page.markdown) == (alone.html, alone.markdown), art.slug
    with pytest.raises(RenderProblem, match="nope"):  # alone, the same page raises its problem
        renderer.render_article(*_items(catalog, renderer, [chosen[1]])[0])


def test_a_chunk_gives_each_page_its_own_result_in_order(loaded, monkeypatch):
    """chunk_results over a chunk that mixes pages that render with one whose prose fails."""
    catalog, articles = loaded
    chosen = _mixed(articles, 2)
    renderer = Renderer(TEMPLATES, catalog)
    index = {a.slug: i for i, a in enumerate(articles)}
    broken = chosen[2] = dataclasses.replace(chosen[2], body="{{ no_such_value }}")
    articles = list(articles)
    articles[index[broken.slug]] = broken
    monkeypatch.setitem(tasks.JOB, "catalog", catalog)
    monkeypatch.setitem(tasks.JOB, "articles", articles)
    monkeypatch.setitem(tasks.JOB, "renderer", renderer)
    results = tasks.chunk_results([(index[a.slug], None) for a in chosen])
    assert len(results) == len(chosen)
    for art, (packed, problems) in zip(chosen, results, strict=True):
        if art is broken:
            assert packed is None and len(problems) == 1 and "no_such_value" in problems[0], problems
            continue
        assert not problems, problems
        files = dict(tasks.PageInfo.unpacked(art, packed, {}).files)
        alone = renderer.render_article(*_items(catalog, renderer, [art])[0])
        assert files[f"{art.slug}/index.html"] == alone.html, art.slug
