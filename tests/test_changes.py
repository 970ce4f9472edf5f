"""`costpress changes`: the figures a price edit moved, old -> new."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from conftest import TEMPLATES, make_content, replace, run_cli

P70 = 70_553_706_496


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repo holding content/, templates/ and a committed site/."""
    make_content(tmp_path)
    shutil.copytree(TEMPLATES, tmp_path / "templates")
    monkeypatch.chdir(tmp_path)
    assert run_cli("build").exit_code == 0
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "site")
    return tmp_path


def test_nothing_changed(repo):
    result = run_cli("changes")
    assert result.exit_code == 0
    assert result.output == "No figure or claim changed.\n"


def test_price_edit_lists_exactly_the_changed_figures(repo):
    path = repo / "content/prices/nodus/2026-11-05.yaml"
    path.write_text(replace("usd_per_hour: 5.50}", "usd_per_hour: 6.05}")(path.read_text()))
    result = run_cli("changes")
    assert result.exit_code == 3, result.output
    out = result.output
    hours = 6 * P70 * 20e6 / (2250e12 * 0.3 * 3600)
    old, new = hours * 5.50, hours * 6.05
    assert (f"{old:.2f}", f"{new:.2f}") == ("19.16", "21.08")
    assert f"run.lora@nodus:b200x1.training_cost: ${old:.2f} -> ${new:.2f} (+10.0%)" in out
    assert "input.Hourly price, 1 × B200: $5.50 -> $6.05 (+10.0%)" in out
    assert "dgx-spark-70b-qlora-cost" not in out  # article A does not use Nodus prices
    # every line is a real change: compare with the two figure files independently
    assert run_cli("build").exit_code == 0
    committed = subprocess.run(["git", "show", "HEAD:site/figures.json"], cwd=repo, capture_output=True, check=True)
    before = {f["id"]: f["value"] for a in json.loads(committed.stdout)["articles"].values() for f in a["figures"]}
    after_doc = json.loads((repo / "site/figures.json").read_text())["articles"]
    after = {f["id"]: f["value"] for a in after_doc.values() for f in a["figures"]}
    truly = {k for k in before.keys() & after.keys() if before[k] != after[k]}
    figure_lines = [line for line in out.splitlines() if line.startswith("  ") and not line.startswith("  claim ")]
    listed = {line.split(": ")[0].strip() for line in figure_lines if " -> " in line}
    listed.discard("prices checked")
    assert listed == truly
    # and every claim line is a real change of what a page states
    old_claims = {(slug, c["id"]): c["subject"] for slug, a in json.loads(committed.stdout)["articles"].items()
                  for c in a.get("claims", [])}  # fmt: skip
    new_claims = {(slug, c["id"]): c["subject"] for slug, a in after_doc.items() for c in a["claims"]}
    truly_claims = {k for k in old_claims.keys() | new_claims.keys() if old_claims.get(k) != new_claims.get(k)}
    claim_lines = sum(line.startswith("  claim ") for line in out.splitlines())
    assert claim_lines == len(truly_claims)
    md = run_cli("changes", "--format", "markdown", "--old", str(repo / "no-such.json"))
    assert md.exit_code == 1 and "cannot read" in md.output


def test_a_figure_that_now_compares_other_setups_is_told_as_such_not_as_a_percentage(repo):
    """At $2.40 an hour Nodus's H100 makes QLoRA on it the cheapest setup per token in place of LoRA on the B200.
    The article's "the cheapest setup has N times the peak of the cheapest hour" then compares another GPU: the
    report said `compare.peak_ratio: 7.212× -> 3.170× (-56.0%)`, a move of nothing. Each figure of the cheapest
    setup names it among its inputs, and a figure whose inputs changed is told with what it is now of."""
    path = repo / "content/prices/nodus/2026-11-05.yaml"
    path.write_text(replace("{gpu: h100, count: 1, usd_per_hour: 2.60}", "{gpu: h100, count: 1, usd_per_hour: 2.40}")(
        path.read_text()))  # fmt: skip
    b200, h100, a100 = 2250, 989, 312  # dense BF16 peaks, TFLOPS (hardware.yaml); the cheapest hour is an A100's
    assert (f"{b200 / a100:.3f}", f"{h100 / a100:.3f}") == ("7.212", "3.170")
    was, now, hour = "lora@nodus:b200x1", "qlora@nodus:h100x1", "qlora@nodus:a100-80gbx1"
    text = run_cli("changes")
    assert text.exit_code == 3, text.output
    assert f"  compare.peak_ratio: 7.212× -> 3.170× (now of {now} and {hour}, was of {was} and {hour})\n" in text.output
    assert f"  trials.3: $61.61 -> $58.87 (now of {now}, was of {was})\n" in text.output
    # a figure of one setup throughout keeps its percentage
    assert "  run.qlora@nodus:h100x1.cost_with_startup: $21.26 -> $19.62 (-7.7%)\n" in text.output
    md = run_cli("changes", "--format", "markdown")
    assert f"| `compare.peak_ratio` | 7.212× | 3.170× | now of {now} and {hour}, was of {was} and {hour} |" in md.output
    rows = json.loads(run_cli("changes", "--format", "json").output)["changes"]
    (peak,) = [r for r in rows if r["id"] == "compare.peak_ratio"]
    assert (peak["was_of"], peak["now_of"]) == ([was, hour], [now, hour])
    assert pytest.approx(peak["new"]) == h100 / a100
    (run,) = [r for r in rows if r["id"] == "run.qlora@nodus:h100x1.cost_with_startup"]
    assert "was_of" not in run and "now_of" not in run


