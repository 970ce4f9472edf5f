"""Whole-build behaviour: determinism, --check, the committed site, the writer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    CONTENT,
    REAL_CONTENT,
    ROOT,
    TEMPLATES,
    build,
    make_content,
    read_tree,
    replace,
    run_cli,
)

from generator.build import render_site
from generator.write import compare


def _rewrite_page_cache(out, change) -> None:
    """Rewrite the page cache beside `out` as costpress would have written it (a whole file, with its
    header's digest), after `change(body)`: a cache of another build's making, not the one recorded."""
    import hashlib
    import marshal

    from generator import pagecache
    from generator.nextfile import header

    path = pagecache.cache_path(out)
    body = marshal.loads(path.read_bytes().partition(b"\n")[2])
    change(body)
    data = marshal.dumps(body)
    path.write_bytes(header(pagecache.HEAD, hashlib.sha256(data).hexdigest()) + data)


def test_build_does_not_depend_on_hash_seed_or_locale(tmp_path, site):
    """A build with another hash seed, locale and time zone makes every byte the session's build made with the
    test run's own. `--check` builds in memory and compares each file with the session's folder (writing the
    12,770 files to a folder of its own took 10 s of the suite on a disk), and exits 1 on any difference."""
    env = dict(os.environ, PYTHONHASHSEED="123", LC_ALL="C", LANG="C", TZ="Pacific/Kiritimati")
    before = read_tree(site.out)
    cmd = [sys.executable, "-m", "generator", "build", "--check", "--content", str(CONTENT), "--out", str(site.out)]
    done = subprocess.run([*cmd, "--templates", str(TEMPLATES)], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and "is up to date" in done.stdout, done.stdout + done.stderr
    assert read_tree(site.out) == before  # --check wrote nothing


def test_committed_site_is_what_content_builds_and_a_second_build_is_byte_identical(site):
    """One more build of the default site, in this process and in memory (the session's reference build
    forked two workers and published into a folder): the same bytes as that build, and as site/ in git."""
    files = render_site(CONTENT, TEMPLATES).files
    again = compare(files, site.out)
    assert again.clean, "two builds differ:\n" + "\n".join(again.lines())
    # (the tests' content is content/ itself, unless a price refresh added snapshots: conftest.PRICES_UNTIL)
    real = files if CONTENT == REAL_CONTENT else render_site(REAL_CONTENT, TEMPLATES).files
    diff = compare(real, ROOT / "site")
    assert diff.clean, "site/ is stale; run 'make site' and commit:\n" + "\n".join(diff.lines())


def test_the_tests_read_content_without_the_snapshots_a_price_refresh_adds(tmp_path):
    """A refresh's new snapshots (dated after conftest.PRICES_UNTIL) moved the prices and dates 17 tests state,
    so the refresh's own `make test` failed every week. The tests read a copy without them."""
    from conftest import PRICES_UNTIL, tested_content

    real = make_content(tmp_path / "real", families=True)
    assert tested_content(real, PRICES_UNTIL) == real  # nothing newer: content/ itself
    newest = sorted((real / "prices" / "lambda").glob("*.yaml"))[-1]
    assert newest.stem <= PRICES_UNTIL
    refreshed = real / "prices" / "lambda" / "2099-01-04.yaml"
    refreshed.write_text(newest.read_text().replace(f"checked: {newest.stem}", "checked: 2099-01-04"))
    tested = tested_content(real, PRICES_UNTIL)
    assert tested != real and read_tree(tested) == {
        rel: data for rel, data in read_tree(real).items() if rel != "prices/lambda/2099-01-04.yaml"
    }


def test_check_reports_drift(tmp_path):
    content = make_content(tmp_path)  # the written articles: --check compares the same way at any size
    result, out = build(tmp_path, content)
    assert result.exit_code == 0
    ok = run_cli("build", "--check", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES))
    assert ok.exit_code == 0, ok.output
    (out / "index.html").write_text("stale")
    (out / "stray.txt").write_text("x")
    bad = run_cli("build", "--check", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES))
    assert bad.exit_code == 1
    assert "changed: index.html" in bad.output and "extra:   stray.txt" in bad.output
    assert (out / "index.html").read_text() == "stale"  # --check writes nothing


def test_rebuild_keeps_unchanged_files_untouched(tmp_path):
    content = make_content(tmp_path, families=True)  # a family and its listing: every kind of output file
    result, out = build(tmp_path, content)
    assert result.exit_code == 0
    css = out / "assets" / "style.css"
    os.utime(css, (1_000_000_000, 1_000_000_000))
    again = run_cli("build", "--force", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES))
    assert "0 pages written" in again.output and "(0 files written" in again.output
    assert css.stat().st_mtime == 1_000_000_000


def _load_page_cache(out, digest=None):
    """(every page's entry by slug, each figures part's [key, size], verified) from pagecache.read."""
    from generator import pagecache

    cache, verified = pagecache.read(out, digest)
    return {slug: cache.entry(k) for slug, k in cache.index.items()}, cache.parts, verified


