"""A page family's grid rows kept from the last build, by provider: rows whose inputs did not change are not
computed again.

A price refresh changes one provider's snapshot, yet the build computed every model × method × offer of
each family again before its workers could start (about 0.15 s for a 10,000-page family's 18,160 rows).
`.<out>.row-cache` beside the output folder holds, per family and per provider, the rows the last build
computed and what they were computed from:

- the family's key: costpress's code and templates, the family's front matter, and the records of its
  models, methods and memory figures and of every GPU (what a row reads besides its offer);
- the provider's key: every field of every offer in the provider's newest snapshot, in order.

A provider's rows are taken only when both keys are the same; any other provider's rows are computed as
before. The file is marshal data (Python's own format for values: reading it runs no code), one record
per family and provider, behind a header that names the Python version and the sha256 of the records; a
file with another header or digest, or rows of another shape, is not used. The next file is written
beside it as the families are expanded, one provider at a time, and takes its place once the site is
published: its rows are not held to the end of the build, nor copied into the worker processes.
"""

from __future__ import annotations

import contextlib
import io
import marshal
import os
import sys
from pathlib import Path

from generator import listingcache, nextfile
from generator.families import ROW_VALUES, row_values
from generator.fingerprints import digest_of, offer_digests
from generator.nextfile import NextFile
from generator.records import Catalog

VERSION = 2
HEAD = f"costpress row cache {VERSION} python {sys.version_info[0]}.{sys.version_info[1]} marshal {marshal.version}"


def cache_path(out: Path) -> Path:
    return out.parent / f".{out.name}.row-cache"


class RowCache:
    """The rows of the last build (read at start) and the next cache file, written as families expand."""

    def __init__(self, out: Path | None, code: str, read: bool = True) -> None:
        self.out = out
        self.listings = 0  # the build's listings, whose text files (listingcache) go and come with this file
        self.path = cache_path(out) if out is not None else None
        self.tmp = self.path.with_name(self.path.name + ".tmp") if self.path is not None else None
        self.code = code
        self.ahead = True  # a second process may make rows ahead (generator.rowsahead)
        # family file -> (its key, provider -> (its key, its rows as marshal data))
        self.old: dict[str, tuple[str, dict[str, tuple[str, bytes]]]] = {}
        if self.path is not None and read:
            self.old = _read(self.path) or {}
        self._next = NextFile(self.tmp, HEAD)
        self._ready = False  # the next file is whole (finish)

    def family(self, cat: Catalog, fam) -> FamilyRows:
        """The rows kept for one family, when its key is the same, and where its rows go for the next build."""
        axes = fam.data["axes"]
        key = digest_of(
            self.code,
            repr(fam.data),
            repr([cat.models.get(m) for m in axes["models"]]),
            repr([cat.methods.get(m) for m in axes["methods"]]),
            repr([cat.memory.get((m, x)) for m in axes["models"] for x in axes["methods"]]),
            repr(sorted(cat.gpus.items())),
        )
        old = self.old.get(fam.file)
        # the (model, method) pairs a provider's kept rows must all have
        pairs = [(m, x) for m in axes["models"] if m in cat.models for x in axes["methods"] if x in cat.methods]
        return FamilyRows(self, fam.file, key, old[1] if old is not None and old[0] == key else {}, pairs)

    def write(self, family: str, family_key: str, provider: str, provider_key: str, rows: bytes) -> None:
        """One provider's rows into the next file (best effort: a file that cannot be written is dropped)."""
        self._next.write(marshal.dumps((family, family_key, provider, provider_key, rows)))

    def finish(self) -> None:
        """Every family is expanded: complete the next file and let the old rows go (before the fork)."""
        self.old = {}
        self._ready = self._next.close()

    def save(self) -> None:
        """Put the next file in place of the cache, once the site is published, and the listings' files."""
        if self._ready and self.path is not None:
            try:
                os.replace(self.tmp, self.path)
            except OSError:
                self.discard()
        self._ready = False
        if self.out is not None:
            listingcache.save(self.out, self.listings)

    def discard(self) -> None:
        """Remove the next file (a build that fails leaves none)."""
        self._ready = False
        self._next.discard()
        if self.out is not None:
            listingcache.discard(self.out, self.listings)


