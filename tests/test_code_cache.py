"""Compiled templates kept between builds (jinja_env.CodeCache): the same bytes, and never a reason to fail."""

from __future__ import annotations

import os

from conftest import make_content, read_tree, run_cli

from generator import jinja_env


def build(content, out, *extra):
    result = run_cli("build", "--content", str(content), "--out", str(out), *extra)
    assert result.exit_code == 0, result.output
    return result


def cached_files(folder):
    return sorted(p for p in folder.iterdir() if p.suffix == ".cache")


def test_compiled_templates_give_the_same_site_and_a_damaged_file_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    content = make_content(tmp_path)
    build(content, tmp_path / "cold")  # compiles, and keeps what it compiled
    folder = tmp_path / "cache" / "costpress" / "templates"
    kept = cached_files(folder)
    labels = {p.name.split("-")[1] for p in kept}
    assert {"html", "md", "xml", "body", "plain"} <= labels  # theme templates, and article prose
    assert os.stat(folder).st_mode & 0o777 == 0o700
    build(content, tmp_path / "warm")  # every template from the folder
    assert read_tree(tmp_path / "warm") == read_tree(tmp_path / "cold")
    for path in kept[::2]:
        path.write_bytes(path.read_bytes()[:40])  # cut short: not code any more
    for path in kept[1::4]:
        path.write_bytes(b"not a compiled template")
    build(content, tmp_path / "damaged")
    assert read_tree(tmp_path / "damaged") == read_tree(tmp_path / "cold")


def test_a_cache_folder_others_can_write_to_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "costpress" / "templates"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    assert jinja_env.code_cache_folder() is None
    build(make_content(tmp_path), tmp_path / "site")
    assert cached_files(folder) == []
    folder.chmod(0o700)
    assert jinja_env.code_cache_folder() == str(folder)


def test_no_cache_folder_is_no_problem(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("the cache folder cannot be made under a file")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert jinja_env.code_cache_folder() is None
    build(make_content(tmp_path), tmp_path / "site")


def test_other_versions_are_pruned_and_nothing_else(tmp_path):
    folder = tmp_path / "templates"
    folder.mkdir()
    old = "0123456789abcdef-html-" + "a" * 40 + ".cache"
    current = "fedcba9876543210-html-" + "b" * 40 + ".cache"
    stale_tmp = "0123456789abcdef-body-" + "c" * 40 + ".cache.123.tmp"
    mine = "notes.txt"
    for name in (old, current, stale_tmp, mine):
        (folder / name).write_text("x")
    jinja_env.prune_code_cache(str(folder), "fedcba9876543210")
    assert sorted(p.name for p in folder.iterdir()) == sorted([current, mine])


def test_a_prose_error_names_the_same_line_when_its_code_comes_from_the_cache(tmp_path, monkeypatch):
    """An article whose prose reads a name that is not there: the one-line error names its file and line,
    the same when the compiled prose is loaded from the folder as when it was just compiled."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    content = make_content(tmp_path)
    article = sorted((content / "articles").glob("*.md"))[0]
    text = article.read_text()
    head, sep, body = text.partition("\n---\n")
    article.write_text(head + sep + "First line.\n\nSecond: {{ no_such_value.x }}\n" + body)
    errors = []
    for _ in range(2):
        result = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"))
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        errors.append([line for line in result.output.splitlines() if line.startswith("error")])
    line = article.read_text().splitlines().index("Second: {{ no_such_value.x }}") + 1
    assert errors[0] == errors[1] and f"{article.name}:{line}: body:" in errors[0][0], errors
    assert "no_such_value" in errors[0][0]
