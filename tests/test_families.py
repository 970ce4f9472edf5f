"""Page families: one page per fitting model × method × offer, a listing, links between neighbours."""

from __future__ import annotations

import itertools
import math
from decimal import ROUND_HALF_UP, Decimal

import oracle
import pytest
import yaml
from bs4 import BeautifulSoup
from conftest import CONTENT, NBHY

from generator.listing import LISTING_SHOWN

LISTING = "fine-tune-70b-every-setup"
STATE = {"qlora": 50, "lora": 152, "full-8bit": 766, "full": 1189}
OPS = {"qlora": 6, "lora": 6, "full-8bit": 8, "full": 8}
P70 = 70_553_706_496
GPUS = {g["id"]: g for g in yaml.safe_load((CONTENT / "hardware.yaml").read_text())["gpus"]}


def usd(x: float) -> str:
    return "$" + f"{Decimal(repr(x)).quantize(Decimal('0.01'), ROUND_HALF_UP):,}"


def combinations():
    """Every (method, provider, offer) of the family, from the snapshots, with fit and run cost."""
    out = []
    family = yaml.safe_load((CONTENT / "families" / "70b-setups.md").read_text().split("---")[1])
    for provider in family["axes"]["providers"]:
        snap = yaml.safe_load(sorted((CONTENT / "prices" / provider).glob("*.yaml"))[-1].read_text())
        for method in STATE:
            for o in snap["offers"]:
                gpu = GPUS[o["gpu"]]
                fits = oracle.fits(method, gpu["memory_gb"], o["count"])
                hours = OPS[method] * P70 * 20e6 / (gpu["peak_tflops"] * o["count"] * 1e12 * 0.3 * 3600)
                slug = f"llama-3-3-70b-{method}-on-{provider}-{o['gpu']}x{o['count']}".replace("full-8bit", "full-8bit")
                out.append(
                    {
                        "slug": slug,
                        "fits": fits,
                        "cost": (hours + 0.25) * o["usd_per_hour"],
                        "per_million": hours * o["usd_per_hour"] / 20,
                        "method": method,
                        "provider": provider,
                    }
                )
    return out


def test_one_page_per_fitting_combination(site):
    combos = combinations()
    expected = {c["slug"] for c in combos if c["fits"]}
    built = {p.parent.name for p in site.out.glob("llama-3-3-70b-*/index.html")}
    assert built == expected
    assert len(expected) > 50


def test_page_figures(site):
    for c in combinations():
        if c["fits"] and c["provider"] == "runpod" and c["method"] == "lora":
            text = site.text(c["slug"])
            assert f"costs about {usd(c['cost'])}, startup included" in text, c["slug"]


def test_each_page_states_its_rank_among_the_setups_for_its_job(site):
    """ "This setup ranks 4 of 62": the count of setups of the same method whose run costs less at the cents
    shown, plus one, of every setup of that method that holds the job."""
    combos = [c for c in combinations() if c["fits"]]
    for c in combos:
        if c["provider"] != "runpod":
            continue
        same = [o for o in combos if o["method"] == c["method"]]
        cheaper = sum(1 for o in same if round(o["cost"], 2) < round(c["cost"], 2))
        text = " ".join(site.text(c["slug"]).split())
        if cheaper:
            assert f"This setup ranks {cheaper + 1} of {len(same)} for this job." in text, c["slug"]
        else:
            assert f"This is the cheapest of the {len(same)} setups we list for this job." in text, c["slug"]


def test_neighbour_links_resolve_and_rank(site):
    combos = [c for c in combinations() if c["fits"] and c["method"] == "lora"]
    cheapest = min(combos, key=lambda c: c["cost"])
    soup = site.html(cheapest["slug"])
    links = [a["href"] for a in soup.select("main a") if a["href"].startswith("../")]
    assert links
    for href in links:
        assert (site.out / cheapest["slug"] / href).resolve().is_file(), href
    assert f"This is the cheapest of the {len(combos)} setups we list for this job." in site.text(cheapest["slug"])
    # the list shows the next cheapest few, then counts the rest: together, every other setup of the job
    shown = [li for li in soup.select("main li") if li.a is not None and li.a["href"].startswith("../llama-3-3-70b-")]
    rest = len(combos) - 1 - len(shown)
    # ...the cheapest of the others, the page itself not among them
    others = sorted((c for c in combos if c is not cheapest), key=lambda c: round(c["cost"], 2))
    assert [li.a["href"].split("/")[1] for li in shown] == [c["slug"] for c in others[: len(shown)]]
    assert 0 < len(shown) < len(combos) - 1
    assert f"{rest} more are in the full comparison linked below." in site.text(cheapest["slug"])


