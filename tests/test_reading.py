"""What a reader sees, in headless Chromium at a phone's and a laptop's width: the answer on the first
screen, tables that fit the screen, numbers that stay with their units, and charts that neither zoom
on a drag nor trap a swipe.

Needs Chromium and playwright (as test_browser.py); pages are opened from file:// with every other
address blocked.
"""

from __future__ import annotations

import functools
import re

import pytest
from conftest import A, B
from test_browser import browser  # noqa: F401 - the shared headless Chromium
from test_search import served  # noqa: F401 - the built site on a local server

VIEWPORTS = {"phone": (390, 844), "laptop": (1280, 900)}
ARTICLES = {  # one page of every article kind
    "throughput": A,
    "flops": B,
    "market": "70b-fine-tune-across-clouds",
    "time-to-train": "mlperf-llama2-70b-lora-cost",
    "memory-check": "memory-model-vs-measurements",
    "setup": "mixtral-8x7b-qlora-on-nodus-h100x1",
    "listing": "fine-tune-70b-every-setup",  # a listing of one model: its cheapest setup
    "listing of several models": "fine-tune-open-models-every-setup",  # each model's cheapest setup
}
TABLE_PAGES = list(ARTICLES.values())
CHART_PAGES = [A, B, "70b-fine-tune-across-clouds", "mlperf-llama2-70b-lora-cost", "llama-3-3-70b-lora-on-nodus-b200x1"]
# a number, then a plain space, then a unit or the × of a setup ("20 M", "152 GB", "8 × H100"); "8-bit"; a date
SPLIT = re.compile(
    r"\d (?:M|B|T|k|K|GB|GiB|TB|TFLOPS|PFLOPS?)(?!\w)|\d ×|\d\u00a0× (?=\w)"  # units, setups
    r"|(?<![\w/.-])\d-bit\b|\d{4}-\d\d-\d\d"  # plain hyphens: "8-bit", dates
)


def _open(browser, site, slug, size, **context):  # noqa: F811
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, **context)
    page = ctx.new_page()
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    page.goto((site.out / slug / "index.html").as_uri())
    page.wait_for_load_state("load")
    return ctx, page


@pytest.fixture(scope="module")
def seen(browser, site):  # noqa: F811
    """What a reader sees of a page at a width, measured in one visit that the tests of that page and width
    share: a visit is most of a second (plotly.js, the charts), and two tests' own visits were sixteen more."""

    @functools.cache
    def visit(slug: str, width: str) -> dict:
        size = VIEWPORTS[width]
        ctx, page = _open(browser, site, slug, size)
        try:
            answer = page.query_selector(".answer-box strong")
            return {
                "answer": (answer.bounding_box(), answer.inner_text()) if answer is not None else None,
                "outside": page.evaluate(
                    """(w) => [...document.querySelectorAll('table th, table td, table caption')]
                        .filter(c => c.getClientRects().length && !c.closest('thead'))
                        .map(c => [c.getBoundingClientRect(), c.innerText.slice(0, 40)])
                        .filter(([r]) => r.left < -0.5 || r.right > w + 0.5)
                        .map(([r, t]) => `${t} (${Math.round(r.left)}..${Math.round(r.right)})`)""",
                    size[0],
                ),
                "page_width": page.evaluate("document.documentElement.scrollWidth"),
            }
        finally:
            ctx.close()

    return visit


@pytest.mark.parametrize("width", VIEWPORTS)
@pytest.mark.parametrize("kind", ARTICLES)
def test_the_answer_is_on_the_first_screen(seen, kind, width):
    answer = seen(ARTICLES[kind], width)["answer"]
    assert answer is not None, "no answer box"
    box, text = answer
    assert box["y"] + box["height"] <= VIEWPORTS[width][1], f"the answer is at {box['y']:.0f} px"
    assert re.fullmatch(r"\$[\d,]+\.\d\d\d?|\d+", text), text  # "$0.017": two significant figures below ten cents