def test_prices_checked_anew_at_the_same_figures_are_named_in_the_summary(repo):
    """A refresh whose catalogs did not move changes the pages' price dates: the summary said "1660 pages,
    0 figures, 0 claims changed." and not what did change."""
    old = repo / "content/prices/nodus/2026-11-05.yaml"
    text = old.read_text()
    assert text.count("checked: 2026-11-05") == 1
    (old.parent / "2026-11-20.yaml").write_text(text.replace("checked: 2026-11-05", "checked: 2026-11-20"))
    result = run_cli("changes", "--format", "json")
    assert result.exit_code == 3, result.output
    report = json.loads(result.output)
    dated = {row["page"] for row in report["changes"] if row["kind"] == "prices_checked"}
    assert len(dated) == 3  # the articles that use Nodus's prices
    # (the price-history chart of one of them gains the new snapshot's prices: figures added)
    assert report["pages"] == 3 and report["summary"].startswith("3 pages, ")
    assert report["summary"].endswith(" changed; prices checked anew on 3 pages."), report["summary"]
    # the one claim that moved: the new snapshot gives one article a price history to chart; every date in
    # a sentence ("prices checked 2026-11-20") is a price date, told as such, not a claim changed
    claims = [(r["page"], r["id"], r["old"], r["new"]) for r in report["changes"] if r["kind"] == "claim"]
    assert claims == [("fine-tune-70b-cost-by-setup", "has_price_history", "no", "yes")]


def test_the_report_opens_with_the_fresh_builds_warnings(repo):
    """The refresh's pull request should show a reviewer what `build --strict` will refuse: the warnings came only
    in the job's log (two scripts pasted them over the report by hand). Built in memory, the report has them; read
    from a file (--new), it has none to give."""
    acme = repo / "content/prices/acme"
    acme.mkdir()
    nodus = (repo / "content/prices/nodus/2026-11-05.yaml").read_text()
    (acme / "2026-11-05.yaml").write_text(nodus.replace("provider: nodus", "provider: acme").replace("Nodus", "Acme"))
    warning = "content/prices/acme: no article uses provider 'acme'"
    md = run_cli("changes", "--format", "markdown")
    assert md.exit_code == 0, md.output
    assert md.output == (
        "**The build warned** (fix before merging; `costpress build --strict` fails on these):\n\n"
        f"    warning: {warning}\n\nNo figure or claim changed.\n\n"
    )
    assert json.loads(run_cli("changes", "--format", "json").output)["warnings"] == [warning]
    assert run_cli("build").exit_code == 0
    from_file = json.loads(run_cli("changes", "--format", "json", "--new", "site/figures.json").output)
    assert from_file["warnings"] == []


def test_markdown_body(repo):
    path = repo / "content/prices/spark-rental/2026-10-28.yaml"
    path.write_text(replace("usd_per_hour: 0.75", "usd_per_hour: 0.80")(path.read_text()))
    result = run_cli("changes", "--format", "markdown")
    assert result.exit_code == 3
    assert "### What a 70B QLoRA fine-tune costs on a rented DGX Spark (`dgx-spark-70b-qlora-cost`)" in result.output
    cost = 100e6 / 759.79 / 3600
    assert f"| `snippet.cost` | ${cost * 0.75:.2f} | ${cost * 0.80:.2f} | +6.7% |" in result.output


def test_lint_lists_sources_without_a_public_address():
    from conftest import CONTENT

    result = run_cli("lint", "--content", str(CONTENT))
    lines = [line for line in result.output.splitlines() if "no public address" in line]
    assert any(line.endswith(": note: no public address for price snapshot: Nodus pricing page") for line in lines)
    assert not any("model llama-3.3-70b" in line for line in lines)  # it has a url


def test_family_pages_are_compared_from_the_parts_at_the_ref(tmp_path, monkeypatch):
    """The committed figures.json names its parts; `changes` reads them at the ref too, and a missing part
    is a one-line error, not a silent gap."""
    make_content(tmp_path, families=True)
    monkeypatch.chdir(tmp_path)
    assert run_cli("build").exit_code == 0
    assert (tmp_path / "site/figures/fine-tune-70b-every-setup-1.json").is_file()
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "site")
    snap = tmp_path / "content/prices/nodus/2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 5.50}", "usd_per_hour: 5.60}"))
    result = run_cli("changes", "--format", "json")
    assert result.exit_code == 3, result.output
    rows = [r for r in json.loads(result.output)["changes"] if r["page"] == "llama-3-3-70b-lora-on-nodus-b200x1"]
    # a family page's figure changed (old and new, not added): the old side came from the part at HEAD
    assert any(r["kind"] == "figure" and r["old"] is not None and r["new"] is not None for r in rows), rows
    (tmp_path / "site/figures/fine-tune-70b-every-setup-1.json").unlink()
    missing = run_cli("changes", "--old", str(tmp_path / "site/figures.json"))
    assert missing.exit_code == 1
    assert "part figures/fine-tune-70b-every-setup-1.json is missing" in missing.output


