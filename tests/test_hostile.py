"""Hostile strings in data land escaped in every output format."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
import yaml
from bs4 import BeautifulSoup
from conftest import A, B, Built, build, make_content, replace
from markdown_it import MarkdownIt

EVIL = '</script><script>alert(1)</script> | # *em* <b>bold</b> "q" \'a\' & =HYPERLINK("x") \u2028end'
FAQ_EVIL = "Is <b>this</b> | safe? # </script> & =1+1"


def q(text: str) -> str:
    """A YAML scalar holding text exactly."""
    return json.dumps(text)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Built:
    tmp = tmp_path_factory.mktemp("hostile")
    edits = {
        "site.yaml": lambda t: t.replace("author: costpress editors", f"author: {q(EVIL)}").replace(
            "publisher: Nodus blog", f"publisher: {q(EVIL)}"
        ),
        "hardware.yaml": replace("    name: B200\n", f"    name: {q('B200 ' + EVIL)}\n"),
        "models.yaml": replace("    name: Llama 3.3 70B\n", f"    name: {q('Llama ' + EVIL)}\n"),
        "prices/nodus/2026-11-05.yaml": lambda t: t.replace("name: Nodus", f"name: {q('Nodus ' + EVIL)}").replace(
            "source: Nodus pricing page", f"source: {q(EVIL)}"
        ),
        "benchmarks.yaml": replace("    label: Llama 3.2 3B, full fine-tune\n", f"    label: {q('3B ' + EVIL)}\n"),
        "articles/dgx-spark-70b-qlora-cost.md": lambda t: (
            t.replace("title: What a 70B QLoRA fine-tune costs on a rented DGX Spark", f"title: {q(EVIL)}")
            .replace("description: A budget for", f"description: {q(EVIL)}\nx_description: A budget for")
            .replace(
                "x_description: A budget for fine-tuning Llama 3.3 70B with QLoRA on one rented DGX Spark, "
                "worked out from NVIDIA's published throughput and an hourly rental rate.\n",
                "",
            )
            .replace("tags: [fine-tuning,", f"tags: [{q(EVIL)}, fine-tuning,")
            .replace("  - q: Is a billion tokens affordable on a single DGX Spark?", f"  - q: {q(FAQ_EVIL)}")
            .replace("  - name: NVIDIA Technical Blog,", f"  - name: {q(EVIL)}\n  - name: NVIDIA Technical Blog,")
        ),
    }
    content = make_content(tmp, edits)
    result, out = build(tmp, content)
    assert result.exit_code == 0, result.output
    return Built(out)


PAGES = [A, B]


@pytest.mark.parametrize("slug", PAGES)
def test_html_has_only_our_scripts_and_no_injected_markup(hostile, slug):
    raw = (hostile.out / slug / "index.html").read_text()
    assert "<script>alert(1)" not in raw and "<b>bold</b>" not in raw
    soup = BeautifulSoup(raw, "html.parser")
    for script in soup.find_all("script"):
        text = script.string or ""
        assert (
            script.get("src") == "../assets/plotly.min.js"
            or script.get("type") == "application/ld+json"
            or text.startswith("Plotly.newPlot(")
        ), script
    assert not soup.find_all("b")
    for ld in soup.find_all("script", type="application/ld+json"):
        doc = json.loads(ld.string)
        if doc["@type"] == "Article":
            assert doc["publisher"]["name"] == EVIL
            if slug == A:
                assert doc["headline"] == EVIL


def test_title_attribute_and_meta(hostile):
    soup = hostile.html(A)
    assert soup.title.string == f"{EVIL} | costpress"
    assert soup.find("meta", attrs={"name": "description"})["content"] == EVIL
    assert soup.find("meta", property="og:title")["content"] == EVIL
    assert soup.find("h1").get_text() == EVIL


def test_faq_json_ld_matches_visible_text(hostile):
    soup = hostile.html(A)
    visible = [s.get_text(" ", strip=True) for s in soup.select("section.faq summary")]
    ld = next(
        json.loads(s.string)
        for s in soup.find_all("script", type="application/ld+json")
        if json.loads(s.string)["@type"] == "FAQPage"
    )
    assert [e["name"] for e in ld["mainEntity"]] == visible
    assert " ".join(FAQ_EVIL.split()) in visible


@pytest.mark.parametrize("slug", PAGES)
def test_markdown_front_matter_and_tables(hostile, slug):
    text = hostile.md(slug)
    front = yaml.safe_load(text.split("---\n")[1])
    if slug == A:
        assert front["title"] == EVIL and EVIL in front["tags"]
    # every GFM table row has exactly as many cells as its header
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| ") and i + 1 < len(lines) and re.match(r"^\|( :?-+:? \|)+$", lines[i + 1]):
            width = len(re.findall(r"(?<!\\)\|", line))
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                assert len(re.findall(r"(?<!\\)\|", lines[j])) == width, lines[j]
                j += 1
    # an engine that allows raw HTML still gets no tag from data (front matter is read apart, as engines do)
    body = text.split("---\n", 2)[2]
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(body)
    assert "<script>" not in html and "<b>" not in html


@pytest.mark.parametrize("slug", PAGES)
def test_csv_cells_cannot_run_as_formulas(hostile, slug):
    for path in sorted((hostile.out / slug).glob("*.csv")):
        for row in csv.reader(io.StringIO(path.read_text())):
            for cell in row:
                if cell and not re.fullmatch(r"-?[0-9.e+-]+", cell):
                    assert not cell.startswith(("=", "+", "-", "@")), (path.name, cell)


def test_figures_json_parses(hostile):
    doc = json.loads((hostile.out / "figures.json").read_text())
    assert A in doc["articles"]


def test_javascript_links_are_refused(tmp_path):
    content = make_content(
        tmp_path,
        {
            "articles/dgx-spark-70b-qlora-cost.md": replace(
                "    url: https://developer.nvidia.com/blog/how-nvidia-dgx-sparks-performance-enables-intensive-ai-tasks/\n---",
                "    url: javascript:alert(1)\n---",
            )
        },
    )
    result, out = build(tmp_path, content)
    assert result.exit_code == 1 and "sources[0].url: expected an http(s) URL" in result.output


@pytest.mark.parametrize("slug", PAGES)
def test_svg_charts_stay_well_formed(hostile, slug):
    import xml.etree.ElementTree as ET

    svgs = sorted((hostile.out / slug).glob("*.svg"))
    assert svgs
    for path in svgs:
        root = ET.fromstring(path.read_bytes())
        assert not root.findall(".//{http://www.w3.org/2000/svg}script")


class _Shown:
    def __html__(self) -> str:
        return "<i>already safe</i>"


class _Text(str):
    pass


@pytest.mark.parametrize("value", [EVIL, FAQ_EVIL, "", "plain", 5, 2.5, None, _Shown(), _Text("<&>"), ["<x>"]])
def test_output_escape_writes_what_markupsafe_escape_writes(value):
    from markupsafe import escape

    from generator.jinja_env import output_escape

    assert output_escape(value) == str(escape(value))


def test_autoescaped_templates_escape_output_once():
    """Captured blocks and macros are escaped when written, not again when their result is written."""
    from generator.jinja_env import PageEnvironment

    env = PageEnvironment(autoescape=True)
    source = (
        "{{ x }}|{% set y %}<{{ x }}>{% endset %}{{ y }}|{% macro m(a) %}[{{ a }}]{% endmacro %}{{ m(x) }}"
        "|{{ x | upper }}|{% autoescape false %}{{ x }}{% endautoescape %}"
    )
    shown = env.from_string(source).render(x="<a href='x'>&\"")
    esc = "&lt;a href=&#39;x&#39;&gt;&amp;&#34;"
    upper = "&lt;A HREF=&#39;X&#39;&gt;&amp;&#34;"
    assert shown == f"{esc}|<{esc}>|[{esc}]|{upper}|<a href='x'>&\""


def test_dotted_names_read_dict_items_first_and_stay_sandboxed():
    import jinja2
    from jinja2.sandbox import SecurityError

    from generator.jinja_env import PageEnvironment, ProseEnvironment

    class Row:
        name = "attribute"

    values = {"d": {"items": "the item", "name": "n"}, "o": Row(), "e": {}}
    for env in (PageEnvironment(undefined=jinja2.StrictUndefined), ProseEnvironment(undefined=jinja2.StrictUndefined)):
        assert env.from_string("{{ d.items }}|{{ d.name }}|{{ o.name }}|{{ e.items is defined }}").render(values) == (
            "the item|n|attribute|True"
        )
        with pytest.raises(jinja2.UndefinedError):
            env.from_string("{{ d.missing }}").render(values)
    with pytest.raises(SecurityError):
        ProseEnvironment().from_string("{{ d.__class__.__mro__ }}").render(values)


def test_inlined_lookups_and_escapes_render_what_plain_jinja_renders():
    """`x.y` and `{{ ... }}` compile to an inline fast path (a plain dict's item; outside the sandbox an
    attribute; a plain str's escape): every kind of object, every place an expression can stand, and
    template names like the inline ones."""
    import types

    import jinja2
    from markupsafe import Markup

    from generator.jinja_env import PageEnvironment, ProseEnvironment

    class Sub(dict):
        pass

    class Obj:
        a = "<obj>"
        d = {"a": "&inner"}

    class Odd:
        @property
        def a(self):  # an attribute that fails reads as missing, and Jinja tries the item next
            raise AttributeError("a")

        def __getitem__(self, key):
            return f"<item {key}>"

    values = {
        "d": {"a": "<a>", "b": {"c": 'q"c'}, "n": 3, "m": Markup("<i>ok</i>"), "z": None, "t": _Text("<t>")},
        "s": Sub(a="<sub>"),
        "o": Obj(),
        "h": _Shown(),
        "p": Odd(),
        "mp": types.MappingProxyType({"a": "<proxied>"}),
        "xs": [{"ok": True, "v": "<1>"}, {"ok": False, "v": "<2>"}, Obj()],
    }
    source = (
        "{{ d.a }}|{{ d.b.c }}|{{ d.n }}|{{ d.m }}|{{ d.z }}|{{ d.t }}|{{ s.a }}|{{ s.items is defined }}|{{ o.a }}"
        "|{{ o.d.a }}|{{ h }}|{{ d.a ~ o.a }}|{{ (d.a, d.n) }}|{{ d.missing is defined }}|{{ d.a if d.n else o.a }}"
        "|{% for x in xs if x.ok is defined and x.ok %}{{ x.v }}{% endfor %}"
        "|{% macro m(v) %}[{{ v.a }}]{% endmacro %}{{ m(d) }}{{ m(o) }}"
        "|{% set _cp_o = d.b %}{% set _cp_v = 'mine' %}{{ _cp_o.c }}{{ _cp_v }}{{ d.a }}"
        "|{{ [d.a, o.a] | join(',') }}|{{ {'k': d.n}.k }}|{{ d['a'] }}|{{ 5 }}|{{ 'lit<' }}|{{ p.a }}|{{ p.b }}"
        "|{{ mp.a }}|{{ mp.get('a') }}|{{ o.missing is defined }}|{{ d.items is defined }}|{{ xs.0.v }}"
    )
    for autoescape in (True, False):
        ours = PageEnvironment(autoescape=autoescape).from_string(source).render(values)
        assert ours == jinja2.Environment(autoescape=autoescape).from_string(source).render(values), autoescape
    prose = ProseEnvironment().from_string(source).render(values)
    assert prose == jinja2.sandbox.ImmutableSandboxedEnvironment().from_string(source).render(values)
    # the fast paths are there: a dict's item and an attribute read in place, a str escaped without output_escape
    code = PageEnvironment(autoescape=True).compile("{{ d.a }}", raw=True)
    assert "type(_cp_o := " in code and "getattr(_cp_o, 'a', missing)" in code
    assert "environment.escape_text(_cp_v)" in code
    assert "getattr(_cp_o, 'a', missing)" not in ProseEnvironment().compile("{{ d.a }}", raw=True)  # sandboxed


def test_calls_in_templates_behave_as_in_jinja():
    """Built-in methods are called directly; anything else still goes through Jinja's context call."""
    import datetime as dt

    import jinja2

    from generator.jinja_env import PageEnvironment

    @jinja2.pass_context
    def seen(ctx, name):
        return ctx[name]

    values = {"day": dt.date(2026, 11, 30), "seen": seen, "who": "<b>", "stop": next, "empty": iter(())}
    source = "{{ day.isoformat() }}|{{ seen('who') }}|{{ 'a,b'.split(',') | join('+') }}|{{ stop(empty) is defined }}"
    ours = PageEnvironment(autoescape=True).from_string(source).render(values)
    assert ours == jinja2.Environment(autoescape=True).from_string(source).render(values)
    assert ours == "2026-11-30|&lt;b&gt;|a+b|False"
    from generator.jinja_env import ProseEnvironment

    sandboxed = "{{ day.isoformat() }}|{{ 'a,b'.split(',') | join('+') }}|{{ stop(empty) is defined }}"
    assert ProseEnvironment().from_string(sandboxed).render(values, empty=iter(())) == "2026-11-30|a+b|False"


def test_templates_load_once_and_extends_still_works(tmp_path):
    import jinja2

    from generator.jinja_env import PageEnvironment

    (tmp_path / "base.html").write_text("[{% block b %}{% endblock %}]")
    (tmp_path / "page.html").write_text("{% extends 'base.html' %}{% block b %}{{ x }}{% endblock %}")
    env = PageEnvironment(loader=jinja2.FileSystemLoader(str(tmp_path)), auto_reload=False)
    assert env.get_template("page.html") is env.get_template("page.html")
    assert env.get_template("page.html").render(x="<") == "[<]"
    with pytest.raises(jinja2.TemplateNotFound):
        env.get_template("missing.html")


@pytest.mark.parametrize("text", ['a"b\\c', "x\u2028y\u2029", "café <&>", "\x85\x7f", "\ufeffbom", "tab\tnew\nline"])
def test_yaml_str_is_json_with_yaml_breaks_escaped(text):
    import json
    import re

    import yaml

    from generator.escape import yaml_str

    expected = re.sub(
        "[\x7f-\x9f\u2028\u2029\ufeff]", lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False)
    )
    assert yaml_str(text) == expected
    assert yaml.safe_load(f"k: {yaml_str(text)}")["k"] == text


