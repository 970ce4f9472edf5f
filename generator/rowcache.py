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
before. The file is marshal data (Python's own format for values: reading it runs no code) behind a header
that names the Python version and the sha256 of what follows; a file with another header or digest, or
rows of another shape, is not used. Like the other caches it is best effort, and written once the site is
published.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import marshal
import operator
import os
import sys
from pathlib import Path

from generator.families import ROW_VALUES
from generator.records import Catalog, Offer

VERSION = 1
HEAD = f"costpress row cache {VERSION} python {sys.version_info[0]}.{sys.version_info[1]} marshal {marshal.version}"


def cache_path(out: Path) -> Path:
    return out.parent / f".{out.name}.row-cache"


_offer_fields = operator.attrgetter(*(f.name for f in dataclasses.fields(Offer)))


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


class RowCache:
    """The rows of the last build (read at start) and what this build took or computed (written by `save`)."""

    def __init__(self, out: Path | None, code: str, read: bool = True) -> None:
        self.path = cache_path(out) if out is not None else None
        self.code = code
        self.old: dict[str, tuple[str, dict[str, tuple[str, bytes]]]] = {}  # family -> (key, provider -> rows)
        # what this build's families hold: family -> (key, provider -> (its key, rows as marshal data or None:
        # the old file's, as they were))
        self.new: dict[str, tuple[str, dict[str, tuple[str, bytes | None]]]] = {}
        self.taken = 0  # providers whose rows came from the cache (for tests and the benchmark)
        self.computed = 0  # providers whose rows were computed
        if self.path is not None and read:
            self.old = _read(self.path) or {}
        self._had = set(self.old)  # the families the file held

    def family(self, cat: Catalog, fam) -> FamilyRows:
        """The rows kept for one family, if its key is the same."""
        axes = fam.data["axes"]
        key = _digest(
            self.code,
            repr(fam.data),
            repr([cat.models.get(m) for m in axes["models"]]),
            repr([cat.methods.get(m) for m in axes["methods"]]),
            repr([cat.memory.get((m, x)) for m in axes["models"] for x in axes["methods"]]),
            repr(sorted(cat.gpus.items())),
        )
        old = self.old.get(fam.file)
        providers: dict[str, tuple[str, bytes | None]] = {}
        self.new[fam.file] = (key, providers)
        # the (model, method) pairs a provider's kept rows must all have
        pairs = [(m, x) for m in axes["models"] if m in cat.models for x in axes["methods"] if x in cat.methods]
        return FamilyRows(self, old[1] if old is not None and old[0] == key else {}, providers, pairs)

    def save(self) -> None:
        """Write this build's rows in place of the cache (best effort, in one step); nothing when the same."""
        if self.path is None or not self.computed and self.new.keys() == self._had:
            return
        old = self.old or _read(self.path) or {}  # the rows taken as they were are in the old file
        data = {}
        for file, (key, providers) in self.new.items():
            kept = old.get(file, ("", {}))[1]
            rows = {}
            for provider, (provider_key, blob) in providers.items():
                if blob is None:
                    blob = kept.get(provider, ("", None))[1]
                if blob is not None:
                    rows[provider] = (provider_key, blob)
            data[file] = (key, rows)
        payload = marshal.dumps(data)
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            with open(tmp, "wb") as fh:
                fh.write(f"{HEAD} {hashlib.sha256(payload).hexdigest()}\n".encode())
                fh.write(payload)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def release(self) -> None:
        """Let the old rows go once every family is expanded (save reads the file again if it needs them)."""
        self.old = {}


class FamilyRows:
    """One family's kept rows, by provider, and the rows it computes for the cache."""

    def __init__(self, cache: RowCache, kept: dict[str, tuple[str, bytes]], providers: dict, pairs: list) -> None:
        self.cache = cache
        self.kept = kept
        self.pairs = pairs
        self.providers = providers  # provider -> (its key, rows as marshal data, or None: kept as they were)
        self._loaded: dict[str, dict | None] = {}
        self._computed: dict[str, dict[tuple[str, str], list[tuple]]] = {}

    def kept_rows(self, provider: str, snap) -> dict | None:
        """The provider's rows by (model, method), as value tuples (families.ROW_VALUES), when kept."""
        if provider in self._loaded:
            return self._loaded[provider]
        key = _digest(repr([_offer_fields(offer) for offer in snap.offers]))
        found = self.kept.get(provider)
        rows = None
        if found is not None and found[0] == key:
            with contextlib.suppress(ValueError, EOFError, TypeError):
                rows = marshal.loads(found[1])
            if not (isinstance(rows, dict) and all(_shaped(rows.get(pair)) for pair in self.pairs)):
                rows = None
        self._loaded[provider] = rows
        if rows is not None:
            self.providers[provider] = (key, None)
            self.cache.taken += 1
        else:
            self.providers[provider] = (key, b"")  # computed: its rows come with `computed`
            self.cache.computed += 1
        return rows

    def computed(self, provider: str, model: str, method: str, values: list[tuple]) -> None:
        """Rows of one model and method this build computed for `provider`, as value tuples."""
        self._computed.setdefault(provider, {})[(model, method)] = values

    def done(self) -> None:
        """The family is expanded: its computed rows become marshal data for the cache."""
        for provider, (key, blob) in self.providers.items():
            if blob is not None:  # computed (b"" until now)
                self.providers[provider] = (key, marshal.dumps(self._computed.get(provider, {})))
        self._computed = {}
        self._loaded = {}


def _shaped(rows) -> bool:
    """A list of value tuples as families.values_of makes them."""
    size = len(ROW_VALUES)
    return type(rows) is list and all(type(v) is tuple and len(v) == size for v in rows)


def _read(path: Path) -> dict | None:
    """The cache file's families, when its header and digest are right and it holds what `save` writes."""
    try:
        with open(path, "rb") as fh:
            head = fh.readline()
            payload = fh.read()
    except OSError:
        return None
    text = head.decode("ascii", "replace").rstrip("\n")
    if text != f"{HEAD} {hashlib.sha256(payload).hexdigest()}":
        return None
    try:
        data = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(data, dict):
        return None
    out = {}
    for file, entry in data.items():
        if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], dict)):
            return None
        providers = entry[1]
        if not all(isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], bytes) for v in providers.values()):
            return None
        out[file] = entry
    return out