@pytest.mark.parametrize(
    "text, words",
    [
        ("{bad", "not a costpress figures.json (not JSON:"),
        ('{"version": 99}', "expected an object with an 'articles' mapping and a 'parts' list"),
        ("[]", "expected an object with an 'articles' mapping and a 'parts' list"),
    ],
)
def test_a_file_that_is_not_a_figures_json_is_one_line(tmp_path, text, words):
    """A list said "list indices must be integers or slices, not str", an object without articles "('articles')"."""
    bad = tmp_path / "figures.json"
    bad.write_text(text)
    result = run_cli("changes", "--old", str(bad), "--new", str(bad))
    assert result.exit_code == 1 and f"{bad}: not a costpress figures.json" in result.output, result.output
    assert words in result.output


@pytest.mark.parametrize(
    "entry, words",
    [
        ("1", "articles['a']: expected an object with title, figures and claims, got int"),
        ('{"figures": 5}', "articles['a'].figures: expected a list"),
        ('{"figures": [1]}', "articles['a'].figures[0]: expected an object with a text id and unit and a finite"),
        ('{"figures": [{"id": "x", "unit": "USD", "value": "7"}]}', "articles['a'].figures[0]: expected an object"),
        ('{"claims": [{"id": "c"}]}', "articles['a'].claims[0]: expected an object with a text id and subject"),
        ('{"prices_checked": "2026-11-29"}', "articles['a'].prices_checked: expected a list of dates"),
        ('{"aliases": "old-name"}', "articles['a'].aliases: expected a list of addresses"),
        ('{"aliases": [3]}', "articles['a'].aliases: expected a list of addresses"),
        ('{"rests_on": "x"}', "articles['a'].rests_on: expected a list"),
        ('{"rests_on": [{"claims": ["rank"]}]}', "articles['a'].rests_on[0]: expected an object with lists of texts"),
        ('{"rests_on": [{"claims": "rank", "figures": []}]}', "articles['a'].rests_on[0]: expected an object with"),
        ('{"rests_on": [{"claims": ["rank"], "figures": [3]}]}', "articles['a'].rests_on[0]: expected an object with"),
    ],
)
def test_an_article_entry_of_another_shape_is_one_line(tmp_path, entry, words):
    """Each of these ended in a traceback (no .get on an int, a figure without its unit) while comparing."""
    bad = tmp_path / "figures.json"
    bad.write_text('{"articles": {"a": ' + entry + '}, "parts": []}')
    result = run_cli("changes", "--old", str(bad), "--new", str(bad))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"{bad}: {words}" in result.output, result.output


def test_a_figures_json_nested_thousands_deep_is_one_line(tmp_path):
    bad = tmp_path / "figures.json"
    bad.write_text("[" * 100_000 + "]" * 100_000)
    result = run_cli("changes", "--old", str(bad), "--new", str(bad))
    assert result.exit_code == 1 and "not a costpress figures.json (nested too deeply to read)" in result.output


def test_pages_only_on_one_side_are_counted_and_listed_in_a_line_each():
    """A page the new figures lack (its offer dropped, the article renamed) and a page they add are each one
    line, not a table of every figure; the summary counts them, and says how many gone addresses still answer."""
    from generator import changes as ch

    def page(title, *values):
        return {"title": title, "figures": [{"id": f"f{i}", "unit": "USD", "value": v} for i, v in enumerate(values)],
                "claims": [{"id": "rank", "subject": "1"}]}  # fmt: skip

    old = {"kept": page("Kept", 1.0), "dropped": page("Dropped", 2.0, 3.0), "renamed": page("Renamed", 4.0)}
    new = {"kept": page("Kept", 1.5), "added": page("Added", 5.0, 6.0, 7.0)}
    found = ch.compare(old, new, answers=lambda slug: slug == "dropped")
    assert [(a.slug, a.status, a.answers) for a in found] == [
        ("added", "new", False), ("dropped", "gone", True), ("kept", "", False), ("renamed", "gone", False)
    ]  # fmt: skip
    # 4 pages; figures 3 added + 2 removed + 1 changed + 1 removed; one claim on each page only on one side
    line = "4 pages, 7 figures, 3 claims changed; 2 pages no longer priced (1 keeps its address); 1 page newly priced."
    assert ch.summary(found) == line
    text = ch.render_text(found).splitlines()
    assert text == [
        line,
        "added: newly priced, 3 figures, 1 claim",
        "dropped: no longer priced, 2 figures and 1 claim removed; its address now shows a notice or a redirect",
        "kept: 1 changed, 0 added, 0 removed, 0 claims",
        "  f0: $1.00 -> $1.50 (+50.0%)",
        "renamed: no longer priced, 1 figure and 1 claim removed; its address is gone",
    ]
    md = ch.render_markdown(found)
    assert "### Kept (`kept`)" in md and "### Dropped" not in md
    assert "### No longer priced (2)\n\n- Dropped (`dropped`): no longer priced" in md
    assert "### Newly priced (1)\n\n- Added (`added`): newly priced, 3 figures, 1 claim\n" in md
    doc = json.loads(ch.render_json(found))
    assert doc["gone"] == [{"page": "dropped", "address_kept": True}, {"page": "renamed", "address_kept": False}]
    assert doc["new"] == ["added"] and doc["figures"] == 7
    assert sum(row["kind"] == "figure" for row in doc["changes"]) == 7  # the JSON keeps every figure's row