def csv_rows(out, slug: str) -> list[list[str]]:
    import csv

    return list(csv.reader((out / slug / "combinations.csv").read_text().splitlines()))[1:]


def test_listing_has_every_combination(site):
    rows = csv_rows(site.out, LISTING)
    combos = combinations()
    assert len(rows) == len(combos)
    assert sum(r[-1] == "fits" for r in rows) == sum(c["fits"] for c in combos)
    soup = site.html(LISTING)
    priced = site.table(LISTING, "fits-llama-3-3-70b")[1:]
    table = soup.select_one("table.sortable")
    # the page carries the cheapest LISTING_SHOWN rows; the table's rows file has every one
    every = BeautifulSoup((site.out / LISTING / table["data-rows"]).read_text(), "html.parser").select("tr")
    linked = {tr.a["href"].split("/")[1] for tr in every}
    assert linked == {c["slug"] for c in combos if c["fits"]} and len(every) == len(linked)
    assert len(priced) == LISTING_SHOWN < len(every)
    # setups that cannot hold the job are listed apart, with what they would need, and no price;
    # past LISTING_SHOWN, one last item says how many more the CSV holds
    apart = [li.get_text(" ", strip=True) for li in soup.select("details.no-fit li")]
    unfit = sum(not c["fits"] for c in combos)
    assert unfit > LISTING_SHOWN and len(apart) == LISTING_SHOWN + 1
    assert apart[-1] == f"And {unfit - LISTING_SHOWN} more, in the CSV file"
    assert all("GB per GPU" in text and "$" not in text for text in apart[:-1])
    assert soup.find("script", src="../assets/sort.js")
    index_links = [a["href"] for a in site.html(".").select(".post-list a")]
    assert f"{LISTING}/index.html" in index_links
    assert not any(h.startswith("llama-3-3-70b-") for h in index_links)  # family pages hang off their listing


def test_a_method_without_a_memory_figure_is_listed_not_paged(tmp_path):
    """Rows with no training-state figure say so (the pandas grid made them NaN and the build crashed)."""
    from conftest import Built, build, make_content, replace

    content = make_content(
        tmp_path,
        {
            "families/70b-setups.md": replace("methods: [qlora, lora,", "methods: [qlora, lora, lora-no-recompute,"),
            # no guide figure and no training block: nothing says how much memory it needs
            "methods.yaml": replace(
                "    training: {weights: bf16, trainable: lora, optimizer: adamw, master_weights: true, "
                "checkpointing: false}\n",
                "",
            ),
        },
        families=True,
    )
    result, out = build(tmp_path, content)
    assert result.exit_code == 0, result.output
    rows = csv_rows(out, LISTING)
    missing = [r for r in rows if r[-1] == "no memory figure"]
    offers = sum(1 for c in combinations() if c["method"] == "qlora")
    assert len(missing) == offers and all(r[1] == "LoRA, no activation checkpointing" for r in missing)
    # the ones the page lists (the first LISTING_SHOWN of those that do not fit) say why
    apart = [li.get_text(" ", strip=True) for li in Built(out).html(LISTING).select("details.no-fit li")]
    unfit = [r for r in rows if r[-1] != "fits"][:LISTING_SHOWN]
    assert sum(text.endswith("no memory figure") for text in apart) == sum(r[-1] == "no memory figure" for r in unfit)
    assert sum(text.endswith("no memory figure") for text in apart) > 0
    assert len(rows) == len(combinations()) + offers
    assert not list(out.glob("*lora-no-recompute*"))


