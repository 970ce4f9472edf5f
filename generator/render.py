"""Jinja rendering of article contexts into HTML and Markdown page bytes."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html as html_lib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple

import jinja2
import jinja2.runtime
import jinja2.utils
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from generator import formatting, sandbox, theme
from generator.errors import BuildError
from generator.escape import json_script, md_cell, md_escape, md_escape_text, page_link, safe_url, slugify, yaml_str
from generator.jinja_env import CodeCache, PageEnvironment, ProseEnvironment, code_cache_folder, prune_code_cache
from generator.kinds.common import Context
from generator.markdown_html import MAX_NESTING, Markdown, too_deep
from generator.records import Article, Catalog

# A block marker on a line of its own. The pattern starts with its literal "[[" (no "^"), so the
# regex engine jumps from one "[[" to the next; _split_blocks keeps the matches that start a line.
BLOCK_RE = re.compile(r"\[\[(table|chart|code):([a-z0-9-]+)\]\]$", re.M)


class RenderProblem(Exception):
    """An article body or FAQ that cannot be rendered; the message names file and line."""


_new_str = str.__new__


def _safe_filters() -> dict:
    """Number filters return Markup: their output is digits and units, never data text."""

    def wrap(func):
        # str.__new__ makes the Markup directly: Markup(text) runs a Python-level __new__
        # (an __html__ check a plain str never passes), twenty-odd times a page
        return lambda *a, **kw: _new_str(Markup, func(*a, **kw))

    out = {name: wrap(func) for name, func in formatting.FILTERS.items()}
    out["url"] = safe_url
    out["page_link"] = page_link
    out["cell"] = formatting.cell
    out["units"] = lambda text: formatting.keep_units(str(text))  # plain text: still escaped
    return out


def _md_finalize(value: Any) -> Any:
    kind = type(value)  # the two common cases first, without isinstance: about fifty a family page
    if kind is str:
        return md_escape_text(value)
    if kind is Markup or isinstance(value, Markup):
        return str(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise TypeError("a bare number in prose; format it with a filter such as usd or hours")
    return md_escape(value)


def _plain_finalize(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise TypeError("a bare number in prose; format it with a filter such as usd or hours")
    return str(value)


COMPUTED_KINDS = ("setup", "listing")  # a family's pages and its listing


def page_dates(art, prices_checked) -> tuple[date, date, date | None]:
    """(published, modified, updated) of a page: `updated` is the modified date when it differs.

    A written article keeps the date its author gave it and is updated when a
    price it uses was checked later. A family page is made from its inputs, so
    it is published on the latest of the family's date and its prices' dates:
    no page says it was published before the prices it shows were read.
    """
    modified = max([art.date, *prices_checked])
    published = modified if art.kind in COMPUTED_KINDS else art.date
    return published, modified, (modified if modified > published else None)


@functools.lru_cache(maxsize=1024)  # a family's pages share their tags
def _tag_links(tags: tuple[str, ...]) -> tuple[dict, ...]:
    return tuple({"name": t, "slug": slugify(t)} for t in tags)


def _entry(art, prices_checked) -> dict:
    published, modified, updated = page_dates(art, prices_checked)
    return {"article": art, "published": published, "modified": modified, "updated": updated, "answer": None}


class Prose(NamedTuple):
    """An article's prose with its figures in: FAQ (question, answer) pairs, and the body's segments
    (("text", Markdown) or (block kind, block id)) as _split_blocks makes them."""

    faq: list[tuple[str, str]]
    segments: list[tuple[str, str]]

    def markdown(self) -> list[str]:
        """Every Markdown text render_article converts, as it passes them to Markdown.render."""
        return [a.strip() for _, a in self.faq] + [text for kind, text in self.segments if kind == "text"]


def _refuse_deep_markdown(art: Article, text: str, where: str, first_line: int) -> None:
    """RenderProblem when the Markdown an article's prose made nests too deeply for the converter (too_deep);
    its line is counted from where the prose starts, as for the prose's other errors."""
    number = too_deep(text)
    if number is not None:
        raise RenderProblem(
            f"{art.file}:{first_line + number - 1}: {where}: a line opens more than {MAX_NESTING} blockquotes or "
            "list items; expected flatter Markdown"
        )


