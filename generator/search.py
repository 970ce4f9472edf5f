"""Client-side search: a Pagefind index made at build time, offline, beside the pages.

Pagefind (https://pagefind.app, on PyPI with its binary as `pagefind[bin]`,
pinned in pyproject.toml) turns HTML into a static index that the browser
queries in small pieces, so search works on any static host. costpress does
not hand it the rendered pages: it writes one small document per page (the
title, the description and the tags, which name the model, method, GPU and
provider of every family page) into a private temporary folder and runs the
binary on that while the workers render. Its input is known before any page
is rendered, its output does not depend on timing, and the same input gives
the same bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from generator.errors import BuildError

FOLDER = "pagefind"  # where the index goes in the output folder
INSTALL = "pip install 'pagefind[bin]==1.5.2'"
# beside the index: the digest of what it was made from, so a build whose pages' titles,
# descriptions and tags did not change (a price refresh) keeps the published index as it is
INPUT = f"{FOLDER}/costpress-input.sha256"


def _version() -> str:
    from generator.state import library_versions

    return dict(library_versions())["pagefind-bin"]


def digest(pages: list[tuple[str, str, str, tuple[str, ...]]], language: str) -> str:
    h = hashlib.sha256(f"{_version()}\0{language}\0".encode())
    for page in sorted(pages):
        h.update(repr(page).encode())
    return h.hexdigest()


def published(out: Path, key: str, have: dict[str, str]) -> list[str] | None:
    """The index files in the output folder when they were made from the same input, else None.

    `have` is the output folder's files as the build already scanned them (Publisher.have).
    """
    if INPUT not in have:
        return None
    try:
        if (out / INPUT).read_text().strip() != key:
            return None
    except (OSError, UnicodeDecodeError):
        return None
    return [rel for rel in have if rel.startswith(f"{FOLDER}/")]


def executable() -> str:
    try:
        from pagefind_bin import get_executable

        return str(get_executable())
    except (ImportError, FileNotFoundError):
        raise BuildError(f"site.yaml asks for search, but the Pagefind binary is not installed ({INSTALL})") from None


def document(title: str, description: str, tags: tuple[str, ...], language: str) -> str:
    """The text Pagefind indexes for one page; its result shows the title and a piece of the description."""
    e = html.escape
    words = f"<p>{e(', '.join(tags))}</p>" if tags else ""
    return (
        f'<!DOCTYPE html><html lang="{e(language)}"><head><title>{e(title)}</title></head>'
        f"<body><h1>{e(title)}</h1><p>{e(description)}</p>{words}</body></html>"
    )


@contextlib.contextmanager
def _one_cpu():
    """Processes started inside run on one of this thread's processors (Linux; elsewhere, on any).

    Pagefind sizes its thread pools by the processors it may use. It runs
    while the workers, one per processor, keep every processor busy, and on
    all of them its threads mostly waited on each other: on one it used 20%
    less CPU, and a cold build of the default site took 0.97 of the time
    (16 pairs). The affinity is this thread's, set around the start only: the
    child inherits it, and the workers and other threads keep theirs.
    """
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        yield
        return
    try:
        os.sched_setaffinity(0, {max(allowed)})
    except OSError:
        yield
        return
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


class Index:
    """One index run: `start` writes the documents and launches Pagefind; `files` waits and reads its output."""

    def __init__(self, pages: list[tuple[str, str, str, tuple[str, ...]]], language: str):
        self.pages = pages  # (slug, title, description, tags)
        self.language = language
        self.key = digest(pages, language)
        self.folder: Path | None = None
        self.process: subprocess.Popen | None = None

    def start(self) -> Index:
        binary = executable()
        # memory-backed where the system has it (some thousand small files, written and read once), unless
        # TMPDIR names a folder for temporary files
        shm = (
            "/dev/shm"
            if not os.environ.get("TMPDIR") and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK)
            else None
        )
        self.folder = Path(tempfile.mkdtemp(prefix="costpress-search-", dir=shm))
        source = self.folder / "pages"
        for slug, title, description, tags in sorted(self.pages):
            (source / slug).mkdir(parents=True)
            (source / slug / "index.html").write_text(document(title, description, tags, self.language), "utf-8")
        with _one_cpu():
            self.process = subprocess.Popen(
                [binary, "--site", str(source), "--output-path", str(self.folder / "out"), "--silent"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "NO_COLOR": "1"},
            )
        return self

    def files(self, timeout: float = 300) -> list[tuple[str, bytes]]:
        """(path in the site, bytes) of every index file, sorted; BuildError when Pagefind failed."""
        assert self.process is not None and self.folder is not None
        try:
            _, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            raise BuildError(f"search: Pagefind did not finish within {timeout:.0f} s") from None
        if self.process.returncode != 0:
            last = (err or b"").decode("utf-8", "replace").strip().splitlines()
            raise BuildError(f"search: Pagefind failed: {last[-1] if last else f'exit {self.process.returncode}'}")
        out = self.folder / "out"
        found = []
        for path in sorted(out.rglob("*")):
            if path.is_file():
                found.append((f"{FOLDER}/{path.relative_to(out).as_posix()}", path.read_bytes()))
        found.append((INPUT, f"{self.key}\n".encode()))
        return sorted(found)

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.communicate()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
