"""The page map: a family page takes its fingerprint from the last page cache only when none of its inputs
changed. Checked against every page's fingerprint made afresh, after changes of every kind."""

from __future__ import annotations

import marshal
import random
import re

import pytest
from conftest import make_content

from generator import build, pagecache
from generator.fingerprints import Fingerprints
from generator.pagemap import PageMap
from generator.rowcache import RowCache

SNAPSHOT = "prices/runpod/2026-11-29.yaml"


def _state(content, tmp_path):
    """The content's articles, every fingerprint made afresh, and its page map."""
    rows = RowCache(tmp_path / "site", "code", read=False)
    try:
        catalog, articles, listings, _ = build._articles(content, False, None, rows=rows)
    finally:
        rows.discard()
    fresh = [Fingerprints(catalog, "code").of(art) for art in articles]
    return articles, fresh, PageMap(listings, Fingerprints(catalog, "code"))


def _cache(articles, fingerprints, pagemap) -> pagecache.Cache:
    """The page cache a build of these pages would leave, its map as marshal reads it back."""
    body = {"slugs": [a.slug for a in articles], "fingerprints": fingerprints}
    body["pagemap"] = marshal.loads(marshal.dumps(pagemap.body()))
    return pagecache.Cache(body)


def _mapped(articles, pagemap, last, monkeypatch) -> tuple[list, list[str]]:
    """The fingerprints the map gives, and the slugs of the pages it had made afresh."""
    made, of = [], Fingerprints.of

    def counted(self, art):
        made.append(art.slug)
        return of(self, art)

    monkeypatch.setattr(Fingerprints, "of", counted)
    try:
        return pagemap.fingerprints_of(articles, last), made
    finally:
        monkeypatch.setattr(Fingerprints, "of", of)


def _price(text: str, gpu: str, count: int, factor: float) -> str:
    """The snapshot with the price of one offer scaled."""
    pattern = re.compile(rf"(gpu: {re.escape(gpu)}, count: {count}, usd_per_hour: )([0-9.]+)")
    assert pattern.search(text), (gpu, count)
    return pattern.sub(lambda m: f"{m.group(1)}{round(float(m.group(2)) * factor, 2)}", text, count=1)


def _second_snapshot(content):
    old = content / SNAPSHOT
    (old.parent / "2026-12-01.yaml").write_text(old.read_text().replace("checked: 2026-11-29", "checked: 2026-12-01"))


CHANGES = {
    "one price, a little": lambda c: _edit(c, SNAPSHOT, lambda t: _price(t, "h100", 8, 0.98)),
    "one price, to the top of its groups": lambda c: _edit(c, SNAPSHOT, lambda t: _price(t, "h100", 8, 0.4)),
    "one price, to the bottom": lambda c: _edit(c, SNAPSHOT, lambda t: _price(t, "h100", 8, 1.45)),
    "an offer removed": lambda c: _edit(c, SNAPSHOT, lambda t: re.sub(r"(?m)^- \{gpu: h100, count: 8,.*\n", "", t)),
    "an offer added": lambda c: _edit(c, SNAPSHOT, lambda t: t + "- {gpu: h200, count: 3, usd_per_hour: 11.5}\n"),
    "a second snapshot (a price-history chart)": _second_snapshot,
    "a snapshot's own field": lambda c: _edit(c, SNAPSHOT, lambda t: t.replace("name: RunPod", "name: RunPod Cloud")),
    "the family's utilization": lambda c: _edit(c, "families/70b-setups.md", lambda t: t.replace("0.30", "0.31", 1)),
    "the family's title pattern": lambda c: _edit(
        c, "families/70b-setups.md", lambda t: t.replace('title: "{model_name} with', 'title: "{model_name}, with')
    ),
    "the family's listing slug": lambda c: _edit(
        c, "families/70b-setups.md", lambda t: t.replace("slug: fine-tune-70b-every-setup", "slug: every-70b-setup")
    ),
    "a GPU's memory": lambda c: _edit(c, "hardware.yaml", lambda t: t.replace("memory_gb: 141", "memory_gb: 140", 1)),
    "the family's text": lambda c: _edit(
        c, "families/70b-setups.md", lambda t: t.replace("costs about", "costs roughly")
    ),
    # with two snapshots a page charts them all, though its row is the newest one's
    "an older snapshot's price": (_second_snapshot, lambda c: _edit(c, SNAPSHOT, lambda t: _price(t, "h200", 1, 1.1))),
}


