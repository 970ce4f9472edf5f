"""Incremental builds: re-render only the family pages whose inputs changed.

A family page (kind `setup`) depends on a known, small set of inputs: its own
article record and parameters (which carry the neighbours it lists), the
model, method, memory and GPU records, every snapshot of its provider (the
price-history chart reads them all), the site settings, and the templates and
code. Their digest is the page's fingerprint. `.site.page-cache` beside the
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
import dataclasses
import datetime as dt
import hashlib
import json
import operator
import os
import re
from pathlib import Path

from generator.escape import json_encoder
from generator.records import Article, Catalog, Offer

VERSION = 1


offer_fields = operator.attrgetter(*(f.name for f in dataclasses.fields(Offer)))  # every field, in order


def cache_path(out: Path) -> Path:
    return out.parent / f".{out.name}.page-cache"


class Fingerprints:
    """Page fingerprints, with the digests pages share computed once."""

    def __init__(self, catalog: Catalog, code: str):
        self.catalog = catalog
        self.base = digest_of(code, repr(catalog.site), repr(sorted(catalog.gpus.items())))
        self._providers: dict[tuple[str, object], tuple[str, bool]] = {}
        self._shared: dict[tuple, tuple] = {}  # what pages share -> its digest, and the objects of its key
        self._offers: dict[tuple, str] = {}
        self._reprs: dict[int, tuple[object, str]] = {}
        self._pairs: dict[tuple[str, int], tuple[object, str]] = {}
        self._orders: dict[tuple[str, ...], list[str]] = {}
        self._lists: dict[int, tuple[list, str]] = {}
        self._families: dict[tuple, tuple] = {}  # (id of family params, model, method) -> see _family_page

    def _provider(self, offer_key: str, as_of) -> str:
        """What a page reads of its provider's prices.

        With one snapshot that is the snapshot's own fields and the page's offer,
        so a price change re-renders only the pages that show that price (the
        offer's own page, and pages listing it among their neighbours, whose
        parameters carry it). With two or more snapshots the page draws a
        price-history chart from all of them, so all of them count.
        """
        found = self._offers.get((offer_key, as_of))  # pages share offers: each is digested once
        if found is not None:
            return found
        provider = offer_key.split(":", 1)[0]
        key = (provider, as_of)
        if key not in self._providers:
            snaps = [s for s in self.catalog.snapshots.get(provider, ()) if as_of is None or s.checked <= as_of]
            history = len(snaps) >= 2
            shown = snaps if history else [dataclasses.replace(s, offers=()) for s in snaps]
            self._providers[key] = (digest_of(repr(shown)), history)
        digest, history = self._providers[key]
        if not history:  # the offer's own fields (its record's repr, less the dataclass machinery's time)
            offer = self.catalog.offer(offer_key, as_of)
            found = digest_of(digest, repr(offer_fields(offer) if offer is not None else None))
        else:
            found = digest
        self._offers[(offer_key, as_of)] = found
        return found

    def of(self, art: Article) -> str | None:
        """The page's fingerprint. What a family's pages share (their text, date and tags, the family's own
        parameters: Article.family_params, and by model and method their records) is digested once; per
        page, its title, slug and description, the parameters it does not share, and its offer's prices."""
        if art.kind != "setup" or not isinstance(art.params, dict):
            return None
        if art.page_inputs is not None and art.family_params is not None:
            return self._family_page(art)
        p = art.params
        shared = art.family_params if art.family_params is not None else _NOTHING_SHARED
        return digest_of(
            self._held(art, shared, p.get("model"), p.get("method")),
            repr((art.title, art.slug, art.description)),
            self._params(p, shared),
            self._provider(str(p.get("offer", "")), art.prices_as_of),
        )

    def _held(self, art: Article, shared: dict, model, method) -> str:
        """The digest of what the pages of a family share, by model and method (made once for them all)."""
        key = (art.file, id(art.body), id(art.faq), id(art.sources), art.attribution, art.date, art.tags)
        key += (art.prices_as_of, id(shared), model, method)
        held = self._shared.get(key)
        if held is None:
            cat = self.catalog
            digest = digest_of(
                self.base,
                repr((art.file, art.body, art.body_line, art.faq, art.sources, art.attribution)),
                repr((art.date, art.tags, art.prices_as_of, sorted(shared.items()))),
                repr(cat.models.get(model)),
                repr(cat.methods.get(method)),
                repr(cat.memory.get((model, method))),
            )
            # held with the objects whose ids make the key, so no other object can take their ids meanwhile
            held = self._shared[key] = (digest, shared, art.body, art.faq, art.sources)
        return held[0]

    def _family_page(self, art: Article) -> str:
        """The fingerprint of a page families.expand made: its params are its family's and its page_inputs
        (families.page_params), so those are all it digests besides what the family shares. What the
        family's pages share is found by the family's parameters, model and method, and taken when the
        page holds the very objects it was made from (the same for every page of a family)."""
        model, method, offer, shown, others, cheaper, listing = art.page_inputs
        shared = art.family_params
        found = self._families.get((id(shared), model, method))
        if not (
            found is not None
            and found[1] is art.body
            and found[2] is art.faq
            and found[3] is art.sources
            and found[4] is art.tags
            and found[5] is art.file
            and found[6] is art.date
            and found[7] is art.attribution
            and found[8] is art.prices_as_of
            and found[9] is shared
        ):
            digest = self._held(art, shared, model, method)
            found = (digest, art.body, art.faq, art.sources, art.tags, art.file, art.date, art.attribution)
            found = self._families[(id(shared), model, method)] = (*found, art.prices_as_of, shared)
        return digest_of(
            found[0],
            repr((art.title, art.slug, art.description, model, method, offer, others, cheaper, listing)),
            self._list_digest(shown),
            self._provider(offer, art.prices_as_of),
        )

    def _params(self, params: dict, shared: dict) -> str:
        """The page's parameters as text, less those it shares with its family (the very objects of
        `shared`, digested with what the family's pages share); what pages repeat is turned into text once.

        A family's pages share their parameter names, some values (the model,
        the method) and, within a group, the list of neighbours they show:
        each (name, value) is written once and held with its text, so the
        value's id cannot be reused while the text is kept (floats in repr
        were most of a fingerprint's cost).
        """
        keys = tuple(params)
        order = self._orders.get(keys)
        if order is None:
            order = self._orders[keys] = sorted(keys)
        pairs = self._pairs
        parts = []
        for name in order:
            value = params[name]
            if shared.get(name, _NOTHING_SHARED) is value:
                continue
            if type(value) is dict:  # the page's own neighbours record: its lists are shared
                parts.append(
                    f"{name!r}: {{" + ", ".join(f"{k!r}: {self._shared_repr(v)}" for k, v in value.items()) + "}"
                )
                continue
            found = pairs.get((name, id(value)))
            if found is None:
                found = pairs[(name, id(value))] = (value, f"{name!r}: {self._shared_repr(value)}")
            parts.append(found[1])
        return ", ".join(parts)

    def _list_digest(self, value: list) -> str:
        """The digest of a list pages share (a family page's neighbours), made once per list."""
        found = self._lists.get(id(value))
        if found is None:
            found = self._lists[id(value)] = (value, digest_of(repr(value)))  # held: its id stays its own
        return found[1]

    def _shared_repr(self, value) -> str:
        if not isinstance(value, (list, tuple)):
            return repr(value)
        found = self._reprs.get(id(value))
        if found is None:
            found = self._reprs[id(value)] = (value, repr(value))
        return found[1]


