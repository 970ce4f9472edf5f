"""The page map: which family pages a change can reach, so that the others' fingerprints are not made again.

A family page's fingerprint (fingerprints.Fingerprints) digests, besides
costpress's code and the site settings:

- what its family's pages of one model and method share, the size of that
  group, its listing's slug and the cards of the group's cheapest few rows,
  from which every neighbour list a page of the group shows is drawn: one
  digest per group here;
- its own row (title, slug, description, offer), which the row cache's key
  for its family and provider fixes (rowcache.FamilyRows.row_keys), and what
  it reads of its provider's snapshots: one digest per family and provider;
- how many rows of its group cost less at the cents shown.

The page cache (pagecache.py) keeps these digests beside the fingerprints,
with each group's rounded costs in order. A page whose group digest and
provider digest are the ones kept, and which has as many cheaper rows
against the kept costs as against this build's, has every input its
fingerprint had, so its fingerprint is the one its entry holds: it is taken
from there. Only the other pages (a price refresh: the changed provider's,
and those whose rank it moved) are fingerprinted. A page's own rounded cost
is in its group's list, at the place its count of cheaper rows gives, so no
per-page figure is kept.

The map is used only with the page cache the last build recorded (its
columns and its map are one file, written together); any other build makes
every fingerprint.
"""

from __future__ import annotations

import array
import bisect
from typing import TYPE_CHECKING

from generator.fingerprints import Fingerprints, digest_of

if TYPE_CHECKING:
    from generator.families import Listing
    from generator.pagecache import Cache
    from generator.records import Article

VERSION = 1


class PageMap:
    """This build's map (made from its listings' groups), and the fingerprints it lets pages keep."""

    def __init__(self, listings: list[Listing], fingerprints: Fingerprints) -> None:
        self.fingerprints = fingerprints
        self.groups: dict[tuple[str, str, str], tuple[str, list[float]]] = {}  # (file, model, method) ->
        self.providers: dict[tuple[str, str], str] = {}  # (file, provider) -> digest
        self.whole = all(x.row_keys is not None and x.groups is not None for x in listings)
        if not self.whole:  # built without a row cache: no map (nor a page cache to keep one in)
            return
        snapshots: dict[str, str] = {}
        for listing in listings:
            file = listing.family.file
            for provider, row_key in listing.row_keys.items():
                if provider not in snapshots:
                    snapshots[provider] = fingerprints.snapshots(provider)
                self.providers[(file, provider)] = digest_of(row_key, snapshots[provider])
            first = listing.first_page
            if first is None:
                continue
            for (model, method), group in listing.groups.items():
                digest = digest_of(
                    fingerprints.shared(first, model, method),
                    str(group.size),
                    listing.slug,
                    repr(group.cards),
                )
                self.groups[(file, model, method)] = (digest, group.rounded)

    def body(self) -> dict | None:
        """The map as the page cache keeps it (marshal values: costs as packed doubles), or None."""
        if not self.whole:
            return None
        return {
            "version": VERSION,
            "groups": {
                k: (digest, array.array("d", rounded).tobytes()) for k, (digest, rounded) in self.groups.items()
            },
            "providers": self.providers,
        }

    def fingerprints_of(self, articles: list[Article], last: Cache | None) -> list[str | None]:
        """Every article's fingerprint, a family page's taken from `last` when the map says none of its
        inputs changed (`last` must be the page cache the last build recorded; None: every one made)."""
        of = self.fingerprints.of
        kept = self._unchanged(last.pagemap) if last is not None else None
        if not kept:
            return list(map(of, articles))
        (groups, providers), index, saved = kept, last.index, last.fingerprints
        out = []
        for art in articles:
            inputs = art.page_inputs
            if inputs is not None and art.family_params is not None and art.prices_as_of is None:
                model, method, offer, _shown, _others, cheaper, _listing = inputs
                file = art.file
                old = groups.get((file, model, method))
                if old is not None and (file, offer.split(":", 1)[0]) in providers:
                    now, then = old
                    k = index.get(art.slug)
                    # the page's rounded cost is now[cheaper]: as many rows cost less then as now
                    if k is not None and bisect.bisect_left(then, now[cheaper]) == cheaper:
                        out.append(saved[k])
                        continue
            out.append(of(art))
        return out

    def _unchanged(self, body) -> tuple[dict, set] | None:
        """The groups whose digest is the last map's (with this build's rounded costs and the last's), and
        the families' providers whose digest is; None without a usable map."""
        if not (self.whole and type(body) is dict and body.get("version") == VERSION):
            return None
        groups, providers = body.get("groups"), body.get("providers")
        if type(groups) is not dict or type(providers) is not dict:
            return None
        same = {}
        for key, (digest, rounded) in self.groups.items():
            found = groups.get(key)
            if type(found) is tuple and len(found) == 2 and found[0] == digest and type(found[1]) is bytes:
                then = array.array("d")
                try:
                    then.frombytes(found[1])
                except ValueError:
                    continue
                if len(then) == len(rounded):  # (the group's size is in its digest)
                    same[key] = (rounded, then)
        return same, {key for key, digest in self.providers.items() if providers.get(key) == digest}
