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
a file with another header or digest is not used. Each record is its length, a byte naming its kind of
text (0 for the first, which names the family, the context and the keys) and its marshal data. The
listing's worker writes the next file as it writes the listing, a record per run of rows, and the main
process puts it in place once the site is published (or removes it when the build fails). Reading it,
the whole file is checked against its digest first, and a kind's texts are loaded only when the listing
asks for them, once it has let the kind before go (RowTexts.release): at 100,000 pages the three kinds
held at once were 150 MB.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
from pathlib import Path

from generator.nextfile import NextFile, header

VERSION = 3  # 2: a figure line per figure id; 3: a kind byte before each record
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
        self._file: _Kept | None = None  # the last build's file, checked whole, its kinds not yet loaded
        path = cache_path(out, number) if out is not None and keys is not None else None
        self._next = NextFile(_tmp(path) if path is not None else None, HEAD)
        if path is None:
            return
        if read:
            self._file = _Kept.opened(path, family, context, keys)
        self._write(0, (family, context, keys))

    def each(self, kind: str, rows: list, make) -> list:
        """Each row's text of one kind, kept or made by `make(row)`; all of them go to the next file."""
        return self.each_keyed(kind, [r.key for r in rows], [r.provider for r in rows], lambda i: make(rows[i]))

    def each_keyed(self, kind: str, keys: list[str], providers: list[str], make) -> list[str]:
        """`each` for texts named by `keys` (a row's key, or one of its figures' ids) of rows of `providers`:
        each kept or made by `make(i)`."""
        if self._file is not None and self._file.has(kind):
            self.kept[kind] = self._file.texts(kind)
        kept = self.kept[kind]
        if kept:
            out = [kept.get(key) for key in keys]
            for i, text in enumerate(out):
                if text is None:
                    out[i] = make(i)
        else:
            out = [make(i) for i in range(len(keys))]
        if self._next.tmp is not None:
            self._write(1 + KINDS.index(kind), (keys, providers, out))
        return out

    def close(self) -> None:
        """The listing is written: complete the next file (the main process puts it in place)."""
        self._next.close()
        self._forget()

    def discard(self) -> None:
        self._next.discard()
        self._forget()

    def _forget(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, kind: int, record) -> None:
        try:
            data = marshal.dumps(record)
        except ValueError:
            self._next.discard()
            return
        # marshal.loads on each record, not load; its kind is read without loading it
        self._next.write(len(data).to_bytes(8, "little") + bytes((kind,)) + data)

    def release(self, kind: str) -> None:
        """The listing has used every kept text of `kind`: let them go (a 100,000-page listing holds 100 MB)."""
        self.kept[kind] = {}
        if self._file is not None:
            self._file.drop(kind)


class _Kept:
    """The last build's file, whole (its digest checked) and for this family and context, with where each
    kind's records are: `texts(kind)` loads a kind's, the rows of providers whose keys are the same."""

    def __init__(self, fh, same: set[str], where: dict[str, list[tuple[int, int]]]) -> None:
        self._fh, self._same, self._where = fh, same, where

    @classmethod
    def opened(cls, path: Path, family: str, context: str, keys: dict) -> _Kept | None:
        """The file, held open, when its header and digest are right, it is the family's with the same
        context, and some provider has the same keys; else None. Records are read one at a time, each
        hashed as it comes and only the first loaded."""
        try:
            fh = open(path, "rb")  # noqa: SIM115 (open while the listing is written: see close)
        except OSError:
            return None
        try:
            found = _checked(fh, family, context, keys)
        except (OSError, ValueError, EOFError, TypeError):
            found = None
        if found is None:
            fh.close()
            return None
        return cls(fh, *found)

    def has(self, kind: str) -> bool:
        return kind in self._where

    def texts(self, kind: str) -> dict[str, str]:
        """The kind's kept texts by key (none, should a record not hold what this version writes)."""
        kept: dict[str, str] = {}
        same = self._same
        try:
            for offset, length in self._where.pop(kind):
                record = marshal.loads(os.pread(self._fh.fileno(), length, offset))
                if not (type(record) is tuple and len(record) == 3):
                    return {}
                row_keys, providers, texts = record
                if not all(type(x) is list and len(x) == len(texts) for x in (row_keys, providers, texts)):
                    return {}
                if not _shaped(texts):
                    return {}
                if all(p in same for p in set(providers)):
                    kept.update(zip(row_keys, texts, strict=True))
                else:
                    kept.update((k, t) for k, p, t in zip(row_keys, providers, texts, strict=True) if p in same)
        except (OSError, ValueError, EOFError, TypeError):
            return {}
        return kept

    def drop(self, kind: str) -> None:
        self._where.pop(kind, None)
        if not self._where:
            self.close()

    def close(self) -> None:
        self._where = {}
        self._fh.close()


def _checked(fh, family: str, context: str, keys: dict) -> tuple[set[str], dict] | None:
    """For an open file: the providers whose keys are the same and where each kind's records are, when the
    file is whole and the family's with the same context; else None."""
    head = fh.readline(len(HEAD) + 67)
    if not head.startswith(f"{HEAD} ".encode()):  # another version, or not a listing cache at all
        return None
    digest = hashlib.sha256()
    where: dict[str, list[tuple[int, int]]] = {}
    records = _records(fh, digest, os.fstat(fh.fileno()).st_size - len(head), len(head))
    first = next(records, None)
    if first is None or first[0] != 0:
        return None
    first = marshal.loads(first[3])
    if not (type(first) is tuple and len(first) == 3 and first[:2] == (family, context)):
        return None
    old = first[2]
    if type(old) is not dict:
        return None
    same = {p for p, key in keys.items() if old.get(p) == key}
    if not same:
        return None
    for kind, offset, length, _ in records:
        if not 1 <= kind <= len(KINDS):
            return None
        where.setdefault(KINDS[kind - 1], []).append((offset, length))
    return (same, where) if head == header(HEAD, digest.hexdigest()) else None


def _shaped(texts: list) -> bool:
    """Texts as this version makes them: strings."""
    return set(map(type, texts)) <= {str}


def _records(fh, digest, left: int, at: int):
    """The file's records from its second line on (`left` bytes, from offset `at`), each hashed into
    `digest`: (its kind, where its marshal data is, its length, the data). A record is its length in 8
    bytes, its kind in one, then its marshal data (marshal.load on a file object reads it in many small
    calls: five times slower than marshal.loads on the record's bytes)."""
    while size := fh.read(9):
        length = int.from_bytes(size[:8], "little")
        left -= len(size) + length
        if len(size) != 9 or left < 0:  # a length that runs past the end: damaged (never read, however large)
            raise ValueError("a record cut short")
        data = fh.read(length)
        digest.update(size)
        digest.update(data)
        at += len(size)
        yield size[8], at, length, data
        at += length


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