def test_each_page_cites_its_own_price_and_its_familys_utilization(tmp_path):
    """Pages share input figures across a build: a second family with another utilization on the
    same offers must still cite its own assumption, and every page its own offer's price."""
    import json

    from conftest import build, make_content, replace

    family = (CONTENT / "families" / "70b-setups.md").read_text()
    second = (
        replace("utilization: 0.30", "utilization: 0.45")(family)
        .replace("slug: fine-tune-70b-every-setup", "slug: fine-tune-70b-every-setup-at-45")
        .replace('slug: "{model}-{method}-on-', 'slug: "at-45-{model}-{method}-on-')
    )
    content = make_content(tmp_path, {"families/70b-setups-45.md": second}, families=True)
    result, out = build(tmp_path, content)
    assert result.exit_code == 0, result.output
    checked = 0
    for c in combinations():
        if not c["fits"]:
            continue
        snap = yaml.safe_load(sorted((CONTENT / "prices" / c["provider"]).glob("*.yaml"))[-1].read_text())
        gpu, _, count = c["slug"].split(f"-on-{c['provider']}-")[1].rpartition("x")
        (price,) = [o["usd_per_hour"] for o in snap["offers"] if o["gpu"] == gpu and o["count"] == int(count)]
        for slug, util in ((c["slug"], 0.30), (f"at-45-{c['slug']}", 0.45)):
            figures = json.loads((out / slug / "figures.json").read_text())["articles"][slug]["figures"]
            shown = {f["id"]: f["value"] for f in figures}
            assert shown["input.Utilization, planning figure"] == util, slug
            assert [v for k, v in shown.items() if k.startswith("input.Hourly price")] == [price], slug
            checked += 1
    assert checked > 100


def test_page_patterns_fill_placeholders_and_doubled_braces_only():
    """A title or slug pattern's {name} takes the row's value (text or a count), '{{' and '}}' are braces,
    and braces inside a value stay as they are."""
    from generator.families import fill, pattern_problems

    row = {"model_name": "Llama 3.3 70B", "count": 8, "gpu_name": "H100", "provider_name": "Cloud {eu}"}
    pattern = "{model_name} on {count} × {gpu_name} at {provider_name} {{cheapest}}"
    assert pattern_problems(pattern) == []
    assert fill(pattern, row) == "Llama 3.3 70B on 8 × H100 at Cloud {eu} {cheapest}"
    assert pattern_problems("{count:>4}") and pattern_problems("{model_name!r}") and pattern_problems("a } b")


def test_a_listing_override_reads_rows_as_mappings(tmp_path):
    """The listing's rows are slotted objects, not dicts: an override reads them by attribute, by key,
    with get() and items(), as it did when they were dicts."""
    from conftest import make_content, run_cli

    content = make_content(tmp_path, families=True)
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "_listing_rows.html").write_text(
        "{% macro rows(rows, rest, root) %}{% for row in rows %}"
        '<tr data-x="{{ row.setup }}|{{ row["provider"] }}|{{ row.get("gpu") }}|{{ row.get("nothing", "none") }}'
        '|{{ (row.items() | list | length) }}|{{ "fits" in row }}"><td>{{ row.label }}</td></tr>'
        "{% endfor %}{% endmacro %}\n"
    )
    out = tmp_path / "site"
    result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(templates))
    assert result.exit_code == 0, result.output
    page = BeautifulSoup((out / LISTING / "index.html").read_text(), "html.parser")
    first = page.select_one("tr[data-x]")
    setup, provider, gpu, missing, count, fits = first["data-x"].split("|")
    family = yaml.safe_load((CONTENT / "families" / "70b-setups.md").read_text().split("---")[1])
    label = first.td.get_text().replace("\u00a0", " ")
    assert label.startswith(f"{setup} at ")  # the listing's label is the setup at its provider's name
    assert provider in family["axes"]["providers"] and gpu in GPUS
    assert (missing, fits) == ("none", "True")
    # the 32 values of setup_row and its costs, the listing's label and need, and (a fitting row's) its
    # page's title and description
    assert count == "36"


