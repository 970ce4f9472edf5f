"""Each claim names the figures it rests on (figures.json "rests_on"), and the change report says which of them
moved when a claim changed."""

from __future__ import annotations

import json

import pytest
from conftest import B, build, make_content, replace, run_cli

from generator.changes import parse
from generator.claims import rests_match, rests_of, rests_on_groups

H100_CHEAPER = {
    "prices/nodus/2026-11-05.yaml": replace(
        "{gpu: h100, count: 1, usd_per_hour: 2.60}", "{gpu: h100, count: 1, usd_per_hour: 2.40}"
    )
}
LISTING = "fine-tune-70b-every-setup"


def test_a_claim_takes_the_figures_of_the_longest_value_id_it_starts_with():
    rests = {"best": ("#run.*.cost",), "setups.a@x:y.fits": ("#memory.a@x:y.per_gpu",), "rank": ("#reference.cost",)}
    assert rests_of("best", rests) == ("#run.*.cost",)
    assert rests_of("best.label", rests) == ("#run.*.cost",)
    assert rests_of("best[2].gpu", rests) == ("#run.*.cost",)
    assert rests_of("setups.a@x:y.fits", rests) == ("#memory.a@x:y.per_gpu",)
    assert rests_of("setups.a@x:y.gpu_name", rests) == ()  # a name from content rests on no figure
    assert rests_of("best_ties[0]", rests) == ()  # "best" is not a value id of best_ties: no cut there
    assert rests_of("ranked", rests) == ()
    assert rests_of("model.name", rests) == ()
    # groups: each set of figures once, with its value ids sorted
    assert rests_on_groups({"rank": ("#a",), "of": ("#a",), "answer": ("#b",)}) == [
        (["answer"], ["#b"]),
        (["of", "rank"], ["#a"]),
    ]


@pytest.mark.parametrize(
    "pattern, figure, named",
    [
        ("run.*.usd_per_million", "run.lora@nodus:b200x1.usd_per_million", True),
        ("run.*.usd_per_million", "run.lora@nodus:b200x1.cost_with_startup", False),
        ("lora.*.cost_with_startup", "full-8bit.nodus:b200x8.cost_with_startup", False),
        ("input.Hourly price, *", "input.Hourly price, RunPod 8 × H100 SXM", True),
        ("table.x[1].y", "table.x[1].y", True),  # brackets and dots are themselves
        ("table.x[1].y", "table.x1.y", False),
        ("*.error", "guide.llama-3.3-70b.lora.error", True),
    ],
)
def test_a_star_in_a_rests_on_id_stands_for_any_text_and_nothing_else_is_special(pattern, figure, named):
    assert rests_match(pattern, figure) is named


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """The default content with the 70B family, built as it is and with Nodus's H100 at $2.40 an hour."""
    tmp = tmp_path_factory.mktemp("rests")
    out = {}
    for name, edits in (("before", {}), ("after", H100_CHEAPER)):
        content = make_content(tmp / name, edits, families=True)
        result, site = build(tmp / name, content)
        assert result.exit_code == 0, result.output
        out[name] = site
    return out


def entries(site) -> dict:
    return parse((site / "figures.json").read_bytes(), "figures.json", lambda rel: (site / rel).read_bytes())


def rests_map(entry: dict) -> dict:
    return {key: tuple(g["figures"]) for g in entry.get("rests_on", ()) for key in g["claims"]}


def test_every_rests_on_names_claims_of_its_page_and_figures_that_exist(sites):
    pages = entries(sites["before"])
    assert len(pages) > 100
    for slug, entry in pages.items():
        claims = [c["id"] for c in entry["claims"]]
        for key, figures in rests_map(entry).items():
            assert any(c == key or c.startswith((key + ".", key + "[")) for c in claims), (slug, key)
            for named in figures:
                page, _, pattern = named.partition("#")
                there = pages[page] if page else entry
                assert any(rests_match(pattern, f["id"]) for f in there["figures"]), (slug, named)