_NOTHING_SHARED: dict = {}  # a written article's parameters are its own (never changed)


def digest_of(*parts: str) -> str:
    """The sha256 of texts, each followed by a NUL (page fingerprints, figures parts' keys, the row cache's keys)."""
    return hashlib.sha256(("\0".join(parts) + "\0").encode("utf-8", "surrogatepass")).hexdigest()


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
    one member per line as Spool writes them: a kept page's entry goes to the next cache as it is."""
    try:
        with open(cache_path(out), "rb") as fh:
            raw = fh.read()
        data = json.loads(raw)
    except (OSError, ValueError):
        return {}, {}, False, {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("pages"), dict):
        return {}, {}, False, {}
    parts = data.get("parts")
    pages = data["pages"]
    verified = digest is not None and hashlib.sha256(raw).hexdigest() == digest
    members = {}
    lines = raw.split(b"\n")  # JSON text has no line break inside a string: a line is a member, or the ends
    if lines[0] == PAGES_HEAD and len(lines) == len(pages) + 2:
        last = len(pages) - 1
        members = {
            slug: line if n == last else line[:-1]  # less the comma that joins it to the next
            for n, (slug, line) in enumerate(zip(pages, lines[1:-1], strict=True))
        }
    return pages, parts if isinstance(parts, dict) else {}, verified, members


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


def reusable(entry: dict | None, fingerprint: str, out: Path, untouched: bool = False, verified: bool = False) -> bool:
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
    base = os.fspath(out)
    for rel, size in entry["files"].items():
        try:
            if os.stat(f"{base}/{rel}").st_size != size:
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
        with open(f"{os.fspath(out)}/{slug}/figures.json", "rb") as fh:
            data = fh.read()
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
    known = saved.get(rel)
    if not (isinstance(known, list) and len(known) == 2):
        return {}
    try:
        with open(f"{os.fspath(out)}/{rel}", "rb") as fh:
            data = fh.read()
    except OSError:
        return {}
    if len(data) != known[1] or not data.startswith(FIGURES_HEAD):
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
    return {
        "fingerprint": fingerprint,
        "prices_checked": [d.isoformat() for d in info.prices_checked],
        "has_charts": info.has_charts,
        "providers": info.providers,
        "unsourced": info.unsourced,
        "files": sizes,
    }


def member_json(slug: str, fingerprint: str, info, sizes: dict[str, int]) -> bytes:
    """`"slug": entry` as `save` writes it, UTF-8: workers encode their pages' members in parallel."""
    return f"{_encode(slug)}: {_encode(entry(fingerprint, info, sizes))}".encode()


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

    def add(self, slug: str, entry: dict | bytes) -> None:
        """One page's entry: a saved entry as a dict, or its member JSON (one a worker made: member_json,
        or as the last cache held it: load_members), each on a line of its own."""
        if self.fh is None:
            return
        member = entry if type(entry) is bytes else f"{_encode(slug)}: {_encode(entry)}".encode()
        data = b",\n" + member if self.count else b"\n" + member
        self._hash.update(data)
        try:
            self.fh.write(data)
        except OSError:
            self.discard()
        self.count += 1

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