def test_a_family_with_too_many_combinations_is_one_problem(tmp_path, monkeypatch):
    """Models × methods × offers past the limit is a problem of the family's axes, found before any row is
    made (a family of millions ran out of memory after a long while, with a traceback)."""
    from conftest import build, make_content

    from generator import families

    monkeypatch.setattr(families, "MAX_COMBINATIONS", 10)
    content = make_content(tmp_path, families=True)
    result, out = build(tmp_path, content)
    assert result.exit_code == 1 and not out.exists(), result.output
    line = next(x for x in result.output.splitlines() if "combinations of model, method and offer" in x)
    assert line.startswith("error: ") and "families/70b-setups.md:" in line and "axes" in line, line
    assert "a family may have at most 10 (split it" in line, line


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        # each of these wrote one page's files over another's: the build rendered every page, then stopped at the
        # first shared path with "two pages want the same output path", naming no file or field
        (
            'slug: "{model}-{method}-on-{provider}-{gpu}x{count}"',
            'slug: "{model}-{method}"',
            "families/70b-setups.md:9: page.slug gives more than one page the slug 'llama-3-3-70b-qlora'; use "
            "placeholders that tell its pages apart",
        ),
        (
            "providers: [lambda, nebius, runpod, nodus, aws, gcp, azure]",
            "providers: [lambda, nebius, lambda, nodus]",
            "families/70b-setups.md:15: axes.providers[2]: 'lambda' is listed twice; list each once",
        ),
    ],
    ids=["slug-pattern", "provider-twice"],
)
def test_pages_that_would_share_a_folder_are_one_problem_before_any_renders(tmp_path, old, new, words):
    from conftest import build, make_content, replace

    content = make_content(tmp_path, {"families/70b-setups.md": replace(old, new)}, families=True)
    result, out = build(tmp_path, content)
    assert result.exit_code == 1 and not out.exists(), result.output
    assert words in result.output and "want the same output path" not in result.output, result.output
    assert "built 1" not in result.output  # no page rendered


def _family_pages():
    from generator.build import _articles

    catalog, articles, _, problems = _articles(CONTENT, False, None)
    assert not problems, problems
    return catalog, [a for a in articles if a.page_inputs is not None]


def test_a_family_pages_params_are_its_familys_and_its_own_inputs():
    """A family page's fingerprint is made from its family's parameters and its page_inputs
    (fingerprints.Fingerprints), so its params must hold nothing else: a parameter that family_pages gave a page
    some other way would not reach the fingerprint, and a change to it would leave the page stale."""
    from generator.families import PAGE_INPUTS, page_params

    _, pages = _family_pages()
    assert len(pages) > 1000
    own = {"model", "method", "offer", "neighbours", "listing_slug"}
    for art in pages:
        assert art.params is None  # made when the page renders (Article.all_params)
        p, shared, inputs = art.all_params(), art.family_params, art.page_inputs
        assert set(p) == set(shared) | own, art.slug
        assert all(p[k] is shared[k] for k in shared if k not in own), art.slug
        values = dict(zip(PAGE_INPUTS, inputs, strict=True))
        assert p["neighbours"] == {"shown": values["shown"], "others": values["others"], "cheaper": values["cheaper"]}
        assert [p[k] for k in ("model", "method", "offer", "listing_slug")] == [
            values[k] for k in ("model", "method", "offer", "listing_slug")
        ]
        assert p == page_params(shared, inputs), art.slug


def test_a_family_pages_fingerprint_follows_each_of_its_inputs():
    """Each of a family page's own inputs, its title, slug and description, and its family's parameters
    change its fingerprint; the same page gives the same fingerprint in another Fingerprints."""
    import dataclasses

    from generator.fingerprints import Fingerprints

    catalog, pages = _family_pages()
    art = next(a for a in pages if a.page_inputs[3])  # a page that lists neighbours
    first = Fingerprints(catalog, "code").of(art)
    assert first == Fingerprints(catalog, "code").of(art)
    model, method, offer, shown, others, cheaper, listing = art.page_inputs
    other_page = next(a for a in pages if a.page_inputs[2] != offer and a.page_inputs[:2] == (model, method))
    changed_shown = [dict(shown[0], cost=shown[0]["cost"] + 0.01), *shown[1:]]
    variants = [
        (model, method, other_page.page_inputs[2], shown, others, cheaper, listing),
        (model, method, offer, changed_shown, others, cheaper, listing),
        (model, method, offer, shown, others + 1, cheaper, listing),
        (model, method, offer, shown, others, cheaper + 1, listing),
        (model, method, offer, shown, others, cheaper, listing + "-2"),
    ]
    seen = {first}
    for inputs in variants:
        fp = Fingerprints(catalog, "code").of(dataclasses.replace(art, page_inputs=inputs))
        assert fp not in seen, inputs
        seen.add(fp)
    for field in ("title", "slug", "description"):
        fp = Fingerprints(catalog, "code").of(dataclasses.replace(art, **{field: getattr(art, field) + "x"}))
        assert fp not in seen, field
        seen.add(fp)
    family = {**art.family_params, "utilization": art.family_params["utilization"] + 0.01}
    fp = Fingerprints(catalog, "code").of(dataclasses.replace(art, family_params=family, params=family))
    assert fp not in seen