def test_a_markdown_report_cut_to_a_length_keeps_within_it_and_says_how_many_pages_it_left_off():
    """A pull request's body holds 65,536 characters; a refresh that moves a thousand pages writes far more.
    At every limit the report fits, starts with the whole summary, shows whole pages only (each list item
    under its heading), and its last line counts exactly the pages it left off."""
    from generator import changes as ch

    def page(n, values):
        return {"title": f"Page {n}", "figures": [{"id": f"f{i}", "unit": "USD", "value": v} for i, v in
                                                  enumerate(values)], "claims": []}  # fmt: skip

    old = {f"gone-{n:02}": page(n, [1.0]) for n in range(40)}
    old |= {f"moved-{n:02}": page(n, [1.0] * (1 + n % 7) if n < 12 else [1.0]) for n in range(30)}
    new = {f"moved-{n:02}": page(n, [2.0 + n] * (1 + n % 7) if n < 12 else [2.0]) for n in range(30)}  # 18 alike
    new |= {f"new-{n}": page(n, [3.0]) for n in range(5)}
    old |= {f"ren-old-{n:02}": page(100 + n, [9.0]) for n in range(20)}  # renamed, nothing else changed
    new |= {f"ren-new-{n:02}": page(100 + n, [9.0]) for n in range(20)}
    found = ch.compare(old, new)
    whole = ch.render_markdown(found)
    assert ch.render_markdown(found, len(whole)) == whole  # it fits: nothing left off, no last line
    counted = 0  # cut reports whose lists end in a count of the pages they do not name
    for limit in range(1000, len(whole), 97):
        cut = ch.render_markdown(found, limit)
        counted += bool(re.search(r"^- and \d+ more$", cut, re.M))
        assert len(cut) <= limit, limit
        assert cut.startswith(ch.summary(found) + "\n\n")
        body, last = cut.rstrip("\n").rsplit("\n", 1)
        note = re.fullmatch(r"_(?:(\d+) more pages? left off|Shared sections name their first 10 pages): "
                            r"this report stops at (\d+) characters .*_", last)  # fmt: skip
        left = int(note[1] or 0)
        items = re.findall(r"^- Page \d+ \(`([a-z0-9-]+)`\)", body, re.M)
        sections = re.findall(r"^### Page \d+ \(`([a-z0-9-]+)`\)$", body, re.M)
        shared = [int(n) for n in re.findall(r"^### The same changes on (\d+) pages$", body, re.M)]
        assert left + len(items) + len(sections) + sum(shared) == 95, limit
        assert len(re.findall(r"^Pages: ", body, re.M)) == len(shared), limit
        for heading, prefix in (("No longer priced (40)", "gone-"), ("Moved (20)", "ren-old-"),
                                ("Newly priced (5)", "new-")):  # fmt: skip
            mine = [slug for slug in items if slug.startswith(prefix)]
            assert mine == sorted(mine) and (not mine or f"### {heading}\n\n- Page" in body), limit
            if mine:  # a list is shown from its first item, in order, with none skipped
                assert mine == [f"{prefix}{n}" if prefix == "new-" else f"{prefix}{n:02}"
                                for n in range(len(mine))], limit  # fmt: skip
        lists = r"^### (No longer priced|Moved|Newly priced) \((\d+)\)\n\n(?:- Page .*\n)*(?:- and (\d+) more\n)?"
        for heading, count, more in re.findall(lists, body, re.M):
            prefix = {"No longer priced": "gone-", "Moved": "ren-old-", "Newly priced": "new-"}[heading]
            mine = [slug for slug in items if slug.startswith(prefix)]
            assert len(mine) + int(more or 0) == int(count), limit  # the rest of a list counted on its last line
        assert "\n\n\n" not in cut and not re.search(r"^- .*\n###", cut, re.M), limit  # a list ends in a blank line
    assert counted > 5


def test_a_cut_report_keeps_room_for_what_changed_before_naming_every_page_of_a_long_list():
    """A family renamed as prices changed: a thousand lines of "moved" would fill the pull request body.
    A cut report names each list's first pages, then shows every section that fits, and only then names more
    of the list, counting the rest."""
    from generator import changes as ch

    def page(title, value):
        return {"title": title, "figures": [{"id": "cost", "unit": "USD", "value": value}], "claims": []}

    old = {f"ren-old-{n:03}": page(f"R{n}", 9.0) for n in range(300)}
    new = {f"ren-new-{n:03}": page(f"R{n}", 9.0) for n in range(300)}
    old |= {f"p-{n}": page(f"P{n}", 1.0) for n in range(5)}
    new |= {f"p-{n}": page(f"P{n}", 2.0 + n) for n in range(5)}  # five pages, each with changes of its own
    cut = ch.render_markdown(ch.compare(old, new), 6000)
    assert len(cut) <= 6000 and all(f"### P{n} (`p-{n}`)\n" in cut for n in range(5))
    named = re.findall(r"^- R\d+ \(`(ren-old-\d+)`\): moved to `ren-new-\d+`", cut, re.M)
    assert named == [f"ren-old-{n:03}" for n in range(len(named))] and 10 < len(named) < 300
    assert f"\n- and {300 - len(named)} more\n\n###" in cut
    assert cut.endswith(f"_{300 - len(named)} more pages left off: this report stops at 6000 characters "
                        "(`--max-chars`); without it every page is named._\n")  # fmt: skip