def args(content, out, *extra):
    return ["build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), *extra]


def test_noop_build_stops_early_and_notices_changes(tmp_path):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert run_cli(*args(content, out)).exit_code == 0
    again = run_cli(*args(content, out))
    assert again.stdout.startswith("nothing to build: inputs unchanged")
    # a content edit is an input change
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 44.00", "usd_per_hour: 44.10", 1))
    changed = run_cli(*args(content, out))
    assert changed.output.startswith("built ") and "0 pages written" not in changed.output
    # a replaced or deleted output file is noticed, and the build puts it back
    (out / "index.html").unlink()
    repaired = run_cli(*args(content, out))
    assert repaired.output.startswith("built ") and (out / "index.html").exists()
    # --check never takes the shortcut: it compares every byte
    (out / "robots.txt").open("a").write("x")
    assert run_cli(*args(content, out, "--check")).exit_code == 1


def test_recorded_folder_stats_are_what_a_walk_of_the_site_reads(tmp_path):
    """The build records folder stats from what it published; the no-op check walks the folder."""
    from generator import state

    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert run_cli(*args(content, out)).exit_code == 0
    recorded = json.loads(state.state_path(out).read_text())["folders"]
    walked = state.output_stats(out)
    assert recorded == walked and walked["."][2] >= 5 and any(k.endswith("/") for k in walked)


def test_the_untouched_folder_check_notices_each_kind_of_change(tmp_path):
    """state._same_folders stats each recorded folder relative to the output folder: a folder gone, made
    anew, given a new file, or a recorded name that leaves the folder all fail the check."""
    from generator import state

    out = tmp_path / "site"
    (out / "a" / "b").mkdir(parents=True)
    (out / "a" / "b" / "x.txt").write_text("x")
    recorded = state.output_stats(out)
    assert set(recorded) == {".", "a/", "a/b/"}
    assert state._same_folders(out, recorded)
    assert not state._same_folders(tmp_path / "missing", recorded)
    assert not state._same_folders(out, {**recorded, "/": recorded["."]})  # not a name inside the folder
    assert not state._same_folders(out, {**recorded, "gone/": recorded["a/"]})
    (out / "a" / "b" / "y.txt").write_text("y")  # a new file moves its folder's mtime
    assert not state._same_folders(out, recorded)
    recorded = state.output_stats(out)
    for name in ("x.txt", "y.txt"):
        (out / "a" / "b" / name).unlink()
    (out / "a" / "b").rmdir()
    (out / "a" / "b").mkdir()  # the same name, a new folder: a new inode (and its parent's mtime moves)
    assert not state._same_folders(out, {"a/b/": recorded["a/b/"]})


def _walked(folder: Path, label: str) -> tuple[list[Path], list[str]]:
    """What state._scan must find, the plain way: os.walk through links, each folder's real path resolved and
    each file looked at (the scan itself reads the kinds from the folders' entries)."""
    found, odd, seen, top = [], [], set(), os.path.realpath(folder)

    def inside(real):
        return real == top or real.startswith(top + os.sep)

    for root, dirs, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(root)
        if real in seen or not inside(real):
            odd.append(
                f"{root}: a link that leads out of the {label} folder (or back into itself); costpress reads "
                "only files inside it"
            )
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            path = os.path.join(root, name)
            if os.path.isfile(path) and (not os.path.islink(path) or inside(os.path.realpath(path))):
                found.append(Path(path))
            elif os.path.islink(path) and not os.path.exists(path):
                odd.append(f"{path}: a link to nothing; remove it")
            elif os.path.islink(path) and not inside(os.path.realpath(path)):
                odd.append(f"{path}: a link that leads out of the {label} folder; costpress reads only files inside it")
            else:
                odd.append(f"{path}: not a regular file (a pipe, socket or device); remove it")
    return found, odd


def test_the_input_scan_finds_what_a_walk_finds_with_every_kind_of_odd_entry(tmp_path, monkeypatch):
    """state._scan (the inputs' digest, odd content) against a plain walk: plain files in order, folders
    through links that stay inside, and one line each for a link out, a loop, a dangling link and a pipe."""
    from generator import state

    top = tmp_path / "c"
    (top / "a" / "b").mkdir(parents=True)
    for rel in ("x.yaml", "a/y.yaml", "a/b/z.md", "__pycache__/q.pyc"):
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(rel)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.yaml").write_text("o")
    links = {"out_dir": outside, "out_file": outside / "o.yaml", "dangling": top / "nothing", "a/b/loop": top / "a"}
    links |= {"inside_link": top / "x.yaml", "dir_link": top / "a" / "b", "a/rel": Path("relative_nothing")}
    for rel, target in links.items():
        (top / rel).symlink_to(target)
    os.mkfifo(top / "pipe")
    (top / "link_to_pipe").symlink_to(top / "pipe")
    found, odd = state._scan(top, "content")
    assert (found, odd) == _walked(top, "content")
    assert [p.relative_to(top).as_posix() for p in found] == ["inside_link", "x.yaml", "a/y.yaml", "a/b/z.md"]
    assert len(odd) == 8
    monkeypatch.chdir(tmp_path)  # named relative to the working folder
    assert state._scan(Path("c"), "content") == _walked(Path("c"), "content")
    assert state._scan(tmp_path / "missing", "content") == ([], [])


def test_folder_stats_read_by_workers_match_a_walk_cold_and_incremental(tmp_path):
    """With a pool, page folders a worker wrote whole are stat'ed by the worker; the record must still match."""
    from generator import state

    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    first = run_cli(*args(content, out, "--jobs", "2"))
    assert first.exit_code == 0 and "(2 workers)" in first.output, first.output
    assert json.loads(state.state_path(out).read_text())["folders"] == state.output_stats(out)
    snap = content / "prices" / "runpod" / "2026-11-29.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 23.92", "usd_per_hour: 23.50", 1))
    again = run_cli(*args(content, out, "--jobs", "2"))  # neighbours' pages: new HTML, same CSV and SVG files
    assert again.exit_code == 0 and 0 < rendered_count(again.output) < rendered_count(first.output), again.output
    assert json.loads(state.state_path(out).read_text())["folders"] == state.output_stats(out)
    assert run_cli(*args(content, out, "--jobs", "2")).output.startswith("nothing to build")


