"""Client-side search: a Pagefind index made at build time, offline, beside the pages.

Pagefind (https://pagefind.app, on PyPI with its binary as `pagefind[bin]`,
pinned in pyproject.toml) turns HTML into a static index that the browser
queries in small pieces, so search works on any static host. costpress does
not hand it the rendered pages: it sends Pagefind's service one small
document per page (the title, the description and the tags, which name the
model, method, GPU and provider of every family page) while the workers
render, and takes the index back as bytes (see Index). Its input is known
before any page is rendered, its output does not depend on timing, and the
same input gives the same bytes.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import os
import subprocess
import tempfile
import threading
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


# How the index is made, in its input's digest: Pagefind's CLI over files and its service order pages
# differently, so an index the other way made is not kept
MADE_BY = "service, pages in slug order"


def digest(pages: list[tuple[str, str, str, tuple[str, ...]]], language: str) -> str:
    h = hashlib.sha256(f"{_version()}\0{MADE_BY}\0{language}\0".encode())
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


# Pagefind's allocator (jemalloc, which reads this variable in Pagefind's build) keeps freed blocks of up to
# 128 KiB in a thread's cache. With its default (32 KiB) it handed back and then faulted in again three blocks
# of 44-68 KiB for every page: 87,000 page faults for the default site's 1,811 documents, against 26,000,
# and 0.06-0.1 s of its 0.56-0.63 s of CPU (six pairs). The index is the same, byte for byte. A value the
# user set is kept.
ALLOCATOR = ("_RJEM_MALLOC_CONF", "tcache_max:131072")


def _environment() -> dict[str, str]:
    """The environment Pagefind runs in: this process's, with colour off and the allocator setting above."""
    name, value = ALLOCATOR
    return {name: value, **os.environ, "NO_COLOR": "1"}


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
    """One index run: `start` launches Pagefind's service and hands it every document; `files` collects the index.

    Pagefind's `--service` mode reads requests on its standard input and
    answers on its standard output, each a base64-encoded JSON object ended
    by a comma (the protocol of Pagefind's own Python and Node packages; the
    Python package waits 0.1 s between answers, 180 s for 1,800 pages, so
    costpress speaks it itself). The documents go in as text and the index
    comes back as bytes: no file is written or read on the way. Two threads
    of this process feed the requests and read the answers while the pages
    render (Pagefind's answers fill a pipe long before the last request).
    """

    def __init__(self, pages: list[tuple[str, str, str, tuple[str, ...]]], language: str):
        self.pages = sorted(pages)  # (slug, title, description, tags), in the order Pagefind is given them
        self.language = language
        self.key = digest(self.pages, language)
        self.process: subprocess.Popen | None = None
        self._answers: dict[str, dict] = {}  # the first NewIndex, Error and GetFiles answer
        self._new_index = threading.Event()
        self._done = threading.Event()  # the index came back, Pagefind reported an error, or its output ended
        self._reader: threading.Thread | None = None
        self._feeder: threading.Thread | None = None
        self._stderr = None

    def start(self) -> Index:
        binary = executable()
        self._stderr = tempfile.TemporaryFile()  # its last line says why, should Pagefind fail
        with _one_cpu():
            self.process = subprocess.Popen(
                [binary, "--service"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=_environment(),
            )
        self._reader = threading.Thread(target=self._read, name="pagefind-answers", daemon=True)
        self._feeder = threading.Thread(target=self._feed, name="pagefind-requests", daemon=True)
        self._reader.start()
        self._feeder.start()
        return self

    def _feed(self) -> None:
        """Send the requests: a new index, then each page's document in slug order, then ask for the files."""
        stdin = self.process.stdin
        try:
            stdin.write(_request(0, {"type": "NewIndex", "config": {"force_language": self.language}}))
            stdin.flush()
            self._new_index.wait()
            made = self._answers.get("NewIndex")
            if made is None:
                return  # an error or the end of its output: `files` reports it
            number = made["index_id"]
            for n, (slug, title, description, tags) in enumerate(self.pages, 1):  # (stdin is buffered)
                page = document(title, description, tags, self.language)
                add = {"type": "AddFile", "index_id": number, "file_path": f"{slug}/index.html", "file_contents": page}
                stdin.write(_request(n, add))
            stdin.write(_request(len(self.pages) + 1, {"type": "GetFiles", "index_id": number}))
            stdin.flush()
        except (BrokenPipeError, ValueError, OSError):  # Pagefind ended (or `close` closed the pipe)
            pass

    def _read(self) -> None:
        """Take Pagefind's answers as they come; the index's files come in the last one."""
        buffer = bytearray()
        stdout = self.process.stdout
        try:
            while not self._done.is_set():
                chunk = stdout.read1(1 << 20)
                if not chunk:
                    break
                buffer += chunk
                end = chunk.rfind(b",")  # base64 holds no comma: only the new bytes can end a message
                if end < 0:
                    continue
                end += len(buffer) - len(chunk)
                messages, buffer = bytes(buffer[:end]).split(b","), buffer[end + 1 :]
                for message in messages:
                    self._take(json.loads(base64.b64decode(message))["payload"])
        except (ValueError, KeyError, TypeError, OSError) as exc:  # not the protocol this version speaks
            self._answers.setdefault("Error", {"message": f"unreadable answer ({exc.__class__.__name__})"})
        finally:
            self._new_index.set()
            self._done.set()

    def _take(self, payload: dict) -> None:
        kind = payload["type"]
        if kind == "IndexedFile":  # one a page: nothing in it is needed
            return
        self._answers.setdefault(kind, payload)
        if kind in ("NewIndex", "Error"):
            self._new_index.set()
        if kind in ("GetFiles", "Error"):
            self._done.set()

    def ready(self) -> bool:
        """Whether the index has come back, so that `files` would answer without waiting."""
        return "GetFiles" in self._answers

    def files(self, timeout: float = 300) -> list[tuple[str, bytes]]:
        """(path in the site, bytes) of every index file, sorted; BuildError when Pagefind failed."""
        assert self.process is not None
        if not self._done.wait(timeout):
            self._stop()
            raise BuildError(f"search: Pagefind did not finish within {timeout:.0f} s")
        answer = self._answers.get("GetFiles")
        if answer is None:
            self._stop()
            error = self._answers.get("Error")
            if error is not None:
                raise BuildError(f"search: Pagefind failed: {' '.join(str(error.get('message', '')).split())}")
            self._stderr.seek(0)
            last = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
            raise BuildError(f"search: Pagefind failed: {last[-1] if last else f'exit {self.process.returncode}'}")
        found = [(f"{FOLDER}/{f['path']}", base64.b64decode(f["content"])) for f in answer["files"]]
        del self._answers["GetFiles"]  # the index's bytes now live in `found` only
        found.append((INPUT, f"{self.key}\n".encode()))
        return sorted(found)

    def _stop(self) -> None:
        """Kill Pagefind if it still runs: a thread blocked on one of its pipes then returns."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def close(self) -> None:
        """End Pagefind and the two threads: its input closed once every request is sent (it then exits), or
        killed when the index did not come back."""
        if self.process is None:
            return
        if not self._done.is_set():
            self._stop()  # interrupted, or failed before the index came back
        self._new_index.set()
        self._feeder.join(timeout=5)  # once the index came back it has sent everything
        if self._feeder.is_alive():
            self._stop()
            self._feeder.join()
        with contextlib.suppress(OSError, ValueError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._stop()
        self._reader.join()
        self.process.stdout.close()
        self._stderr.close()
        self.process = self._reader = self._feeder = self._stderr = None


def _request(number: int, payload: dict) -> bytes:
    """One request as Pagefind's service reads it: base64 of its JSON, then a comma."""
    return base64.b64encode(json.dumps({"message_id": number, "payload": payload}).encode("utf-8")) + b","
