"""The parse cache: an unchanged YAML file is not parsed again, and a file read from the cache is the Doc a
parse gives."""

from __future__ import annotations

import datetime as dt

from conftest import CONTENT, TEMPLATES, make_content, run_cli

from generator import parsecache
from generator.errors import ContentError
from generator.load import load_content
from generator.schema import parse_yaml


def test_every_content_file_reads_back_from_the_cache_as_parsed():
    files = sorted(CONTENT.rglob("*.yaml"))
    assert len(files) > 10
    for path in files:
        text = path.read_text()
        doc = parse_yaml(text, str(path))
        line = parsecache._encoded(doc)
        assert line is not None, path
        back = parsecache._decoded(line, str(path))
        assert repr(back.data) == repr(doc.data) and back.lines == doc.lines, path


def test_what_json_cannot_carry_is_parsed_every_time(tmp_path):
    """A file with a problem (text keys only) or a NaN is parsed on every build; dates and times come back
    as the same types."""
    cache = parsecache.ParseCache(tmp_path / "site")
    for text in ("1: one\n", "x: .nan\n"):
        doc = cache.parse(text, "t.yaml")
        assert doc.problems or doc.data["x"] != doc.data["x"]
    assert cache.new == {} and cache.parsed == 2
    doc = cache.parse("when: 2026-11-05 10:00:00\nday: 2026-11-05\n", "t.yaml")
    cache.save()
    again = parsecache.ParseCache(tmp_path / "site")
    back = again.parse("when: 2026-11-05 10:00:00\nday: 2026-11-05\n", "other.yaml")
    assert again.parsed == 0 and back.file == "other.yaml"
    assert back.data == doc.data == {"when": dt.datetime(2026, 11, 5, 10, 0), "day": dt.date(2026, 11, 5)}
    assert type(back.data["day"]) is dt.date and back.lines == doc.lines


