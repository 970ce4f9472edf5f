"""Incremental builds: re-render only the family pages whose inputs changed.

A family page (kind `setup`) depends on a known, small set of inputs: its own
article record and parameters (which carry the neighbours it lists), the
model, method, memory and GPU records, every snapshot of its provider (the
price-history chart reads them all), the site settings, and the templates and
code. Their digest is the page's fingerprint (generator/fingerprints.py).
`.site.page-cache` beside the
output folder maps each page to its fingerprint, what the site-wide files need
from it, and the size of each file it wrote. A page whose fingerprint matches
and whose files are all still there is not rendered again: its files are kept
as they are. Hand-written articles are few and depend on more, so they always
render.

The cache also keys each figures part (figures/<listing>-<n>.json) by the
fingerprints of the pages it holds and the digest of its listing's entry: a
part none of whose pages changed is kept as published, not read back page by
page.
"""

from __future__ import annotations

import codecs
import contextlib
import datetime as dt
import hashlib
import json
import os
import re
from pathlib import Path

from generator.escape import json_encoder
from generator.fingerprints import digest_of
from generator.write import read_file

VERSION = 2  # 2: an entry's files are named within the page's folder (1: by their path in the site)


def cache_path(out: Path) -> Path:
    return out.parent / f".{out.name}.page-cache"


def load(out: Path, digest: str | None = None) -> tuple[dict, dict, bool]:
    """(pages, parts, verified) the cache beside `out` holds; empty where it is missing or damaged.

    `parts` maps each figures part the last build wrote (figures/<listing>-<n>.json)
    to [its key, its size]: see `part_key`. `verified` is True when the file's
    sha256 is `digest`, the one the build that wrote it recorded (Spool.digest):
    every entry in it is then one a build made, with paths it checked.
    """
    return load_members(out, digest)[:3]


def load_members(out: Path, digest: str | None = None) -> tuple[dict, dict, bool, dict]:
    """`load`, and each page's entry as the file holds it (its JSON member, by slug), where the file has
    one member per line as Spool writes them: a kept page's entry goes to the next cache as it is.

    The members are views of the one read of the file, not copies: splitting it into lines and cutting
    each line's comma made two more copies of it (12 MB at 10,000 pages, a few thousand page faults)."""
    try:
        raw = read_file(os.fspath(cache_path(out)))
        data = json.loads(raw)
    except (OSError, ValueError):
        return {}, {}, False, {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("pages"), dict):
        return {}, {}, False, {}
    parts = data.get("parts")
    pages = data["pages"]
    verified = digest is not None and hashlib.sha256(raw).hexdigest() == digest
    return pages, parts if isinstance(parts, dict) else {}, verified, _members(raw, pages)


def _members(raw: bytes, pages: dict) -> dict[str, memoryview]:
    """Each page's line of the file, by slug, less the comma that joins it to the next; empty unless the
    file has a line per page between its first and last (JSON text has no line break inside a string)."""
    if not raw.startswith(PAGES_HEAD + b"\n") or raw.count(b"\n") != len(pages) + 1:
        return {}
    view, find, members = memoryview(raw), raw.find, {}
    start, last = len(PAGES_HEAD) + 1, len(pages) - 1
    for n, slug in enumerate(pages):
        end = find(b"\n", start)
        members[slug] = view[start : end if n == last else end - 1]
        start = end + 1
    return members


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
    left it: Publisher.trusted) its files are known to be there, with the
    sizes recorded, and are not looked at. With `verified` too (the cache
    file holds the bytes that build wrote: see `load`) the entry is one a
    build made, and its fields are not checked again.
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
    if untouched:
        return True
    base = f"{os.fspath(out)}/{slug}"
    for name, size in entry["files"].items():
        try:
            if "/" in name or os.stat(f"{base}/{name}").st_size != size:
                return False
        except OSError:
            return False
    return True


PAGES_HEAD = b'{"pages": {'  # the page cache's first line; then a line per page (Spool)

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


def part_entries(out: Path, rel: str, saved: dict) -> dict[str, memoryview]:
    """The article entries of the published figures part `rel`, by slug, when it is as the last build left it.

    A part that must be written again (one of its pages changed) takes its
    kept pages' entries from here: one read instead of one per page. Empty
    when the part is missing, has another size than recorded, or does not
    split cleanly; those pages are then read from their own figures.json.
    """
    return published_part(out, rel, saved)[1]


def published_part(out: Path, rel: str, saved: dict) -> tuple[bytes | None, dict[str, memoryview]]:
    """The published part `rel` as read (None when unreadable or not the size recorded), and its entries as
    `part_entries` gives them. Its bytes let the new part be compared in memory, not read a second time."""
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


