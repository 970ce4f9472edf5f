"""A price refresh that drops an offer keeps the addresses of its family pages, as pages that say so.

Every test works inside its own temporary folder, with HOME pointed at a
temporary folder.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import A, cli_build, make_content, read_tree, replace, run_cli

LISTING = "fine-tune-70b-every-setup"
OLD, NEW = "2026-11-30", "2026-12-04"  # AWS's snapshot in content/, and the refresh the tests add
GONE = "gpu: h100, count: 8,"  # the offer the refresh drops
pytestmark = pytest.mark.usefixtures("home_in_tmp")


def refresh_without_h100x8(content: Path) -> None:
    """A new AWS snapshot: the old one's offers less 8 × H100, four days later."""
    old = (content / "prices" / "aws" / f"{OLD}.yaml").read_text()
    lines = [line for line in old.splitlines(keepends=True) if GONE not in line]
    assert len(lines) == len(old.splitlines()) - 1
    (content / "prices" / "aws" / f"{NEW}.yaml").write_text(
        "".join(lines).replace(f"checked: {OLD}", f"checked: {NEW}")
    )


def test_the_pages_of_an_offer_a_provider_drops_stay_at_their_addresses_and_say_so(tmp_path):
    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    before = {p.name for p in out.iterdir() if p.name.endswith("-on-aws-h100x8")}
    assert len(before) >= 2  # the family's methods that fit on 8 × H100
    titles = {name: re.search(r"<h1>(.*?)</h1>", (out / name / "index.html").read_text()).group(1) for name in before}
    published = tmp_path / "published"  # the figures as published before the refresh, for `changes`
    shutil.copytree(out / "figures", published / "figures")
    shutil.copy(out / "figures.json", published)

    refresh_without_h100x8(content)
    result = cli_build(content, out, "--strict")
    assert result.exit_code == 0, result.output
    after = {p.name for p in out.iterdir() if p.name.endswith("-on-aws-h100x8")}
    assert after == before
    for name in before:
        assert sorted(p.name for p in (out / name).iterdir()) == ["index.html"]  # tables, charts, Markdown gone
        html = (out / name / "index.html").read_text()
        assert f"<h1>{titles[name]}</h1>" in html
        text = re.sub(r"<[^>]+>", "", html.split('<main id="main">')[1])
        assert f"AWS no longer lists 8\xa0×\xa0H100\xa0SXM: it is not among the prices imported on {NEW}" in text
        assert f"the last prices that held it were imported on {OLD}" in text
        assert '<meta name="robots" content="noindex">' in html
        link = re.search(r'<a href="([^"]+)">Fine-tuning Llama', html).group(1)
        assert (out / name / link).resolve() == (out / LISTING / "index.html").resolve()
    for file in ("sitemap.xml", "atom.xml", "figures.json"):
        assert "-on-aws-h100x8" not in (out / file).read_text(), file
    # the change report says which pages are no longer priced, and that their addresses still answer
    report = run_cli("changes", "--old", str(published / "figures.json"), "--new", str(out / "figures.json"),
                     "--format", "json")  # fmt: skip
    assert report.exit_code == 3, report.output
    doc = json.loads(report.output)
    assert doc["gone"] == [{"page": name, "address_kept": True} for name in sorted(before)]
    assert f"; {len(before)} pages no longer priced ({len(before)} keep their address)" in doc["summary"]
    text = run_cli("changes", "--old", str(published / "figures.json"), "--new", str(out / "figures.json")).output
    lines = [line for line in text.splitlines() if line.split(":")[0] in before]
    assert len(lines) == len(before)
    assert all("no longer priced" in line and "address now shows a notice or a redirect" in line for line in lines)
    # the folder as a build into a new one makes it, and --check agrees
    fresh = tmp_path / "fresh"
    assert cli_build(content, fresh).exit_code == 0
    assert read_tree(out) == read_tree(fresh)
    assert cli_build(content, out, "--check").exit_code == 0

    # the offer back: its pages are priced again
    (content / "prices" / "aws" / f"{NEW}.yaml").unlink()
    assert cli_build(content, out).exit_code == 0
    assert all("no longer lists" not in (out / name / "index.html").read_text() for name in before)
    assert all((out / name / "index.md").is_file() for name in before)


def test_an_offer_gone_before_the_family_was_published_leaves_no_page(tmp_path):
    """The family's date is after the last price list that held the offer: none of its pages was published."""
    content = make_content(tmp_path, {"families/70b-setups.md": replace("date: 2026-11-29", "date: 2026-12-02")}, True)
    refresh_without_h100x8(content)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0, "the build"
    assert not [p.name for p in out.iterdir() if p.name.endswith("-on-aws-h100x8")]


