"""The listing cache: after a price change a listing formats only the changed provider's rows again, and
whatever the cache holds, a build makes the bytes a full build makes."""

from __future__ import annotations

from conftest import TEMPLATES, make_content, run_cli

from generator import listingcache

PROVIDERS = {"aws", "azure", "gcp", "lambda", "nebius", "nodus", "runpod"}  # the 70B family's axes


def _made(monkeypatch) -> dict[str, set[str]]:
    """Records, per kind of text, the providers of the rows whose text a build made (not kept)."""
    made: dict[str, set[str]] = {kind: set() for kind in listingcache.KINDS}
    real = listingcache.RowTexts.each_keyed

    def each_keyed(self, kind, keys, providers, make):
        def spy(i):
            made[kind].add(providers[i])
            return make(i)

        return real(self, kind, keys, providers, spy)

    monkeypatch.setattr(listingcache.RowTexts, "each_keyed", each_keyed)
    return made


def _build(content, out, *extra):
    result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), *extra)
    assert result.exit_code == 0, result.output
    return result


def _clear(made):
    for kind in made:
        made[kind].clear()


def _listing_files(out) -> dict[str, bytes]:
    folder = out / "fine-tune-70b-every-setup"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_price_change_formats_only_that_providers_rows(tmp_path, monkeypatch):
    """The changed provider's rows are formatted again, the others' texts kept; the listing holds one kind of
    kept text at a time: the rows file's lines, then the CSV's, then the figures' (at 100,000 pages the
    three at once were 150 MB)."""
    content, out = make_content(tmp_path, families=True), tmp_path / "site"
    made = _made(monkeypatch)
    _build(content, out)
    assert all(made[kind] == PROVIDERS for kind in made), made  # nothing kept yet
    assert any(p.name.startswith("rows-") for p in (out / "fine-tune-70b-every-setup").iterdir())
    path = listingcache.cache_path(out, 0)
    assert path.exists() and not path.with_name(path.name + ".tmp").exists()
    snap = content / "prices/runpod/2026-11-29.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 23.92", "usd_per_hour: 23.50", 1))
    _clear(made)
    events, texts, release = [], listingcache._Kept.texts, listingcache.RowTexts.release
    monkeypatch.setattr(listingcache._Kept, "texts", lambda self, kind: events.append(kind) or texts(self, kind))
    monkeypatch.setattr(
        listingcache.RowTexts, "release", lambda self, kind: events.append(f"-{kind}") or release(self, kind)
    )
    _build(content, out)
    assert made == {"html": {"runpod"}, "csv": {"runpod"}, "figures": {"runpod"}}
    assert events == ["html", "-html", "csv", "-csv", "figures"]
    assert "23.5" in (out / "fine-tune-70b-every-setup/combinations.csv").read_text()
    _build(content, out, "--check")  # every byte as a full build makes it
    # a build that fails (here --strict, on a warning) leaves the cache as it was and no next file
    before = path.read_bytes()
    (content / "notes.txt").write_text("not content\n")
    snap.write_text(snap.read_text().replace("usd_per_hour: 23.50", "usd_per_hour: 23.70", 1))
    failed = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), "--strict")
    assert failed.exit_code == 1 and "notes.txt" in failed.output
    assert path.read_bytes() == before and not path.with_name(path.name + ".tmp").exists()


def test_text_is_made_again_when_what_formats_it_changes(tmp_path, monkeypatch):
    """The site's own rows macro, and its settings, are part of every row's text: none is kept across them."""
    content, out = make_content(tmp_path, families=True), tmp_path / "site"
    templates = tmp_path / "templates"
    templates.mkdir()
    args = ("build", "--content", str(content), "--out", str(out), "--templates", str(templates))
    assert run_cli(*args).exit_code == 0
    made = _made(monkeypatch)
    theme_macro = (listingcache.Path(listingcache.__file__).parent / "theme" / "_listing_rows.html").read_text()
    (templates / "_listing_rows.html").write_text(theme_macro.replace("<tr ", '<tr class="mine" '))
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert made["html"] == PROVIDERS
    rows = next((out / "fine-tune-70b-every-setup").glob("rows-*.txt")).read_text()
    assert rows.count("<tr ") == rows.count('<tr class="mine" ') > 100
    _clear(made)
    site = content / "site.yaml"
    site.write_text(site.read_text() + "\n# a comment: the settings' values are the same\n")
    assert run_cli(*args).exit_code == 0
    assert made == {kind: set() for kind in made}  # the settings as values are what counts, not the file
    _clear(made)
    site.write_text(site.read_text().replace("title: ", "title: New ", 1))
    assert run_cli(*args).exit_code == 0
    assert all(made[kind] == PROVIDERS for kind in made), made
    assert run_cli(*args, "--check").exit_code == 0