def test_a_cut_report_names_ten_pages_of_each_list_before_any_section():
    """`--max-chars`' promise: each list names its first ten pages before the sections take the room left
    (then more pages, while there is room): at no length does a section come in with fewer named."""
    from generator import changes as ch

    def page(title, value):
        return {"title": title, "figures": [{"id": "cost", "unit": "USD", "value": value}], "claims": []}

    old = {f"ren-old-{n:02}": page(f"R{n}", 9.0) for n in range(30)} | {"p": page("P", 1.0)}
    new = {f"ren-new-{n:02}": page(f"R{n}", 9.0) for n in range(30)} | {"p": page("P", 2.0)}
    found = ch.compare(old, new)
    whole = ch.render_markdown(found)
    seen = set()
    for limit in range(1000, len(whole), 5):  # (a page's line in the list is about sixty characters)
        cut = ch.render_markdown(found, limit)
        named = len(re.findall(r"^- R\d+ \(`ren-old-\d+`\)", cut, re.M))
        if "### P (`p`)" in cut:
            assert named >= 10, (limit, named)
            seen.add(named)
    assert min(seen) == 10 and max(seen) > 20  # the section came in with ten named, and stayed as more were


def test_pages_with_the_very_same_changes_share_one_markdown_section():
    """A dropped offer moves "of 65" to "of 64" on a thousand pages: Markdown shows those changes once, with
    the pages' slugs (all of them; a cut report names the first ten and counts the rest)."""
    from generator import changes as ch

    def page(title, value, of):
        return {"title": title, "figures": [{"id": "cost", "unit": "USD", "value": value}],
                "claims": [{"id": "of", "subject": of}]}  # fmt: skip

    old = {s: page(s.upper(), 1.0, "3") for s in ("a", "b", "c")}
    new = {"a": page("A", 1.0, "2"), "b": page("B", 2.0, "2"), "c": page("C", 1.0, "2")}
    assert ch.render_markdown(ch.compare(old, new)).splitlines() == [
        "3 pages, 1 figure, 3 claims changed.",
        "",
        "### The same changes on 2 pages",
        "",
        "Pages: `a`, `c`.",
        "",
        "| claim | was | now |",
        "|---|---|---|",
        "| `of` | 3 | 2 |",
        "",
        "### B (`b`)",
        "",
        "| figure | old | new | change |",
        "|---|---:|---:|---:|",
        "| `cost` | $1.00 | $2.00 | +100.0% |",
        "",
        "| claim | was | now |",
        "|---|---|---|",
        "| `of` | 3 | 2 |",
        "",
    ]
    # 90 pages alike: the whole report names them all; cut short of that, the first ten, and says so
    old = {f"a-page-{n:02}": page(f"P{n}", 1.0, "40") for n in range(90)}
    new = {f"a-page-{n:02}": page(f"P{n}", 1.0, "39") for n in range(90)}
    found = ch.compare(old, new)
    whole = ch.render_markdown(found)
    assert "Pages: " + ", ".join(f"`a-page-{n:02}`" for n in range(90)) + ".\n" in whole
    cut = ch.render_markdown(found, len(whole) - 1)
    assert "### The same changes on 90 pages\n\nPages: " + ", ".join(f"`a-page-{n:02}`" for n in range(10)) + (
        ", and 80 more.\n") in cut  # fmt: skip
    assert cut.endswith("_Shared sections name their first 10 pages: this report stops at "
                        f"{len(whole) - 1} characters (`--max-chars`); without it every page is named._\n")  # fmt: skip


def test_max_chars_is_for_markdown_only(tmp_path):
    figures = tmp_path / "figures.json"
    figures.write_text('{"articles": {}, "parts": []}')
    args = ("changes", "--old", str(figures), "--new", str(figures), "--max-chars", "2000")
    assert run_cli(*args, "--format", "markdown").exit_code == 0
    result = run_cli(*args, "--format", "json")
    assert result.exit_code == 1
    assert result.output == "error: --max-chars applies to --format markdown, not --format json\n"


