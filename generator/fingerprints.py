"""Page fingerprints: what a family page's output depends on, as one digest.

A family page (kind `setup`) depends on a known, small set of inputs: its own
article record and parameters (which carry the neighbours it lists), the
model, method, memory and GPU records, every snapshot of its provider (the
price-history chart reads them all), the site settings, and the templates and
code. Their digest is the page's fingerprint: the page cache (pagecache.py)
keeps a page whose fingerprint is the one its files were made from. What the
pages of a family share is digested once; per page, only what is its own.
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator

from generator.records import Article, Catalog, Offer, Snapshot

offer_fields = operator.attrgetter(*(f.name for f in dataclasses.fields(Offer)))  # every field, in order


def offer_digests(snap: Snapshot) -> tuple[str, ...]:
    """The digest of every field of each of a snapshot's offers, in order: made once per snapshot and held
    on it.

    The row cache's provider keys and the pages' fingerprints both read them:
    each turned all 4,540 offers of the 10,000-page benchmark into text again
    (0.02 s of a price refresh between them). A snapshot kept by the parse
    cache brings its offers' digests with its records, so an unchanged
    snapshot's offers are not written out at all. They are held by the
    snapshot, not by each offer: an attribute added to every offer turned its
    shared-key __dict__ into a dict of its own (208 → 832 bytes; 28-34 MB more
    in each process of a 100,000-page build). Nothing changes a record once it
    is made.
    """
    found = snap.__dict__.get("offer_digests")
    if found is None:
        found = tuple(digest_of(repr(offer_fields(offer))) for offer in snap.offers)
        object.__setattr__(snap, "offer_digests", found)  # beside the fields (frozen: they do not change)
    return found


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
            digests: dict[str, str] = {}  # the snapshot's offers by key, as Catalog.offer finds them (the first)
            for snap in snaps[-1:] if not history else ():
                for offer, made in zip(snap.offers, offer_digests(snap), strict=True):
                    digests.setdefault(offer.key, made)
            self._providers[key] = (digest_of(repr(shown)), history, digests)
        digest, history, digests = self._providers[key]
        if not history:  # the offer's own fields (offer_digests)
            found = digest_of(digest, digests.get(offer_key, "no offer"))
        else:
            found = digest
        self._offers[(offer_key, as_of)] = found
        return found

    def of(self, art: Article) -> str | None:
        """The page's fingerprint. What a family's pages share (their text, date and tags, the family's own
        parameters: Article.family_params, and by model and method their records) is digested once; per
        page, its title, slug, description and aliases, the parameters it does not share, and its offer's
        prices."""
        if art.kind != "setup":
            return None
        if art.page_inputs is not None and art.family_params is not None:
            return self._family_page(art)
        if not isinstance(art.params, dict):
            return None
        p = art.params
        shared = art.family_params if art.family_params is not None else _NOTHING_SHARED
        return digest_of(
            self._held(art, shared, p.get("model"), p.get("method")),
            repr((art.title, art.slug, art.description, art.aliases)),
            self._params(p, shared),
            self._provider(str(p.get("offer", "")), art.prices_as_of),
        )

    def _held(self, art: Article, shared: dict, model, method) -> str:
        """The digest of what the pages of a family share, by model and method (made once for them all)."""
        key = (art.file, id(art.body), id(art.faq), id(art.sources), art.attribution, art.date, art.tags)
        key += (art.prices_as_of, id(shared), model, method, art.draft)
        held = self._shared.get(key)
        if held is None:
            cat = self.catalog
            digest = digest_of(
                self.base,
                repr((art.file, art.body, art.body_line, art.faq, art.sources, art.attribution)),
                repr((art.date, art.tags, art.prices_as_of, sorted(shared.items()), art.draft)),
                repr(cat.models.get(model)),
                repr(cat.methods.get(method)),
                repr(cat.memory.get((model, method))),
            )
            # held with the objects whose ids make the key, so no other object can take their ids meanwhile
            held = self._shared[key] = (digest, shared, art.body, art.faq, art.sources)
        return held[0]

    def _family_page(self, art: Article) -> str:
        """The fingerprint of a page families.family_pages made: its params are its family's and its page_inputs
        (families.page_params), so those are all it digests besides what the family shares. Its texts are
        digested as they are, each ended by a NUL, which none of them can hold (schema: text without control
        characters; slugs and keys are plainer still): a tuple's repr of them took as long again."""
        model, method, offer, shown, others, cheaper, listing = art.page_inputs
        return digest_of(
            self._held(art, art.family_params, model, method),
            art.title,
            art.slug,
            art.description,
            model,
            method,
            offer,
            str(others),
            str(cheaper),
            listing,
            self._list_digest(shown),
            self._provider(offer, art.prices_as_of),
            *art.aliases,  # (its figures entry names them)
        )

    def shared(self, art: Article, model: str, method: str) -> str:
        """The digest of what a family's pages of `model` and `method` share (any of the family's pages: `art`)."""
        return self._held(art, art.family_params, model, method)

    def snapshots(self, provider: str) -> str:
        """One digest of everything a family page can read of its provider's prices: each snapshot's own
        fields and the digest of each of its offers (offer_digests), of every snapshot the provider has.
        _provider reads a part of that (the snapshots' fields, and with one snapshot only the page's
        offer), so equal digests mean equal parts."""
        snaps = self.catalog.snapshots.get(provider, ())
        return digest_of(
            repr([dataclasses.replace(s, offers=()) for s in snaps]),
            *(made for snap in snaps for made in offer_digests(snap)),
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