class _Body(NamedTuple):
    """A page's body as render_articles assembles it: HTML and Markdown parts in order (a block's place is None
    until its template renders), the blocks as (place, kind, block), and the charts in order."""

    html: list
    md: list
    blocks: list
    charts: list


@dataclass
class Page:
    """One article rendered for both targets."""

    article: Article
    context: Context
    html: bytes
    markdown: bytes


class _Loader(jinja2.FileSystemLoader):
    """Jinja's file loader, with a template that is not UTF-8 text reported as a template error naming its
    file (it was a UnicodeDecodeError, and a traceback), and without the byte order mark an editor may have
    put first (it went into every page the template is part of, mid-page for a partial)."""

    def get_source(self, environment, template):
        try:
            source, filename, uptodate = super().get_source(environment, template)
        except UnicodeDecodeError:
            filename = next((str(Path(f, template)) for f in self.searchpath if Path(f, template).is_file()), None)
            raise jinja2.TemplateSyntaxError("expected UTF-8 text", 1, template, filename) from None
        return source.removeprefix("\ufeff"), filename, uptodate


# What a template's own expressions can raise as they run ({{ 1 / 0 }}, {{ 1 + "a" }}): Jinja passes these on
# as they are, not as TemplateErrors (see template_failure)
RUNTIME_ERRORS = (ArithmeticError, TypeError, ValueError)
# What rendering a theme template (the packaged one, or a site's own over it) can raise: see template_problem
TEMPLATE_ERRORS = (jinja2.TemplateError, *RUNTIME_ERRORS)


def template_problem(exc: Exception) -> RenderProblem:
    """One of TEMPLATE_ERRORS as a one-line problem with its template's file and line: a TemplateError as
    theme_problem makes it, any other as template_failure does (which raises again the packaged theme's)."""
    return theme_problem(exc) if isinstance(exc, jinja2.TemplateError) else template_failure(exc)


def template_failure(exc: Exception) -> RenderProblem:
    """A site's own template that raised one of RUNTIME_ERRORS as it ran, as theme_problem reports it (its file,
    line and the error). When the template that raised is the packaged theme's, the error is costpress's own:
    it is raised again, to be reported as a bug."""
    problem = theme_problem(exc)
    where = _innermost_template(exc)
    if where is None or Path(where).resolve().is_relative_to(theme.DEFAULT):
        raise exc
    return problem


def _innermost_template(exc: BaseException) -> str | None:
    where, tb = None, exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith((".html", ".md", ".xml")):
            where = name
        tb = tb.tb_next
    return where


