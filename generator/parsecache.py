"""Parsed YAML files kept from the last build, by the digest of their text: an unchanged file is not parsed
again.

A price refresh changes one snapshot among hundreds; parsing the others again was most of the time spent
loading content (0.13 s of 0.14 s for a 10,000-page family's 234 files). `.<out>.parse-cache` beside the
output folder holds, for each file the last build parsed, its data and the line of every node, as one
line of JSON keyed by the sha256 of the text. The key says nothing about where the text came from, so a
file renamed or copied is found too. Only files that parsed without a problem are kept, and only when the
JSON reads back equal to what the parser made (mapping keys that are not text, or NaN, are left out), so
a parse-cache hit gives the Doc a parse would give. The cache is best effort, like the page cache: a
missing, damaged or older file is ignored and every file is parsed. Its header line names its format and
the sha256 of the lines after it (nextfile.header), so a file damaged since it was written, even into
other valid JSON, is not used.

Price snapshots go one step further. Checking a parsed snapshot against its schema and making its offers'
records took 0.05 s of the same 234 files, every build; a snapshot that loaded without a problem is kept
as its records too (one line of JSON each, under `r` and a key of its own: `snapshot_key`), and a hit
skips parsing, checking and making records. The key holds everything those records are made from: the
file's bytes, the path it is shown as (records name it), its provider's folder, the GPUs the content
knows (an offer of a GPU that is not in hardware.yaml is a problem, so a removed GPU must miss), and
costpress's code and templates (`code`, state.code_digest: how records are made). Without `code` no
records are kept. Its offers' digests (fingerprints.offer_digests) are kept beside their fields, so the row
cache and the pages' fingerprints do not write an unchanged snapshot's offers out again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import os
from pathlib import Path

import yaml

from generator import nextfile
from generator.fingerprints import digest_of, offer_digests, offer_fields
from generator.records import Offer, Snapshot
from generator.schema import Doc, parse_yaml

VERSION = "2"
_DATE, _TIME = "\x00date", "\x00datetime"  # a text holding NUL is refused before it is parsed (read_text)
RECORDS = "r"  # before a snapshot's key: its records' line (a document's key is hex digits only)


def cache_path(out: Path) -> Path:
    return out.parent / f".{out.name}.parse-cache"


def _parser_key() -> str:
    """What a parse depends on besides the text: the parser's code and the YAML library."""
    from generator import schema

    h = hashlib.sha256(Path(schema.__file__).read_bytes())
    h.update(f"{yaml.__version__} {getattr(yaml, '__with_libyaml__', False)} {VERSION}".encode())
    return h.hexdigest()