def test_a_renamed_article_moved_and_without_its_alias_as_a_price_changed_is_gone_and_new(repo):
    """Against a fresh build: an article under a new slug with nothing else changed moved (its alias page
    answers at the old address, or, without the alias, nothing does). Renamed with its alias while a price it
    shows changed, it moved and its changes are told; without the alias nothing ties the two, so it is a page
    gone and a page new. Removed outright, it leaves an address that is gone."""
    from conftest import A

    path = repo / "content" / "articles" / f"{A}.md"
    text = path.read_text()
    path.write_text(replace(f"\nslug: {A}\n", f"\nslug: spark-qlora\naliases: [{A}]\n")(text))
    result = run_cli("changes")
    assert result.exit_code == 3, result.output
    assert result.output.splitlines() == [
        "1 page, 0 figures, 0 claims changed; 1 page moved (1 keeps its old address).",
        f"{A}: moved to spark-qlora, nothing else changed; its old address still leads to a page",
    ]
    doc = json.loads(run_cli("changes", "--format", "json").output)
    assert doc["moved"] == [{"page": A, "to": "spark-qlora", "address_kept": True}] and doc["changes"] == []
    assert "### Moved (1)\n\n- " in run_cli("changes", "--format", "markdown").output
    path.write_text(replace(f"\nslug: {A}\n", "\nslug: spark-qlora\n")(text))  # no alias
    lines = run_cli("changes").output.splitlines()
    assert lines[0].endswith("; 1 page moved (0 keep their old address)."), lines[0]
    assert lines[1] == f"{A}: moved to spark-qlora, nothing else changed; its old address is gone"

    path.write_text(replace(f"\nslug: {A}\n", f"\nslug: spark-qlora\naliases: [{A}]\n")(text))
    price = repo / "content/prices/spark-rental/2026-10-28.yaml"
    price.write_text(replace("usd_per_hour: 0.75", "usd_per_hour: 0.80")(price.read_text()))
    result = run_cli("changes")  # renamed with its alias as a price changed: moved, with the price's changes
    assert result.exit_code == 3, result.output
    lines = result.output.splitlines()
    assert lines[0].endswith(" claims changed; 1 page moved (1 keeps its old address)."), lines[0]
    assert lines[1].startswith(f"{A}: moved to spark-qlora (old address kept), "), lines[1]
    assert "  input.Hourly price, 1 × DGX Spark: $0.75 -> $0.80 (+6.7%)" in lines  # 0.80 / 0.75 = 1.0667
    figures = [line for line in lines[2:] if not line.startswith("  claim ")]
    claims = len(lines) - 2 - len(figures)
    assert len(figures) > 10 and all(line.endswith(" (+6.7%)") for line in figures)  # every cost is hours × price
    doc = json.loads(run_cli("changes", "--format", "json").output)
    assert doc["moved"] == [{"page": A, "to": "spark-qlora", "address_kept": True}] and doc["new"] == doc["gone"] == []
    assert doc["changes"] and {row["page"] for row in doc["changes"]} == {"spark-qlora"}  # its new address
    markdown = run_cli("changes", "--format", "markdown").output
    assert f" (`{A}`): moved to `spark-qlora`, {len(figures)} figures and {claims} claims changed; its old " in markdown
    assert f"(`spark-qlora`, moved from `{A}`)\n\n| figure | old | new | change |\n" in markdown

    path.write_text(replace(f"\nslug: {A}\n", "\nslug: spark-qlora\n")(text))  # no alias: nothing ties them
    result = run_cli("changes")
    assert result.exit_code == 3, result.output
    lines = result.output.splitlines()
    assert lines[0].endswith("; 1 page no longer priced (0 keep their address); 1 page newly priced."), lines[0]
    gone = next(line for line in lines if line.startswith(f"{A}: "))
    assert gone.startswith(f"{A}: no longer priced, ") and gone.endswith("its address is gone")
    assert any(line.startswith("spark-qlora: newly priced, ") for line in lines)
    path.unlink()
    lines = run_cli("changes").output.splitlines()
    assert lines[0].endswith("; 1 page no longer priced (0 keep their address)."), lines[0]
    assert any(line.startswith(f"{A}: no longer priced, ") and line.endswith("its address is gone") for line in lines)


def test_a_page_moved_only_when_its_entry_matches_exactly_one_on_the_other_side():
    """A family renamed by its pattern moves all its pages at once; two pages alike on both sides (the same
    title, figures and claims) cannot be told apart, so they stay gone and new rather than be paired by guess."""
    from generator import changes as ch

    def page(title, value):
        return {"title": title, "figures": [{"id": "cost", "unit": "USD", "value": value}], "claims": []}

    old = {"a-old": page("A", 1.0), "b-old": page("B", 2.0), "twin-1": page("T", 3.0), "twin-2": page("T", 3.0)}
    new = {"a-new": page("A", 1.0), "b-new": page("B", 2.5), "twin-3": page("T", 3.0), "twin-4": page("T", 3.0)}
    found = ch.compare(old, new, answers=lambda slug: slug == "a-old")
    assert [(a.slug, a.status, a.moved_to) for a in found] == [
        ("a-old", "moved", "a-new"), ("b-new", "new", ""), ("b-old", "gone", ""), ("twin-1", "gone", ""),
        ("twin-2", "gone", ""), ("twin-3", "new", ""), ("twin-4", "new", ""),
    ]  # fmt: skip
    assert ch.summary(found).endswith(
        "; 3 pages no longer priced (0 keep their address); 1 page moved (1 keeps its old address); "
        "3 pages newly priced."
    )
    assert "### Moved (1)\n\n- A (`a-old`): moved to `a-new`, nothing else changed; its old address still leads " \
        "to a page\n" in ch.render_markdown(found)  # fmt: skip


