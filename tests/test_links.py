"""Links between pages: a relative link in prose that leads to nothing the build makes is a warning with
its file and line (an error with --strict), and the site is not published with it under --strict.

Every test works inside its own temporary folder, with HOME pointed at a
temporary folder.
"""

from __future__ import annotations

import pytest
from conftest import A, B, cli_build, make_content, read_tree, replace

from generator.links import OWN, leads_nowhere, targets

ADDRESSES = {A, B, "tags", "assets", "index.html", "atom.xml", "old-name", "images", "fine-tune-70b-every-setup"}


@pytest.fixture(autouse=True)
def in_tmp(home_in_tmp, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # messages name content/... as a writer in the site's folder sees it


@pytest.mark.parametrize(
    "target, own, nowhere",
    [
        (f"../{B}/index.html", A, False),
        (f"../{B}/", A, False),
        (f"../{B}", A, False),
        (f"../{B}/index.html#faq", A, False),
        ("../index.html", A, False),
        ("../", A, False),  # the home page
        ("../tags/llama/index.html", A, False),
        ("../old-name/", A, False),  # an alias
        ("../images/logo.png", A, False),  # a file of your own
        ("estimates.csv", A, False),  # the page's own table
        ("./", A, False),  # the page itself
        (f"../{A}/", A, False),
        (f"../{A}/figures.json", A, False),
        ("#faq", A, False),
        ("https://example.org/x", A, False),
        ("mailto:editors@example.org", A, False),
        ("/fine-tune/", A, False),  # from the site's root: depends on where the site is hosted, not checked
        ("{{ run.url | url }}", A, False),
        ("../fine-tune-70b-every-setup/index.html", OWN, False),  # from a family's page
        ("budgets.csv", OWN, False),
        (f"../{B}-typo/index.html", A, True),
        (f"{B}/index.html", A, True),  # relative to the page's own folder: no page there
        ("../../elsewhere/", A, True),  # out of the site
        ("..", "about", False),
        ("../..", "about", True),
        ("estimates", A, True),  # a page's folder holds files with an extension, no folders
        ("sub/estimates.csv", A, True),
    ],
)
def test_where_a_link_leads(target, own, nowhere):
    assert leads_nowhere(target, own, ADDRESSES) is nowhere


def test_code_shows_links_as_text_and_is_not_followed():
    text = "a [x](../one/)\n```md\n[y](../two/)\n[r]: ../three/\n```\nb `[z](../four/)` [w](../five/)\n"
    assert list(targets(text)) == [(0, "../one/"), (5, "../five/")]


def test_links_that_lead_nowhere_are_warnings_with_file_and_line_and_strict_publishes_nothing(tmp_path):
    body = (
        f"\nGood: [setups](../{B}/index.html), [home](../index.html), [own](figures.json), [web](https://example.org/).\n"
        f"Bad: [typo](../{B}x/index.html).\n\n[ref]: ../no-such-page/\n"
    )
    edits = {
        f"articles/{A}.md": lambda text: text + body,
        f"articles/{B}.md": replace(
            "faq:\n", 'faq:\n  - {q: Where are the setups?, a: "In [the table](../nowhere/index.html)."}\n'
        ),
        "about.md": lambda text: text + "\nWrite to us through [the form](contact/).\n",
    }
    content = make_content(tmp_path, edits)
    lines = {
        "typo": (content / "articles" / f"{A}.md").read_text().splitlines().index(f"Bad: [typo](../{B}x/index.html).")
        + 1,
        "ref": (content / "articles" / f"{A}.md").read_text().splitlines().index("[ref]: ../no-such-page/") + 1,
        "faq": (content / "articles" / f"{B}.md").read_text().splitlines().index("faq:") + 2,
        "about": (content / "about.md").read_text().splitlines().index("Write to us through [the form](contact/).") + 1,
    }
    out = tmp_path / "site"
    result = cli_build(content, out)
    assert result.exit_code == 0, result.output
    warnings = sorted(line for line in result.output.splitlines() if line.startswith("warning: "))
    assert warnings == sorted(
        [
            f"warning: content/articles/{A}.md:{lines['typo']}: the link '../{B}x/index.html' leads to no page or "
            f"file of the site (did you mean ../{B}/?); link to another page as ../<slug>/index.html",
            f"warning: content/articles/{A}.md:{lines['ref']}: the link '../no-such-page/' leads to no page or file "
            "of the site; link to another page as ../<slug>/index.html",
            f"warning: content/articles/{B}.md:{lines['faq']}: the link '../nowhere/index.html' leads to no page or "
            "file of the site; link to another page as ../<slug>/index.html",
            f"warning: content/about.md:{lines['about']}: the link 'contact/' leads to no page or file of the site; "
            "link to another page as ../<slug>/index.html",
        ]
    )
    before = read_tree(out)
    result = cli_build(content, out, "--strict", "--force")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert read_tree(out) == before


def test_a_family_s_links_are_checked_from_its_pages_folders(tmp_path):
    family = "families/70b-setups.md"
    edits = {family: lambda text: text + "\nSee also [the listing](../fine-tune-70b-every-setup/) and [x](../gone/).\n"}
    content = make_content(tmp_path, edits, True)
    line = len((content / family).read_text().splitlines())
    result = cli_build(content, tmp_path / "site")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        f"warning: content/{family}:{line}: the link '../gone/' leads to no page or file of the site; "
        "link to another page as ../<slug>/index.html"
    ]
