"""Every page in headless Chromium with the network cut: no console errors, no failed requests,
every chart drawn, tables visible, and no serious or critical axe-core violation.

Screenshots (laptop and phone widths) are saved as PNG under $COSTPRESS_SHOTS, for someone to look at,
or else as JPEG in the run's temporary folder (`shots0`, under popen-gwN/ when run in parallel; where
that folder is and how long it stays: tests/conftest.py and docs/errors-and-checks.md). JPEG took the
24 rendering tests from 25.1-29.7 s to 22.7-26.6 s (three pairs): the PNGs' encoding is time nobody
looks at on a green run.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from conftest import A, B
from tools import AXE_JS, CHROMIUM, need

PAGES = [
    "index.html",
    f"{A}/index.html",
    f"{B}/index.html",
    "70b-fine-tune-across-clouds/index.html",
    "mlperf-llama2-70b-lora-cost/index.html",
    "fine-tune-70b-every-setup/index.html",
    "fine-tune-open-models-every-setup/index.html",
    "memory-model-vs-measurements/index.html",
    "llama-3-3-70b-lora-on-nodus-b200x1/index.html",
    "mixtral-8x7b-qlora-on-nodus-h100x1/index.html",
    "tags/index.html",
    "tags/llama/index.html",
]
VIEWPORTS = {"laptop": (1280, 800), "phone": (390, 844)}
SHOT_MAX = 12_000  # px of a page's screenshot


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> tuple[Path, dict]:
    """Where screenshots go and how they are saved (see the module's docstring): made when a test takes one
    (importing this module made a folder in /tmp for every test process of every run, and left it there)."""
    chosen = os.environ.get("COSTPRESS_SHOTS")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return Path(chosen), {"type": "png"}
    return tmp_path_factory.mktemp("shots"), {"type": "jpeg", "quality": 85}


@pytest.fixture(scope="module")
def browser():
    need(CHROMIUM, "Chromium (Debian package chromium)")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright (pip) is not installed")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield b
        b.close()


def open_page(browser, site, rel: str, viewport: tuple[int, int]):
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url}"))

    def only_local(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            problems.append(f"network request: {route.request.url}")
            route.abort()

    page.route("**/*", only_local)
    page.goto((site.out / rel).as_uri())
    page.wait_for_load_state("load")
    return page, problems


@pytest.fixture(scope="module")
def visits(browser, site, shots):
    """Each page at each width, opened once: what the rendering test checks, the screenshot, and (at laptop
    width, when axe-core is installed) axe's serious and critical violations, run last since it opens every
    FAQ entry. The two tests of a page at laptop width share the visit: a visit is most of a second (plotly.js
    and the charts), and axe's own twelve were a tenth of this module's time."""

    @functools.cache
    def visit(rel: str, size: str) -> dict:
        page, problems = open_page(browser, site, rel, VIEWPORTS[size])
        try:
            plots = page.locator("div.plot")
            tables = page.locator("table:not(details table)")
            found = {
                "undrawn": [i for i in range(plots.count()) if plots.nth(i).locator("svg.main-svg").count() == 0],
                "hidden": [i for i in range(tables.count()) if not tables.nth(i).is_visible()],
                "width": page.evaluate("document.documentElement.scrollWidth"),
            }
            # the whole page, or the top of a very long one (a listing is 191,000 px tall on a phone:
            # a 15 MB image nobody can look at, and seconds to take)
            height = page.evaluate("document.documentElement.scrollHeight")
            clip = {"x": 0, "y": 0, "width": VIEWPORTS[size][0], "height": SHOT_MAX} if height > SHOT_MAX else None
            folder, options = shots
            name = f"{rel.replace('/', '_')}-{size}.{'jpg' if options['type'] == 'jpeg' else 'png'}"
            page.screenshot(path=str(folder / name), full_page=True, clip=clip, **options)
            found["problems"] = list(problems)
            if size == "laptop" and AXE_JS.exists():
                page.add_script_tag(path=str(AXE_JS))
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
                found["axe"] = [
                    f"{v['id']} ({v['impact']}): {v['help']} - {[n['target'] for n in v['nodes']][:3]}"
                    for v in result["violations"]
                    if v["impact"] in ("serious", "critical")
                ]
        finally:
            page.close()
        return found

    return visit


@pytest.mark.parametrize("rel", PAGES)
@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_page_renders_cleanly(visits, rel, size):
    page = visits(rel, size)
    assert page["undrawn"] == [], "charts not drawn"
    assert page["hidden"] == [], "tables not visible"
    assert page["width"] <= VIEWPORTS[size][0], f"page is {page['width']}px wide at {size} width"
    assert page["problems"] == []


@pytest.mark.parametrize("rel", PAGES)
def test_axe_has_no_serious_violations(visits, rel):
    need(AXE_JS.exists(), "axe-core (npm ci)")
    assert visits(rel, "laptop")["axe"] == []


def test_faq_is_keyboard_navigable(browser, site):
    page, _ = open_page(browser, site, f"{B}/index.html", VIEWPORTS["laptop"])
    try:
        first = page.locator("section.faq summary").first
        first.focus()
        assert page.evaluate("document.activeElement.tagName") == "SUMMARY"
        page.keyboard.press("Enter")
        assert page.locator("section.faq details").first.get_attribute("open") is not None
    finally:
        page.close()


def test_print_layout(browser, site):
    page, problems = open_page(browser, site, f"{B}/index.html", VIEWPORTS["laptop"])
    try:
        page.emulate_media(media="print")
        assert not page.locator(".site-header").is_visible()
        pdf = page.pdf()
        assert pdf[:4] == b"%PDF" and problems == []
    finally:
        page.close()


def test_listing_sorts_on_click(browser, site):
    page, problems = open_page(browser, site, "fine-tune-70b-every-setup/index.html", VIEWPORTS["laptop"])
    try:
        column = 4  # "Reference run (USD)"
        page.locator("thead button").nth(column).click()
        values = page.eval_on_selector_all(
            "table.sortable tbody tr", f"rows => rows.map(r => Number(r.cells[{column}].dataset.value))"
        )
        assert values == sorted(values)
        page.locator("thead button").nth(column).click()
        again = page.eval_on_selector_all(
            "table.sortable tbody tr", f"rows => rows.map(r => Number(r.cells[{column}].dataset.value))"
        )
        assert again == sorted(values, reverse=True) and problems == []
    finally:
        page.close()


def test_a_long_listing_shows_ten_setups_per_model_until_asked(browser, site):
    """On a phone the open-models listing was 190,000 px of cards: each table now shows its first ten
    rows (in the order it is sorted) and a button that shows the rest, which then takes the focus."""
    page, problems = open_page(browser, site, "fine-tune-open-models-every-setup/index.html", VIEWPORTS["phone"])
    visible = "t => Array.from(t.tBodies[0].rows).filter(r => r.offsetParent !== null).length"
    try:
        tables = page.locator("table.sortable")
        counts = [tables.nth(n).evaluate("t => t.tBodies[0].rows.length") for n in range(tables.count())]
        assert max(counts) > 10
        for n, count in enumerate(counts):
            assert tables.nth(n).evaluate(visible) == min(count, 10)
        assert page.locator(".show-rows button").count() == sum(count > 10 for count in counts)
        first = tables.first
        page.select_option("select[data-sort]", "2:desc")  # USD per hour, highest first
        shown = first.evaluate(
            "t => Array.from(t.tBodies[0].rows).filter(r => r.offsetParent !== null)"
            ".map(r => Number(r.cells[2].dataset.value))"
        )
        every = first.evaluate("t => Array.from(t.tBodies[0].rows).map(r => Number(r.cells[2].dataset.value))")
        assert shown == sorted(every, reverse=True)[:10]
        button = page.locator(".show-rows button").first
        assert button.inner_text() == f"Show all {counts[0]} setups"
        button.click()
        assert first.evaluate(visible) == counts[0]
        assert page.evaluate(
            "document.activeElement === document.querySelector('table.sortable').tBodies[0].rows[10].querySelector('a')"
        )
        assert page.locator(".show-rows").count() == sum(count > 10 for count in counts) - 1
        assert problems == []
    finally:
        page.close()


def test_an_earlier_address_moves_the_browser_to_the_page(browser, tmp_path):
    """An alias's page (generator/aliases.py), opened from file:// as a reader of a downloaded site would:
    the browser lands on the article itself, with nothing fetched from the network."""
    from conftest import make_content, replace, run_cli

    content = make_content(tmp_path, {f"articles/{A}.md": replace(f"\nslug: {A}\n", f"\nslug: {A}\naliases: [a/b]\n")})
    out = tmp_path / "site"
    result = run_cli("build", "--content", str(content), "--out", str(out))
    assert result.exit_code == 0, result.output
    page, problems = open_page(browser, type("Built", (), {"out": out}), "a/b/index.html", VIEWPORTS["phone"])
    try:
        page.wait_for_url((out / A / "index.html").as_uri(), timeout=10_000)
        assert page.locator("h1").count() == 1 and problems == []
    finally:
        page.close()