class ParseCache:
    """The parsed files of the last build (read at start) and of this one (written by `save`)."""

    def __init__(self, out: Path | None) -> None:
        self.path = cache_path(out) if out is not None else None
        self.key = _parser_key()
        self.old: dict[str, str] = {}  # text digest -> the document's JSON line
        self.new: dict[str, str] = {}  # the lines this build used or made
        self.parsed = 0  # files parsed (not found in the cache), for tests and the benchmark
        self.code: str | None = None  # costpress's code digest: set, snapshots are kept as records too
        self.old_records: dict[str, str] = {}  # snapshot_key -> the snapshot's records as a JSON line
        self.new_records: dict[str, str] = {}
        self.kept_snapshots = 0  # snapshots taken as records, for tests
        self.lent: dict[str, str] = {}  # documents another process of this build parsed (adopt_docs)
        self.ahead = True  # a second process may parse snapshots ahead (generator.parseahead)
        if self.path is None:
            return
        found = nextfile.read(self.path, self._head())  # (a damaged file, or one of another version: not used)
        if found is None:
            return
        try:
            text = str(found[0], "utf-8")
        except UnicodeDecodeError:
            return
        for line in text.splitlines(keepends=True):
            digest, _, doc = line.partition("\t")
            if digest.startswith(RECORDS):
                self.old_records[digest[len(RECORDS) :]] = doc
            else:
                self.old[digest] = doc

    def _head(self) -> str:
        return f"costpress parse cache {self.key}"

    def parse(self, text: str, display: str) -> Doc:
        """parse_yaml(text, display), from the cache when the same text was parsed before."""
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        line = self.old.get(digest) or self.lent.get(digest)
        if line is not None:
            doc = _decoded(line, display)
            if doc is not None:
                self.new[digest] = line
                return doc
        self.parsed += 1
        doc = parse_yaml(text, display)
        if not doc.problems and doc.data is not None:
            line = _encoded(doc)
            if line is not None:
                self.new[digest] = line
        return doc

    def snapshot_key(self, path: Path, display: str, provider: str, gpus: str) -> str | None:
        """The key of a snapshot file's records (see the module's text); None without `code` or when the
        file cannot be read (loading it reports that). `gpus`: the GPU ids the content knows, joined."""
        if self.code is None:
            return None
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        return digest_of(self.code, display, provider, gpus, hashlib.sha256(raw).hexdigest())

    def snapshot(self, key: str) -> Snapshot | None:
        """The snapshot the last build made from the file under `key`, or None."""
        line = self.old_records.get(key)
        snap = _snapshot_of(line) if line is not None else None
        if snap is not None:
            self.new_records[key] = line
            self.kept_snapshots += 1
        return snap

    def has_snapshot(self, key: str) -> bool:
        """Whether the last build kept records under `key`."""
        return key in self.old_records

    @staticmethod
    def snapshot_line(snap: Snapshot) -> str | None:
        """The line keep_snapshot keeps for a snapshot (None when JSON would not carry it back the same)."""
        return _snapshot_line(snap)

    def adopt_snapshot(self, key: str, line: str) -> Snapshot | None:
        """The snapshot of a records' line another process of this build made (generator.parseahead), kept for
        the next build as if this process had made it (None: this process loads the file itself)."""
        snap = _snapshot_of(line)
        if snap is not None:
            self.new_records[key] = line
        return snap

    def adopt_docs(self, docs: dict[str, str], parsed: int) -> None:
        """The documents another process of this build parsed (text digest -> line), and how many files: kept
        for the next build, and not parsed again here (a snapshot it left to this process)."""
        self.new.update(docs)
        self.lent.update(docs)
        self.parsed += parsed

    def keep_snapshot(self, key: str, snap: Snapshot) -> None:
        """Keep a snapshot that loaded without a problem, for the next build (unless JSON cannot carry it)."""
        line = _snapshot_line(snap)
        if line is not None:
            self.new_records[key] = line

    def save(self) -> None:
        """Write the files this build parsed in place of the cache (best effort, in one step)."""
        if self.path is None or (self.new == self.old and self.new_records == self.old_records):
            return  # the same files as the cache holds: it stands
        tmp = self.path.with_name(self.path.name + ".tmp")
        body = "".join(
            [
                *(f"{digest}\t{line}" for digest, line in sorted(self.new.items())),
                *(f"{RECORDS}{key}\t{line}" for key, line in sorted(self.new_records.items())),
            ]
        ).encode("utf-8")
        try:
            with open(tmp, "wb") as fh:
                fh.write(nextfile.header(self._head(), hashlib.sha256(body).hexdigest()))
                fh.write(body)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()


def _default(value):
    if isinstance(value, dt.datetime):
        return {_TIME: value.isoformat()}
    if isinstance(value, dt.date):
        return {_DATE: value.isoformat()}
    raise TypeError(type(value).__name__)


def _hook(obj: dict):
    if len(obj) == 1:
        if _DATE in obj:
            return dt.date.fromisoformat(obj[_DATE])
        if _TIME in obj:
            return dt.datetime.fromisoformat(obj[_TIME])
    return obj