# Claims that state a choice the engine made, each with the figures that decide it, written out by hand from
# how each kind ranks: a setup by its cost per million tokens and then its run's cost; an hour by the prices;
# the MLPerf offers by a run at the median time; the throughput runs by their cost at one budget.
BY_TOKEN = ["#run.*.usd_per_million", "#run.*.cost_with_startup"]
CHOICES = {
    B: {
        "best.label": BY_TOKEN,
        "answer.setup": BY_TOKEN,
        "best_is_tied": BY_TOKEN,
        "cheapest_hour.label": ["#input.Hourly price, *"],
        "best_is_cheapest_hour": [*BY_TOKEN, "#input.Hourly price, *"],
        "pflop_best.gpu": ["#pflop.*"],
        "setups.qlora@nodus:h100x1.fits": ["#memory.qlora@nodus:h100x1.per_gpu", "#input.Memory, H100 SXM"],
        "full_under_double": ["#compare.full_vs_adapter"],
        "model.name": [],
        "examples": [],
    },
    "mlperf-llama2-70b-lora-cost": {
        "best.label": ["#offer.*.cost_median"],
        "leaders[0]": ["#offer.*.cost_median"],
        "cheapest_hour.label": ["#input.Hourly price, *"],
        "fastest_gpu.gpu": ["#gpu.*.median_minutes", "#gpu.*.fastest_minutes"],
        "suite.name": [],
    },
    "dgx-spark-70b-qlora-cost": {
        "answer.setup": ["#snippet.cost"],
        "cheapest_run.label": ["#compare.*.cost"],
        "check.main.doubtful": ["#check.*.utilization"],
        "run.framework": [],
    },
    "70b-fine-tune-across-clouds": {
        "answer.setup": ["#lora.*.cost_with_startup"],
        "methods.lora.best.label": ["#lora.*.cost_with_startup"],
        "methods.full-8bit.is_tied": ["#full-8bit.*.cost_with_startup"],
        "methods.lora.cheapest_hour.label": ["#input.Hourly price, *"],
        "methods.lora.name": [],
    },
    "memory-model-vs-measurements": {
        "within": ["#*.error"],
        "worst.label": ["#*.error"],
        "count": [],
    },
    "llama-3-3-70b-qlora-on-nodus-h100x1": {
        "answer.setup": ["#reference.cost_with_startup"],
        "rank": ["#reference.cost_with_startup", f"{LISTING}#llama-3.3-70b/qlora@*.cost_with_startup"],
        "neighbours[0].label": ["#reference.cost_with_startup", f"{LISTING}#llama-3.3-70b/qlora@*.cost_with_startup"],
        "cheapest.label": ["#reference.cost_with_startup", f"{LISTING}#llama-3.3-70b/qlora@*.cost_with_startup"],
        "is_cheapest": ["#reference.cost_with_startup", f"{LISTING}#llama-3.3-70b/qlora@*.cost_with_startup"],
        "offer.provider": [],
    },
    LISTING: {
        "llama-3.3-70b.cheapest_per_token": ["#llama-3.3-70b/*.usd_per_million", "#llama-3.3-70b/*.cost_with_startup"],
        "llama-3.3-70b.fitting": [],
    },
}


@pytest.mark.parametrize("slug", sorted(CHOICES))
def test_each_kinds_choices_rest_on_the_figures_that_decide_them(sites, slug):
    entry = entries(sites["before"])[slug]
    stated = {c["id"] for c in entry["claims"]}
    for cid, figures in CHOICES[slug].items():
        assert cid in stated, cid
        assert list(rests_of(cid, rests_map(entry))) == figures, cid