def test_at_the_same_cost_per_token_the_cheaper_reference_run_comes_first(site):
    """The listing's rows come cheapest per million tokens first. Many offers cost the same per token
    (a price that grows with the GPU count), and ties went by provider name: Llama 3.2 1B's first row was
    8 × B200 at Nebius, whose 20M-token run costs $11.34 with its 15 minutes of startup, above the same
    price per token on 1 × B200 at Nodus for $1.71. At the same cost per token the cheaper run comes first."""
    p1b = 1_235_814_400  # Llama 3.2 1B, counted from its config (tests/test_architecture.py)
    per_hour = 2250e12 * 0.30 * 3600 / (6 * p1b)  # training tokens an hour on one B200 at 30% (QLoRA, LoRA: 6)
    run = {n: (20e6 / (n * per_hour) + 0.25) * 5.50 * n for n in (1, 8)}  # $5.50 a B200-hour either way
    assert (usd(run[1]), usd(run[8])) == ("$1.71", "$11.34")
    rows = site.table("fine-tune-open-models-every-setup", "fits-llama-3-2-1b")[1:]
    assert [r[:2] for r in rows[:3]] == [["1 × B200 at Nodus", "LoRA"], ["1 × B200 at Nodus", "QLoRA"],
                                         ["8 × B200 at Nebius", "LoRA"]]  # fmt: skip
    assert [r[3:5] for r in rows[:3]] == [["$0.017", usd(run[1])], ["$0.017", usd(run[1])], ["$0.017", usd(run[8])]]

    # every fitting row of the 70B family, in the listing's order (its rows file), against this file's own
    # figures: by cost per token, and at the same cost per token by the reference run
    combos = {c["slug"]: c for c in combinations() if c["fits"]}
    table = site.html(LISTING).select_one("table.sortable")
    every = BeautifulSoup((site.out / LISTING / table["data-rows"]).read_text(), "html.parser").select("tr")
    order = [combos[tr.a["href"].split("/")[1]] for tr in every]
    assert len(order) == len(combos)
    ties = 0
    for a, b in itertools.pairwise(order):
        assert a["per_million"] <= b["per_million"] * (1 + 1e-9), (a["slug"], b["slug"])
        if abs(a["per_million"] - b["per_million"]) <= 1e-9 * b["per_million"]:
            ties += a["cost"] != b["cost"]
            assert a["cost"] <= b["cost"] * (1 + 1e-9), (a["slug"], b["slug"])
    assert ties > 10  # the rule is exercised: ties on the price per token, broken by the run


def test_two_families_making_the_same_pages_is_one_line_not_one_per_page(tmp_path, site):
    """A family copied under another listing slug made every page twice: the build printed 116 lines (1,698 for
    the open-models family), one per page. Now one line names the pattern, the other file and how many."""
    from conftest import build, make_content

    family = (CONTENT / "families" / "70b-setups.md").read_text()
    copy = family.replace("slug: fine-tune-70b-every-setup", "slug: copied-listing", 1)
    content = make_content(tmp_path, {"families/copy.md": copy}, families=True)
    result, out = build(tmp_path, content)
    assert result.exit_code == 1 and not out.exists(), result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    pages = len(list(site.out.glob("llama-3-3-70b-*-on-*/index.html")))  # the family's pages
    assert pages > 100 and len(errors) == 1, errors
    assert errors[0].startswith(f"error: {content}/families/copy.md:9: page.slug gives "), errors  # the later file
    assert f" gives {pages:,} pages slugs that pages of {content}/families/70b-setups.md already use" in errors[0]
    assert "1 problem found" in result.output