def test_a_page_that_names_a_gone_page_among_its_aliases_moved_from_it_whatever_else_changed():
    """figures.json names each page's aliases: a page only the new figures have that names a page only the
    old ones have moved from it, and its changes are told against that page's entry (a family renamed as a
    price changed). An alias naming a page still on both sides, or a page that was there before, ties nothing."""
    from generator import changes as ch

    def page(title, value, of):
        return {"title": title, "figures": [{"id": "cost", "unit": "USD", "value": value}],
                "claims": [{"id": "of", "subject": of}]}  # fmt: skip

    old = {"a-old": page("A", 1.0, "3"), "b-old": page("B", 2.0, "3"), "c": page("C", 1.0, "3"),
           "d-old": page("D", 4.0, "3")}  # fmt: skip
    new = {"a-new": {**page("A", 1.5, "2"), "aliases": ["a-old"]},  # moved, and changed
           "b-new": page("B", 2.0, "3"),  # moved with nothing else changed: the only entry alike
           "c": {**page("C", 1.0, "3"), "aliases": ["d-old"]},  # was there before: d-old is gone
           "e-new": {**page("E", 5.0, "1"), "aliases": ["c"]}}  # c is still there: e-new is new  # fmt: skip
    found = ch.compare(old, new, answers=lambda slug: slug == "a-old")
    summary = ("4 pages, 3 figures, 3 claims changed; 1 page no longer priced (0 keep their address); 2 pages moved "
               "(1 keeps its old address); 1 page newly priced.")  # fmt: skip
    assert ch.render_text(found).splitlines() == [
        summary,
        "a-old: moved to a-new (old address kept), 1 changed, 0 added, 0 removed, 1 claim",
        "  cost: $1.00 -> $1.50 (+50.0%)",  # 1.5 / 1.0
        "  claim of: 3 -> 2",
        "b-old: moved to b-new, nothing else changed; its old address is gone",
        "d-old: no longer priced, 1 figure and 1 claim removed; its address is gone",
        "e-new: newly priced, 1 figure, 1 claim",
    ]
    whole = ch.render_markdown(found)
    moved = ("### Moved (2)\n\n- A (`a-old`): moved to `a-new`, 1 figure and 1 claim changed; its old address "
             "still leads to a page\n- B (`b-old`): moved to `b-new`, nothing else changed; its old address is "
             "gone\n\n")  # fmt: skip
    assert moved in whole
    assert whole.endswith("### A (`a-new`, moved from `a-old`)\n\n| figure | old | new | change |\n"
                          "|---|---:|---:|---:|\n| `cost` | $1.00 | $1.50 | +50.0% |\n\n| claim | was | now |\n"
                          "|---|---|---|\n"
                          "| `of` | 3 | 2 |\n\n")  # fmt: skip
    # cut one short, the moved page's section is left off: named in the list, it still counts as left off
    cut = ch.render_markdown(found, len(whole) - 1)
    assert moved in cut and "### A (" not in cut and cut.endswith(
        f"_1 more page left off: this report stops at {len(whole) - 1} characters (`--max-chars`); without it "
        "every page is named._\n")  # fmt: skip
    doc = json.loads(ch.render_json(found))
    assert doc["moved"] == [{"page": "a-old", "to": "a-new", "address_kept": True},
                            {"page": "b-old", "to": "b-new", "address_kept": False}]  # fmt: skip
    assert [(r["page"], r["id"], r["old"], r["new"]) for r in doc["changes"] if r["page"].startswith("a-")] == [
        ("a-new", "cost", 1.0, 1.5), ("a-new", "of", "3", "2")]  # fmt: skip


def test_two_new_pages_naming_one_gone_page_as_an_alias_the_first_by_slug_moved_from_it():
    """Two new pages may both name one gone page among their aliases (two articles split from one); the
    first by slug moved from it and the other is new, so the report does not depend on the order the file
    lists them in."""
    from generator import changes as ch

    def page(title, value):
        return {"title": title, "figures": [{"id": "cost", "unit": "USD", "value": value}], "claims": []}

    old = {"both": page("Both", 1.0)}
    for order in (("a-part", "b-part"), ("b-part", "a-part")):
        new = {slug: {**page(slug, 2.0), "aliases": ["both"]} for slug in order}
        found = ch.compare(old, new)
        assert [(a.slug, a.status, a.moved_to) for a in found] == [("b-part", "new", ""), ("both", "moved", "a-part")]


def test_a_pages_values_become_claims_by_hand():
    """What claims.claims_of makes of a page's values, written out: text as it is but for its dates, yes/no,
    counts, none; a list's length and, inside a list, numbers to eight digits (a neighbour's cost: a price
    moved by a cent is a claim changed); the page's own title and date, the values its templates do not
    print (a leading '_') and the identifiers inside a value (its slug and key) left out."""
    from generator.claims import claims_of

    values = {
        "article": {"title": "A title", "date": "2026-11-05"},
        "_rows": [1.0, 2.0],
        "listing_slug": "every-setup",
        "cheapest": {"label": "Nodus, 1 × B200", "key": "lora@nodus:b200x1", "slug": "lora-on-nodus-b200x1"},
        "offer": {"date_phrase": "prices checked 2026-11-05 from the provider's page"},
        "is_cheapest": False,
        "sharded": True,
        "of": 48,
        "state_gb": None,
        "neighbours": [{"label": "RunPod, 2 × H100 SXM", "cost": 12.500953456}, {"label": "Lambda", "cost": 13.3}],
        "peak": 989.0,  # a figure: recorded as a figure, not a claim
    }
    assert claims_of(values) == [
        ("cheapest.label", "Nodus, 1 × B200"),
        ("is_cheapest", "no"),
        ("listing_slug", "every-setup"),
        ("neighbours.count", "2"),
        ("neighbours[0].cost", "12.500953"),
        ("neighbours[0].label", "RunPod, 2 × H100 SXM"),
        ("neighbours[1].cost", "13.3"),
        ("neighbours[1].label", "Lambda"),
        ("of", "48"),
        ("offer.date_phrase", "prices checked <date> from the provider's page"),
        ("sharded", "yes"),
        ("state_gb", "none"),
    ]