def test_number_filters_return_markup_and_page_links_refuse_bad_slugs():
    from markupsafe import Markup

    from generator.render import _safe_filters

    filters = _safe_filters()
    shown = filters["usd"](1234.5)
    assert type(shown) is Markup and shown == "$1,234.50"
    assert filters["page_link"]("a-b") == "../a-b/index.html"
    with pytest.raises(ValueError, match="not a page slug"):
        filters["page_link"]("../etc")


@pytest.mark.parametrize("slug", PAGES)
def test_charts_with_hostile_labels_are_valid_plotly_figures(hostile, slug):
    from test_charts import check, page_figures

    figures = page_figures((hostile.out / slug / "index.html").read_text())
    assert figures
    for fig in figures:
        check(fig)


def test_block_markers_count_only_on_a_line_of_their_own():
    """_split_blocks finds what the line-anchored pattern finds, on texts built to confuse it."""
    import random
    import re

    from generator.render import _split_blocks

    anchored = re.compile(r"^\[\[(table|chart|code):([a-z0-9-]+)\]\]$", re.M)

    def expected(text):
        out, pos = [], 0
        for m in anchored.finditer(text):
            if text[pos : m.start()].strip():
                out.append(("text", text[pos : m.start()]))
            out.append((m.group(1), m.group(2)))
            pos = m.end()
        if text[pos:].strip():
            out.append(("text", text[pos:]))
        return out

    parts = ["[[table:a]]", "[[chart:b-c]]", "x[[table:a]]", "[[[table:a]]", "[[table:a]] ", "\n", "text ", "[[tab:a]]"]
    rng = random.Random(7)
    for _ in range(5000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 12)))
        assert _split_blocks(text) == expected(text), repr(text)
    assert _split_blocks("a\n[[table:t]]\nb") == [("text", "a\n"), ("table", "t"), ("text", "\nb")]