def _edit(content, rel, change):
    path = content / rel
    before = path.read_text()
    after = change(before)
    assert after != before, rel
    path.write_text(after)


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_leaves_each_page_the_fingerprint_made_afresh(tmp_path, monkeypatch, change):
    content = make_content(tmp_path, families=True)
    prepare, change = CHANGES[change] if isinstance(CHANGES[change], tuple) else (None, CHANGES[change])
    if prepare is not None:
        prepare(content)
    articles, fresh, pagemap = _state(content, tmp_path)
    last = _cache(articles, fresh, pagemap)
    change(content)
    articles, fresh, pagemap = _state(content, tmp_path)
    mapped, made = _mapped(articles, pagemap, last, monkeypatch)
    assert mapped == fresh
    # the pages whose fingerprint changed were all made afresh
    before = dict(zip(last.slugs, last.fingerprints, strict=True))
    changed = {a.slug for a, fp in zip(articles, fresh, strict=True) if fp is not None and before.get(a.slug) != fp}
    assert changed and changed <= set(made)


def test_an_unchanged_build_makes_only_the_written_articles_fingerprints(tmp_path, monkeypatch):
    content = make_content(tmp_path, families=True)
    articles, fresh, pagemap = _state(content, tmp_path)
    last = _cache(articles, fresh, pagemap)
    articles, fresh, pagemap = _state(content, tmp_path)
    mapped, made = _mapped(articles, pagemap, last, monkeypatch)
    assert mapped == fresh
    assert set(made) == {a.slug for a in articles if a.page_inputs is None}


def test_one_price_change_fingerprints_its_pages_and_those_it_reranks_not_the_rest(tmp_path, monkeypatch):
    """A small cut on one offer: its own pages are made, and the pages whose count of cheaper setups it moved;
    the pages of the family's other offers that it passed by are not."""
    content = make_content(tmp_path, families=True)
    articles, fresh, pagemap = _state(content, tmp_path)
    last = _cache(articles, fresh, pagemap)
    CHANGES["one price, a little"](content)
    articles, fresh, pagemap = _state(content, tmp_path)
    _, made = _mapped(articles, pagemap, last, monkeypatch)
    family = [a for a in articles if a.page_inputs is not None]
    runpod = {a.slug for a in family if a.page_inputs[2].startswith("runpod:")}
    assert runpod <= set(made)
    assert len([s for s in made if s not in runpod]) < len(family) - len(runpod)


def test_random_price_changes_in_turn(tmp_path, monkeypatch):
    """Twelve builds in turn, each after scaling a few prices of a few providers at random (ties at the cents
    shown included: prices are rounded to the cent), each map read by the next build."""
    content = make_content(tmp_path, families=True)
    articles, fresh, pagemap = _state(content, tmp_path)
    rng = random.Random(20261205)
    snapshots = sorted((content / "prices").glob("*/*.yaml"))
    for _ in range(12):
        last = _cache(articles, fresh, pagemap)
        for path in rng.sample(snapshots, 2):
            text = path.read_text()
            offers = re.findall(r"gpu: ([a-z0-9-]+), count: (\d+), usd_per_hour:", text)
            for gpu, count in rng.sample(offers, min(2, len(offers))):
                text = _price(text, gpu, int(count), rng.choice([0.9, 0.97, 1.0, 1.03, 1.2]))
            path.write_text(text)
        articles, fresh, pagemap = _state(content, tmp_path)
        mapped, _ = _mapped(articles, pagemap, last, monkeypatch)
        assert mapped == fresh


def _groups(body, make):
    body["groups"] = {key: make(*value) for key, value in body["groups"].items()}


SPOILED = {
    "no map (a cache of an older costpress)": lambda last: setattr(last, "pagemap", None),
    "another version": lambda last: last.pagemap.update(version=0),
    "no groups": lambda last: last.pagemap.pop("groups"),
    "providers not a dict": lambda last: last.pagemap.update(providers=[]),
    "other group digests": lambda last: _groups(last.pagemap, lambda digest, costs: ("0" * 64, costs)),
    "costs not whole numbers of doubles": lambda last: _groups(
        last.pagemap, lambda digest, costs: (digest, costs[:-1])
    ),
    "a cost fewer": lambda last: _groups(last.pagemap, lambda digest, costs: (digest, costs[:-8])),
}


@pytest.mark.parametrize("spoil", list(SPOILED))
def test_a_map_missing_or_not_this_builds_makes_every_fingerprint(tmp_path, monkeypatch, spoil):
    content = make_content(tmp_path, families=True)
    articles, fresh, pagemap = _state(content, tmp_path)
    last = _cache(articles, fresh, pagemap)
    SPOILED[spoil](last)
    mapped, made = _mapped(articles, pagemap, last, monkeypatch)
    assert mapped == fresh
    assert len(made) == len(articles)