@pytest.mark.parametrize("width", VIEWPORTS)
@pytest.mark.parametrize("slug", TABLE_PAGES)
def test_no_table_cell_leaves_the_screen(seen, slug, width):
    page = seen(slug, width)
    assert page["outside"] == []
    assert page["page_width"] <= VIEWPORTS[width][0]


@pytest.mark.parametrize("slug", TABLE_PAGES + ["index.html"])
def test_numbers_keep_their_units(site, slug):
    from bs4 import BeautifulSoup

    path = site.out / slug if slug.endswith(".html") else site.out / slug / "index.html"
    soup = BeautifulSoup(path.read_text(), "html.parser")
    for hidden in soup.body(["script", "style", "pre", "code", "noscript", "time"]):  # <time> is nowrap (CSS)
        hidden.decompose()
    text = soup.body.get_text()
    found = [text[max(0, m.start() - 20) : m.end() + 10] for m in SPLIT.finditer(text)]
    assert found == []


@pytest.mark.parametrize("slug", CHART_PAGES)
def test_a_drag_does_not_zoom_a_chart(browser, site, slug):  # noqa: F811
    ctx, page = _open(browser, site, slug, VIEWPORTS["laptop"])
    page.wait_for_function("[...document.querySelectorAll('.plot')].every(p => p._fullLayout)")
    ranges = "[...document.querySelectorAll('.plot')].map(p => [p._fullLayout.xaxis.range, p._fullLayout.yaxis.range])"
    before = page.evaluate(ranges)
    assert before
    for plot in page.query_selector_all(".plot"):
        plot.scroll_into_view_if_needed()
        box = plot.bounding_box()
        x, y = box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.4
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + 120, y + 60, steps=8)
        page.mouse.up()
        page.mouse.dblclick(x, y)
    assert page.evaluate(ranges) == before
    ctx.close()


@pytest.mark.parametrize("slug", CHART_PAGES[:2])
def test_a_swipe_over_a_chart_scrolls_the_page(browser, site, slug):  # noqa: F811
    ctx, page = _open(browser, site, slug, VIEWPORTS["phone"], has_touch=True, is_mobile=True)
    page.wait_for_function("document.querySelector('.plot') && document.querySelector('.plot')._fullLayout")
    plot = page.query_selector(".plot")
    plot.scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, -100)")
    box = plot.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + min(box["height"] - 10, 300)
    start = page.evaluate("window.scrollY")
    cdp = ctx.new_cdp_session(page)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for i in range(1, 11):
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y - 25 * i}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    page.wait_for_timeout(300)
    assert page.evaluate("window.scrollY") > start + 100, "the swipe did not scroll the page"
    ctx.close()


def test_home_page_shows_each_articles_answer(site):
    from bs4 import BeautifulSoup

    home = BeautifulSoup((site.out / "index.html").read_text(), "html.parser")
    shown = 0
    for item in home.select("ul.post-list > li"):
        slug = item.a["href"].split("/")[0]
        page = site.html(slug)
        box = page.select_one(".answer-box .answer-figure strong")
        headline = item.select_one(".headline strong")
        if box is None:  # a listing of several models: each model's cheapest, no single answer
            assert headline is None and page.select_one(".answer-box .cheapest li strong") is not None
            continue
        assert headline.get_text() == box.get_text()
        shown += 1
    assert shown == 6  # the five articles and the listing of one model
    assert home.h1.get_text() != "costpress"  # the site's name is in the header already
    # a tag's page shows each entry as the home page does (it showed no answer at all)
    lines = {li.a["href"]: str(li.select_one(".headline")) for li in home.select("ul.post-list > li")}
    tagged = 0
    for tag in (site.out / "tags").glob("*/index.html"):
        for li in BeautifulSoup(tag.read_text(), "html.parser").select("ul.post-list > li"):
            assert str(li.select_one(".headline")) == lines[li.a["href"].removeprefix("../../")], tag
            tagged += li.select_one(".headline") is not None
    assert tagged >= shown