def entry(fingerprint: str, info, sizes: dict[str, int]) -> dict:
    """A page's entry; `sizes` names its files within the page's folder (the slug).

    Named by their whole path, the 60,000 file names of a 10,000-page cache
    were all different, and reading them was two thirds of reading the file
    (0.042 of 0.061 s); named within the folder they are the same six names,
    which the JSON reader makes once.
    """
    return {
        "fingerprint": fingerprint,
        "prices_checked": [d.isoformat() for d in info.prices_checked],
        "has_charts": info.has_charts,
        "providers": info.providers,
        "unsourced": info.unsourced,
        "files": sizes,
    }


def member_json(slug: str, fingerprint: str, info, sizes: dict[str, int]) -> bytes | None:
    """`"slug": entry` as `save` writes it, UTF-8: workers encode their pages' members in parallel. `sizes`
    names the files by their path in the site; None (no entry: the page renders next time) when one is not
    directly in the page's folder."""
    start = len(slug) + 1
    if any(not rel.startswith(f"{slug}/") or "/" in rel[start:] for rel in sizes):
        return None
    names = {rel[start:]: size for rel, size in sizes.items()}
    return f"{_encode(slug)}: {_encode(entry(fingerprint, info, names))}".encode()


def kept_files(slug: str, entry: dict) -> list[str]:
    """A kept page's files by their path in the site, from its entry's names within its folder."""
    return list(map(f"{slug}/".__add__, entry["files"]))


# json.dumps(value, sort_keys=True, ensure_ascii=False) from one C encoder made once
# (JSONEncoder.encode makes a new one on every call: 10,000 calls a large build)
_encode = json_encoder()


def dates(entry: dict) -> list[dt.date]:
    return [dt.date.fromisoformat(d) for d in entry["prices_checked"]]


class Spool:
    """The page cache for the site being built, written entry by entry as pages come back.

    Entries go to a file beside the cache in the order pages come back (the
    article order, so the same for any number of workers); `commit` adds the
    figures parts and puts the file in place once the site is published,
    `discard` removes it. Holding every entry until the end cost a
    100,000-page build's main process 70 MB. Best effort, like the cache:
    a file that cannot be written leaves no cache, and the next build
    renders every page.
    """

    def __init__(self, out: Path) -> None:
        self.path = cache_path(out)
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.count = 0
        self._hash = hashlib.sha256(PAGES_HEAD)
        self.digest: str | None = None  # the file's sha256, once committed (for the build state: see load)
        try:
            self.fh = open(self.tmp, "wb", buffering=1 << 20)  # noqa: SIM115 (open until commit or discard)
            self.fh.write(PAGES_HEAD)
        except OSError:
            self.fh = None

    def add(self, slug: str, entry: dict | bytes | memoryview) -> None:
        """One page's entry: a saved entry as a dict, or its member JSON (one a worker made: member_json,
        or as the last cache held it: load_members), each on a line of its own."""
        self.add_all([(slug, entry)])

    def add_all(self, entries: list[tuple[str, dict | bytes | memoryview]]) -> None:
        """`add` for each (slug, entry) in turn, in one write (the 9,922 entries a price refresh keeps)."""
        if self.fh is None or not entries:
            return
        members = [  # a dict, or bytes (or a view of them) as they go in the file
            f"{_encode(slug)}: {_encode(entry)}".encode() if type(entry) is dict else entry for slug, entry in entries
        ]
        data = (b",\n" if self.count else b"\n") + b",\n".join(members)
        self._hash.update(data)
        try:
            self.fh.write(data)
        except OSError:
            self.discard()
        self.count += len(entries)

    def commit(self, parts: dict[str, list] | None = None) -> None:
        """Finish the file and put it in place of the cache."""
        if self.fh is None:
            return
        tail = b'\n}, "parts": ' + _encode(parts or {}).encode() + b', "version": ' + str(VERSION).encode() + b"}"
        self._hash.update(tail)
        try:
            self.fh.write(tail)
            self.fh.close()
            self.fh = None
            os.replace(self.tmp, self.path)
        except OSError:
            self.discard()
            return
        self.digest = self._hash.hexdigest()

    def discard(self) -> None:
        if self.fh is not None:
            with contextlib.suppress(OSError):
                self.fh.close()
            self.fh = None
        with contextlib.suppress(OSError):
            self.tmp.unlink()


def forget(out: Path) -> None:
    try:
        cache_path(out).unlink()
    except OSError:
        pass
