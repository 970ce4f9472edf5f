"""Incremental builds: re-render only the family pages whose inputs changed.

A family page (kind `setup`) depends on a known, small set of inputs: its own
article record and parameters (which carry the neighbours it lists), the
model, method, memory and GPU records, every snapshot of its provider (the
price-history chart reads them all), the site settings, and the templates and
code. Their digest is the page's fingerprint (generator/fingerprints.py).
`.site.page-cache` beside the output folder holds, for each page, its
fingerprint, what the site-wide files need from it, and the names and sizes
of the files it wrote. A page whose fingerprint matches and whose files are
all still there is not rendered again: its files are kept as they are.
Hand-written articles are few and depend on more, so they always render.

The file is marshal data behind a header line that names its format and the
sha256 of what follows (as the row and listing caches are): one list per
field, entry k of each being page k's, so a price refresh that keeps 9,922
of 10,000 pages reads the file in one call and carries the kept entries over
a column at a time, with no parsing or encoding per page (the JSON file,
a line per page, took a third of a price refresh's main process).

The cache also keys each figures part (figures/<listing>-<n>.json) by the
fingerprints of the pages it holds and the digest of its listing's entry: a
part none of whose pages changed is kept as published, not read back page by
page. And it keeps the page map (pagemap.py) of the build that wrote it, from
which the next build knows the family pages whose fingerprints cannot have
changed.
"""

from __future__ import annotations

import array
import codecs
import contextlib
import datetime as dt
import itertools
import json
import marshal
import os
import re
import sys
from pathlib import Path

from generator import nextfile
from generator.fingerprints import digest_of
from generator.nextfile import NextFile
from generator.write import SAFE_REL, read_file

VERSION = 3  # 3: marshal columns behind a header (2: JSON, a line per page)
HEAD = (
    f"costpress page cache {VERSION} python {sys.version_info[0]}.{sys.version_info[1]} marshal {marshal.version}"
    f" {sys.byteorder}"
)
# The columns, each a list with an entry per page but `charts` (a byte per page) and `sizes` (every page's
# file sizes in turn, as signed 64-bit integers in the byte order HEAD names: array("q"))
COLUMNS = ("slugs", "fingerprints", "files", "checked", "providers", "unsourced")


def cache_path(out: Path) -> Path:
    return out.parent / f".{out.name}.page-cache"


def exists(out: Path) -> bool:
    """Whether there is a page cache beside `out` (a file; whether it can be used is for `read` to say)."""
    return os.path.isfile(cache_path(out))


class Cache:
    """The page cache a build wrote, as read: page k is `slugs[k]`, its fingerprint `fingerprints[k]`, its
    files' names within its folder `files[k]` (a tuple) and their sizes `sizes[offsets[k]:offsets[k + 1]]`,
    the days its prices were checked `checked[k]` (ISO dates), whether it has charts `charts[k]`, its
    providers and its unsourced inputs (tuples). Equal tuples are one object: marshal writes them once."""

    def __init__(self, body: dict | None = None) -> None:
        body = body or {}
        for name in COLUMNS:
            setattr(self, name, body.get(name, []))
        self.charts: bytes = body.get("charts", b"")
        self.sizes = array.array("q")
        self.sizes.frombytes(body.get("sizes", b""))
        self.parts: dict = body.get("parts", {})  # figures part -> [key, size] (see part_key)
        self.pagemap = body.get("pagemap")  # what the pages' fingerprints were made from (pagemap.PageMap)
        self.index = dict(zip(self.slugs, range(len(self.slugs)), strict=True))  # slug -> k
        self._offsets: list[int] | None = None

    def __len__(self) -> int:
        return len(self.slugs)

    def offsets(self) -> list[int]:
        """Where each page's sizes start in `sizes`, and the end of the last."""
        if self._offsets is None:
            self._offsets = list(itertools.accumulate(map(len, self.files), initial=0))
        return self._offsets

    def entry(self, k: int) -> dict:
        """Page k's entry as a dict (see `reusable`): the form a worker checks against the output folder."""
        start = self.offsets()[k]
        names = self.files[k]
        return {
            "fingerprint": self.fingerprints[k],
            "prices_checked": list(self.checked[k]),
            "has_charts": bool(self.charts[k]),
            "providers": list(self.providers[k]),
            "unsourced": list(self.unsourced[k]),
            "files": dict(zip(names, self.sizes[start : start + len(names)], strict=True)),
        }