def _parses(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = parsecache.parse_yaml
    monkeypatch.setattr(parsecache, "parse_yaml", lambda text, display: seen.append(display) or real(text, display))
    return seen


def test_a_price_change_parses_only_the_snapshot_that_changed(tmp_path, monkeypatch):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    args = ["build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES)]
    seen = _parses(monkeypatch)
    assert run_cli(*args).exit_code == 0
    assert len(seen) > 10  # the first build parses everything
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 2.60", "usd_per_hour: 2.70", 1))
    seen.clear()
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert [name.rsplit("/", 3)[-3:] for name in seen] == [["prices", "nodus", "2026-11-05.yaml"]]
    assert run_cli(*args, "--check").exit_code == 0
    # a damaged cache file is ignored: every file is parsed again, and the build is the same
    parsecache.cache_path(out).write_text("not a parse cache\n\x00")
    (content / "site.yaml").write_text((content / "site.yaml").read_text() + "\n")
    seen.clear()
    assert run_cli(*args).exit_code == 0
    assert len(seen) > 10
    assert run_cli(*args, "--check").exit_code == 0


def _snapshot_load(content, out, code="code 1"):
    """load_content with a parse cache that keeps snapshots as records; the cache, and the catalog or the
    problems."""
    cache = parsecache.ParseCache(out)
    cache.code = code
    try:
        return cache, load_content(content, cache)
    except ContentError as exc:
        return cache, exc.problems


def test_a_snapshot_loads_as_the_records_it_made_last_time(tmp_path):
    """Snapshots that loaded without a problem come back as the same records, every field, without being
    parsed or checked; another code digest, or the content's GPUs changed, takes none of them."""
    content, out = make_content(tmp_path), tmp_path / "site"
    files = sorted((content / "prices").rglob("*.yaml"))
    first, catalog = _snapshot_load(content, out)
    assert first.kept_snapshots == 0 and len(first.new_records) == len(files) > 3
    first.save()
    again, kept = _snapshot_load(content, out)
    assert again.kept_snapshots == len(files) and again.parsed == 0
    assert repr(kept.snapshots) == repr(catalog.snapshots) == repr(load_content(content).snapshots)
    assert [o.line for s in kept.snapshots["nodus"] for o in s.offers] == [
        o.line for s in catalog.snapshots["nodus"] for o in s.offers
    ]
    assert _snapshot_load(content, out, code="code 2")[0].kept_snapshots == 0
    # a GPU no longer in hardware.yaml: the snapshots that offer it must tell, not come back from the cache
    hardware = content / "hardware.yaml"
    hardware.write_text(hardware.read_text().replace("id: a100-80gb\n", "id: a100-80gb-renamed\n", 1))
    cache, problems = _snapshot_load(content, out)
    assert cache.kept_snapshots == 0
    assert any("nodus/2026-11-05.yaml:7: offers[0].gpu" in p for p in problems), problems


def test_a_snapshot_with_a_problem_is_checked_and_told_every_time(tmp_path):
    """A snapshot that loads with a problem (here a duplicate offer) is not kept: the next load tells it again."""
    dup = "  - {gpu: h100, count: 1, usd_per_hour: 2.70}\n"
    content = make_content(tmp_path, {"prices/nodus/2026-11-05.yaml": lambda text: text + dup})
    out, others = tmp_path / "site", len(list((content / "prices").rglob("*.yaml"))) - 1
    for kept in (0, others):  # the second time, every other snapshot comes from the cache
        cache, problems = _snapshot_load(content, out)
        assert any("nodus/2026-11-05.yaml" in p and "duplicate offer h100 x1" in p for p in problems), problems
        assert cache.kept_snapshots == kept and len(cache.new_records) == others
        cache.save()  # (a build that fails saves nothing: the cache must not hold it even so)


def test_a_snapshot_changed_while_it_loads_is_not_kept_under_its_old_bytes(tmp_path):
    """The key is read before the file is parsed: a file edited in between must not leave its new records
    under its old bytes' key, or putting the old text back would load the new prices."""
    import functools

    from generator import load

    content, out = make_content(tmp_path), tmp_path / "site"
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    old = snap.read_text()
    cache = parsecache.ParseCache(out)
    cache.code = "code 1"
    real = functools.partial(load._load_doc, parsed=cache)

    def edited_meanwhile(path, problems):
        if path == snap:
            path.write_text(old.replace("usd_per_hour: 2.60", "usd_per_hour: 2.70", 1))
        return real(path, problems)

    hardware = load_content(content).gpus
    load._load_snapshots(content / "prices", hardware, [], edited_meanwhile, cache)
    cache.save()
    snap.write_text(old)
    _, catalog = _snapshot_load(content, out)
    (h100,) = [o for s in catalog.snapshots["nodus"] for o in s.offers if o.gpu == "h100" and o.count == 1]
    assert h100.usd_per_hour == 2.60


def test_force_and_check_take_no_snapshot_records(tmp_path, monkeypatch):
    """`build --force` and `--check` make every snapshot's records again; a plain build takes them."""
    content, out = make_content(tmp_path), tmp_path / "site"
    args = ["build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES)]
    assert run_cli(*args).exit_code == 0
    taken: list = []
    real = parsecache.ParseCache.snapshot

    def snapshot(cache, key):
        found = real(cache, key)
        if found is not None:
            taken.append(found)
        return found

    monkeypatch.setattr(parsecache.ParseCache, "snapshot", snapshot)
    for extra in ("--force", "--check"):
        result = run_cli(*args, extra)
        assert result.exit_code == 0, result.output
        assert taken == [], extra
    (content / "site.yaml").write_text((content / "site.yaml").read_text() + "\n")  # not a no-op build
    assert run_cli(*args).exit_code == 0
    assert len(taken) == len(list((content / "prices").rglob("*.yaml")))


def test_a_damaged_parse_cache_is_not_used_even_when_it_still_reads_as_json(tmp_path):
    """A price changed inside the cache file (still valid JSON) fails the header's digest: every file is
    parsed and loaded again, and the price is the file's."""
    content, out = make_content(tmp_path), tmp_path / "site"
    first, _ = _snapshot_load(content, out)
    first.save()
    path = parsecache.cache_path(out)
    text = path.read_text()
    assert text.count("2.6") >= 2  # nodus's H100 price, in its parsed document and in its records
    path.write_text(text.replace("2.6", "9.99"))
    again, catalog = _snapshot_load(content, out)
    assert again.kept_snapshots == 0 and again.parsed == first.parsed
    (h100,) = [o for s in catalog.snapshots["nodus"] for o in s.offers if o.gpu == "h100" and o.count == 1]
    assert h100.usd_per_hour == 2.60


def test_a_kept_snapshot_brings_each_offers_digest_as_its_fields_give_it(tmp_path):
    """The row cache's provider keys and the pages' fingerprints read each offer's digest; a snapshot the parse
    cache keeps brings the digests its offers had, which must be what those very fields give (made anew
    here, hashlib on the fields' text), and a record whose digests do not match its offers is not taken."""
    import hashlib
    import json

    from generator.fingerprints import offer_digests, offer_fields

    content, out = make_content(tmp_path), tmp_path / "site"
    first, _catalog = _snapshot_load(content, out)
    first.save()
    again, kept = _snapshot_load(content, out)
    snaps = [s for snaps in kept.snapshots.values() for s in snaps]
    assert again.kept_snapshots == len(snaps) > 3 and sum(len(s.offers) for s in snaps) > 10
    for snap in snaps:
        assert "offer_digests" in snap.__dict__  # brought by the cache, not made by this test
        fresh = [hashlib.sha256((repr(offer_fields(o)) + "\0").encode()).hexdigest() for o in snap.offers]
        assert list(offer_digests(snap)) == fresh
    # a record with one digest too few, or one that is not text, is read as no record: the file is loaded
    line = next(iter(again.old_records.values()))
    head, rows, digests = json.loads(line)
    assert parsecache._snapshot_of(line) is not None
    assert parsecache._snapshot_of(json.dumps([head, rows, digests[:-1]])) is None
    assert parsecache._snapshot_of(json.dumps([head, rows, [*digests[:-1], 7]])) is None


def test_offers_keep_the_dicts_their_class_shares(tmp_path):
    """Digests and keys made for every offer leave each offer's __dict__ as small as its class's shared
    keys make it: a digest held on each offer took 208 → 832 bytes an offer (28-34 MB a process at 100,000 pages)."""
    import sys

    from generator.fingerprints import Fingerprints
    from generator.rowcache import FamilyRows

    catalog = load_content(make_content(tmp_path))
    offers = [o for snaps in catalog.snapshots.values() for s in snaps for o in s.offers]
    before = sys.getsizeof(offers[0].__dict__)
    rows, prints = FamilyRows(None, "f", "k", {}, []), Fingerprints(catalog, "code")
    for provider, snaps in catalog.snapshots.items():
        rows.kept_rows(provider, snaps[-1])
        for offer in snaps[-1].offers:
            prints._provider(offer.key, None)
    assert max(sys.getsizeof(o.__dict__) for o in offers) <= max(before, 300)


def test_a_changed_offer_changes_its_providers_row_key_and_its_pages_fingerprints(tmp_path):
    """One offer's price changes: its provider's row key and the fingerprint of the page that shows it
    change, and no other provider's key does (each offer digested once, from its fields)."""
    from generator.fingerprints import Fingerprints
    from generator.rowcache import FamilyRows

    def keys_and_prints(catalog):
        rows = FamilyRows(None, "f", "k", {}, [])
        for provider, snaps in catalog.snapshots.items():
            rows.kept_rows(provider, snaps[-1])
        keys = rows.row_keys()  # per provider, of the family's key and the provider's
        prints = Fingerprints(catalog, "code")
        return keys, {o.key: prints._provider(o.key, None) for s in catalog.snapshots.values() for o in s[-1].offers}

    content = make_content(tmp_path)
    before_keys, before_prints = keys_and_prints(load_content(content))
    snap = content / "prices" / "nodus" / "2026-11-05.yaml"
    text = snap.read_text()
    assert "{gpu: h100, count: 1, usd_per_hour: 2.60}" in text
    snap.write_text(text.replace("usd_per_hour: 2.60", "usd_per_hour: 2.65", 1))
    after_keys, after_prints = keys_and_prints(load_content(content))
    assert [p for p in before_keys if before_keys[p] != after_keys[p]] == ["nodus"]
    changed = [k for k in before_prints if before_prints[k] != after_prints.get(k)]
    assert changed == ["nodus:h100x1"], changed
