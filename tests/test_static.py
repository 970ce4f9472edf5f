"""Files of your own: content/static/ is published as it is, and never takes the place of the build's files.

Every test works inside its own temporary folder, with HOME pointed at a
temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import cli_build, leftovers, make_content, read_tree

from generator import guard

OWN = {
    "CNAME": b"costs.example.org\n",
    ".nojekyll": b"",
    ".well-known/security.txt": b"Contact: mailto:security@example.org\n",
    "images/logo.png": bytes(range(256)) * 3,  # not text: copied byte for byte
}


pytestmark = pytest.mark.usefixtures("home_in_tmp")


def with_own_files(tmp_path: Path) -> Path:
    content = make_content(tmp_path)
    for rel, data in OWN.items():
        path = content / "static" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return content


def listed(out: Path) -> list[str]:
    return [line for line in (out / guard.MARKER).read_text().splitlines() if not line.startswith("#")]


def test_files_of_your_own_are_published_byte_for_byte_and_listed_as_the_build_s(tmp_path):
    content = with_own_files(tmp_path)
    out = tmp_path / "site"
    result = cli_build(content, out, "--strict")  # no warning that content/static/ holds files costpress ignores
    assert result.exit_code == 0, result.output
    tree = read_tree(out)
    for rel, data in OWN.items():
        assert tree[rel] == data
    assert set(OWN) <= set(listed(out))
    assert cli_build(content, out, "--check").exit_code == 0
    assert cli_build(content, out, "--force").exit_code == 0  # the folder holds nothing costpress did not write

    # an edit and a removal reach the site; the folder the removed file leaves empty goes too
    (content / "static" / "CNAME").write_bytes(b"prices.example.org\n")
    (content / "static" / "images" / "logo.png").unlink()
    (content / "static" / "images").rmdir()
    result = cli_build(content, out)
    assert result.exit_code == 0, result.output
    assert (out / "CNAME").read_bytes() == b"prices.example.org\n"
    assert not (out / "images").exists()
    assert "images/logo.png" not in listed(out)
    fresh = tmp_path / "fresh"
    assert cli_build(content, fresh).exit_code == 0
    assert read_tree(out) == read_tree(fresh)  # the same site as a build into a new folder
    assert not [name for name in leftovers(tmp_path) if name.endswith((".tmp", ".staging"))]


@pytest.mark.parametrize(
    "rel, why",
    [
        ("robots.txt", "the build writes robots.txt itself"),
        ("index.html", "the build writes index.html itself"),
        ("about", "the build writes files into about/"),
        ("about/photo.jpg", "about/ is a folder the build writes files into"),
        ("assets/logo.png", "assets/ is a folder the build writes files into"),
        ("tags/gpu-cost/extra/note.txt", "tags/ is a folder the build writes files into"),
        ("robots.txt/note.txt", "the build writes robots.txt as a file"),
        # as a file system that ignores case (macOS's, by default) would see them
        ("Index.html", "the build writes index.html itself"),
        ("Assets/logo.png", "assets/ is a folder the build writes files into"),
    ],
)
def test_a_file_of_your_own_never_takes_the_build_s_place_and_the_site_stays(tmp_path, rel, why):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    before = read_tree(out)
    path = content / "static" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"mine")
    result = cli_build(content, out)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.output
    assert f"static/{rel}: {why}" in errors[0], errors[0]
    assert read_tree(out) == before
    assert not [name for name in leftovers(tmp_path) if name.endswith((".tmp", ".staging"))]


@pytest.mark.parametrize("rel", [".costpress", "images/.costpress"])
def test_a_file_of_your_own_may_not_be_named_as_the_marker(tmp_path, rel):
    content = make_content(tmp_path, {f"static/{rel}": "mine\n"})
    result = cli_build(content, tmp_path / "site")
    assert result.exit_code == 1, result.output
    assert f"static/{rel}: .costpress is the name of costpress's own list" in result.output
    assert not (tmp_path / "site").exists()


def test_a_file_name_the_site_cannot_hold_is_named_in_one_line(tmp_path):
    content = make_content(tmp_path, {"static/back\\slash.txt": "mine\n"})
    result = cli_build(content, tmp_path / "site")
    assert result.exit_code == 1, result.output
    assert "static/'back\\\\slash.txt': expected a file name without control characters or backslashes" in result.output
    assert not (tmp_path / "site").exists()


def test_two_files_of_your_own_that_differ_only_in_case_are_one_line(tmp_path):
    content = make_content(tmp_path, {"static/img/Logo.svg": "<svg/>\n", "static/img/logo.svg": "<svg/>\n"})
    result = cli_build(content, tmp_path / "site")
    assert result.exit_code == 1, result.output
    assert "static/img/logo.svg: differs from" in result.output and "static/img/Logo.svg only in case" in result.output
    assert not (tmp_path / "site").exists()


def test_a_file_outside_static_is_still_a_stray_file(tmp_path):
    content = make_content(tmp_path, {"notes/todo.txt": "later\n", "static/notes/todo.txt": "later\n"})
    result = cli_build(content, tmp_path / "site", "--strict")
    assert result.exit_code == 1
    assert "notes/todo.txt: not a file costpress reads" in result.output
    assert "static/notes" not in result.output


def test_a_page_kept_from_the_last_build_still_owns_its_folder(tmp_path):
    """In a price refresh the family's unchanged pages are kept by name, their paths never made
    (write.Files.hold_pages): their folders are the build's all the same."""
    content = make_content(tmp_path, families=True)
    out = tmp_path / "site"
    assert cli_build(content, out).exit_code == 0
    page = next(p.name for p in sorted(out.iterdir()) if "-on-" in p.name and (p / "index.html").is_file())
    before = read_tree(out)
    for rel, why in ((f"{page}/photo.jpg", f"{page}/ is a folder"), (page, f"the build writes files into {page}/")):
        path = content / "static" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"mine")
        result = cli_build(content, out)
        assert result.exit_code == 1, result.output
        assert f"static/{rel}: {why}" in result.output
        assert "Traceback" not in result.output
        assert read_tree(out) == before
        path.unlink()
        if path.parent != content / "static":
            path.parent.rmdir()