def test_an_incremental_build_with_workers_writes_what_a_fresh_serial_build_writes(tmp_path):
    """In an untouched folder the kept pages are taken before the rendered ones (tasks.in_order): every
    output file must still be what a one-process build from nothing writes."""
    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert run_cli(*args(content, out, "--jobs", "2")).exit_code == 0
    snap = content / "prices" / "runpod" / "2026-11-29.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 23.92", "usd_per_hour: 23.50", 1))
    again = run_cli(*args(content, out, "--jobs", "2"))
    assert again.exit_code == 0 and "unchanged" in again.output and rendered_count(again.output) > 0, again.output
    fresh = tmp_path / "fresh"
    assert run_cli(*args(content, fresh, "--jobs", "1")).exit_code == 0

    assert read_tree(out) == read_tree(fresh)


def test_the_pages_of_an_untouched_folder_are_fingerprinted_once_before_the_workers_fork(tmp_path, monkeypatch):
    """In an untouched folder with workers, this process makes each page's fingerprint at most once, before the
    pool forks, and the workers make none (not even for the pages they render); the page map (pagemap.py)
    vouches for the family pages none of whose inputs changed, so fewer are made than there are pages. The
    pages kept, those rendered and every byte written are what the same build of a folder built alike decides
    in one process (--jobs 1), which makes every fingerprint."""
    from generator.fingerprints import Fingerprints

    content = make_content(tmp_path, families=True)
    out, alone = tmp_path / "site", tmp_path / "alone"
    assert run_cli(*args(content, out, "--jobs", "2")).exit_code == 0
    assert run_cli(*args(content, alone, "--jobs", "1")).exit_code == 0
    snap = content / "prices" / "runpod" / "2026-11-29.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 23.92", "usd_per_hour: 23.50", 1))
    here, made, elsewhere = os.getpid(), [], tmp_path / "made-by-workers"
    of = Fingerprints.of

    def counted(self, art):
        if os.getpid() == here:
            made.append(art.slug)
        else:  # a forked worker: its calls are written down where this process can count them
            with open(elsewhere, "a") as fh:
                fh.write(art.slug + "\n")
        return of(self, art)

    monkeypatch.setattr(Fingerprints, "of", counted)
    two = run_cli(*args(content, out, "--jobs", "2"))
    assert two.exit_code == 0 and "(2 workers)" in two.output, two.output
    pages = int(re.search(r"built (\d+) articles", two.output).group(1))
    assert len(made) == len(set(made)) < pages and not elsewhere.exists()
    assert {"llama-3-3-70b-qlora-on-runpod-h100x8", "llama-3-3-70b-lora-on-runpod-h100x8"} <= set(
        made
    )  # the changed offer's pages
    made.clear()
    one = run_cli(*args(content, alone, "--jobs", "1"))
    assert one.exit_code == 0 and len(made) > 0, one.output
    assert 0 < rendered_count(two.output) == rendered_count(one.output) < len(made)
    assert read_tree(out) == read_tree(alone)


def test_the_page_cache_is_trusted_only_with_the_bytes_the_last_build_recorded(tmp_path):
    """The build state records the page cache's sha256 (the one its header gives). With the file that build
    wrote, an untouched folder's kept pages skip the checks of their entries; with another (here one with a
    damaged field, whole by its own header) each entry is checked again, and the damaged page renders anew
    instead of breaking the build."""
    import hashlib

    from generator import pagecache, state

    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert run_cli(*args(content, out, "--jobs", "2")).exit_code == 0
    about = content / "about.md"  # a change no family page depends on: they are all kept
    about.write_text(about.read_text() + "\nOne more sentence.\n")
    plain = rendered_count(run_cli(*args(content, out, "--jobs", "2")).output)  # hand-written pages render
    cache = pagecache.cache_path(out)
    recorded = json.loads(state.state_path(out).read_text())["page_cache"]
    data = cache.read_bytes()
    assert recorded == hashlib.sha256(data.partition(b"\n")[2]).hexdigest() and recorded.encode() in data
    pages, _, verified = _load_page_cache(out, recorded)
    assert verified and pages
    slug = sorted(pages)[0]

    def damage(body):  # a date that is not one, in a file whole by its own header
        k = body["slugs"].index(slug)
        body["checked"][k] = ("5", *body["checked"][k])

    _rewrite_page_cache(out, damage)
    assert pagecache.read(out)[0].slugs and not _load_page_cache(out, recorded)[2]
    about.write_text(about.read_text() + "And another.\n")
    again = run_cli(*args(content, out, "--jobs", "2"))
    assert again.exit_code == 0 and rendered_count(again.output) == plain + 1, again.output  # and the damaged one
    assert run_cli(*args(content, out, "--check")).exit_code == 0
    before = _load_page_cache(out, json.loads(state.state_path(out).read_text())["page_cache"])
    assert before[2]
    # a build that keeps every family page carries each entry over as the last cache had it
    about.write_text(about.read_text() + "And one more.\n")
    assert rendered_count(run_cli(*args(content, out, "--jobs", "2")).output) == plain
    after = _load_page_cache(out, json.loads(state.state_path(out).read_text())["page_cache"])
    assert after[2] and after[0] == before[0]


