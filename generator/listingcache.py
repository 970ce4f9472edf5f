"""A listing's per-row text kept from the last build: rows whose inputs did not change are not formatted again.

After a price refresh the row cache (rowcache) computes only the changed provider's rows, yet the listing's
worker formatted all of a family's rows again: each fitting row's line of the rows file (the theme's rows
macro), each row's CSV line and each fitting row's figure lines, about 0.3 s for a 10,000-page family's
18,160 rows, while the rest of the build waited for it. `.<out>.listing-cache-<n>` beside the output folder
holds, for the build's listing number n, what the last build wrote for each row, and what it was made from:

- the listing's family file and its context: costpress's code and templates and the site's settings;
- per provider, the row cache's keys of its rows (the family's inputs and the provider's offers).

A row's text is taken only when the family, the context and its provider's keys are the same: its rows
then have the values they had, and the text is what formatting them would give. Every other row is
formatted as before. A row's rows-file line is the rows macro's output for that row alone (with the
theme's macro, a run of rows gives the same text as its rows one at a time).

The file is marshal data behind a header that names the Python version and the sha256 of the records;
a file with another header or digest is not used. The listing's worker writes the next file as it
writes the listing, a record per run of rows, and the main process puts it in place once the site is
published (or removes it when the build fails).
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
from pathlib import Path

from generator.nextfile import NextFile, header

VERSION = 2  # 2: a figure line per figure id
HEAD = f"costpress listing cache {VERSION} python {sys.version_info[0]}.{sys.version_info[1]} marshal {marshal.version}"
KINDS = ("html", "csv", "figures")  # a fitting row's rows-file line; a row's CSV line; a figure's line


def cache_path(out: Path, number: int) -> Path:
    return out.parent / f".{out.name}.listing-cache-{number}"


def _tmp(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


class RowTexts:
    """One listing's rows' text: what the last build wrote (where still valid), and the next file."""

    def __init__(
        self, out: Path | None = None, number: int = 0, family: str = "", context: str = "", keys=None, read=False
    ):
        """With no `out` or no `keys` (--check, a build in memory): nothing kept and nothing written."""
        self.kept: dict[str, dict[str, object]] = {kind: {} for kind in KINDS}
        path = cache_path(out, number) if out is not None and keys is not None else None
        self._next = NextFile(_tmp(path) if path is not None else None, HEAD)
        if path is None:
            return
        if read:
            self._read(path, family, context, keys)
        self._write((family, context, keys))

    def each(self, kind: str, rows: list, make) -> list:
        """Each row's text of one kind, kept or made by `make(row)`; all of them go to the next file."""
        return self.each_keyed(kind, [r.key for r in rows], [r.provider for r in rows], lambda i: make(rows[i]))

    def each_keyed(self, kind: str, keys: list[str], providers: list[str], make) -> list[str]:
        """`each` for texts named by `keys` (a row's key, or one of its figures' ids) of rows of `providers`:
        each kept or made by `make(i)`."""
        kept = self.kept[kind]
        if kept:
            out = [kept.get(key) for key in keys]
            for i, text in enumerate(out):
                if text is None:
                    out[i] = make(i)
        else:
            out = [make(i) for i in range(len(keys))]
        if self._next.tmp is not None:
            self._write((kind, keys, providers, out))
        return out

    def close(self) -> None:
        """The listing is written: complete the next file (the main process puts it in place)."""
        self._next.close()

    def discard(self) -> None:
        self._next.discard()

    def _write(self, record) -> None:
        try:
            data = marshal.dumps(record)
        except ValueError:
            self._next.discard()
            return
        self._next.write(len(data).to_bytes(8, "little") + data)  # marshal.loads on each record, not load

    def release(self, kind: str) -> None:
        """The listing has used every kept text of `kind`: let them go (a 100,000-page listing holds 100 MB)."""
        self.kept[kind] = {}

    def _read(self, path: Path, family: str, context: str, keys: dict) -> None:
        """The last build's text of the rows whose provider has the same keys, when the file is whole.

        Records are read one at a time, each hashed as it comes; what they gave is used only when the
        digest of them all is the header's (the whole file held at once cost 150 MB at 100,000 pages).
        """
        try:
            with open(path, "rb") as fh:
                kept = _kept(fh, family, context, keys)
        except OSError:
            return
        if kept is not None:
            self.kept = kept


def _kept(fh, family: str, context: str, keys: dict) -> dict | None:
    head = fh.readline(len(HEAD) + 67)
    if not head.startswith(f"{HEAD} ".encode()):  # another version, or not a listing cache at all
        return None
    digest = hashlib.sha256()
    kept = {kind: {} for kind in KINDS}
    try:
        records = _records(fh, digest, os.fstat(fh.fileno()).st_size - len(head))
        first = next(records, None)
        if not (type(first) is tuple and len(first) == 3 and first[:2] == (family, context)):
            return None
        old = first[2]
        if type(old) is not dict:
            return None
        same = {p for p, key in keys.items() if old.get(p) == key}
        if not same:
            return None
        for record in records:
            if not (type(record) is tuple and len(record) == 4 and record[0] in kept):
                return None
            kind, row_keys, providers, texts = record
            if not all(type(x) is list and len(x) == len(texts) for x in (row_keys, providers, texts)):
                return None
            if not _shaped(texts):
                return None
            into = kept[kind]
            if all(p in same for p in set(providers)):
                into.update(zip(row_keys, texts, strict=True))
            else:
                into.update((k, t) for k, p, t in zip(row_keys, providers, texts, strict=True) if p in same)
    except (ValueError, EOFError, TypeError):
        return None
    return kept if head == header(HEAD, digest.hexdigest()) else None


def _shaped(texts: list) -> bool:
    """Texts as this version makes them: strings."""
    return set(map(type, texts)) <= {str}


def _records(fh, digest, left: int):
    """The file's records from its second line on (`left` bytes), each hashed into `digest`: a record is
    its length in 8 bytes, then its marshal data (marshal.load on a file object reads it in many small
    calls: five times slower than marshal.loads on the record's bytes)."""
    while size := fh.read(8):
        length = int.from_bytes(size, "little")
        left -= len(size) + length
        if len(size) != 8 or left < 0:  # a length that runs past the end: damaged (never read, however large)
            raise ValueError("a record cut short")
        data = fh.read(length)
        digest.update(size)
        digest.update(data)
        yield marshal.loads(data)


def save(out: Path, count: int) -> None:
    """Once the site is published: each listing's next file in place, and the files of listings gone."""
    for number in range(count):
        path = cache_path(out, number)
        with contextlib.suppress(OSError):
            os.replace(_tmp(path), path)
    stale = cache_path(out, count)
    while stale.exists():  # numbered from 0 with no gaps, as builds write them
        with contextlib.suppress(OSError):
            stale.unlink()
        count += 1
        stale = cache_path(out, count)


def discard(out: Path, count: int) -> None:
    """A build that failed: remove the next files."""
    for number in range(count):
        with contextlib.suppress(OSError):
            _tmp(cache_path(out, number)).unlink()
