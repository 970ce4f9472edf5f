"""Pages whose offer is gone: a price refresh never turns a family page's address into a not-found page.

A family page exists while its provider's newest price list holds its
offer. When a provider stops listing one (8 × H100 no longer in the new
snapshot), the page would vanish and every link to it break. The older
snapshots stay in content/prices/, so the build knows what was offered and
when: at the address of each page such an offer had, it writes a short
page that says the provider no longer lists the setup, since which price
list, when it was last listed, and where the setups on offer now are (the
family's listing). The page is not in the sitemap, the feeds, the search
index or figures.json, and carries `noindex`.

Only offers last listed on or after the family's `date` count (a page of
the family may have been published for them), and only where the job fit
the setup. An address that a page, an alias or another such page already
has is left to it.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.scenarios import setup_row

TEMPLATE = "retired.html"


def gone_offers(cat, provider: str) -> list:
    """The offers an earlier snapshot of the provider held and its newest does not: each as last listed."""
    snaps = cat.snapshots.get(provider, ())
    if len(snaps) < 2:
        return []
    now = {(o.gpu, o.count) for o in snaps[-1].offers}
    last = {}
    for snap in snaps[:-1]:  # oldest first: a later listing replaces an earlier one
        for o in snap.offers:
            last[(o.gpu, o.count)] = o
    return [o for key, o in sorted(last.items()) if key not in now]


def may_have(cat, listings: Iterable) -> bool:
    """Whether a family's provider has more than one snapshot (else no offer of it can be gone)."""
    return any(len(cat.snapshots.get(p, ())) > 1 for x in listings for p in x.family.data["axes"]["providers"])


def found(cat, built: Iterable, listings: Iterable) -> list[dict]:
    """pages() for a build whose pages (tasks.PageInfo) are `built`: the addresses they, the listings, their
    aliases and the build's own folders have are taken. [] at once when no family's provider has an earlier
    snapshot."""
    from generator.sitefiles import reserved_folders  # (sitefiles imports this module)

    listings = list(listings)
    if not may_have(cat, listings):
        return []
    articles = [p.article for p in built]
    taken = {a.slug for a in articles} | {x.slug for x in listings} | set(reserved_folders(cat))
    taken |= {alias for owner in [*articles, *listings] for alias in owner.aliases}
    return pages(cat, listings, taken)


def pages(cat, listings: Iterable, taken: set[str]) -> list[dict]:
    """What each page whose offer is gone shows, at its address and at those its family's earlier slug
    patterns gave it (page.aliases), by family and in the grid's order; `taken`: the addresses pages and
    aliases already have (none of them is made twice)."""
    from generator.families import fill, slug_text  # (families imports much of the build)

    out = []
    for listing in listings:
        fam = listing.family
        axes, pattern = fam.data["axes"], fam.data["page"]
        attention = fam.data["params"].get("attention_sequence_length")
        memo: dict = {}
        for provider in axes["providers"]:
            newest = cat.snapshot(provider)
            gone = [o for o in gone_offers(cat, provider) if o.gpu in cat.gpus and o.checked >= fam.data["date"]]
            for offer in gone:
                for model_id in axes["models"]:
                    for method_id in axes["methods"]:
                        model, method = cat.models.get(model_id), cat.methods.get(method_id)
                        if model is None or method is None:
                            continue
                        row = setup_row(cat, model, method, offer, attention, memo)
                        if not row["fits"]:
                            continue
                        slugs = {slug_text(fill(slug, row)) for slug in (pattern["slug"], *(pattern["aliases"] or ()))}
                        slugs = sorted(slugs - taken - {""})  # its address, and those earlier patterns gave it
                        taken.update(slugs)
                        if slugs:
                            notice = {
                                "title": fill(pattern["title"], row),
                                "provider_name": offer.provider_name,
                                "setup": row["setup"],
                                "last_listed": offer.checked,
                                "last_imported": offer.imported,  # a catalog's import date, not when it was read
                                "newest": newest.checked,
                                "newest_imported": newest.imported,
                                "listing": {"slug": listing.slug, "title": listing.title},
                            }
                            out += [{"slug": slug, **notice} for slug in slugs]
    return out


def render(renderer, found: list[dict], base: str) -> dict[str, bytes]:
    """Each page of `found` (pages()) by output path; `base` ends in '/'."""
    template = renderer.html.get_template(TEMPLATE) if found else None
    out = {}
    for gone in found:
        page = {"root": "../", "url": f"{base}{gone['slug']}/", **gone}
        out[f"{gone['slug']}/index.html"] = template.render(page=page).encode("utf-8")
    return out
