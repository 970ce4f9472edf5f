"""Build-speed benchmark: synthetic page families of 100, 1,000 and 10,000 pages.

Prints, per size: cold build (the median of three up to 10,000 pages), no-op
rebuild and one-price-change rebuild (wall time, pages per second, CPU seconds
in user and kernel mode, peak RSS, files written; then two more changes, one
after another, and the median of the three), the five largest output files and
the folder with the most entries, then the same number of Markdown pages built
by Hugo when Hugo is installed (also the median of three), and the time to
compute a 1,000,000-scenario grid. Run it with `make bench` (or `python
benchmarks/run.py [--dir FOLDER] [--large] [SIZES...]`; `--large`, or `make
bench-large`, adds 100,000 pages and the 100,000 / 10,000 cold ratio).
It prints figures; it asserts nothing.

Every size works in its own folder under --dir (default: the system's
temporary folder), and all of them are deleted only at the end: on ext4
without a journal, creating files shortly after tens of thousands were
deleted is several times slower (the inode allocator skips recently freed
inodes), which would make each size pay for the one before.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COSTPRESS = [sys.executable, "-m", "generator"]
METHODS = ["qlora", "lora", "full-8bit", "full"]
GPUS = [("a100-80gb", 1.2), ("h100", 2.5), ("h200", 3.4), ("b200", 5.0)]
COUNTS = [1, 2, 4, 8, 16]
HUGO_MAX_PAGES = 10_000
COLD_RUNS = 3  # cold builds per size up to HUGO_MAX_PAGES (the median is used)


def fitting_offers() -> int:
    """Offers of one synthetic provider that hold each method's job, by the engine's per-GPU memory rule."""
    sys.path.insert(0, str(ROOT))
    from generator.load import load_content
    from generator.scenarios import memory_need

    cat = load_content(ROOT / "content")
    model = cat.models["llama-3.3-70b"]
    count = 0
    for method in METHODS:
        for gpu, _ in GPUS:
            for c in COUNTS:
                need = memory_need(model, cat.methods[method], cat.gpus[gpu].memory_gb, c)
                count += bool(need and need.fits)
    return count


def synthetic_content(dest: Path, pages: int) -> int:
    """content/ with only a page family whose fitting combinations number about `pages`."""
    shutil.copytree(ROOT / "content", dest, ignore=shutil.ignore_patterns("articles", "families", "prices"))
    # Hugo builds no search index: the comparison is of page building (search is timed on the real site)
    site = dest / "site.yaml"
    site.write_text(re.sub(r"(?m)^search: true$", "search: false", site.read_text()))
    (dest / "articles").mkdir()
    fits_per_provider = fitting_offers()
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


@dataclass
class Run:
    wall: float  # seconds
    user: float  # CPU seconds of the build and its workers, in user mode
    system: float  # and in the kernel (file creation, mostly)
    rss: float  # peak RSS in MiB of its largest process
    line: str  # its last line of output

    def cpu(self) -> str:
        return f"cpu {self.user:5.2f} user + {self.system:5.2f} sys"


def measure(command: list[str], cwd: Path, env: dict | None = None) -> Run:
    """Run one command; its wall time and, from wait4, its own and its waited-for children's usage."""
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own usage, not every child's so far
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        if proc.returncode != 0:
            raise SystemExit(stderr.read())
        lines = stdout.read().strip().splitlines()
        return Run(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss / 1024, lines[-1] if lines else "")


def run_build(content: Path, out: Path) -> Run:
    """One costpress build of `content` into `out`.

    Compiled templates are kept in a cache folder beside `out` (XDG_CACHE_HOME), not the user's: the
    first build of each size compiles them, as a build on a new machine does, and later ones reuse them.
    """
    command = [*COSTPRESS, "build", "--content", str(content), "--out", str(out)]
    return measure(command, ROOT, {**os.environ, "XDG_CACHE_HOME": str(out.parent / "cache")})


