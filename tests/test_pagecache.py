"""The page cache's file: what pagecache.Next writes, pagecache.read gives back, entry for entry, and a file
that is damaged, of another version or of the wrong shape gives no cache at all."""

from __future__ import annotations

import datetime as dt
import hashlib
import marshal
from types import SimpleNamespace

import pytest

from generator import pagecache
from generator.nextfile import header


def _info(slug, fingerprint, days, charts, providers, unsourced):
    article = SimpleNamespace(slug=slug)
    return SimpleNamespace(
        article=article,
        fingerprint=fingerprint,
        prices_checked=[dt.date.fromisoformat(d) for d in days],
        has_charts=charts,
        providers=list(providers),
        unsourced=list(unsourced),
    )


PAGES = [  # slug, fingerprint, days checked, charts, providers, unsourced, files and sizes
    ("a", "fa", ["2026-11-01"], True, ["p1"], [], {"index.html": 120, "index.md": 40, "chart.svg": 9}),
    ("b", "fb", ["2026-11-01", "2026-11-08"], False, ["p1", "p2"], ["a figure"], {"index.html": 7}),
    ("c", "fc", [], True, [], [], {"index.html": 2**40, "figures.json": 0}),
    ("d", "fd", ["2026-11-01"], True, ["p1"], [], {"index.html": 121, "index.md": 41, "chart.svg": 10}),
]


def _written(out, pages=PAGES, parts=None):
    nxt = pagecache.Next(out)
    for slug, fp, days, charts, providers, unsourced, files in pages:
        info = _info(slug, fp, days, charts, providers, unsourced)
        sizes = {f"{slug}/{name}": size for name, size in files.items()}
        nxt.add(info, pagecache.entry_files(slug, sizes))
    nxt.commit(parts if parts is not None else {"figures/x-1.json": ["key", 99]})
    return nxt


def _expected(page):
    slug, fp, days, charts, providers, unsourced, files = page
    entry = {"fingerprint": fp, "prices_checked": days, "has_charts": charts, "providers": providers}
    return slug, {**entry, "unsourced": unsourced, "files": files}


def _pages(cache):
    """Every page's entry in `cache`, by slug (Cache.entry)."""
    return {slug: cache.entry(k) for slug, k in cache.index.items()}


def test_what_next_writes_reads_back_entry_for_entry(tmp_path):
    out = tmp_path / "site"
    nxt = _written(out)
    assert not nxt.tmp.exists() and pagecache.cache_path(out).exists()
    cache, verified = pagecache.read(out, nxt.digest)
    assert verified and len(cache) == len(PAGES)
    assert _pages(cache) == dict(map(_expected, PAGES))
    assert cache.parts == {"figures/x-1.json": ["key", 99]}
    assert not pagecache.read(out, "0" * 64)[1] and not pagecache.read(out)[1]  # whole, but not the one recorded
    # the header names the format and the sha256 of what follows it
    head, _, body = pagecache.cache_path(out).read_bytes().partition(b"\n")
    assert head.decode() == f"{pagecache.HEAD} {hashlib.sha256(body).hexdigest()}" and nxt.digest in head.decode()
    # equal tuples are one object in the file, and so once read (a family's pages share them)
    assert cache.files[0] is cache.files[3] and cache.checked[0] is cache.checked[3]


def test_only_a_cache_not_verified_has_its_columns_tested(tmp_path, monkeypatch):
    """The cache the last build recorded is read as it wrote it (its format's version looked at, not its
    columns); any other is used only when every column is whole."""
    out = tmp_path / "site"
    nxt = _written(out)
    tested = []
    whole = pagecache._whole
    monkeypatch.setattr(pagecache, "_whole", lambda body: tested.append(1) or whole(body))
    cache, verified = pagecache.read(out, nxt.digest)
    assert verified and len(cache) == len(PAGES) and tested == []
    cache, verified = pagecache.read(out, "0" * 64)
    assert not verified and len(cache) == len(PAGES) and tested == [1]
    monkeypatch.setattr(pagecache, "VERSION", pagecache.VERSION + 1)  # a format this build does not read
    cache, verified = pagecache.read(out, nxt.digest)
    assert not verified and len(cache) == 0