def read(out: Path, digest: str | None = None) -> tuple[Cache, bool]:
    """The cache beside `out` and whether it is `verified`; an empty one where it is missing, damaged or of
    another format.

    `verified` is True when the sha256 in its header is `digest`, the one the
    build that wrote it recorded (Next.digest): every entry in it is then one
    that build made, with paths it checked, and its columns are as that
    build wrote them, so only its format's version is looked at (testing
    every column took 5 ms of a 10,000-page price refresh). Whatever the
    digest, the file is used only when what follows its header has the
    sha256 the header gives, and one that is not verified only when every
    column is whole (_whole).
    """
    found = nextfile.read(cache_path(out), HEAD)
    if found is None:
        return Cache(), False
    body, recorded = found
    try:
        loaded = marshal.loads(body)
    except (EOFError, ValueError, TypeError, MemoryError):  # not marshal data, though its digest matches
        return Cache(), False
    verified = digest is not None and recorded == digest
    if not (isinstance(loaded, dict) and loaded.get("version") == VERSION) or not (verified or _whole(loaded)):
        return Cache(), False
    return Cache(loaded), verified


def _whole(body) -> bool:
    """Whether a loaded body has every column, each with an entry per page of the type it holds (tested a
    column at a time: a file of another build's making must not stop this one)."""
    if not isinstance(body, dict) or body.get("version") != VERSION or not isinstance(body.get("parts"), dict):
        return False
    columns = [body.get(name) for name in COLUMNS]
    if not all(type(c) is list for c in columns) or type(body.get("charts")) is not bytes:
        return False
    count = len(columns[0])
    if any(len(c) != count for c in columns) or len(body["charts"]) != count or not set(body["charts"]) <= {0, 1}:
        return False
    slugs, fingerprints, *tuples = columns
    if not set(map(type, slugs)) | set(map(type, fingerprints)) <= {str} or len(set(slugs)) != count:
        return False
    for column in tuples:  # files, checked, providers, unsourced: tuples of strings
        if not set(map(type, column)) <= {tuple} or not set(map(type, itertools.chain.from_iterable(column))) <= {str}:
            return False
    sizes = body.get("sizes")
    return type(sizes) is bytes and len(sizes) == 8 * sum(map(len, body["files"]))


def part_key(entries: list[tuple[str, str]]) -> str:
    """What a figures part is made of: each entry's slug and the fingerprint of what it holds, in order.

    A page's fingerprint fixes its figures; the listing's entry is named by
    the digest of its bytes. Equal keys mean equal parts, so a part whose
    pages all kept their files, beside an unchanged listing entry, is kept
    as published rather than read back page by page.
    """
    return digest_of(*(f"{slug}\0{what}" for slug, what in entries))


def part_kept(out: Path, rel: str, key: str, saved: dict) -> bool:
    """True when the published part `rel` was made from `key` and still has the size it was written with."""
    known = saved.get(rel)
    if not (isinstance(known, list) and len(known) == 2 and known[0] == key):
        return False
    try:
        return os.stat(f"{os.fspath(out)}/{rel}").st_size == known[1]
    except OSError:
        return False


FIELDS = {"fingerprint": str, "prices_checked": list, "has_charts": bool, "providers": list, "unsourced": list}


def reusable(
    entry: dict | None, fingerprint: str, out: Path, slug: str, untouched: bool = False, verified: bool = False
) -> bool:
    """A cached page can stand when its fingerprint matches and each of its files is still there.

    With `untouched` (the output folder is as the build that wrote the cache
    left it: Publisher.trusted) and `verified` (the cache file is the one
    that build wrote: see `read`) the entry is one that build made, its
    files are known to be there with the sizes recorded, and nothing is
    looked at. Otherwise its fields are checked, and each file's size on
    disk (a cache of another build's making may name files that are not
    there, or not in the page's folder).
    """
    if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint:
        return False
    if untouched and verified:
        return True
    if any(not isinstance(entry.get(k), t) for k, t in FIELDS.items()) or not isinstance(entry.get("files"), dict):
        return False  # a damaged cache entry: render the page again
    try:
        dates(entry)
    except (TypeError, ValueError):
        return False
    base = f"{os.fspath(out)}/{slug}"
    for name, size in entry["files"].items():
        if not isinstance(name, str) or "/" in name or name in (".", "..") or not SAFE_REL.match(name):
            return False
        try:
            if os.stat(f"{base}/{name}").st_size != size:
                return False
        except OSError:
            return False
    return True