def test_the_listing_has_a_markdown_page_with_the_html_pages_rows(site):
    """Every article had an index.md for other blog engines, and every family page linked to its listing's
    folder, but the listing had none: copied into Hugo, each family page's link to "one table" led nowhere."""
    from markdown_it import MarkdownIt

    md = site.md(LISTING)
    front = yaml.safe_load(md.split("---\n")[1])
    html = site.html(LISTING)
    assert front["title"] == html.find("h1").get_text() and front["slug"] == LISTING
    assert front["tags"] == ["fine-tuning", "llama", "gpu-cost"] and "draft" not in front
    body = BeautifulSoup(MarkdownIt("commonmark").enable("table").render(md.split("---\n", 2)[2]), "html.parser")
    (table,) = body.find_all("table")

    def text(tag) -> str:  # as site.table reads the HTML page's cells
        return " ".join(tag.get_text(" ").split()).replace(NBHY, "-")

    rows = [[text(td) for td in tr.find_all(["td", "th"])] for tr in table.find_all("tr")]
    shown = site.table(LISTING, "fits-llama-3-3-70b")
    assert rows == shown and len(rows) == LISTING_SHOWN + 1  # the heading and the cheapest LISTING_SHOWN
    for a in table.find_all("a"):  # each setup links to its page, which has its own index.md
        slug = a["href"].removeprefix("../").removesuffix("/index.html")
        assert (site.out / slug / "index.md").is_file(), a["href"]
    apart = [text(li) for li in html.select("details.no-fit li")]
    assert [text(li) for li in body.find_all("li")] == apart and len(apart) == LISTING_SHOWN + 1
    assert body.find("a", string="CSV file")["href"] == "combinations.csv"


def money(x: float) -> str:
    """An amount as pages show it: cents, or two significant figures below ten cents ("$0.017")."""
    if x >= 0.1:
        return usd(x)
    places = 1 - math.floor(math.log10(x))
    return f"${Decimal(repr(x)).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)}"


def test_a_listing_of_one_model_opens_with_its_cheapest_setup(site):
    """A listing's answer was its table's first row, below the filters: two screens down on a phone, and
    not on the home page at all. A one-model listing now opens as an article does, and the home page shows
    the same line. Checked against this file's own costs: the least per million training tokens among the
    setups that fit (at the same cost per token, the cheaper reference run), and how many fit."""
    fits = [c for c in combinations() if c["fits"]]
    low = min(c["per_million"] for c in fits)
    tied = [c for c in fits if c["per_million"] <= low * (1 + 1e-9)]
    run = min(c["cost"] for c in tied)
    box = site.html(LISTING).select_one("header .answer-box")
    said = " ".join(box.select_one(".answer-figure").get_text(" ").split())
    words = f"per million training tokens of Llama 3.3 70B, the cheapest of {len(fits)} setups that hold the job"
    assert said == f"{usd(low)} {words}"
    link = box.select_one(".answer-setup a")
    best = {c["slug"]: c for c in tied}[link["href"].split("/")[1]]  # one of the cheapest per token
    assert best["cost"] <= run * (1 + 1e-9)  # and of those, the cheapest run
    snap = yaml.safe_load(sorted((CONTENT / "prices" / best["provider"]).glob("*.yaml"))[-1].read_text())
    methods = {m["id"]: m["name"] for m in yaml.safe_load((CONTENT / "methods.yaml").read_text())["methods"]}
    gpu, _, count = best["slug"].split(f"-on-{best['provider']}-")[1].rpartition("x")
    setup = f"{methods[best['method']]}, {count} × {GPUS[gpu]['name']} at {snap['name']}"
    assert " ".join(link.get_text().split()) == setup[0].upper() + setup[1:]
    assert box.select_one(".answer-setup time")["datetime"] == snap["checked"].isoformat()
    assert "price checked" in box.select_one(".answer-setup").get_text()
    # the home page's line for the listing is the same
    (item,) = [li for li in site.html(".").select("ul.post-list > li") if li.a["href"] == f"{LISTING}/index.html"]
    assert " ".join(item.select_one(".headline").get_text(" ").split()) == f"{said} · {setup}"
    # and its Markdown page opens with it too
    quote = next(line for line in site.md(LISTING).splitlines() if line.startswith("> "))
    assert quote.startswith(f"> **{usd(low)}** per million training tokens of Llama 3.3 70B, the cheapest of ")
    assert f"(../{best['slug']}/index.html); price checked {snap['checked'].isoformat()}." in quote


OPEN = "fine-tune-open-models-every-setup"


def cheapest_by_model(out) -> dict[str, tuple[float, set[str], int]]:
    """Per model name, from a listing's CSV file: the least cost per million tokens of the setups that fit, the
    setups at that cost with the cheapest reference run ("method, setup at provider"), and how many fit."""
    fitting: dict[str, list] = {}
    for r in csv_rows(out, OPEN):  # model, method, provider, setup, per hour, per million, run, GB, memory
        if r[-1] == "fits":
            fitting.setdefault(r[0], []).append(r)
    out = {}
    for name, rows in fitting.items():
        low = min(float(r[5]) for r in rows)
        tied = [r for r in rows if float(r[5]) <= low * (1 + 1e-5)]  # the file's figures have six decimals
        run = min(float(r[6]) for r in tied)
        out[name] = low, {f"{r[1]}, {r[3]} at {r[2]}" for r in tied if float(r[6]) <= run * (1 + 1e-5)}, len(rows)
    return out