class FamilyRows:
    """One family's kept rows, by provider, and its rows for the next file."""

    def __init__(self, cache: RowCache, file: str, key: str, kept: dict[str, tuple[str, bytes]], pairs) -> None:
        self.cache = cache
        self.file, self.key = file, key
        self.kept = kept
        self.pairs = pairs
        self._loaded: dict[str, dict | None] = {}
        self._keys: dict[str, str] = {}  # provider -> its key
        self._computed: dict[str, dict[tuple[str, str], list]] = {}  # provider -> (model, method) -> its rows

    def kept_rows(self, provider: str, snap) -> dict | None:
        """The provider's rows by (model, method), as value tuples (families.ROW_VALUES), when kept."""
        if provider in self._loaded:
            return self._loaded[provider]
        key = self._keys[provider] = digest_of(*offer_digests(snap))
        found = self.kept.get(provider)
        rows = None
        if found is not None and found[0] == key:
            with contextlib.suppress(ValueError, EOFError, TypeError):
                rows = marshal.loads(found[1])
            if not (isinstance(rows, dict) and all(_shaped(rows.get(pair)) for pair in self.pairs)):
                rows = None
        self._loaded[provider] = rows
        if rows is not None:
            self.cache.write(self.file, self.key, provider, key, found[1])  # as they were
        else:
            self._computed[provider] = {}
        return rows

    def computed(self, provider: str, model: str, method: str, rows: list) -> None:
        """The rows of one model and method this build computed for `provider` (families.Row)."""
        self._computed[provider][(model, method)] = rows

    def made_elsewhere(self, provider: str, data: bytes) -> dict:
        """The provider's rows as another process of this build computed them (rowsahead), as marshal data
        in the form `done` writes: they go to the next file now. Returns them as `kept_rows` would."""
        self._computed.pop(provider, None)
        self.cache.write(self.file, self.key, provider, self._keys[provider], data)
        return marshal.loads(data)

    def row_keys(self) -> dict[str, str]:
        """Per provider, one digest of its rows' keys (the family's and its own): rows with the same are the same."""
        return {provider: digest_of(self.key, key) for provider, key in self._keys.items()}

    def done(self) -> None:
        """The family is expanded: each computed provider's rows go to the next file, one at a time."""
        for provider, pairs in self._computed.items():
            self.cache.write(self.file, self.key, provider, self._keys[provider], encode(pairs))
        self._computed, self._loaded = {}, {}


def encode(pairs: dict[tuple[str, str], list]) -> bytes:
    """One provider's rows by (model, method), as the cache file holds them."""
    return marshal.dumps({pair: [row_values(r) for r in rows] for pair, rows in pairs.items()})


def _shaped(rows) -> bool:
    """A list of value tuples as families.row_values makes them."""
    size = len(ROW_VALUES)
    return type(rows) is list and all(type(v) is tuple and len(v) == size for v in rows)


def _read(path: Path) -> dict | None:
    """The cache file's rows by family and provider, when its header and digest are right."""
    found = nextfile.read(path, HEAD)
    if found is None:
        return None
    payload = found[0]
    out: dict[str, tuple[str, dict]] = {}
    records = io.BytesIO(payload)
    try:
        while records.tell() < len(payload):
            record = marshal.load(records)
            if not (type(record) is tuple and len(record) == 5 and all(type(x) is str for x in record[:4])):
                return None
            family, family_key, provider, provider_key, rows = record
            if type(rows) is not bytes:
                return None
            entry = out.setdefault(family, (family_key, {}))
            if entry[0] != family_key:
                return None
            entry[1][provider] = (provider_key, rows)
    except (ValueError, EOFError, TypeError):
        return None
    return out