# What a figures.json holds around its article entries (figures_json.figures_doc writes it, figures_of reads it).
FIGURES_HEAD, FIGURES_TAIL = b'{"articles": {\n', b"\n}}\n"


def figures_of(out: Path, slug: str) -> bytes | None:
    """A page's entry in site/figures.json (UTF-8), read back from its own figures.json."""
    try:  # plain strings: Path objects cost more than the read for 10,000 small files
        data = read_file(f"{os.fspath(out)}/{slug}/figures.json")
    except OSError:
        return None
    return chunk_of(data)


_PLAIN_SLUG = re.compile(rb"[a-z0-9]+(?:-[a-z0-9]+)*")  # escape.PAGE_SLUG, on bytes


def published_part(out: Path, rel: str, saved: dict) -> tuple[bytes | None, dict[str, memoryview]]:
    """The published part `rel` as read, and its article entries by slug, when it is as the last build left
    it (the size recorded); else (None, {}). A part that must be written again (one of its pages changed)
    takes its kept pages' entries from here, one read instead of one per page, and is compared with these
    bytes in memory; pages missing here are read from their own figures.json."""
    known = saved.get(rel)
    if not (isinstance(known, list) and len(known) == 2):
        return None, {}
    try:
        data = read_file(f"{os.fspath(out)}/{rel}")
    except OSError:
        return None, {}
    if len(data) != known[1]:
        return None, {}
    return data, _entries(data)


def _entries(data: bytes) -> dict[str, memoryview]:
    if not data.startswith(FIGURES_HEAD):
        return {}
    end = data.rfind(b'\n}, "parts": ') if not data.endswith(FIGURES_TAIL) else len(data) - len(FIGURES_TAIL)
    if end < 0:
        return {}
    # entries are joined by ",\n" and each ends with a line " }" that nothing inside an entry starts with;
    # they are handed out as views of the one read, not copies (a part is about 1.2 MB; the one that holds
    # a large listing's entry, far more)
    view, found, pos, stop = memoryview(data), {}, len(FIGURES_HEAD), end
    while pos < stop:
        cut = data.find(b"\n },\n", pos, stop)
        last = cut < 0
        close = stop if last else cut + 3
        head = data.find(b": {\n", pos, close)
        if not (data.startswith(b' "', pos) and head > 0):
            return {}
        raw = data[pos + 2 : head - 1]  # a page's slug needs no JSON escapes: decoded as it is
        if data[head - 1] == 0x22 and _PLAIN_SLUG.fullmatch(raw):
            slug = raw.decode("ascii")
        else:
            try:
                slug = json.loads(data[pos + 1 : head])
            except ValueError:
                return {}
        if not isinstance(slug, str) or not data.endswith(b"\n }", pos, close):
            return {}
        found[slug] = view[pos:close]
        if last:
            break
        pos = cut + 5
    return found


def chunk_of(data: bytes, view: bool = False) -> bytes | memoryview | None:
    """The article entry inside a page's figures.json; None when the file is not one any more.

    With `view`, a memoryview of `data` rather than a copy: a large listing's
    entry (48 MB at 100,000 pages) is then held once, not three times.
    """
    if not (data.startswith(FIGURES_HEAD) and data.endswith(FIGURES_TAIL) and is_utf8(data)):
        return None  # a page whose file is not text any more is rendered again
    inner = memoryview(data)[len(FIGURES_HEAD) : len(data) - len(FIGURES_TAIL)]
    return inner if view else inner.tobytes()


UTF8_SLICE = 1 << 20


def is_utf8(data: bytes) -> bool:
    """Whether `data` is UTF-8 text, decoded a slice at a time (one decode of a large file made a string
    of twice its size)."""
    if len(data) <= UTF8_SLICE:
        try:
            data.decode("utf-8")
        except ValueError:
            return False
        return True
    decoder, view = codecs.getincrementaldecoder("utf-8")(), memoryview(data)
    try:
        for start in range(0, len(view), UTF8_SLICE):
            decoder.decode(view[start : start + UTF8_SLICE])
        decoder.decode(b"", final=True)
    except ValueError:
        return False
    return True