def test_each_models_cheapest_setup_is_a_claim_the_change_report_compares(site):
    """figures.json states, per model of a listing, its cheapest setup per million training tokens and how many
    setups fit; `costpress changes` compares them. Llama 3.1 405B had no cheapest-setup claim: its cheapest row
    per token (LoRA on one B200) does not fit, and a model's claim was made from its first row only when that
    row fit, so a change of the 405B's cheapest setup would have gone unreported."""
    import json

    family = yaml.safe_load((CONTENT / "families" / "open-models.md").read_text().split("---")[1])
    models = yaml.safe_load((CONTENT / "models.yaml").read_text())["models"]
    names = {m["id"]: m["name"] for m in models if m["id"] in family["axes"]["models"]}
    claims = json.loads((site.out / OPEN / "figures.json").read_text())["articles"][OPEN]["claims"]
    said = {c["id"]: c["subject"] for c in claims}
    expected = cheapest_by_model(site.out)
    assert len(expected) == len(names) == 10
    for model, name in names.items():
        _, setups, count = expected[name]
        assert said.get(f"{model}.cheapest_per_token") in setups, model
        assert said[f"{model}.fitting"] == str(count)


def test_a_listing_of_several_models_opens_with_each_models_cheapest_setup(site):
    """Each model's cheapest setup per million training tokens, from the listing's own CSV file, linked to its
    page, each model's name to its table."""
    expected = cheapest_by_model(site.out)
    html = site.html(OPEN)
    items = html.select("header .answer-box .cheapest li")
    assert len(items) == len(expected)
    md = site.md(OPEN).replace("\u00a0", " ")
    for li in items:
        section, page = li.find_all("a")
        name = section.get_text().replace("\u00a0", " ")
        low, setups, _ = expected.pop(name)
        assert " ".join(page.get_text().split()).replace(NBHY, "-") in setups, name
        assert li.strong.get_text() == money(low), name
        assert html.find("section", id=section["href"].removeprefix("#")).h2.get_text() == name
        assert (site.out / OPEN / page["href"]).is_file()
        assert f"- {name}: **{money(low)}**, [" in md
    assert expected == {}
    # a listing of several models has no single answer for the home page
    (item,) = [li for li in site.html(".").select("ul.post-list > li") if li.a["href"] == f"{OPEN}/index.html"]
    assert item.select_one(".headline") is None


def test_a_listing_offers_a_model_filter_only_when_it_lists_several_models(site):
    """One model's listing would offer a "Model" choice with a single entry; several models' listing offers
    each of its models, by name."""
    import yaml as _yaml

    def filters(slug):
        return {sel["data-filter"]: [o.get_text() for o in sel.select("option")]
                for sel in site.html(slug).select("select[data-filter]")}  # fmt: skip

    assert set(filters(LISTING)) == {"method", "gpu", "provider"}
    several = filters(OPEN)
    assert set(several) == {"model", "method", "gpu", "provider"}
    family = (CONTENT / "families/open-models.md").read_text().split("---")[1]
    models = {m["id"]: m["name"] for m in _yaml.safe_load((CONTENT / "models.yaml").read_text())["models"]}
    named = {models[m] for m in _yaml.safe_load(family)["axes"]["models"]}
    assert several["model"][0] == "All" and {" ".join(o.split()) for o in several["model"][1:]} == named


def test_a_listings_sort_choice_says_the_order_its_rows_come_in(site):
    """On a phone the table has no headings: the "Sort by" choice shown first must be the rows' own order,
    cheapest per million training tokens first (families.family_rows ranks them so)."""
    for slug in (LISTING, OPEN):
        (sort,) = site.html(slug).select("select[data-sort]")
        chosen = sort.select("option[selected]")
        assert [(o["value"], o.get_text()) for o in chosen] == [("3:asc", "USD per million tokens, lowest first")]
        assert [th.get_text(" ", strip=True) for th in site.html(slug).select("table thead th")][3].startswith(
            "USD per million tokens"
        )
    # names sort one way, A to Z; numbers either way
    choices = [o.get_text() for o in site.html(LISTING).select("select[data-sort] option")]
    assert choices == [
        "Setup, A to Z",
        "Method, A to Z",
        *(f"{col}, {way} first" for col in ("USD per hour", "USD per million tokens", "Reference run (USD)",
                                             "GB per GPU") for way in ("lowest", "highest")),
    ]  # fmt: skip