def test_about_page_favicon_and_a_404_that_works_anywhere(site):
    from bs4 import BeautifulSoup

    about = BeautifulSoup((site.out / "about" / "index.html").read_text(), "html.parser")
    assert about.h1.get_text() == "About this site"
    for rel in ("index.html", f"{B}/index.html", "tags/llama/index.html"):
        soup = BeautifulSoup((site.out / rel).read_text(), "html.parser")
        icon = soup.find("link", rel="icon")["href"]
        assert (site.out / rel).parent.joinpath(icon).resolve().is_file()
        footer = soup.select_one("footer a[href$='about/index.html']")
        assert (site.out / rel).parent.joinpath(footer["href"]).resolve().is_file()
    assert "https://costpress.example/about/" in (site.out / "sitemap.xml").read_text()
    missing = BeautifulSoup((site.out / "404.html").read_text(), "html.parser")
    # served at /any/depth/: its links start at the site's path (base_url is https://costpress.example/)
    assert missing.find("link", rel="stylesheet")["href"] == "/assets/style.css"
    assert missing.select_one("main a")["href"] == "/index.html"


def test_the_404_page_is_styled_at_a_nested_address(browser, site):  # noqa: F811
    """A static host serves 404.html at whatever address was asked for; its stylesheet must still load."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site.out))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        ctx = browser.new_context(viewport={"width": 390, "height": 844})
        page = ctx.new_page()
        failed = []
        page.on("requestfailed", lambda r: failed.append(r.url))
        body = (site.out / "404.html").read_bytes()
        page.route(f"{base}/no/such/page/", lambda r: r.fulfill(status=404, body=body, content_type="text/html"))
        page.goto(f"{base}/no/such/page/")
        page.wait_for_load_state("load")
        assert failed == []
        color = page.evaluate("getComputedStyle(document.querySelector('.site-header')).borderBottomStyle")
        assert color == "solid"  # the stylesheet applied
        ctx.close()
    finally:
        server.shutdown()


def test_listing_filters(browser, site):  # noqa: F811
    from bs4 import BeautifulSoup

    slug = "fine-tune-open-models-every-setup"
    soup = BeautifulSoup((site.out / slug / "index.html").read_text(), "html.parser")
    rows = soup.select("table.sortable tbody tr")
    want = [r for r in rows if r["data-gpu"] == "h200" and r["data-method"] == "qlora"]
    assert 0 < len(want) < len(rows)
    ctx, page = _open(browser, site, slug, VIEWPORTS["phone"])
    assert page.locator("form.filters").is_visible()
    # from a file the other rows cannot be fetched, so the page does not promise them
    assert page.locator(".more-rows").first.is_visible() and not page.locator(".more-online").first.is_visible()
    page.select_option("select[data-filter=gpu]", "h200")
    page.select_option("select[data-filter=method]", "qlora")
    visible = page.evaluate(
        "[...document.querySelectorAll('table.sortable tbody tr')].filter(r => !r.hidden && r.offsetParent)"
        ".map(r => [r.dataset.gpu, r.dataset.method])"
    )
    assert len(visible) == len(want) and set(map(tuple, visible)) == {("h200", "qlora")}
    assert page.locator(".filter-count").inner_text() == f"{len(want)} setups match"
    page.select_option("select[data-filter=gpu]", "")
    page.select_option("select[data-filter=method]", "")
    assert page.evaluate("[...document.querySelectorAll('table.sortable tbody tr')].filter(r => r.hidden).length") == 0
    page.select_option("select[data-filter=model]", "mistral-7b")  # one model: the other sections go
    shown = page.evaluate("[...document.querySelectorAll('section[id]')].filter(s => !s.hidden).map(s => s.id)")
    assert shown == ["mistral-7b"]
    ctx.close()


def test_listing_sorts_on_a_phone(browser, site):  # noqa: F811
    """The card layout hides the headings; the "Sort by" choice sorts every model's table instead."""
    slug = "fine-tune-70b-every-setup"
    ctx, page = _open(browser, site, slug, VIEWPORTS["phone"])
    assert page.locator("select[data-sort]").is_visible()
    assert page.locator("table.sortable thead").first.bounding_box()["height"] <= 1  # cards: no headings to press
    values = "[...document.querySelector('table.sortable').tBodies[0].rows].map(r => Number(r.cells[{}].dataset.value))"
    first = page.evaluate(values.format(3))
    assert first == sorted(first)  # as published: cheapest per token first
    page.select_option("select[data-sort]", "2:desc")  # USD per hour, highest first
    per_hour = page.evaluate(values.format(2))
    assert per_hour == sorted(per_hour, reverse=True) and per_hour != sorted(per_hour)
    assert page.locator("table.sortable thead th").nth(2).get_attribute("aria-sort") == "descending"
    ctx.close()