def test_an_alias_at_the_address_of_a_dropped_offer_s_page_is_kept(tmp_path):
    """A writer who points the old address somewhere on purpose gets what they asked for."""
    page = "llama-3-3-70b-qlora-on-aws-h100x8"
    article = {f"articles/{A}.md": replace(f"\nslug: {A}\n", f"\nslug: {A}\naliases: [{page}]\n")}
    content = make_content(tmp_path, article, True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 1  # while the offer is listed the page is there: refused
    refresh_without_h100x8(content)
    result = cli_build(content, out)
    assert result.exit_code == 0, result.output
    html = (out / page / "index.html").read_text()
    assert f'url=../{A}/index.html"' in html and "no longer lists" not in html


def test_a_link_to_the_page_of_a_dropped_offer_says_what_the_page_now_shows(tmp_path):
    """The address still answers, so the link is not broken; but the prose around it now points a reader at
    a notice, and the writer hears of it with the listing to link to instead (a warning: --strict stops)."""
    page = "llama-3-3-70b-qlora-on-aws-h100x8"
    link = f"\nThe [8 × H100 page](../{page}/index.html) and [a typo](../{page}x/index.html).\n"
    content = make_content(tmp_path, {f"articles/{A}.md": lambda text: text + link}, True)
    out = tmp_path / "site"
    result = cli_build(content, out, "--strict")
    assert result.exit_code == 1 and f"'../{page}x/index.html' leads to no page" in result.output, result.output
    assert f"'../{page}/index.html'" not in result.output  # while the offer is listed, the page is priced
    refresh_without_h100x8(content)
    result = cli_build(content, out)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    file = content / "articles" / f"{A}.md"
    line = len(file.read_text().splitlines())  # the link is on the body's last line
    assert warnings == [
        f"warning: {file}:{line}: the link '../{page}/index.html' leads to a page that now only "
        f"says AWS no longer lists 8 × H100 SXM (not in its prices of {NEW}); link to ../{LISTING}/index.html or "
        "to a setup on offer",
        f"warning: {file}:{line}: the link '../{page}x/index.html' leads to no page or file of "
        f"the site (did you mean ../{page.replace('h100', 'h200')}/?); link to another page as ../<slug>/index.html",
    ]
    assert "no longer lists" in (out / page / "index.html").read_text()  # (the hint names pages still priced)
    assert cli_build(content, tmp_path / "strict", "--strict").exit_code == 1


def test_a_dropped_offer_s_notice_stands_at_the_addresses_earlier_patterns_gave_its_pages_too(tmp_path):
    """A family renamed its pages (page.aliases keeps the old addresses); then a provider drops an offer:
    both the page's address and the one its old pattern gave it say that the offer is gone."""
    was, now = "{model}-{method}-on-{provider}-{gpu}x{count}", "{model}-{method}-{provider}-{count}x-{gpu}"
    family = {"families/70b-setups.md": replace(f'  slug: "{was}"\n', f'  slug: "{now}"\n  aliases: ["{was}"]\n')}
    content = make_content(tmp_path, family, True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    assert (
        "url=../llama-3-3-70b-qlora-aws-8x-h100/index.html"
        in (out / "llama-3-3-70b-qlora-on-aws-h100x8" / "index.html").read_text()
    )
    refresh_without_h100x8(content)
    result = cli_build(content, out, "--strict")
    assert result.exit_code == 0, result.output
    for name in ("llama-3-3-70b-qlora-aws-8x-h100", "llama-3-3-70b-qlora-on-aws-h100x8"):
        html = (out / name / "index.html").read_text()
        assert "AWS no longer lists 8\xa0×\xa0H100\xa0SXM" in html and "http-equiv" not in html, name
    fresh = tmp_path / "fresh"
    assert cli_build(content, fresh).exit_code == 0
    assert read_tree(out) == read_tree(fresh)


def test_a_dropped_offer_s_notice_gives_the_last_snapshot_that_listed_it(tmp_path):
    """AWS lists 8 × H100 on 2026-11-30 and again on 2026-12-02, and drops it on 2026-12-04: the notice says
    the last prices that held it were those of 2026-12-02, not the first ones."""
    content = make_content(tmp_path, families=True)
    between = "2026-12-02"
    old = (content / "prices" / "aws" / f"{OLD}.yaml").read_text()
    assert GONE in old
    (content / "prices" / "aws" / f"{between}.yaml").write_text(old.replace(f"checked: {OLD}", f"checked: {between}"))
    refresh_without_h100x8(content)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0, "the build"
    gone = sorted(p for p in out.iterdir() if p.name.endswith("-on-aws-h100x8"))
    assert len(gone) >= 2
    for page in gone:
        text = re.sub(r"<[^>]+>", "", (page / "index.html").read_text().split('<main id="main">')[1])
        assert f"it is not among the prices imported on {NEW}" in text, page.name
        assert f"the last prices that held it were imported on {between}" in text, page.name