def test_a_listing_says_when_one_setup_or_none_holds_a_models_job(tmp_path):
    """The answer's words follow the counts: one setup that holds the job is "the only" one, and a model that
    no setup holds is said to be so in a listing of several, not priced and not left out."""
    from conftest import Built, build, make_content

    family = (CONTENT / "families" / "70b-setups.md").read_text()
    family = family.replace("methods: [qlora, lora, full-8bit, full]", "methods: [full]")
    family = family.replace("providers: [lambda, nebius, runpod, nodus, aws, gcp, azure]", "providers: [nodus]")
    for models, said in (
        ("[llama-3.3-70b]", "the only setup that holds the job"),
        ("[llama-3.3-70b, llama-3.1-405b]", "Llama 3.1 405B: no setup we have prices for holds the job"),
    ):
        folder = tmp_path / str(models.count(","))
        text = family.replace("models: [llama-3.3-70b]", f"models: {models}")
        result, out = build(folder, make_content(folder, {"families/70b-setups.md": text}, families=True))
        assert result.exit_code == 0, result.output
        fit = [r for r in csv_rows(out, LISTING) if r[-1] == "fits"]
        assert len(fit) == 1 and fit[0][:4] == ["Llama 3.3 70B", "full fine-tune, AdamW", "Nodus", "8 × B200"]
        box = " ".join(Built(out).html(LISTING).select_one(".answer-box").get_text(" ").split())
        assert said in box.replace(" :", ":"), box
        assert money(float(fit[0][5])) in box


def test_a_family_that_nothing_holds_is_a_warning(tmp_path):
    """A family whose job no offer holds (a 405B full fine-tune on Nodus) built a listing of unpriced setups and
    no page, silently: after `new family` said so, a price change could bring it about unseen."""
    from conftest import build, make_content, run_cli

    family = (CONTENT / "families" / "70b-setups.md").read_text()
    for old, new in (
        ("methods: [qlora, lora, full-8bit, full]", "methods: [full]"),
        ("providers: [lambda, nebius, runpod, nodus, aws, gcp, azure]", "providers: [nodus]"),
        ("models: [llama-3.3-70b]", "models: [llama-3.1-405b]"),
    ):
        assert old in family
        family = family.replace(old, new)
    content = make_content(tmp_path, {"families/70b-setups.md": family}, families=True)
    result, out = build(tmp_path, content)
    warning = (
        "warning: content/families/70b-setups.md: no combination of its models, methods and offers holds the "
        "job; its listing prices none and no page is made"
    )
    assert result.exit_code == 0 and warning in result.output.replace(str(content.parent) + "/", ""), result.output
    assert (out / LISTING / "index.html").is_file() and not list(out.glob("llama-3-1-405b-*"))
    strict = run_cli("build", "--content", str(content), "--out", str(tmp_path / "strict"), "--strict")
    assert strict.exit_code == 1


def test_a_listing_says_when_its_cheapest_price_was_imported_not_read(tmp_path):
    """An imported catalog does not say when its prices were read; its snapshot's date is the import's, and
    pages say "imported" for it. The listing's answer said "price checked" whatever the snapshot."""
    from conftest import Built, build, make_content

    family = (CONTENT / "families" / "70b-setups.md").read_text()
    family = family.replace("providers: [lambda, nebius, runpod, nodus, aws, gcp, azure]", "providers: [nebius]")
    (path,) = (CONTENT / "prices" / "nebius").glob("*.yaml")
    snap = yaml.safe_load(path.read_text())
    assert snap["checked_is"] == "imported"  # a catalog's import (costpress import-prices)
    result, out = build(tmp_path, make_content(tmp_path, {"families/70b-setups.md": family}, families=True))
    assert result.exit_code == 0, result.output
    said = " ".join(Built(out).html(LISTING).select_one(".answer-setup").get_text().split())
    assert said.endswith(f"at Nebius · price imported {snap['checked'].isoformat()}"), said
    quote = next(line for line in Built(out).md(LISTING).splitlines() if line.startswith("> "))
    assert quote.endswith(f"; price imported {snap['checked'].isoformat()}."), quote