def test_rows_that_tie_go_back_to_the_published_order_when_sorted_again(browser, site):  # noqa: F811
    """Sorted by GB per GPU and then again by cost per token, the rows that cost the same per token kept the
    GB order: Llama 3.2 1B opened with 8 x B200 at Nebius, as the page was before the listing put the
    cheaper run first. Ties now keep the order the page was published in."""
    ctx, page = _open(browser, site, "fine-tune-open-models-every-setup", VIEWPORTS["phone"])
    first = "[...document.querySelector('#fine-tune-open-models-every-setup-fits-llama-3-2-1b').tBodies[0].rows]"
    first += ".slice(0, 3).map(r => (r.cells[0].innerText + ', ' + r.cells[1].innerText.split('\\n').pop())"
    first += ".replace(/\\u00a0/g, ' '))"
    published = page.evaluate(first)
    assert published == ["1 × B200 at Nodus, LoRA", "1 × B200 at Nodus, QLoRA", "8 × B200 at Nebius, LoRA"]
    page.select_option("select[data-sort]", "5:asc")  # GB per GPU, lowest first: the 8-GPU setups first
    assert page.evaluate(first)[0].startswith("8 × B200")
    page.select_option("select[data-sort]", "3:asc")  # cost per token again
    assert page.evaluate(first) == published
    ctx.close()


def test_a_long_listing_loads_its_other_rows_when_filtered(browser, site, served):  # noqa: F811
    """A model with more setups than LISTING_SHOWN ships its cheapest rows; a filter brings in the rest."""
    from bs4 import BeautifulSoup

    from generator.listing import LISTING_SHOWN

    slug = "fine-tune-open-models-every-setup"
    folder = site.out / slug
    soup = BeautifulSoup((folder / "index.html").read_text(), "html.parser")
    every = []
    for table in soup.select("table.sortable"):
        shown = table.select("tbody tr")
        if table.get("data-rows"):  # a long table: the page has its cheapest rows, the file has all of them
            rows = BeautifulSoup((folder / table["data-rows"]).read_text(), "html.parser").select("tr")
            assert len(shown) == LISTING_SHOWN < len(rows)
            assert [r.a["href"] for r in shown] == [r.a["href"] for r in rows[:LISTING_SHOWN]]  # cheapest first
        else:
            rows = shown
        every += [(r["data-gpu"], r["data-method"]) for r in rows]
    want = every.count(("h100", "lora"))
    assert want > sum(
        1 for r in soup.select("table.sortable tbody tr") if (r["data-gpu"], r["data-method"]) == ("h100", "lora")
    )
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    page = ctx.new_page()
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(served) else r.abort())
    page.goto(f"{served}{slug}/index.html")
    assert page.locator(".more-rows").first.is_visible() and page.locator(".more-online").first.is_visible()
    page.select_option("select[data-filter=gpu]", "h100")
    page.select_option("select[data-filter=method]", "lora")
    page.wait_for_function(f"document.querySelector('.filter-count').textContent === '{want} setups match'")
    visible = page.evaluate(
        "[...document.querySelectorAll('table.sortable tbody tr')].filter(r => !r.hidden)"
        ".map(r => r.dataset.gpu + '/' + r.dataset.method)"
    )
    assert visible == ["h100/lora"] * want
    assert not page.locator(".more-rows").first.is_visible()  # the note about the other rows is gone
    ctx.close()