def test_a_damaged_or_foreign_listing_cache_is_not_used(tmp_path, monkeypatch):
    """A file that is not whole gives no text; one whole by its digest whose records of a kind do not hold
    what this version writes gives none of that kind (each kind is loaded when the listing needs it)."""
    content, out = make_content(tmp_path, families=True), tmp_path / "site"
    _build(content, out)
    path = listingcache.cache_path(out, 0)
    good = path.read_bytes()
    head, payload = good.split(b"\n", 1)
    made = _made(monkeypatch)
    snap = content / "prices/aws/2026-11-30.yaml"
    every = set(listingcache.KINDS)
    for n, (damaged, remade) in enumerate(
        [
            (b"not a listing cache\n\x00", every),
            (bytes(range(256)) * 4, every),  # no line break where the header should end, and no header
            (head + b"\n" + (2**62).to_bytes(8, "little") + payload[8:], every),  # a length far past the end
            (head + b"\n" + payload[:-10], every),  # cut short: the digest no longer matches
            (_rewritten(payload, lambda kind, texts: texts, kind_byte=lambda kind: 9), every),  # an unknown kind
            (_rewritten(payload, lambda kind, texts: texts if kind != "csv" else [1] * len(texts)), {"csv"}),
            (
                _rewritten(payload, lambda kind, texts: texts if kind != "figures" else [("x",)] * len(texts)),
                {"figures"},
            ),
        ]
    ):
        path.write_bytes(damaged)
        # a comment: the inputs change (no shortcut), the offers do not
        snap.write_text(snap.read_text().replace(f"# edit {n - 1}\n", "") + f"# edit {n}\n")
        _clear(made)
        _build(content, out)
        assert made == {kind: PROVIDERS if kind in remade else set() for kind in made}, (n, made)
        # made again whole, with the same text (kept texts may be marshalled with references where made ones
        # were not: the same values, not always the same bytes)
        assert _records_of(path.read_bytes()) == _records_of(good), n
        _build(content, out, "--check")
    # another family's file in its place (families were added or removed): not used, and replaced
    foreign = _rewritten(payload, lambda kind, texts: texts, family="families/other.md")
    path.write_bytes(foreign)
    snap.write_text(snap.read_text() + "# once more\n")
    _clear(made)
    _build(content, out)
    assert all(made[kind] == PROVIDERS for kind in made), made
    assert path.read_bytes() == good


def test_the_files_of_listings_gone_are_removed(tmp_path):
    content, out = make_content(tmp_path, families=True), tmp_path / "site"
    _build(content, out)
    stale = [listingcache.cache_path(out, n) for n in (1, 2)]
    for path in stale:  # as a build with three listings would have left them
        path.write_bytes(listingcache.cache_path(out, 0).read_bytes())
    snap = content / "prices/aws/2026-11-30.yaml"
    snap.write_text(snap.read_text() + "# an edit\n")
    _build(content, out)
    assert listingcache.cache_path(out, 0).exists() and not any(p.exists() for p in stale)


def _records_of(data: bytes) -> list[tuple[int, object]]:
    """A cache file's records, each (its kind's byte, its value)."""
    import marshal

    payload, out, at = data.split(b"\n", 1)[1], [], 0
    while at < len(payload):
        size = int.from_bytes(payload[at : at + 8], "little")
        out.append((payload[at + 8], marshal.loads(payload[at + 9 : at + 9 + size])))
        at += 9 + size
    return out


def _rewritten(payload: bytes, change, family: str | None = None, kind_byte=None) -> bytes:
    """The cache's records with each record's texts changed by `change(kind, texts)` (and its kind's byte by
    `kind_byte(kind)`), under a header whose digest matches (as a file of another version, or of another
    family, would be)."""
    import hashlib
    import marshal

    out, at = [], 0
    while at < len(payload):
        size, number = int.from_bytes(payload[at : at + 8], "little"), payload[at + 8]
        record = marshal.loads(payload[at + 9 : at + 9 + size])
        at += 9 + size
        if number == 0:  # the first: (family, context, provider keys)
            record = (family or record[0], *record[1:])
        else:
            kind = listingcache.KINDS[number - 1]
            keys, providers, texts = record
            record = (keys, providers, change(kind, texts))
            number = kind_byte(kind) if kind_byte is not None else number
        data = marshal.dumps(record)
        out.append(len(data).to_bytes(8, "little") + bytes((number,)) + data)
    body = b"".join(out)
    return f"{listingcache.HEAD} {hashlib.sha256(body).hexdigest()}\n".encode() + body