def test_collected_output_renders_what_plain_jinja_renders():
    """Bodies and blocks collect their output and yield it once: same text as Jinja for extends,
    super(), self.block(), includes, macros, call blocks, loops and set blocks; same error lines."""
    import jinja2

    from generator.jinja_env import PageEnvironment, ProseEnvironment
    from generator.render import _template_line

    sources = {
        "base.html": "<h1>{% block title %}Base {{ who }}{% endblock %}</h1>\n{% block main %}{% endblock %}"
        "{% if tail %}<p>{{ tail }}</p>{% endif %}|{{ self.title() }}",
        "page.html": "{% extends 'base.html' %}{% set n = 3 %}{% block title %}{{ super() }} & page{% endblock %}"
        "{% block main %}{% for i in range(n) %}<i>{{ i }}{{ loop.last }}</i>{% endfor %}"
        "{% include 'part.html' %}{{ m('<x>') }}{% call m('y') %}inner {{ who }}{% endcall %}"
        "{% set kept %}[{{ who }}]{% endset %}{{ kept }}{% endblock %}",
        "part.html": "{% macro m(v) %}<m>{{ v }}{{ caller() if caller else '' }}</m>{% endmacro %}<p>{{ who }}</p>",
        "maybe.html": "{% if base %}{% extends base %}{% endif %}top {{ who }}{% block main %}own{% endblock %}",
        "broken.html": "line one\n{% for i in range(2) %}\n{{ i }}\n{{ missing.attr }}\n{% endfor %}",
    }
    sources["page.html"] = "{% from 'part.html' import m %}" + sources["page.html"]
    values = {"who": "<b>", "tail": "end", "base": "base.html"}
    for autoescape in (True, False):
        ours = PageEnvironment(loader=jinja2.DictLoader(sources), autoescape=autoescape)
        plain = jinja2.Environment(loader=jinja2.DictLoader(sources), autoescape=autoescape)
        for name in ("page.html", "base.html", "maybe.html"):
            for vals in (values, {**values, "base": None}):
                assert ours.get_template(name).render(vals) == plain.get_template(name).render(vals), name
                assert (
                    len(list(ours.get_template(name).root_render_func(ours.get_template(name).new_context(vals)))) <= 2
                )
    for env in (PageEnvironment(loader=jinja2.DictLoader(sources), undefined=jinja2.StrictUndefined),
                ProseEnvironment(loader=jinja2.DictLoader(sources), undefined=jinja2.StrictUndefined)):  # fmt: skip
        with pytest.raises(jinja2.UndefinedError) as caught:
            env.get_template("broken.html").render()
        assert _template_line(caught.value) == 4  # what error messages cite