def hugo_time(pages: int, sample: Path, work: Path) -> Run | None:
    """Hugo building the same number of Markdown pages (one table and one SVG chart each): the median of
    COLD_RUNS builds, as costpress's cold build is."""
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
    runs = []  # as many builds as costpress's cold builds, each into a folder of its own; the median counts
    for n in range(COLD_RUNS):
        runs.append(measure([hugo, "--quiet", "-s", str(site), "-d", str(site / f"public-{n}")], work))
    return sorted(runs, key=lambda run: run.wall)[len(runs) // 2]


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


def largest_files(out: Path, n: int = 5) -> list[tuple[int, str]]:
    """The n largest files a build wrote, largest first."""
    sizes = [(p.stat().st_size, p.relative_to(out).as_posix()) for p in out.rglob("*") if p.is_file()]
    return sorted(sizes, reverse=True)[:n]


def widest_folder(out: Path) -> tuple[int, str]:
    """The folder with the most entries (files and folders) directly in it."""
    best = (0, ".")
    for folder in [out, *(p for p in out.rglob("*") if p.is_dir())]:
        count = sum(1 for _ in os.scandir(folder))
        if count > best[0]:
            best = (count, folder.relative_to(out).as_posix() or ".")
    return best


def mib(size: int) -> str:
    return f"{size / 2**20:7.1f} MiB"


def row(label: str, run: Run, pages: int | None = None) -> str:
    rate = f"{pages / run.wall:6.0f} pages/s" if pages else " " * 14
    return f"  {label:<17} {run.wall:6.2f} s {rate}  {run.cpu()}  {run.rss:4.0f} MiB"


def main(sizes: list[int], where: str | None) -> None:
    cores, version = os.cpu_count(), sys.version.split()[0]
    print(f"machine: {cores} cores, Python {version}; working in {where or tempfile.gettempdir()}")
    # An editable install leaves costpress's own modules uncompiled, and with PYTHONDONTWRITEBYTECODE
    # set every build would compile them again (~50 ms); an installed package has them compiled.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "generator")], check=True)
    colds: dict[int, Run] = {}
    if where is not None:
        os.makedirs(where, exist_ok=True)  # a folder of its own, made if missing (removed again: only its files)
    with tempfile.TemporaryDirectory(dir=where, prefix="costpress-bench-") as tmp:
        for size in sizes:
            work = Path(tmp) / str(size)
            content, out = work / "content", work / "site"
            expected = synthetic_content(content, size)
            # The machine's speed drifts by a fifth from minute to minute: up to 10,000 pages the cold build
            # runs COLD_RUNS times, each into a folder of its own (none deleted: see above), and the median
            # is the one the ratios use. The last folder goes on to the no-op and price-change builds.
            runs = COLD_RUNS if size <= HUGO_MAX_PAGES else 1
            cold_runs = [run_build(content, work / f"site-{n}") for n in range(1, runs)]
            cold_runs.append(run_build(content, out))
            cold = sorted(cold_runs, key=lambda run: run.wall)[len(cold_runs) // 2]
            pages = sum(1 for p in out.glob("*/index.html"))
            noop = run_build(content, out)
            snap = content / "prices" / "cloud0000" / "2026-11-01.yaml"
            changes = []  # a price refresh job makes one change after another: the first, and two more
            for old, new in (("5.00", "5.10"), ("5.10", "5.00"), ("5.00", "5.10")):
                snap.write_text(snap.read_text().replace(f"usd_per_hour: {old}}}", f"usd_per_hour: {new}}}", 1))
                changes.append(run_build(content, out))
            change = changes[0]
            median = sorted(changes, key=lambda run: run.wall)[1]
            print(f"\n{pages} pages ({expected} combinations fit)")
            for label, run, rate in (("cold build:", cold, pages), ("no-op rebuild:", noop, None)):
                print(row(label, run, rate))
                print(f"{'':20}{run.line}")
                if run is cold and len(cold_runs) > 1:
                    walls = ", ".join(f"{r.wall:.2f}" for r in cold_runs)
                    print(f"{'':20}the median of {len(cold_runs)} cold builds: {walls} s")
            print(row("one price change:", change))
            print(f"{'':20}{change.line}")
            print(f"{'':20}one price change / cold = {change.wall / cold.wall:.2f} (the first after the cold build)")
            walls = ", ".join(f"{run.wall:.2f}" for run in changes)
            print(
                f"{'':20}three changes in a row: {walls} s; median {median.wall:.2f} s, "
                f"/ cold = {median.wall / cold.wall:.2f}, peak {max(run.rss for run in changes):.0f} MiB"
            )
            print("  largest files:")
            for nbytes, rel in largest_files(out):
                print(f"{'':20}{mib(nbytes)}  {rel}")
            entries, folder = widest_folder(out)
            print(f"  most entries in one folder: {entries:,} ({folder})")
            sample = next(out.glob("*-on-*/index.md"))
            # Hugo took 2.4 GiB for 10,000 pages: at 100,000 it would not fit a 24 GiB machine beside us
            hugo = hugo_time(pages, sample, work) if size <= HUGO_MAX_PAGES else None
            if size > HUGO_MAX_PAGES:
                print(f"  Hugo: not run above {HUGO_MAX_PAGES:,} pages (its memory grows with the site)")
            elif hugo is not None:
                print(row("Hugo, same pages:", hugo, pages))
                print(f"{'':20}costpress cold / Hugo = {cold.wall / hugo.wall:.2f}")
            else:
                print("  Hugo: not installed (Debian package hugo), no comparison")
            colds[size] = cold
        if 100_000 in colds and 10_000 in colds:
            print(f"\n100,000 / 10,000 pages, cold: {colds[100_000].wall / colds[10_000].wall:.1f}x")
        print(f"\n1,000,000-scenario grid: {grid_time():.3f} s")
        print("deleting the benchmark folders")


USAGE = "usage: python benchmarks/run.py [--dir FOLDER] [--large] [SIZES...]"

if __name__ == "__main__":
    args = sys.argv[1:]
    where, large = None, False
    while args[:1] in (["--dir"], ["--large"]):
        if args[0] == "--large":  # adds 100,000 pages: several minutes and a few GB of disk
            large, args = True, args[1:]
        elif len(args) < 2:
            raise SystemExit(USAGE)
        else:
            where, args = args[1], args[2:]
    try:
        sizes = [int(a) for a in args] or [100, 1000, 10000]
    except ValueError:
        raise SystemExit(USAGE) from None
    main(sizes + ([100_000] if large and 100_000 not in sizes else []), where)