def test_noop_build_repeats_the_warnings(tmp_path):
    """Unchanged inputs warn as before, so a scheduled build's log never hides a warning."""
    content = make_content(tmp_path, {"notes.txt": "a stray file"})
    out = tmp_path / "site"
    first = run_cli(*args(content, out))
    warning = "notes.txt: not a file costpress reads"
    assert first.exit_code == 0 and warning in first.stderr
    again = run_cli(*args(content, out))
    assert again.stdout.startswith("nothing to build: inputs unchanged")
    assert [line for line in again.stderr.splitlines() if "warning:" in line] == [
        line for line in first.stderr.splitlines() if "warning:" in line
    ]


def test_parallel_and_serial_builds_are_byte_identical(tmp_path):
    """Enough pages to use the worker pool: every file the same whatever the number of workers, and the
    same warnings (the listings' process or a worker makes those that depend only on the content:
    tasks.ContentChecks)."""
    content = make_content(tmp_path, {"notes.txt": "a stray file"}, families=True)
    trees, warned = {}, {}
    for jobs in (1, 2, 3):
        out = tmp_path / f"site{jobs}"
        result = run_cli(*args(content, out, "--jobs", str(jobs)))
        assert result.exit_code == 0, result.output
        assert f"({jobs} worker" in result.output
        trees[jobs] = read_tree(out)
        warned[jobs] = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert trees[1] == trees[2] == trees[3]
    assert warned[1] == warned[2] == warned[3]
    assert any("notes.txt: not a file costpress reads" in line for line in warned[2])
    assert sum(1 for name in trees[1] if name.endswith("/index.html")) > 70


def test_pages_and_assets_present(site):
    names = {p.relative_to(site.out).as_posix() for p in site.out.rglob("*") if p.is_file()}
    assert {"index.html", "assets/style.css", "assets/plotly.min.js", "figures.json"} <= names
    for slug in ("dgx-spark-70b-qlora-cost", "fine-tune-70b-cost-by-setup"):
        assert {f"{slug}/index.html", f"{slug}/index.md"} <= names


def test_index_lists_articles_newest_first(site):
    soup = site.html(".")  # site/index.html
    links = [a["href"] for a in soup.select(".post-list a")]
    assert links == [
        "memory-model-vs-measurements/index.html",  # 2026-12-01
        "mlperf-llama2-70b-lora-cost/index.html",  # 2026-11-30
        "fine-tune-open-models-every-setup/index.html",  # 2026-11-29, a page family's listing
        "fine-tune-70b-every-setup/index.html",  # 2026-11-29, the other family's listing
        "70b-fine-tune-across-clouds/index.html",  # 2026-11-29
        "fine-tune-70b-cost-by-setup/index.html",  # 2026-11-05
        "dgx-spark-70b-qlora-cost/index.html",  # 2026-10-28
    ]


def test_no_absolute_links_inside_the_site(site):
    for page in ("dgx-spark-70b-qlora-cost", "fine-tune-70b-cost-by-setup", "."):
        soup = site.html(page)
        for tag, attr in (("a", "href"), ("link", "href"), ("script", "src")):
            for el in soup.find_all(tag):
                value = el.get(attr)
                if value and el.get("rel") != ["canonical"]:
                    assert not value.startswith("/"), value
                    if value.startswith("http"):
                        assert tag == "a", f"external asset {value}"


def test_figures_json_is_sorted_and_complete(site):
    import json

    doc = json.loads((site.out / "figures.json").read_text())
    b = doc["articles"]["fine-tune-70b-cost-by-setup"]["figures"]
    ids = [f["id"] for f in b]
    assert ids == sorted(ids)
    by_id = {f["id"]: f for f in b}
    assert round(by_id["run.lora@nodus:b200x1.cost_with_startup"]["value"], 2) == 20.54


def _family_of(page) -> str:
    """The listing a family page links to ("All combinations are compared in one table")."""
    html = (page / "index.html").read_text()
    return next(name for name in ("fine-tune-open-models-every-setup", "fine-tune-70b-every-setup") if name in html)