def test_sandbox_still_refuses_functions_marked_unsafe():
    """The sandbox's callable check answers plain functions from their own marks, as Jinja's does."""
    import jinja2
    from jinja2.sandbox import SecurityError, unsafe

    from generator.jinja_env import ProseEnvironment

    def shout(x):
        return x.upper()

    def alters(x):
        return x

    alters.alters_data = True

    @jinja2.pass_context
    def who(ctx):
        return ctx["name"]

    env = ProseEnvironment(undefined=jinja2.StrictUndefined)
    values = {"ok": shout, "bad": unsafe(lambda x: x), "alters": alters, "who": who, "name": "n", "f": lambda: "l"}
    assert env.from_string("{{ ok('a') }}{{ who() }}{{ f() }}{{ 'x'.upper() }}").render(values) == "AnlX"
    for call in ("bad('a')", "alters('a')"):
        with pytest.raises(SecurityError):
            env.from_string("{{ " + call + " }}").render(values)


def test_markdown_nesting_is_counted_per_line():
    """too_deep counts the blockquotes and list items one line opens, whatever they are, and gives the first
    line that opens more than MAX_NESTING (the converter's stack overflowed at 10,000-100,000 of them)."""
    from generator.markdown_html import MAX_NESTING, too_deep

    assert too_deep("> " * MAX_NESTING + "x") is None
    assert too_deep("> " * (MAX_NESTING + 1) + "x") == 1
    assert too_deep("intro\n\n" + "- 1. > " * (MAX_NESTING // 3 + 1) + "x") == 3  # kinds mixed
    assert too_deep(">" * (MAX_NESTING + 1) + " x") == 1  # no space needed between quotes
    assert too_deep("-" * 5000) is None  # a rule, not list items
    assert too_deep("1.5 " * 1000) is None  # numbers, not list items
    assert too_deep(("- item\n" * 2000) + ("> quote\n" * 2000)) is None  # long, but one level a line


def _ids_one_by_one(texts: list[str]) -> list[str]:
    """Heading ids as the first free suffix from 2, tried one by one: what Markdown.render gave before."""
    used, out = set(), []
    for base in texts:
        anchor, n = base, 2
        while anchor in used:
            anchor, n = f"{base}-{n}", n + 1
        used.add(anchor)
        out.append(anchor)
    return out


class _CountedSet(set):
    """A set that counts how often it is asked whether it holds something."""

    asked = 0

    def __contains__(self, item) -> bool:
        self.asked += 1
        return super().__contains__(item)


def test_heading_ids_are_the_first_free_suffix_and_found_in_a_few_looks():
    """Ids as before for headings whose texts collide with each other's suffixed ids. And a page of 20,000
    headings of one text, which took minutes (each heading tried every suffix from 2: 200 million looks),
    now needs a few looks a heading."""
    import random
    import re

    from generator.markdown_html import Markdown

    rng = random.Random(7)
    texts = [rng.choice(["x", "x 2", "x 3", "y", "x 2 2", "y 1"]) for _ in range(300)]
    html = Markdown().render("\n\n".join(f"## {t}" for t in texts), {})
    assert re.findall(r'<h2 id="([^"]+)">', html) == _ids_one_by_one([t.replace(" ", "-") for t in texts])
    used = _CountedSet()
    html = Markdown().render("## x\n\n" * 20_000, {"ids": used})
    assert 'id="x-20000"' in html and used.asked <= 3 * 20_000


class _CountedRow(dict):
    """A grid row that counts the reads of its values (in LOOKS)."""

    def __getitem__(self, key):
        LOOKS[0] += 1
        return super().__getitem__(key)


LOOKS = [0]


def test_long_token_lists_are_looked_up_not_searched(tmp_path, monkeypatch):
    """A throughput chart's table and a flops article's larger runs found each cell by searching every row of
    their grid: time grew with the square of the token counts (20,000 took 96 s and 50 s). Counted here as
    reads of the grid's rows, which now grow with the rows."""
    import generator.kinds.flops as flops
    import generator.kinds.throughput as throughput
    from generator.engine import rows as rows_engine

    grid, flop_rows = throughput._grid, rows_engine.flop_rows
    monkeypatch.setattr(throughput, "_grid", lambda *a: [_CountedRow(r) for r in grid(*a)])
    monkeypatch.setattr(flops.rows_engine, "flop_rows", lambda *a: [_CountedRow(r) for r in flop_rows(*a)])
    from generator.schema import MAX_ROWS

    n = MAX_ROWS  # as many as a list may hold
    many = ", ".join(f"{i + 100}M" for i in range(n))
    content = make_content(
        tmp_path,
        {
            "articles/dgx-spark-70b-qlora-cost.md": replace(
                "chart_tokens: [1M, 3M, 10M, 30M, 100M, 300M, 1B]", f"chart_tokens: [{many}]"
            ),
            "articles/fine-tune-70b-cost-by-setup.md": replace(
                "larger_tokens: [100M, 500M]", f"larger_tokens: [{many}]"
            ),
        },
    )
    LOOKS[0] = 0
    result, _ = build(tmp_path, content)
    assert result.exit_code == 0, result.output
    # the searches made 94,392 reads here (36 million for 2,000 token counts, before lists had a most)
    assert n < LOOKS[0] < 100 * n, LOOKS[0]


@pytest.mark.parametrize("watched_first", [False, True])
def test_a_forked_worker_stops_a_runaway_template_whether_or_not_its_parent_had_a_watchdog(watched_first):
    """Each process has its own watchdog thread; a worker forked from a process that already had one (a
    long-running `serve` whose first build rendered in-process) must start its own, not keep a dead copy."""
    import time

    from generator import sandbox
    from generator.workers import Workers

    if watched_first:
        with sandbox.time_budget(5):
            pass

    def runaway(tasks: list) -> list:
        try:
            with sandbox.time_budget(0.3):
                end = time.monotonic() + 4
                while time.monotonic() < end:  # a loop that only the budget ends early
                    pass
        except sandbox.ProseTimeout:
            return ["stopped"]
        return ["ran to the end"]

    with Workers(1, runaway) as pool:
        (number,) = pool.submit([None], 1)
        assert pool.results(number) == ["stopped"]