class Renderer:
    """Holds the Jinja environments; renders pages from contexts."""

    def __init__(self, templates: Path, catalog: Catalog, code: str | None = None):
        """`code`: costpress's code digest (state.code_digest), to keep the theme's compiled templates in the
        user's cache folder between builds (jinja_env.CodeCache); None compiles them every time."""
        self.catalog = catalog
        loader = _Loader([str(p) for p in theme.search_path(templates)])
        folder = code_cache_folder() if code is not None else None
        if folder is not None:
            prune_code_cache(folder, code[:16])
        self._prose_cache = (
            {label: CodeCache(folder, f"{code[:16]}-{label}") for label in ("body", "plain")}
            if folder is not None
            else {}
        )

        def make_env(label: str, autoescape: bool, keep_trailing_newline: bool = True) -> jinja2.Environment:
            # Templates do not change during a build: no file check on every get_template.
            return PageEnvironment(
                auto_reload=False,
                loader=loader,
                autoescape=autoescape,
                undefined=jinja2.StrictUndefined,
                trim_blocks=True,
                lstrip_blocks=True,
                keep_trailing_newline=keep_trailing_newline,
                bytecode_cache=CodeCache(folder, f"{code[:16]}-{label}") if folder is not None else None,
            )

        self.html = make_env("html", autoescape=True)
        self.md = make_env("md", autoescape=False)
        self.body = ProseEnvironment(
            undefined=jinja2.StrictUndefined, finalize=_md_finalize, autoescape=False, keep_trailing_newline=True
        )
        # FAQ questions are plain text with figures: rendered raw, then escaped for each target
        self.plain = ProseEnvironment(
            undefined=jinja2.StrictUndefined, finalize=_plain_finalize, autoescape=False, keep_trailing_newline=True
        )
        filters = _safe_filters()
        for env in (self.html, self.md, self.body, self.plain):
            env.filters.update(filters)
            env.filters["sentence"] = formatting.sentence
        for env in (self.body, self.plain):
            env.bound_filters(frozenset(filters) | {"sentence"})
        self.html.filters["json_script"] = json_script
        self.md.filters["md"] = md_escape
        self.md.filters["md_cell"] = md_cell
        self.md.filters["yaml_str"] = yaml_str
        self.xml = make_env("xml", autoescape=True, keep_trailing_newline=False)
        self.xml.filters.update(filters)  # a feed entry's summary opens with its answer (`cell`)
        self.markdown = Markdown()
        self._compiled: dict[tuple[int, str], jinja2.Template] = {}
        site = catalog.site
        for env in (self.html, self.md, self.xml):
            env.globals["site"] = site
            env.globals["site_has_about"] = catalog.about is not None

    # -- article prose -------------------------------------------------------

    def _template_text(
        self, art: Article, source: str, values: dict, where: str, line: int, env: SandboxedEnvironment | None = None
    ) -> str:
        try:
            env = env or self.body
            key = (id(env), source)
            template = self._compiled.get(key)
            if template is None:  # pages of one family share their prose: compile it once
                template = self._compiled[key] = self._prose_template(env, source)
            with sandbox.time_budget():
                return template.render(values)
        except jinja2.TemplateSyntaxError as exc:
            raise RenderProblem(
                f"{art.file}:{line + (exc.lineno or 1) - 1}: {where}: template error: {exc.message}"
            ) from None
        except (jinja2.UndefinedError, jinja2.exceptions.SecurityError, RenderProblem, TypeError, ValueError) as exc:
            lineno = _template_line(exc)
            at = f"{art.file}:{line + lineno - 1}" if lineno else art.file
            raise RenderProblem(f"{at}: {where}: {exc}") from None
        except Exception as exc:  # anything else prose can raise is the article's problem
            lineno = _template_line(exc)
            at = f"{art.file}:{line + lineno - 1}" if lineno else art.file
            raise RenderProblem(f"{at}: {where}: {sandbox.describe(exc)}") from None

    def _prose_template(self, env: SandboxedEnvironment, source: str) -> jinja2.Template:
        """env.from_string(source), its compiled code kept in the user's cache folder between builds."""
        cache = self._prose_cache.get("body" if env is self.body else "plain")
        if cache is None:
            return env.from_string(source)
        digest = hashlib.sha1(source.encode("utf-8")).hexdigest()
        bucket = jinja2.bccache.Bucket(env, digest, digest)
        cache.load_bytecode(bucket)
        if bucket.code is None:
            bucket.code = env.compile(source)
            cache.dump_bytecode(bucket)
        return env.template_class.from_code(env, bucket.code, env.make_globals(None), None)

    def prose(self, art: Article, ctx: Context) -> Prose:
        """The article's body and FAQ rendered as Markdown text (RenderProblem for an author's mistake)."""
        # what prose templates see: the context's values, the article, and table()/chart()/code() (made once a page)
        values = {
            **ctx.values,
            "_blocks": ctx.blocks,
            "article": {"title": art.title, "date": art.date, "slug": art.slug},
            **_block_markers(ctx.blocks),
        }
        body_md = formatting.keep_units(self._template_text(art, art.body, values, "body", art.body_line))
        _refuse_deep_markdown(art, body_md, "body", art.body_line)
        faq = []
        for i, entry in enumerate(art.faq):
            doc = art.params_doc
            q = self._template_text(art, entry["q"], values, f"faq[{i}].q", doc.line(("faq", i, "q")) or 1, self.plain)
            a = self._template_text(art, entry["a"], values, f"faq[{i}].a", doc.line(("faq", i, "a")) or 1)
            _refuse_deep_markdown(art, a, f"faq[{i}].a", doc.line(("faq", i, "a")) or 1)
            faq.append((formatting.keep_units(" ".join(q.split())), formatting.keep_units(a)))
        return Prose(faq, _split_blocks(body_md))

    def render_article(self, art: Article, ctx: Context, prose: Prose) -> Page:
        """The page's HTML and Markdown from its context and its prose (`prose`, made first)."""
        page = self.render_articles([(art, ctx, prose)])[0]
        if isinstance(page, RenderProblem):
            raise page
        return page

    def render_articles(self, items: list[tuple[Article, Context, Prose]]) -> list[Page | RenderProblem]:
        """Pages' HTML and Markdown, each from its context and prose; a page whose theme template fails gets
        its RenderProblem in its place, and the others render as they would alone.

        The work goes in stages, each over every page before the next (the
        pages' Markdown and block lists; each block template in turn; the
        page values; article.html; article.md), as Markdown.warm does for
        the converter: a template renders about twice as fast while its code
        and data are still in the CPU's caches as it does between the other
        steps of a page (measured per page in one process: 0.71 -> 0.62 ms).
        One time budget covers them all.
        """
        out: list = [None] * len(items)
        with theme_budget("one page" if len(items) == 1 else f"{len(items)} pages", len(items)):
            bodies = [self._body(ctx, prose) for _, ctx, prose in items]
            self._render_blocks(items, bodies, out)
            pages = [
                None if out[n] is not None else self._page_values(art, ctx, self._faq(prose), bodies[n])
                for n, (art, ctx, prose) in enumerate(items)
            ]
            html = self._render_all(self.html, "article.html", pages, out)
            md = self._render_all(self.md, "article.md", pages, out)
        for n, (art, ctx, _) in enumerate(items):
            if out[n] is None:
                out[n] = Page(art, ctx, html[n].encode("utf-8"), md[n].encode("utf-8"))
        return out

    def _faq(self, prose: Prose) -> list[dict]:
        faq = []
        for q, a in prose.faq:
            a_html = self.markdown.render(a.strip())
            faq.append(
                {
                    "q_md": md_escape(q),
                    "a_md": a.strip(),
                    "q_html": q,  # autoescaped by the HTML template
                    "a_html": Markup(a_html),
                    "q_text": q,
                    "a_text": _text_of(a_html),
                }
            )
        return faq

    def _body(self, ctx: Context, prose: Prose) -> _Body:
        """A page's body with its text segments converted and each block's place left empty (a None)."""
        md_env: dict = {}
        body = _Body([], [], [], [])
        for kind, payload in prose.segments:
            if kind == "text":
                # code blocks scroll sideways on narrow screens, so they must take keyboard focus
                body.html.append(self.markdown.render(payload, md_env).replace("<pre><code", '<pre tabindex="0"><code'))
                body.md.append(payload.strip("\n") + "\n")
                continue
            block = getattr(ctx.blocks, "tables" if kind == "table" else "charts" if kind == "chart" else "code")[
                payload
            ]
            body.blocks.append((len(body.html), kind, block))
            body.html.append(None)
            body.md.append(None)
            if kind == "chart":
                body.charts.append(block)
        return body

    def _render_blocks(self, items: list, bodies: list[_Body], out: list) -> None:
        """Every page's blocks into their places, one block template at a time (in the order of first use)."""
        by_kind: dict[str, list] = {}  # kind -> (page, place, block) for every block of that kind
        for n, body in enumerate(bodies):
            for at, kind, block in body.blocks:
                by_kind.setdefault(kind, []).append((n, at, block))
        for kind, placed in by_kind.items():
            for env, ext in ((self.html, "html"), (self.md, "md")):
                for n, at, block in placed:
                    if out[n] is not None:
                        continue
                    try:
                        text = env.get_template(f"_{kind}.{ext}").render(block=block, slug=items[n][0].slug)
                    except TEMPLATE_ERRORS as exc:  # the theme, or a site's own template over it
                        out[n] = template_problem(exc)
                        continue
                    (bodies[n].html if ext == "html" else bodies[n].md)[at] = text

    def _render_all(self, env: PageEnvironment, name: str, pages: list[dict | None], out: list) -> list[str | None]:
        """Template `name` rendered for each page still without a problem (None for the others)."""
        done: list[str | None] = [None] * len(pages)
        for n, page in enumerate(pages):
            if out[n] is None:
                try:
                    done[n] = env.get_template(name).render(page=page)
                except TEMPLATE_ERRORS as exc:
                    out[n] = template_problem(exc)
        return done

    def _page_values(self, art: Article, ctx: Context, faq: list[dict], body: _Body) -> dict:
        """What article.html and article.md see as `page`."""
        published, modified, updated = page_dates(art, ctx.prices_checked)
        page = {
            "article": art,
            "root": "../",
            "url": f"{self.catalog.site.base_url.rstrip('/')}/{art.slug}/",
            "body_html": Markup("".join(body.html)),
            "body_md": "\n".join(p for p in body.md if p.strip()),
            "faq": faq,
            "inputs": ctx.inputs,
            "sources": art.sources,
            "charts": [{"id": f"{art.slug}-{block.id}", "figure": block.figure} for block in body.charts],
            "prices_checked": ctx.prices_checked,
            "prices_verb": self._prices_verb(ctx),
            "published": published,
            "modified": modified,
            "updated": updated,
            "tags": _tag_links(art.tags),
            "answer": ctx.values.get("answer"),
            "tables": ctx.blocks.tables,
        }
        page["json_ld"] = self._json_ld(page)
        return page

    def _prices_verb(self, ctx: Context) -> str:
        """'checked' when someone read every price on its date; 'imported' when every date is a catalog's
        import date (the catalog does not say when its prices were read); 'dated' when the page has both."""
        days = set(ctx.prices_checked)
        snaps = [s for p in ctx.providers for s in self.catalog.snapshots.get(p, ()) if s.checked in days]
        if not any(s.imported for s in snaps):
            return "checked"
        return "dated" if any(not s.imported for s in snaps) else "imported"

    def _json_ld(self, page: dict) -> list[dict]:
        """Article and FAQPage structured data; the FAQ text is the visible FAQ's text."""
        art, site = page["article"], self.catalog.site
        docs = [
            {
                "@context": "https://schema.org",
                "@type": "Article",
                "headline": art.title,
                "description": art.description,
                "datePublished": page["published"].isoformat(),
                "dateModified": page["modified"].isoformat(),
                "mainEntityOfPage": page["url"],
                "author": {"@type": "Organization", "name": site.author},
                "publisher": {"@type": "Organization", "name": site.publisher},
            }
        ]
        if page["faq"]:
            docs.append(
                {
                    "@context": "https://schema.org",
                    "@type": "FAQPage",
                    "mainEntity": [
                        {
                            "@type": "Question",
                            "name": e["q_text"],
                            "acceptedAnswer": {"@type": "Answer", "text": e["a_text"]},
                        }
                        for e in page["faq"]
                    ],
                }
            )
        return docs

    def render_index(self, pages: list[Page], listings=()) -> bytes:
        from generator import sitefiles

        return sitefiles.render_index(self, pages, listings)

    def render_listing(self, listing, texts):
        from generator import listing as listing_page

        return listing_page.render_listing(self, listing, texts)

    def render_site_files(self, pages: list[Page], listings=()) -> dict[str, bytes]:
        from generator import sitefiles

        return sitefiles.render_site_files(self, pages, listings)