def test_kept_entries_carry_over_as_they_were_among_new_ones(tmp_path):
    """Next.keep takes entries of the last cache by number, in any order and with gaps (the sizes of a run of
    consecutive ones in one slice); new entries may come between them."""
    first = tmp_path / "first"
    _written(first)
    last = pagecache.read(first)[0]
    second = tmp_path / "second"
    nxt = pagecache.Next(second)
    nxt.keep(last, [3, 0])
    new = ("e", "fe", ["2026-11-15"], False, ["p3"], [], {"index.html": 5})
    slug, fp, days, charts, providers, unsourced, files = new
    nxt.add(_info(slug, fp, days, charts, providers, unsourced), (tuple(files), tuple(files.values())))
    nxt.keep(last, [1, 2])
    nxt.commit()
    cache = pagecache.read(second, nxt.digest)[0]
    assert cache.slugs == ["d", "a", "e", "b", "c"]
    assert _pages(cache) == dict(map(_expected, [PAGES[3], PAGES[0], new, PAGES[1], PAGES[2]]))
    assert cache.parts == {}


def test_a_rendered_page_with_a_file_outside_its_folder_has_no_entry():
    assert pagecache.entry_files("a", {"a/index.html": 3, "a/x.svg": 4}) == (("index.html", "x.svg"), (3, 4))
    assert pagecache.entry_files("a", {"a/index.html": 3, "a/deeper/x.svg": 4}) is None
    assert pagecache.entry_files("a", {"ab/index.html": 3}) is None


def _rewritten(out, change=None, head=None, body=None) -> None:
    """The cache beside `out` with its body changed (and a header that vouches for it), or raw parts."""
    path = pagecache.cache_path(out)
    if body is None:
        loaded = marshal.loads(path.read_bytes().partition(b"\n")[2])
        change(loaded)
        body = marshal.dumps(loaded)
    path.write_bytes((head or header(pagecache.HEAD, hashlib.sha256(body).hexdigest())) + body)


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b.update(version=2),
        lambda b: b.pop("fingerprints"),
        lambda b: b["slugs"].append("e"),  # a column longer than the others
        lambda b: b["slugs"].__setitem__(1, b["slugs"][0]),  # a page twice
        lambda b: b.update(charts=b["charts"][:-1]),
        lambda b: b.update(charts=b"\x02" * len(b["charts"])),
        lambda b: b["slugs"].__setitem__(0, 7),
        lambda b: b["fingerprints"].__setitem__(0, None),
        lambda b: b["files"].__setitem__(0, ["index.html"]),  # a list, not a tuple
        lambda b: b["checked"].__setitem__(0, (20261101,)),
        lambda b: b["providers"].__setitem__(0, "p1"),
        lambda b: b.update(sizes=b["sizes"][:-8]),
        lambda b: b.update(sizes=list(b["sizes"])),
        lambda b: b.update(parts=[]),
    ],
)
def test_a_cache_of_the_wrong_shape_is_not_used(tmp_path, change):
    out = tmp_path / "site"
    _written(out)
    _rewritten(out, change)
    cache, verified = pagecache.read(out)
    assert len(cache) == 0 and cache.parts == {} and not verified


def test_a_damaged_or_foreign_file_is_not_used(tmp_path):
    out = tmp_path / "site"
    nxt = _written(out)
    path = pagecache.cache_path(out)
    data = path.read_bytes()
    cases = [
        data + b"x",  # more than the digest covers
        data[:-1],  # cut short
        data[:100] + bytes([data[100] ^ 1]) + data[101:],  # one bit changed
        data.replace(pagecache.HEAD.encode(), pagecache.HEAD.replace("cache 3", "cache 2").encode()),
        b'{"pages": {}, "parts": {}, "version": 2}',  # the JSON cache of version 2
        b"",
    ]
    for damaged in cases:
        path.write_bytes(damaged)
        cache, verified = pagecache.read(out, nxt.digest)
        assert len(cache) == 0 and not verified, damaged[:60]
    garbage = b"\xff\x00not marshal data"  # behind a header whose digest is right
    _rewritten(out, head=header(pagecache.HEAD, hashlib.sha256(garbage).hexdigest()), body=garbage)
    assert len(pagecache.read(out)[0]) == 0
    path.unlink()
    path.mkdir()  # not a file at all
    assert len(pagecache.read(out)[0]) == 0


def test_a_discarded_or_unwritable_cache_leaves_no_file(tmp_path):
    out = tmp_path / "site"
    nxt = pagecache.Next(out)
    nxt.discard()
    nxt.commit()
    assert nxt.digest is None and not pagecache.cache_path(out).exists() and not nxt.tmp.exists()
    nxt = pagecache.Next(tmp_path / "missing" / "site")  # its folder is not there: nothing can be written
    nxt.commit()
    assert nxt.digest is None and not nxt.tmp.exists()