def _encoded(doc: Doc) -> str | None:
    """The document as one line of JSON, or None when JSON cannot carry it exactly."""
    try:
        line = json.dumps(
            {"data": doc.data, "lines": [[list(path), n] for path, n in doc.lines.items()]},
            default=_default,
            ensure_ascii=False,
            check_circular=False,
        )
    except (TypeError, ValueError):
        return None
    back = _decoded(line, doc.file)
    if back is None or back.data != doc.data or back.lines != doc.lines:
        return None  # mapping keys that are not text, NaN, a set: parse such a file every time
    return line + "\n"


def _decoded(line: str, display: str) -> Doc | None:
    try:
        obj = json.loads(line, object_hook=_hook)
        lines = {tuple(path): n for path, n in obj["lines"]}
        return Doc(display, obj["data"], lines=lines)
    except (ValueError, TypeError, KeyError, RecursionError):
        return None


# A snapshot's records as JSON: its own fields but `offers`, with `checked` as a day number, then each offer's
# fields in order (records.Offer), `checked` the same way, then the offers' digests (fingerprints.offer_digests).
_SNAPSHOT_FIELDS = tuple(f.name for f in dataclasses.fields(Snapshot) if f.name != "offers")
_SNAPSHOT_DAY = _SNAPSHOT_FIELDS.index("checked")
_OFFER_DAY = tuple(f.name for f in dataclasses.fields(Offer)).index("checked")
# (an offer's field, the snapshot's field) that hold the same text in every offer loaded from a file
_SHARED = tuple(
    (tuple(f.name for f in dataclasses.fields(Offer)).index(offer), _SNAPSHOT_FIELDS.index(snapshot))
    for offer, snapshot in (
        ("provider", "provider"),
        ("provider_name", "name"),
        ("source", "source"),
        ("url", "url"),
        ("file", "file"),
    )
)


def _snapshot_line(snap: Snapshot) -> str | None:
    """The snapshot as one line of JSON, or None when it would not read back as the same records."""
    head = [getattr(snap, name) for name in _SNAPSHOT_FIELDS]
    head[_SNAPSHOT_DAY] = snap.checked.toordinal()
    offers = []
    for offer in snap.offers:
        fields = list(offer_fields(offer))
        fields[_OFFER_DAY] = offer.checked.toordinal()
        offers.append(fields)
    digests = offer_digests(snap)  # of the fields above, which read back the same
    try:
        line = json.dumps([head, offers, digests], ensure_ascii=False, check_circular=False)
    except (TypeError, ValueError):
        return None
    back = _snapshot_of(line)
    if back is None or repr(back) != repr(snap):  # repr holds every field, `line` too (not compared by ==)
        return None
    return line + "\n"


def _snapshot_of(line: str) -> Snapshot | None:
    fromordinal = dt.date.fromordinal
    try:
        head, rows, digests = json.loads(line)
        day = head[_SNAPSHOT_DAY]
        head[_SNAPSHOT_DAY] = fromordinal(day)
        # JSON gives every offer its own copy of what it shares with its snapshot (the provider, its name,
        # the date, the source, the file: 16 MB at 100,000 pages); each takes the snapshot's own
        shared = [(i, head[j]) for i, j in _SHARED]
        offers = []
        for fields in rows:
            fields[_OFFER_DAY] = head[_SNAPSHOT_DAY] if fields[_OFFER_DAY] == day else fromordinal(fields[_OFFER_DAY])
            for i, value in shared:
                if fields[i] == value:
                    fields[i] = value
            offers.append(Offer(*fields))
        if len(digests) != len(offers) or not all(type(digest) is str for digest in digests):
            return None
        snap = Snapshot(**dict(zip(_SNAPSHOT_FIELDS, head, strict=True)), offers=tuple(offers))
        object.__setattr__(snap, "offer_digests", tuple(digests))  # what offer_digests made of these very fields
        return snap
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError):
        return None
