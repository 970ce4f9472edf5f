"""The row cache: a price change computes only the changed provider's rows of a family, and whatever the
cache holds, a build makes the bytes a full build makes."""

from __future__ import annotations

import hashlib
import io
import marshal

from conftest import TEMPLATES, make_content, run_cli

from generator import families, rowcache
from generator.load import load_content

PROVIDERS = ["aws", "azure", "gcp", "lambda", "nebius", "nodus", "runpod"]  # the 70B family's axes


def _providers(monkeypatch) -> dict[str, list[str]]:
    """Records, per build, the providers whose rows were taken from the cache and those computed."""
    seen: dict[str, list[str]] = {"taken": [], "computed": []}
    real = rowcache.FamilyRows.kept_rows

    def kept_rows(self, provider, snap):
        first = provider not in self._loaded
        found = real(self, provider, snap)
        if first:
            seen["taken" if found is not None else "computed"].append(provider)
        return found

    monkeypatch.setattr(rowcache.FamilyRows, "kept_rows", kept_rows)
    return seen


def _build(content, out, *extra):
    result = run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), *extra)
    assert result.exit_code == 0, result.output
    return result


def test_a_price_change_computes_only_that_providers_rows(tmp_path, monkeypatch):
    content, out = make_content(tmp_path, families=True), tmp_path / "site"
    seen = _providers(monkeypatch)
    _build(content, out)
    assert sorted(seen["computed"]) == PROVIDERS and seen["taken"] == []  # nothing kept yet
    snap = content / "prices/runpod/2026-11-29.yaml"
    snap.write_text(snap.read_text().replace("usd_per_hour: 23.92", "usd_per_hour: 23.50", 1))
    seen["taken"].clear(), seen["computed"].clear()
    _build(content, out)
    assert seen["computed"] == ["runpod"] and sorted(seen["taken"]) == sorted(set(PROVIDERS) - {"runpod"})
    _build(content, out, "--check")  # every byte as a full build makes it
    assert not rowcache.cache_path(out).with_name(".site.row-cache.tmp").exists()
    # a build that fails (here --strict, on a warning) leaves the cache as it was and no next file
    before = rowcache.cache_path(out).read_bytes()
    (content / "notes.txt").write_text("not content\n")
    snap.write_text(snap.read_text().replace("usd_per_hour: 23.50", "usd_per_hour: 23.70", 1))
    args = ("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), "--strict")
    failed = run_cli(*args)
    assert failed.exit_code == 1 and "notes.txt" in failed.output
    assert rowcache.cache_path(out).read_bytes() == before
    assert not rowcache.cache_path(out).with_name(".site.row-cache.tmp").exists()


def test_a_change_to_what_every_row_reads_computes_every_row(tmp_path, monkeypatch):
    content, out = make_content(tmp_path, families=True), tmp_path / "site"
    _build(content, out)
    seen = _providers(monkeypatch)
    hardware = content / "hardware.yaml"
    hardware.write_text(hardware.read_text().replace("peak_tflops: 2250", "peak_tflops: 2300", 1))
    _build(content, out)
    assert sorted(seen["computed"]) == PROVIDERS and seen["taken"] == []
    _build(content, out, "--check")
    seen["taken"].clear(), seen["computed"].clear()
    _build(content, out, "--force")  # --force reads no cache
    assert sorted(seen["computed"]) == PROVIDERS and seen["taken"] == []


def test_a_damaged_row_cache_is_not_used(tmp_path, monkeypatch):
    content, out = make_content(tmp_path, families=True), tmp_path / "site"
    _build(content, out)
    path = rowcache.cache_path(out)
    head, payload = path.read_bytes().split(b"\n", 1)
    seen = _providers(monkeypatch)
    snap = content / "prices/aws/2026-11-30.yaml"
    for n, damaged in enumerate(
        [
            b"not a row cache\n\x00",
            head + b"\n" + payload[:-10],  # cut short: the digest no longer matches
            _with_rows_of_another_shape(head, payload, "nodus"),
        ]
    ):
        path.write_bytes(damaged)
        # a comment: the inputs change (no shortcut), the offers do not
        snap.write_text(snap.read_text().replace(f"# edit {n - 1}\n", "") + f"# edit {n}\n")
        seen["taken"].clear(), seen["computed"].clear()
        _build(content, out)
        if n < 2:  # the whole file is refused
            assert sorted(seen["computed"]) == PROVIDERS, n
        else:  # only the provider whose rows have another shape
            assert seen["computed"] == ["nodus"], seen
        _build(content, out, "--check")


def _with_rows_of_another_shape(head: bytes, payload: bytes, provider: str) -> bytes:
    """The cache with one provider's rows one value short, under a header whose digest matches."""
    records, out = io.BytesIO(payload), []
    while records.tell() < len(payload):
        family, family_key, name, key, blob = marshal.load(records)
        if name == provider:
            blob = marshal.dumps({pair: [values[:-1] for values in rows] for pair, rows in marshal.loads(blob).items()})
        out.append(marshal.dumps((family, family_key, name, key, blob)))
    payload = b"".join(out)
    return f"{rowcache.HEAD} {hashlib.sha256(payload).hexdigest()}\n".encode() + payload


def test_a_row_read_back_from_its_values_is_the_row(tmp_path):
    content = make_content(tmp_path, families=True)
    cat = load_content(content)
    (fam,) = families.load_families(content, [])
    rows = families.family_grid(cat, fam)
    assert any(r.fits for r in rows) and any(not r.fits for r in rows)
    dates = families.Dates()
    for row in rows:
        values = families.row_values(row)
        assert len(values) == len(families.ROW_VALUES)
        back = families.row_from_values(families.Row, marshal.loads(marshal.dumps(values)), dates)
        assert back.items() == row.items()
