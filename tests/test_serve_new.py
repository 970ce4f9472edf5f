"""`costpress serve` rebuilds and reloads on an edit; `costpress new article` scaffolds a buildable source."""

from __future__ import annotations

import json
import time
import urllib.request

from conftest import TEMPLATES, build, make_content, run_cli

from generator.serve import start


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback only
        return response.read()


def test_serve_rebuilds_and_reloads_on_an_edit(tmp_path):
    content = make_content(tmp_path)
    out = tmp_path / "site"
    server, state, stop = start(content, out, TEMPLATES, "127.0.0.1", 0, lambda line: None)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        page = fetch(f"{base}/dgx-spark-70b-qlora-cost/")
        assert b"$27.42" in page
        assert b"/__costpress/version" in page  # reload script added when served...
        assert (
            b"/__costpress/version" not in (out / "dgx-spark-70b-qlora-cost" / "index.html").read_bytes()
        )  # ...not built
        version = json.loads(fetch(f"{base}/__costpress/version"))["version"]
        snapshot = content / "prices" / "spark-rental" / "2026-10-28.yaml"
        snapshot.write_text(snapshot.read_text().replace("usd_per_hour: 0.75", "usd_per_hour: 0.80"))
        deadline = time.monotonic() + 30
        while json.loads(fetch(f"{base}/__costpress/version"))["version"] == version:
            assert time.monotonic() < deadline, "no rebuild after the edit"
            time.sleep(0.2)
        cost = 100e6 / 759.79 / 3600 * 0.80
        assert f"${cost:.2f}".encode() in fetch(f"{base}/dgx-spark-70b-qlora-cost/")
        # a bad edit keeps the last good site and reports the error
        snapshot.write_text(snapshot.read_text().replace("usd_per_hour: 0.80", "usd_per_hour: n/a"))
        deadline = time.monotonic() + 30
        while json.loads(fetch(f"{base}/__costpress/version"))["error"] is None:
            assert time.monotonic() < deadline, "bad edit not reported"
            time.sleep(0.2)
        assert "usd_per_hour: expected a positive number" in state.error
        assert f"${cost:.2f}".encode() in fetch(f"{base}/dgx-spark-70b-qlora-cost/")
    finally:
        stop.set()
        server.shutdown()


def test_new_article_scaffolds_a_buildable_source(tmp_path):
    content = make_content(tmp_path)
    for kind in ("throughput", "flops", "market", "time-to-train"):
        result = run_cli(
            "new", "article", f"my-{kind}", "--kind", kind, "--date", "2026-11-30", "--content", str(content)
        )
        assert result.exit_code == 0, result.output
    again = run_cli("new", "article", "my-flops", "--kind", "flops", "--content", str(content))
    assert again.exit_code == 1 and "already exists" in again.output
    result, out = build(tmp_path, content)
    assert result.exit_code == 0, result.output
    assert (out / "my-flops" / "index.html").is_file()
    assert run_cli("new", "article", "../x", "--content", str(content)).exit_code == 1