def test_each_unit_is_shown_as_the_report_words_it():
    """A figure's old and new values in the report: dollars as pages print them (cents, or two significant
    figures below ten cents) with the rest of the unit after, hours to two decimals (a price change moves a
    run's hours by less than a tenth), shares and ratios as the pages write them, plain numbers and other
    units to four decimals at most."""
    from generator.changes import show

    assert [show(v, u) for v, u in ((27.4249, "USD"), (0.0172, "USD"), (3.5, "USD per million tokens"))] == [
        "$27.42", "$0.017", "$3.50 per million tokens"]  # fmt: skip
    assert show(1.2345, "hours") == "1.23 hours" and show(36.6, "hours") == "36.60 hours"
    assert (show(0.3, "share"), show(7.2123, "ratio")) == ("30.0%", "7.212×")
    assert (show(6.0, "number"), show(30.054769984, "GB"), show(None, "USD")) == ("6", "30.0548 GB", "none")


def test_the_summary_names_the_commonest_change_of_a_pages_leader():
    """The summary's last clause: of the pages whose leader changed (a claim naming the cheapest, best or
    recommended setup, by its label or as "cheapest per token"), the change most of them share."""
    from generator.changes import ArticleChanges, Claim, summary

    arts = [
        ArticleChanges("p1", "P1", claims=[Claim("cheapest.label", "LoRA, 1 × B200", "QLoRA, 1 × H100 SXM")]),
        ArticleChanges("p2", "P2", claims=[Claim("best.cheapest_per_token", "LoRA, 1 × B200", "QLoRA, 1 × H100 SXM")]),
        ArticleChanges("p3", "P3", claims=[Claim("cheapest.label", "Nodus, 1 × B200", "RunPod, 1 × H200")]),
        ArticleChanges("p4", "P4", claims=[Claim("neighbours[0].label", "A", "B"), Claim("cheapest.label", None, "C")]),
    ]
    assert summary(arts) == (
        "4 pages, 0 figures, 5 claims changed; cheapest on 2 pages: LoRA, 1 × B200 → QLoRA, 1 × H100 SXM."
    )


def test_pages_share_a_section_only_when_their_claims_changed_alike_too():
    from generator.changes import ArticleChanges, Change, Claim, render_markdown

    def page(slug, claim_new):
        return ArticleChanges(slug, slug.upper(), changed=[Change("cost", "USD", 1.0, 1.1)],
                              claims=[Claim("rank", "3", claim_new)])  # fmt: skip

    two = render_markdown([page("a", "2"), page("b", "2"), page("c", "1")])
    assert "### The same changes on 2 pages\n\nPages: `a`, `b`.\n" in two
    assert "### C (`c`)\n" in two and two.count("### ") == 2


def test_written_articles_come_before_the_page_families_pages(tmp_path):
    """figures.json's own articles are the written ones; the parts hold the families. A cut report keeps the
    written articles, so they lead; within each group the order is by slug."""
    from generator import changes as ch

    def doc(value, slugs, parts=()):
        articles = {s: {"title": s, "figures": [{"id": "x", "unit": "USD", "value": value}]} for s in slugs}
        return json.dumps({"articles": articles, "parts": list(parts)}).encode()

    def part(value):
        return lambda rel: doc(value, ["a-family-page", "m-listing"])

    written = set()
    old = ch.parse(doc(1, ["z-article", "b-article"], ["figures/m-listing-1.json"]), "old", part(1), written)
    new = ch.parse(doc(2, ["z-article", "b-article"], ["figures/m-listing-1.json"]), "new", part(2), written)
    assert written == {"z-article", "b-article"}
    order = [a.slug for a in ch.compare(old, new, first=written)]
    assert order == ["b-article", "z-article", "a-family-page", "m-listing"]
    assert [a.slug for a in ch.compare(old, new)] == sorted(order)


@pytest.mark.parametrize("ref", ["--output=x", "-p", "HEAD:site", "HEAD ~1", "", "HEAD\n"])
def test_a_ref_git_would_read_otherwise_is_refused(repo, ref):
    """`--ref=--output=x` reached `git show` as an option: git wrote its output into x:site/figures.json."""
    (repo / "x:site").mkdir()
    result = run_cli("changes", "--ref", ref)
    assert result.exit_code == 1, result.output
    assert result.output == f"error: --ref: expected a git revision such as HEAD, main or a commit, got {ref!r}\n"
    assert list((repo / "x:site").iterdir()) == []
    assert run_cli("changes", "--ref", "HEAD").output == "No figure or claim changed.\n"


def test_a_figure_beyond_28_digits_is_reported_not_a_traceback(tmp_path):
    """A dollar figure of 10^26 or more in either figures.json stopped `changes` with InvalidOperation."""
    entry = {
        "title": "T",
        "figures": [{"id": "run.cost", "unit": "USD", "value": 2.5}],
        "claims": [],
        "prices_checked": [],
    }
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"articles": {"a": entry}, "parts": []}))
    entry["figures"][0]["value"] = 1e30
    new.write_text(json.dumps({"articles": {"a": entry}, "parts": []}))
    for form in ("text", "markdown", "json"):
        result = run_cli("changes", "--old", str(old), "--new", str(new), "--format", form)
        assert result.exit_code == 3, result.output
    text = run_cli("changes", "--old", str(old), "--new", str(new)).output
    assert "  run.cost: $2.50 -> $1," + ",".join(["000"] * 10) + ".00 (" in text