def test_a_changed_claim_is_told_with_how_many_of_its_figures_changed(sites):
    """Nodus's H100 at $2.40 makes QLoRA on it the cheapest per token in the FLOP article, in place of LoRA on the
    B200. Only that offer's price moved, so of the run figures the choice rests on exactly one cost per million
    tokens and one run cost changed; on the family's QLoRA pages the rank rests on the listing's run costs, of
    which that setup's is the one that changed, and on the page's own, which did not (on a page of another setup)."""
    old, new = (str(sites[k] / "figures.json") for k in ("before", "after"))
    text = run_cli("changes", "--old", old, "--new", new)
    assert text.exit_code == 3, text.output
    was, now = "LoRA, 1 × B200", "QLoRA, 1 × H100 SXM"
    assert (
        f"  claim best.label: {was} -> {now}; rests on #run.*.usd_per_million (1 changed), "
        "#run.*.cost_with_startup (1 changed)\n"
    ) in text.output
    rows = json.loads(run_cli("changes", "--old", old, "--new", new, "--format", "json").output)["changes"]
    (best,) = [r for r in rows if r["page"] == B and r["id"] == "best.label"]
    assert best["rests_on"] == [
        {"figures": "#run.*.usd_per_million", "changed": 1},
        {"figures": "#run.*.cost_with_startup", "changed": 1},
    ]
    # figures a page shows no more, or shows first, count as changed: the larger runs are of the cheapest adapter
    # setup and the cheapest full one, so at 100 M and 500 M tokens LoRA's figures went and QLoRA's came
    (larger,) = [r for r in rows if r["page"] == B and r["id"] == "larger[0].qlora@nodus:h100x1"]
    assert larger["rests_on"] == [{"figures": "#larger.*", "changed": 2 * 2}]
    (hour,) = [r for r in rows if r["page"] == B and r["id"] == "best_is_cheapest_hour"] or [None]
    assert hour is None  # (the A100 still has the cheapest hour, and it is still not the best)
    ranks = [r for r in rows if r["id"] == "neighbours[0].label" and r["page"].startswith("llama-3-3-70b-qlora-on-")]
    assert ranks, "no QLoRA page's cheapest neighbour changed"
    for r in ranks:
        own_cost = 1 if r["page"] == "llama-3-3-70b-qlora-on-nodus-h100x1" else 0
        assert r["rests_on"] == [
            {"figures": "#reference.cost_with_startup", "changed": own_cost},
            {"figures": f"{LISTING}#llama-3.3-70b/qlora@*.cost_with_startup", "changed": 1},
        ], r
    # Markdown: a letter per set of figures in the claims table, the figures once below it
    md = run_cli("changes", "--old", old, "--new", new, "--format", "markdown").output
    assert f"| `best.label` | {was} | {now} | a |\n" in md
    assert "\n- a: `#run.*.usd_per_million` (1 changed), `#run.*.cost_with_startup` (1 changed)\n" in md


def test_pages_share_a_section_when_as_many_of_their_figures_changed_and_the_section_says_each_names_its_own():
    """A family's pages of two models list their neighbours from their own model's run costs: the same claim moved
    on both with one of its figures changed, so they share a section, whose note names the first page's figures
    and says that the others name their own. A page where none of them changed is a section of its own."""
    from generator.changes import ArticleChanges, Change, Claim, render_markdown

    def page(slug, model, changed):
        rests = (("#reference.cost", 0), (f"listing#{model}/qlora@*.cost", changed))
        return ArticleChanges(slug, slug.upper(), changed=[Change("x", "USD", 1.0, 1.1)],
                              claims=[Claim("rank", "3", "2", rests)])  # fmt: skip

    md = render_markdown([page("a", "m1", 1), page("b", "m2", 1), page("c", "m3", 0)])
    assert "### The same changes on 2 pages\n\nPages: `a`, `b`.\n" in md
    assert "| `rank` | 3 | 2 | a |\n" in md
    assert (
        "- a: `#reference.cost`, `listing#m1/qlora@*.cost` (1 changed); these are the first page's: each of the "
        "others names its own, with as many changed\n"
    ) in md
    assert "### C (`c`)\n" in md and "- a: `#reference.cost`, `listing#m3/qlora@*.cost`\n" in md
    # pages whose claims rest on the very same figures need no such note
    same = render_markdown([page("a", "m1", 1), page("b", "m1", 1)])
    assert "- a: `#reference.cost`, `listing#m1/qlora@*.cost` (1 changed)\n" in same