def _block_markers(blocks) -> dict:
    """table(), chart() and code() for prose: each puts its block's marker on a line of its own."""

    def block(kind: str, store: dict):
        def call(block_id: str) -> Markup:
            if block_id not in store:
                raise RenderProblem(f"unknown {kind} {block_id!r}; known: {', '.join(sorted(store)) or 'none'}")
            return Markup(f"\n\n[[{kind}:{block_id}]]\n\n")

        return call

    return {
        "table": block("table", blocks.tables),
        "chart": block("chart", blocks.charts),
        "code": block("code", blocks.code),
    }


def _split_blocks(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    for m in BLOCK_RE.finditer(text):
        if m.start() and text[m.start() - 1] != "\n":
            continue
        if text[pos : m.start()].strip():
            out.append(("text", text[pos : m.start()]))
        out.append((m.group(1), m.group(2)))
        pos = m.end()
    if text[pos:].strip():
        out.append(("text", text[pos:]))
    return out


def _text_of(html: str) -> str:
    """Text content of rendered Markdown, for JSON-LD and meta tags."""
    text = re.sub(r"<[^>]+>", "", html)
    return " ".join(html_lib.unescape(text).split())


# Seconds the templates of a chunk of article pages (the theme's, or a site's own over them) may take: a page
# takes milliseconds; a site's template that loops without end is stopped here instead of hanging the build.
THEME_SECONDS = 60.0
# and a millisecond more for each page of the chunk, each row of a listing, or each page the site files
# (sitemap, feeds, tag pages) list
THEME_SECONDS_PER_ITEM = 0.001


@contextlib.contextmanager
def theme_budget(what: str, items: int = 0) -> Iterator[None]:
    """Templates rendering `what` (with `items` rows or pages) within their time budget. One that runs out of
    time, memory or stack stops the build with its file and line (BuildError): every other page would meet
    the same template, a minute each."""
    seconds = THEME_SECONDS + items * THEME_SECONDS_PER_ITEM
    try:
        with sandbox.time_budget(seconds):
            yield
    except (sandbox.ProseTimeout, MemoryError, RecursionError) as exc:
        if isinstance(exc, sandbox.ProseTimeout):
            why = f"took longer than {round(seconds, 1):g} s to render {what}; a loop that does not end?"
        else:
            why = sandbox.describe(exc)
        raise BuildError(str(theme_problem(exc, why))) from None


def theme_problem(exc: BaseException, message: str | None = None) -> RenderProblem:
    """A theme or override template that does not compile or render, as one line with its file and line."""
    from generator.load import display_path

    where, line = getattr(exc, "filename", None), getattr(exc, "lineno", None)
    # for an error while rendering, the innermost template frame; a time budget's ProseTimeout is raised anew
    # as the budget ends, and the one that stopped the template is its context
    for raised in (exc, exc.__context__):
        tb = raised.__traceback__ if raised is not None else None
        while tb is not None:
            name = tb.tb_frame.f_code.co_filename
            if name.endswith((".html", ".md", ".xml")):
                where, line = name, tb.tb_lineno
            tb = tb.tb_next
        if where is not None:
            break
    at = f"{display_path(Path(where))}:{line}" if where else "a template"
    return RenderProblem(f"{at}: template error: {message or getattr(exc, 'message', None) or exc}")


def _template_line(exc: BaseException) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