def test_figures_json_keeps_family_pages_in_parts(site):
    """The site's figures.json holds the written articles; each family's pages and listing sit in parts of
    at most FIGURES_PART_PAGES entries beside it, which `changes` reads back as one set of articles."""
    import json

    from generator.changes import parse
    from generator.figures_parts import FIGURES_PART_PAGES

    doc = json.loads((site.out / "figures.json").read_text())
    family_pages = {p.parent.name for p in site.out.glob("*-on-*/index.html")}
    assert len(family_pages) > FIGURES_PART_PAGES  # the open-models family needs several parts
    listings = {"fine-tune-open-models-every-setup", "fine-tune-70b-every-setup"}
    assert not (family_pages | listings) & set(doc["articles"]) and "fine-tune-70b-cost-by-setup" in doc["articles"]
    # each family's pages and its listing, FIGURES_PART_PAGES to a part, the parts numbered from 1
    expected = []
    for listing in sorted(listings):
        entries = 1 + sum(1 for slug in family_pages if _family_of(site.out / slug) == listing)
        count = -(-entries // FIGURES_PART_PAGES)
        expected += [f"figures/{listing}-{n}.json" for n in range(1, count + 1)]
    assert doc["parts"] == expected and len(expected) > 2
    seen = []
    for rel in doc["parts"]:
        part = json.loads((site.out / rel).read_text())
        assert set(part) == {"articles"} and 0 < len(part["articles"]) <= FIGURES_PART_PAGES
        assert list(part["articles"]) == sorted(part["articles"])
        seen += list(part["articles"])
    assert sorted(seen) == sorted(family_pages | listings)
    merged = parse((site.out / "figures.json").read_bytes(), "site", lambda rel: (site.out / rel).read_bytes())
    assert set(merged) == family_pages | listings | set(doc["articles"])


def test_jobs_past_four_per_cpu_are_lowered_with_a_warning(tmp_path):
    """--jobs 1000 forked a thousand workers, each with its own copy of the site's data: a typo away from
    exhausting the machine's memory on a large site."""
    from generator.build import JOBS_PER_CPU, default_jobs

    most = JOBS_PER_CPU * default_jobs()
    result = run_cli(*args(make_content(tmp_path), tmp_path / "site", "--jobs", "1000"))
    assert result.exit_code == 0, result.output
    assert f"warning: --jobs 1000 is more than {JOBS_PER_CPU} per CPU; using {most}" in result.output
    workers = int(re.search(r"\((\d+) workers?\)", result.output.splitlines()[-1]).group(1))
    assert workers <= most


@pytest.mark.parametrize(
    "slug, words",
    [("tags", "tag pages"), ("assets", "stylesheet and scripts"), ("figures", "figures data"), ("pagefind", "search")],
)
def test_a_slug_may_not_name_a_folder_the_build_writes(tmp_path, slug, words):
    """An article with slug 'tags' failed late ('two pages want the same output path: tags/index.html', no file
    named); 'assets', 'figures' or 'pagefind' mixed its files into the site's own folders without a word."""
    old = "slug: dgx-spark-70b-qlora-cost"
    content = make_content(tmp_path, {"articles/dgx-spark-70b-qlora-cost.md": replace(old, f"slug: {slug}")})
    result = run_cli(*args(content, tmp_path / "site"))
    assert result.exit_code == 1 and not (tmp_path / "site").exists(), result.output
    expected = f"error: {content / 'articles/dgx-spark-70b-qlora-cost.md'}"
    assert f"slug {slug!r} names the folder of the site's {words}" in result.output, result.output
    assert expected.split(str(tmp_path))[-1] in result.output


def test_python_m_generator_help():
    done = subprocess.run([sys.executable, "-m", "generator", "build", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--check" in done.stdout


def test_the_command_exits_with_its_status_and_all_its_output(tmp_path):
    """The entry point leaves without tearing the interpreter down: output must still be flushed, status kept."""
    run = [sys.executable, "-m", "generator"]
    bad = subprocess.run([*run, "build", "--content", str(tmp_path / "none")], capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.endswith("nothing was written.\n")
    unknown = subprocess.run([*run, "nosuchcommand"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "No such command" in unknown.stderr
    out, content = tmp_path / "site", make_content(tmp_path)  # the written articles: the exit path is the same
    good = subprocess.run([*run, "build", "--content", str(content), "--out", str(out)], capture_output=True, text=True)
    assert good.returncode == 0 and good.stdout.startswith("built ") and good.stdout.endswith(")\n")


def rendered_count(output: str) -> int:
    return int(re.search(r"(\d+) rendered", output).group(1))


@pytest.mark.parametrize(
    "edit",
    [
        ("prices/runpod/2026-11-29.yaml", "usd_per_hour: 23.92", "usd_per_hour: 23.50"),
        ("hardware.yaml", "peak_tflops: 2250", "peak_tflops: 2300"),
        ("families/70b-setups.md", "## ", "## Note\n\nA new paragraph.\n\n## "),
        ("methods.yaml", "gb: 152", "gb: 160"),
        ("prices/nodus/2026-11-20.yaml", "usd_per_hour: 44.00", "usd_per_hour: 42.00"),
        # what a family's pages share, digested once per model and method (fingerprints.Fingerprints)
        ("families/70b-setups.md", '  title: "{model_name} with', '  title: "{model_name} fine-tuned with'),
        ("families/70b-setups.md", "token_budgets: [1M, 10M, 100M, 1B]", "token_budgets: [1M, 10M, 1B]"),
        ("families/70b-setups.md", "tags: [fine-tuning, llama, gpu-cost]", "tags: [fine-tuning, gpu-cost]"),
        ("families/70b-setups.md", "date: 2026-11-29", "date: 2026-11-30"),
    ],
    ids=["price", "hardware", "family-prose", "memory", "second-snapshot", "title", "params", "tags", "date"],
)
def test_incremental_build_equals_a_full_build(tmp_path, edit):
    """Whatever changed, the pages kept from the last build plus those rendered again are a full build."""
    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    first = run_cli(*args(content, out))
    assert first.exit_code == 0, first.output
    total = rendered_count(first.output)
    rel, old, new = edit
    path = content / rel
    if not path.exists():  # a new snapshot: the provider's pages gain a price-history chart
        path.write_text((content / "prices/nodus/2026-11-05.yaml").read_text().replace("2026-11-05", "2026-11-20"))
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    again = run_cli(*args(content, out))
    assert again.exit_code == 0, again.output
    check = run_cli(*args(content, out, "--check"))
    assert check.exit_code == 0, check.output  # --check renders everything and compares every byte
    if edit[0].startswith("prices/"):
        assert rendered_count(again.output) < total  # only pages that read RunPod's prices


def test_a_damaged_page_cache_only_costs_a_full_render(tmp_path):
    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert run_cli(*args(content, out)).exit_code == 0
    from generator import pagecache

    slugs = pagecache.read(out)[0].slugs
    slug = slugs[0]

    def damage(body):  # a date that is not one; a page whose files are named outside its folder
        body["checked"][0] = ("not a date",)
        body["files"][1] = tuple(f"../{name}" for name in body["files"][1])

    _rewrite_page_cache(out, damage)
    (content / "site.yaml").write_text((content / "site.yaml").read_text() + "\n")  # an input change
    again = run_cli(*args(content, out))
    assert again.exit_code == 0, again.output
    assert run_cli(*args(content, out, "--check")).exit_code == 0
    cache = pagecache.cache_path(out)
    cache.write_text("{not a page cache")
    (content / "site.yaml").write_text((content / "site.yaml").read_text() + "\n")
    assert run_cli(*args(content, out)).exit_code == 0
    # a kept page's figures.json replaced by one that is not text (same size, so it looks reusable): the
    # replacement moved its folder's time, so the next build looks at the page's files and renders it again
    figures = out / slug / "figures.json"
    damaged = figures.with_name("damaged")
    damaged.write_bytes(b"\xff" * figures.stat().st_size)
    os.replace(damaged, figures)
    (content / "site.yaml").write_text((content / "site.yaml").read_text() + "\n")
    repaired = run_cli(*args(content, out))
    assert repaired.exit_code == 0, repaired.output
    assert run_cli(*args(content, out, "--check")).exit_code == 0
    # the same damage written into the file in place changes no folder: like the no-op shortcut, a build
    # trusts the folder then (docs/output.md), --check finds it, and --force repairs it
    figures.write_bytes(b"\xff" * figures.stat().st_size)
    (content / "site.yaml").write_text((content / "site.yaml").read_text() + "\n")
    assert run_cli(*args(content, out)).exit_code == 0
    assert run_cli(*args(content, out, "--check")).exit_code == 1
    assert run_cli(*args(content, out, "--force")).exit_code == 0
    assert run_cli(*args(content, out, "--check")).exit_code == 0


def test_figures_parts_of_unchanged_pages_are_kept_not_read_back(tmp_path, monkeypatch):
    """A part whose pages all kept their files (and whose listing entry is the same) stands as published;
    only the parts holding pages that were rendered again are put together from the pages' figures.json."""
    from generator import figures_parts

    monkeypatch.setattr(figures_parts, "FIGURES_PART_PAGES", 8)  # many parts from the 70B family alone
    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert run_cli(*args(content, out)).exit_code == 0
    family = {p.parent.name for p in out.glob("*-on-*/index.html")}
    parts = sorted((out / "figures").glob("*.json"))
    assert len(parts) > 4
    read_back = []
    real = figures_parts.figures_from
    monkeypatch.setattr(figures_parts, "figures_from", lambda sink, slug: read_back.append(slug) or real(sink, slug))
    snapshot = content / "prices" / "runpod" / "2026-11-29.yaml"
    snapshot.write_text(snapshot.read_text().replace("usd_per_hour: 23.92", "usd_per_hour: 23.50", 1))
    again = run_cli(*args(content, out))
    assert again.exit_code == 0, again.output
    assert 0 < rendered_count(again.output) < len(family)
    assert 0 < len(read_back) < len(family) - 8  # at least one part of eight pages was not read back
    # parts written again take their kept pages' entries from the published part: only pages rendered
    # this time are read from their own figures.json
    assert len(set(read_back)) <= rendered_count(again.output)
    assert run_cli(*args(content, out, "--check")).exit_code == 0
    # a kept part changed by hand (another size) is written again at the next build, whatever its key says
    kept = next(p for p in parts if not set(json.loads(p.read_text())["articles"]) & set(read_back))
    kept.write_bytes(kept.read_bytes() + b" ")
    snapshot.write_text(snapshot.read_text().replace("usd_per_hour: 23.50", "usd_per_hour: 23.40", 1))
    read_back.clear()
    assert run_cli(*args(content, out)).exit_code == 0
    assert set(json.loads(kept.read_text())["articles"]) <= set(read_back) | {"fine-tune-70b-every-setup"}
    assert run_cli(*args(content, out, "--check")).exit_code == 0


def test_the_workers_put_together_the_figures_parts_that_changed(tmp_path, monkeypatch):
    """With a pool, the figures parts that changed and hold no listing's entry are stored by the workers
    (the listings' parts and the parts kept as published are not); they take their kept pages' entries
    from the published part, and every byte is what one process (--jobs 1) writes."""
    from generator import figures_parts

    monkeypatch.setattr(figures_parts, "FIGURES_PART_PAGES", 8)  # many parts, so that most are kept
    content = make_content(tmp_path, families=True)
    out, alone, log = tmp_path / "site", tmp_path / "alone", tmp_path / "stored-by"
    assert run_cli(*args(content, out, "--jobs", "2")).exit_code == 0
    assert run_cli(*args(content, alone, "--jobs", "1")).exit_code == 0
    assert read_tree(out) == read_tree(alone)
    here, stored, read_back = os.getpid(), figures_parts.stored_part, figures_parts.figures_from

    def logged(what: str, name: str) -> None:
        with open(log, "a") as fh:  # a forked worker's calls are written down where this process can read them
            fh.write(f"{'main' if os.getpid() == here else 'worker'} {what} {name}\n")

    def stored_part(part):
        logged("stored", part.rel)
        return stored(part)

    def figures_from(sink, slug):
        logged("read", slug)
        return read_back(sink, slug)

    monkeypatch.setattr(figures_parts, "stored_part", stored_part)
    monkeypatch.setattr(figures_parts, "figures_from", figures_from)
    snap = content / "prices" / "runpod" / "2026-11-29.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 23.92", "usd_per_hour: 23.50", 1))
    before = {p.name: p.read_bytes() for p in (out / "figures").iterdir()}
    two = run_cli(*args(content, out, "--jobs", "2"))
    assert two.exit_code == 0 and "(2 workers)" in two.output, two.output
    lines = [line.split() for line in log.read_text().splitlines()]
    by_worker = {name.removeprefix("figures/") for who, what, name in lines if who == "worker" and what == "stored"}
    changed = {name for name, data in before.items() if (out / "figures" / name).read_bytes() != data}
    listings = {name for name in before if json.loads(before[name]).get("articles", {}).keys() & _LISTINGS}
    assert by_worker and not by_worker & listings and changed - listings <= by_worker
    assert len(by_worker) < len(before) - len(listings)  # the parts whose pages all kept stand as published
    assert not any(who == "main" and what == "stored" for who, what, _ in lines)
    # kept pages' entries come from the published part: only pages rendered this time are read back
    assert len({name for _, what, name in lines if what == "read"}) <= rendered_count(two.output)
    assert run_cli(*args(content, alone, "--jobs", "1")).exit_code == 0
    assert read_tree(out) == read_tree(alone)


_LISTINGS = {"fine-tune-open-models-every-setup", "fine-tune-70b-every-setup"}


def test_a_published_part_splits_back_into_its_entries(site, tmp_path):
    """pagecache.published_part cuts a part into the entries figures_pieces joined, for the parts of the default
    site, and refuses a part whose size is not the one recorded."""
    from generator import pagecache
    from generator.figures_json import figures_pieces

    for rel in json.loads((site.out / "figures.json").read_text())["parts"]:
        data = (site.out / rel).read_bytes()
        found = pagecache.published_part(site.out, rel, {rel: ["key", len(data)]})[1]
        assert list(found) == sorted(json.loads(data)["articles"])
        assert b"".join(figures_pieces(list(found.values()))) == data
        assert all(bytes(chunk).endswith(b"\n }") for chunk in found.values())
        assert pagecache.published_part(site.out, rel, {rel: ["key", len(data) + 1]})[1] == {}
    assert pagecache.published_part(site.out, "figures/none.json", {"figures/none.json": ["key", 1]})[1] == {}


def test_library_versions_are_what_importlib_metadata_reports():
    """The build digest reads versions from dist-info folder names; they must be the installed versions."""
    from importlib import metadata

    from generator import state

    for name, version in state.library_versions():
        assert version == metadata.version(name), name


def test_a_build_loads_neither_numpy_nor_pandas(tmp_path):
    """Family grids and written articles compute on plain floats: the 0.3 s of importing numpy and pandas stays
    out of a build. One process (--jobs 1) builds a family and an article of every kind that prices setups."""
    content = make_content(tmp_path, families=True)
    kinds = {re.search(r"^kind: (\S+)", a.read_text(), re.M).group(1) for a in (content / "articles").glob("*.md")}
    assert {"flops", "market", "throughput", "time-to-train"} <= kinds, kinds
    code = (
        "import os, sys\n"
        "from generator import cli\n"
        "def leave(code):\n"
        "    print('loaded:', sorted({'numpy', 'pandas', 'importlib.metadata'} & set(sys.modules)), flush=True)\n"
        "    os.abort() if code else None\n"
        "os._exit = leave\n"
        f"sys.argv = ['costpress', *{args(content, tmp_path / 'site', '--jobs', '1')!r}]\n"
        "cli.main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and "built " in done.stdout, done.stdout + done.stderr
    assert "loaded: []" in done.stdout, done.stdout


def test_an_upgrade_of_a_library_a_build_does_not_load_leaves_the_pages_standing(tmp_path, monkeypatch):
    """The digest every page's fingerprint and the no-op check start from names the versions of the libraries
    that shape the output; pandas and numpy (only `estimate` loads them) are not among them, so upgrading
    either does not make a refresh render every page again. An upgraded Jinja does."""
    from generator import state

    templates = tmp_path / "templates"
    templates.mkdir()
    state.library_versions.cache_clear()
    before = state.code_digest(templates)
    for name in ("pandas-99.0.dist-info", "numpy-99.0.dist-info"):
        (tmp_path / "libs" / name).mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "libs"), *sys.path])
    state.library_versions.cache_clear()
    try:
        assert state.code_digest(templates) == before
        (tmp_path / "libs" / "Jinja2-99.0.dist-info").mkdir()
        state.library_versions.cache_clear()
        assert state.code_digest(templates) != before
    finally:
        monkeypatch.undo()
        state.library_versions.cache_clear()


def test_the_console_command_leaves_the_collector_off_as_its_process_ends(tmp_path):
    """`costpress build` from the console ends its process after the build (cli._leave): the collector stays
    off, so no full collection walks the build's objects on the way out."""
    content = make_content(tmp_path)
    probe = (
        "import gc, os, sys\n"
        "from generator import cli\n"
        "def leave(code):\n"
        "    print('collector', gc.isenabled(), 'status', code, flush=True)\n"
        "    os._exit(0)\n"
        "cli._leave = leave\n"
        f"sys.argv = ['costpress', 'build', '--content', {str(content)!r}, '--out', {str(tmp_path / 'site')!r}]\n"
        "cli.main()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "collector False status 0" in done.stdout, done.stdout + done.stderr


def test_build_pauses_the_cycle_collector_only_while_it_runs(tmp_path, monkeypatch):
    """The build command runs with gc paused (a full collection walks every loaded object) and restores it."""
    import gc

    import generator.build

    seen = []
    real = generator.build.render_site
    monkeypatch.setattr(generator.build, "render_site", lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    content = make_content(tmp_path)
    assert gc.isenabled()
    assert run_cli(*args(content, tmp_path / "site")).exit_code == 0
    assert seen == [False] and gc.isenabled()


def test_page_cache_entries_name_files_within_the_page_folder(tmp_path):
    """Each entry names its page's files within the page's folder, with the sizes on disk (the same few names
    on every page, one tuple of them in the file); a name that leaves the folder makes no entry reusable."""
    from generator import pagecache, workers, write

    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert run_cli(*args(content, out, "--jobs", "2")).exit_code == 0
    assert workers._EXITING == []  # the build waited for its workers before it returned (reap)
    pages, _, _ = _load_page_cache(out)
    assert pages
    for slug, entry in pages.items():
        on_disk = {p.name: p.stat().st_size for p in (out / slug).iterdir() if p.is_file()}
        assert entry["files"] == on_disk, slug
        assert write.paths_in([(slug, entry["files"])]) == [(slug, [f"{slug}/{name}" for name in entry["files"]])]
    slug, entry = next(iter(pages.items()))
    assert pagecache.reusable(entry, entry["fingerprint"], out, slug)
    assert not pagecache.reusable(entry, entry["fingerprint"], out, "another-page")  # its files are not there
    name = next(iter(entry["files"]))
    outside = {**entry, "files": {f"../{slug}/{name}": entry["files"][name]}}
    assert not pagecache.reusable(outside, entry["fingerprint"], out, slug)
    sizes = {f"{slug}/{n}": size for n, size in entry["files"].items()}
    assert pagecache.entry_files(slug, sizes) == (tuple(entry["files"]), tuple(entry["files"].values()))
    assert pagecache.entry_files(slug, {**sizes, f"{slug}/deeper/x.svg": 1}) is None
    assert pagecache.entry_files(slug, {"elsewhere/x.svg": 1}) is None


def test_a_worker_killed_mid_page_is_a_one_line_error_naming_its_pages(tmp_path, monkeypatch):
    """A worker the system kills (SIGKILL, as its out-of-memory killer does) while rendering a page: the build
    stops with one line naming the signal and the pages that worker had, and the published site stays."""
    import signal

    from generator import tasks

    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert run_cli(*args(content, out, "--jobs", "2")).exit_code == 0
    before = read_tree(out)
    target = sorted(p.parent.name for p in out.glob("*-on-*/index.html"))[5]
    real = tasks._context

    def dies_on_target(i):
        if tasks.JOB["articles"][i].slug == target:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(i)

    monkeypatch.setattr(tasks, "_context", dies_on_target)  # in the workers, forked after this
    result = run_cli(*args(content, out, "--jobs", "2", "--force"))
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    assert errors[0].startswith(
        "error: a worker process stopped before finishing its pages (killed by SIGKILL, as when the system runs"
        " out of memory; it was working on "
    ), errors[0]
    assert re.search(r"families/70b-setups\.md: (page \S+|\d+ pages, \S+ to \S+)\)", errors[0]), errors[0]
    after = read_tree(out)
    assert after == before


def test_files_saved_with_a_byte_order_mark_build_as_without(tmp_path):
    """Windows Notepad and Excel can start a UTF-8 file with a byte order mark. An article saved so failed with
    "expected YAML front matter between two '---' lines" (which it had), about.md's page began with the mark,
    and `calibrate --csv` did not find the `step` column of a CSV Excel wrote."""
    plain = make_content(tmp_path / "plain")
    marked = make_content(tmp_path / "marked")
    files = [p for p in marked.rglob("*") if p.suffix in (".md", ".yaml")]
    assert {"about.md", "site.yaml", "70b-fine-tune-across-clouds.md", "2026-11-05.yaml"} <= {p.name for p in files}
    for path in files:
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    out = tmp_path / "site"
    built = run_cli("build", "--content", str(plain), "--out", str(out), "--templates", str(TEMPLATES))
    assert built.exit_code == 0, built.output
    same = run_cli("build", "--check", "--content", str(marked), "--out", str(out), "--templates", str(TEMPLATES))
    assert same.exit_code == 0 and "is up to date" in same.output, same.output
    log = tmp_path / "steps.csv"
    log.write_bytes(b"\xef\xbb\xbfstep,seconds,tokens\r\n1,2.0,8192\r\n2,2.0,8192\r\n")
    calibrated = run_cli("calibrate", "--csv", str(log), "--id", "bom-run", "--model", "llama-3.1-8b", "--method",
                         "lora", "--gpu", "h100", "--count", "1", "--out", "-", "--content", str(plain))  # fmt: skip
    assert calibrated.exit_code == 0 and "tokens_per_second: 4096" in calibrated.output, calibrated.output
