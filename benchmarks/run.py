"""Build-speed benchmark: synthetic page families of 100, 1,000 and 10,000 pages.

Prints, per size: cold build, no-op rebuild and one-price-change rebuild (wall
time, pages per second, peak RSS, files written), then the same number of
Markdown pages built by Hugo when Hugo is installed, and the time to compute a
1,000,000-scenario grid. Run it with `make bench` (or `python benchmarks/run.py
[SIZES...]`). It prints figures; it asserts nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COSTPRESS = [sys.executable, "-m", "generator"]
METHODS = ["qlora", "lora", "full-8bit", "full"]
GPUS = [("a100-80gb", 1.2), ("h100", 2.5), ("h200", 3.4), ("b200", 5.0)]
COUNTS = [1, 2, 4, 8, 16]


def synthetic_content(dest: Path, pages: int) -> int:
    """content/ with only a page family whose fitting combinations number about `pages`."""
    shutil.copytree(ROOT / "content", dest, ignore=shutil.ignore_patterns("articles", "families", "prices"))
    (dest / "articles").mkdir()
    fits_per_provider = 0  # counted below from the memory table: state GB vs GPU memory x count
    state = {"qlora": 50, "lora": 152, "full-8bit": 766, "full": 1189}
    memory = {"a100-80gb": 80, "h100": 80, "h200": 141, "b200": 180}
    for method in METHODS:
        for gpu, _ in GPUS:
            fits_per_provider += sum(memory[gpu] * c >= state[method] for c in COUNTS)
    providers = max(1, round(pages / fits_per_provider))
    for i in range(providers):
        folder = dest / "prices" / f"cloud{i:04d}"
        folder.mkdir(parents=True)
        lines = [
            f"provider: cloud{i:04d}",
            f"name: Cloud {i}",
            "checked: 2026-11-01",
            "source: synthetic",
            "currency: USD",
            "offers:",
        ]
        for gpu, base in GPUS:
            for c in COUNTS:
                lines.append(f"  - {{gpu: {gpu}, count: {c}, usd_per_hour: {base * c * (1 + (i % 7) / 20):.2f}}}")
        (folder / "2026-11-01.yaml").write_text("\n".join(lines) + "\n")
    family = (ROOT / "content" / "families" / "70b-setups.md").read_text()
    names = ", ".join(f"cloud{i:04d}" for i in range(providers))
    family = re.sub(r"providers: \[.*?\]", f"providers: [{names}]", family)
    (dest / "families").mkdir()
    (dest / "families" / "bench.md").write_text(family)
    return providers * fits_per_provider


def run_build(content: Path, out: Path) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB of this one build (its largest process), and its summary line."""
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*COSTPRESS, "build", "--content", str(content), "--out", str(out), "--templates", str(ROOT / "templates")],
            stdout=stdout,
            stderr=stderr,
            text=True,
            cwd=ROOT,
        )
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own usage, not every child's so far
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        if proc.returncode != 0:
            raise SystemExit(stderr.read())
        return wall, usage.ru_maxrss / 1024, stdout.read().strip().splitlines()[-1]


def hugo_time(pages: int, sample: Path, work: Path) -> float | None:
    """Hugo building the same number of Markdown pages (one table and one SVG chart each)."""
    hugo = shutil.which("hugo")
    if not hugo:
        return None
    site = work / "hugo"
    (site / "layouts" / "_default").mkdir(parents=True)
    (site / "hugo.toml").write_text('baseURL = "https://example.org/"\ntitle = "bench"\n')
    (site / "layouts" / "_default" / "single.html").write_text("<html><body>{{ .Content }}</body></html>\n")
    (site / "layouts" / "_default" / "list.html").write_text("<html><body></body></html>\n")
    text = sample.read_text()
    svg = sample.with_name("cost-vs-tokens.svg").read_bytes()
    for i in range(pages):
        bundle = site / "content" / "posts" / f"p{i:05d}"
        bundle.mkdir(parents=True)
        (bundle / "index.md").write_text(text.replace('slug: "', f'slug: "p{i:05d}-'))
        (bundle / "cost-vs-tokens.svg").write_bytes(svg)
    start = time.perf_counter()
    subprocess.run([hugo, "--quiet", "-s", str(site), "-d", str(site / "public")], check=True)
    return time.perf_counter() - start


def grid_time(n: int = 1_000_000) -> float:
    import numpy as np
    import pandas as pd

    from generator import engine

    setups = pd.DataFrame(
        {
            "key": [f"s{i}" for i in range(1000)],
            "ops_per_param": np.full(1000, 6.0),
            "parameters": np.full(1000, 7e10),
            "peak_tflops": np.linspace(300, 20000, 1000),
            "usd_per_hour": np.linspace(1, 50, 1000),
        }
    )
    tokens = np.geomspace(1e6, 1e9, n // 1000)
    start = time.perf_counter()
    grid = engine.flop_grid(setups, tokens, 0.3, 0.25)
    elapsed = time.perf_counter() - start
    assert len(grid) == n
    return elapsed


def main(sizes: list[int]) -> None:
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            content, out = work / "content", work / "site"
            expected = synthetic_content(content, size)
            cold, rss, line = run_build(content, out)
            pages = sum(1 for p in out.glob("*/index.html"))
            noop, rss2, line2 = run_build(content, out)
            snap = content / "prices" / "cloud0000" / "2026-11-01.yaml"
            snap.write_text(snap.read_text().replace("usd_per_hour: 5.00}", "usd_per_hour: 5.10}", 1))
            change, rss3, line3 = run_build(content, out)
            print(f"\n{pages} pages ({expected} combinations fit)")
            print(f"  cold build:      {cold:7.2f} s  {pages / cold:8.0f} pages/s  peak RSS {rss:6.0f} MiB  | {line}")
            print(f"  no-op rebuild:   {noop:7.2f} s                    peak RSS {rss2:6.0f} MiB  | {line2}")
            print(f"  one price change:{change:7.2f} s                    peak RSS {rss3:6.0f} MiB  | {line3}")
            sample = next(out.glob("*-on-*/index.md"))
            hugo = hugo_time(pages, sample, work)
            if hugo is not None:
                print(
                    f"  Hugo, same number of Markdown pages: {hugo:.2f} s (costpress cold / Hugo = {cold / hugo:.2f})"
                )
            else:
                print("  Hugo: not installed (Debian package hugo), no comparison")
    print(f"\n1,000,000-scenario grid: {grid_time():.3f} s")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100, 1000, 10000])