def entry_files(slug: str, sizes: dict[str, int]) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """A rendered page's files for its entry, from their sizes by path in the site: their names within the
    page's folder, and their sizes. None (no entry: the page renders next time) when one is not directly in
    the page's folder."""
    start = len(slug) + 1
    if any(not rel.startswith(f"{slug}/") or "/" in rel[start:] for rel in sizes):
        return None
    return tuple(rel[start:] for rel in sizes), tuple(sizes.values())


def dates(entry: dict) -> list[dt.date]:
    return [dt.date.fromisoformat(d) for d in entry["prices_checked"]]


class Next:
    """The page cache for the site being built, a column at a time as pages are taken: a kept page's entry
    as the last cache held it, a rendered page's from its PageInfo and its files. `commit` writes it, with
    the figures parts, once the site is published; `discard` drops it.

    Entries follow the order pages are taken in (the article order, or in an untouched folder the kept
    pages first: see tasks.in_order), so the file is the same for any number of workers. Best effort,
    like the cache: a file that cannot be written leaves no cache, and the next build renders every page.
    """

    def __init__(self, out: Path) -> None:
        self.path = cache_path(out)
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.columns: dict[str, list] = {name: [] for name in COLUMNS}
        self.charts = bytearray()
        self.sizes = array.array("q")
        self.digest: str | None = None  # the sha256 in the header, once committed (for the build state: see read)
        self.pagemap: dict | None = None  # this build's page map (pagemap.PageMap.body), kept with the columns
        self._shared: dict[tuple, tuple] = {}  # a tuple of names, providers or inputs -> the one of that value
        self._iso: dict[tuple, tuple] = {}  # a page's days -> the same as ISO dates, one tuple each

    def keep(self, cache: Cache, ks: list[int]) -> None:
        """Kept pages' entries, entries `ks` of `cache` in turn, each as it is there: a column at a time."""
        for name in COLUMNS:
            self.columns[name].extend(map(getattr(cache, name).__getitem__, ks))
        self.charts.extend(map(cache.charts.__getitem__, ks))
        offsets, sizes, start, stop = cache.offsets(), cache.sizes, None, None
        for k in ks:  # their sizes, a run of consecutive entries at a time
            if k != stop:
                if start is not None:
                    self.sizes.extend(sizes[offsets[start] : offsets[stop]])
                start = k
            stop = k + 1
        if start is not None:
            self.sizes.extend(sizes[offsets[start] : offsets[stop]])

    def add(self, info, files: tuple[tuple[str, ...], tuple[int, ...]]) -> None:
        """A rendered page's entry: its fingerprint, price days, charts, providers and unsourced inputs from
        its PageInfo, and its files' names within its folder and their sizes (entry_files)."""
        names, sizes = files
        one = self._shared.setdefault
        columns = self.columns
        columns["slugs"].append(info.article.slug)
        columns["fingerprints"].append(info.fingerprint)
        columns["files"].append(one(names, names))
        days = tuple(info.prices_checked)
        iso = self._iso.get(days)
        if iso is None:
            iso = tuple(d.isoformat() for d in days)
            iso = self._iso[days] = one(iso, iso)
        columns["checked"].append(iso)
        providers, unsourced = tuple(info.providers), tuple(info.unsourced)
        columns["providers"].append(one(providers, providers))
        columns["unsourced"].append(one(unsourced, unsourced))
        self.charts.append(1 if info.has_charts else 0)
        self.sizes.extend(sizes)

    def commit(self, parts: dict[str, list] | None = None) -> None:
        """Write the file, with each figures part's [key, size], and put it in place of the cache."""
        if self.columns is None:
            return
        body = {
            "version": VERSION,
            **self.columns,
            "charts": bytes(self.charts),
            "sizes": self.sizes.tobytes(),
            "parts": parts or {},
            "pagemap": self.pagemap,
        }
        self.columns = None
        written = NextFile(self.tmp, HEAD)  # the body as one record behind the header (see read)
        written.write(marshal.dumps(body))
        if not written.close():
            return
        try:
            os.replace(self.tmp, self.path)
        except OSError:
            self.discard()
            return
        self.digest = written.digest()

    def discard(self) -> None:
        self.columns = None
        with contextlib.suppress(OSError):
            self.tmp.unlink()


def forget(out: Path) -> None:
    try:
        cache_path(out).unlink()
    except OSError:
        pass
