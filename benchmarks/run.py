"""Build-speed benchmark: the default site, and synthetic page families of 100, 1,000 and 10,000 pages.

Prints the default site's cold build (content/ as it is, search on: five builds, each into a new
folder, and their median, each followed by Hugo's build of as many pages, with the ratios), then, per
size: cold build, no-op rebuild and one-price-change rebuild (wall
time, pages per second, CPU seconds in user and kernel mode, peak RSS, files
written), the five largest output files and the folder with the most entries,
the same number of Markdown pages built by Hugo when Hugo is installed, and the
time to compute a 1,000,000-scenario grid. Run it with `make bench` (or `python
benchmarks/run.py [--dir FOLDER] [--large] [SIZES...]`; `--large`, or `make
bench-large`, adds 100,000 pages). It prints figures; it asserts nothing.

The machine's speed drifts by a fifth from minute to minute, so a ratio is
taken between runs made one after the other, never between medians measured
minutes apart: up to 10,000 pages the benchmark makes three rounds of a cold
build, Hugo's build of the same pages and a price change on the site just
built, and prints the median of each round's ratios (price change / cold,
costpress / Hugo) beside the median times. The 100,000-page cold build is set
against 10,000-page cold builds made just before and just after it. After the
last round come the no-op rebuild and two more price changes, one after
another, as a refresh job makes them.

Every size works in its own folder under --dir (default: the system's
temporary folder), and all of them are deleted only at the end: on ext4
without a journal, creating files shortly after tens of thousands were
deleted is several times slower (the inode allocator skips recently freed
inodes), which would make each size pay for the one before. For the same
reason a run started within a quarter of an hour of a large delete on such
a file system (the end of the last run, a test run's clean-up) measures the
disk more than the build; the first line names the folder's file system, and
a probe before and after the builds prints how long one small file takes to
create there (creation_probe says what a settled disk gives). Each
timed command starts after an untimed sync of every file system, so it
pays for writing back its own files and no other's. The code is part of
every page's fingerprint, so an edit to costpress made while the benchmark
runs makes every later build render every page again: the benchmark prints
a warning after the phase in which it notices one (run it from a work tree
nobody edits).
"""

from __future__ import annotations

import hashlib
import os
import re
import runpy
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
COLD_RUNS = 3  # rounds (cold, Hugo, price change) per size up to HUGO_MAX_PAGES; ratios by round
DEFAULT_SITE_RUNS = 5  # cold builds of content/ itself, for the training job issue's first speed target
DEFAULT_SITE_TARGET = 1.5  # seconds, on a 2-core machine


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
    """Run one command; its wall time and, from wait4, its own and its waited-for children's usage.

    Every file system is synced first, untimed, so that each command pays for writing back its own files
    and nobody else's: without it a costpress build's sync also wrote back the 20,000 files Hugo's build had
    just left in memory (Hugo does not sync), and the kernel's own write-back of earlier commands' files
    ran during the next one."""
    os.sync()
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True, cwd=cwd, env=env)
        try:
            _, status, usage = os.wait4(proc.pid, 0)  # this child's own usage, not every child's so far
        except KeyboardInterrupt:  # Ctrl-C reached the build too: let it stop before its folder is removed
            proc.wait()
            raise
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


def hugo_site(built: Path, work: Path) -> Path | None:
    """A Hugo site of as many Markdown pages as costpress built into `built` (each a copy of one of its
    family pages: one table and one SVG chart), or None when Hugo is not installed or `built` has no
    family page."""
    sample = next(built.glob("*-on-*/index.md"), None)
    if not shutil.which("hugo") or sample is None:
        return None
    pages = sum(1 for _ in built.glob("*/index.html"))
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
    return site


def hugo_build(site: Path, n: int) -> Run:
    """One cold Hugo build of `site`, into a folder of its own."""
    return measure([shutil.which("hugo"), "--quiet", "-s", str(site), "-d", str(site / f"public-{n}")], site.parent)


def change_price(content: Path) -> None:
    """One price change: cloud0000's 2 × H100 offer goes from $5.00 an hour to $5.10, or back.

    Always the same offer: its 1 × B200 offer costs $5.00 too, and is the cheapest of its group, so a
    change to it touches every page that counts how many setups cost less (58 s at 100,000 pages).
    """
    snap = content / "prices" / "cloud0000" / "2026-11-01.yaml"
    text = snap.read_text()
    offer = "{gpu: h100, count: 2, usd_per_hour: %s}"
    old, new = ("5.00", "5.10") if offer % "5.00" in text else ("5.10", "5.00")
    assert offer % old in text, "the synthetic snapshot has no 2 x H100 offer at $5.00 or $5.10"
    snap.write_text(text.replace(offer % old, offer % new, 1))


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def middle(runs: list[Run]) -> Run:
    """The run of median wall time."""
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


# A fixed piece of pure-Python work, timed in a process of its own: the VM's speed moves by a factor of two
# between days, so a run's seconds are read beside this figure (its ratios are taken within the run)
# (the loop scripts/pick-python.py times to choose the venv's Python: one loop, one figure)
CALIBRATION = runpy.run_path(str(ROOT / "scripts" / "pick-python.py"))["LOOP"]


def calibration_time(runs: int = 3) -> float:
    """The median wall time of CALIBRATION in a new interpreter, in seconds."""
    return median([measure([sys.executable, "-c", CALIBRATION], ROOT).wall for _ in range(runs)])


def mib(size: int) -> str:
    return f"{size / 2**20:7.1f} MiB"


def row(label: str, run: Run, pages: int | None = None) -> str:
    rate = f"{pages / run.wall:6.0f} pages/s" if pages else " " * 14
    return f"  {label:<17} {run.wall:6.2f} s {rate}  {run.cpu()}  {run.rss:4.0f} MiB"


def _unescape(field: str) -> str:
    """A path as /proc/self/mountinfo writes it, with its octal escapes (space, tab, newline, backslash) undone."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def memory() -> str:
    """Memory available and in all, from /proc/meminfo (Linux; "" elsewhere).

    Hugo's build of 10,000 pages holds 2.5 GB, and it took 10.5-15.4 s instead of 7.5-8.8 s in a run made
    while 8 GB of other files sat on the RAM disk: a ratio against Hugo means little when memory is short.
    """
    try:
        with open("/proc/meminfo") as fh:
            kib = {name.rstrip(":"): int(value) for name, value, *_ in map(str.split, fh)}
        return f"memory: {kib['MemAvailable'] / 2**20:.1f} GiB available of {kib['MemTotal'] / 2**20:.1f} GiB"
    except (OSError, KeyError, ValueError, IndexError):
        return ""


def file_system(folder: str) -> str:
    """The file system `folder` is on, as Linux names it ("tmpfs", "ext4 without a journal"); "" elsewhere.

    The disk's figures depend on it. On ext4 without a journal, Linux does not hand out an inode freed
    in the last minute (the last six while its inode table block is not yet written back) and checks
    each such inode it passes while looking for a free one, so files made soon after tens of thousands
    were deleted take several times the kernel time (fs/ext4/ialloc.c, recently_deleted).
    """
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return ""
    path, best = os.path.realpath(folder), None
    for fields in mounts:
        point = _unescape(fields[4])
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and "-" in fields and (best is None or len(point) >= len(best[0])):  # the last mount over it wins
            best = (point, fields[2], fields[fields.index("-") + 1])  # (where, major:minor, type)
    if best is None:
        return ""
    _, numbers, kind = best
    block = f"/sys/dev/block/{numbers}"  # a link to the device by the kernel's name: "sda1", "dm-0" (LVM)
    if kind != "ext4" or not os.path.exists(block):
        return kind
    # each journal shows as /proc/fs/jbd2/<that name>-8
    device = os.path.basename(os.path.realpath(block))
    journals = os.listdir("/proc/fs/jbd2") if os.path.isdir("/proc/fs/jbd2") else []
    return f"ext4 {'with' if any(j.rpartition('-')[0] == device for j in journals) else 'without'} a journal"


PROBE_FILES, PROBE_FOLDERS, PROBE_BYTES = 2000, 200, 3000  # about one default-site page's files and sizes


def creation_probe(folder: Path) -> float:
    """Microseconds of wall time to create one small file in `folder`, over PROBE_FILES files spread over
    PROBE_FOLDERS new folders, as a build makes them; the files stay, to be deleted with the run's folders.

    It tells whether the disk was settled when the figures were taken. On this VM's ext4 without a journal
    a settled disk took 20-25 µs a file and tmpfs 12-16; in the quarter of an hour after the 180,000 files of
    a run were deleted it took 37-570 µs, and builds slowed with it (a default-site build took 3.09 s with
    3.15 s in the kernel, against 1.33-1.37 s with about 0.55 s once settled; forty-sixth session).
    """
    folder.mkdir(parents=True)
    base, data = str(folder), b"x" * PROBE_BYTES  # paths as strings: a Path costs a few µs of its own
    start = time.perf_counter()
    for n in range(PROBE_FOLDERS):
        os.mkdir(f"{base}/{n}")
    for n in range(PROBE_FILES):
        fd = os.open(f"{base}/{n % PROBE_FOLDERS}/{n}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    return (time.perf_counter() - start) / PROBE_FILES * 1e6


def probe_line(folder: Path, when: str) -> str:
    return (
        f"file creation here {when}: {creation_probe(folder):.0f} µs a file "
        f"({PROBE_FILES:,} files of {PROBE_BYTES:,} bytes in {PROBE_FOLDERS} new folders)"
    )


def code_state() -> str:
    """A digest of costpress's code and theme as the builds run them (ROOT/generator, bytecode aside)."""
    h = hashlib.sha256()
    for path in sorted((ROOT / "generator").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(f"{path.relative_to(ROOT)}\0".encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def warn_if_changed(started: str, after: str) -> None:
    """Say so when the code changed since the run started: every build after that renders every page anew
    (the code is part of each page's fingerprint), and its figures compare with nothing."""
    if code_state() != started:
        print(
            f"  WARNING: costpress's code or theme changed during the run (noticed after {after}); "
            "figures from then on are not comparable: run it again, from a work tree nobody edits"
        )


def main(sizes: list[int], where: str | None) -> None:
    cores, version = os.cpu_count(), sys.version.split()[0]
    folder = where or tempfile.gettempdir()
    kind = file_system(folder)  # (a path not made yet is on the file system of the folder it will be in)
    python = os.path.realpath(sys.executable)  # the interpreter behind the venv (scripts/pick-python.py)
    print(f"machine: {cores} cores, Python {version} ({python}); working in {folder}{f' ({kind})' if kind else ''}")
    print(f"machine speed: a fixed Python loop (benchmarks/run.py CALIBRATION) takes {calibration_time():.3f} s")
    mem = memory()
    if mem:
        print(mem)
    # An editable install leaves costpress's own modules uncompiled, and with PYTHONDONTWRITEBYTECODE
    # set every build would compile them again (~50 ms); an installed package has them compiled.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "generator")], check=True)
    started = code_state()
    contents: dict[int, Path] = {}  # each size's content, for a ratio between sizes
    if where is not None:
        os.makedirs(where, exist_ok=True)  # a folder of its own, made if missing (removed again: only its files)
    with tempfile.TemporaryDirectory(dir=where, prefix="costpress-bench-") as tmp:
        print(probe_line(Path(tmp) / "probe-first", "before the builds"), flush=True)
        default_site(Path(tmp) / "default")
        warn_if_changed(started, "the default site")
        for size in sizes:
            work = Path(tmp) / str(size)
            content, out = work / "content", work / "site"
            expected = synthetic_content(content, size)
            contents[size] = content
            print(f"\n{size:,} pages asked ({expected} combinations fit)", flush=True)
            if size <= HUGO_MAX_PAGES:
                cold, noop, changes = paired_rounds(content, work, out)
            else:
                cold, noop, changes = single_round(content, work, out, contents.get(HUGO_MAX_PAGES))
            print(row("no-op rebuild:", noop))
            print(f"{'':20}{noop.line}")
            walls = ", ".join(f"{run.wall:.2f}" for run in changes)
            print(
                f"{'':20}three changes in a row (the last round's and two more): {walls} s; "
                f"median {middle(changes).wall:.2f} s, peak {max(run.rss for run in changes):.0f} MiB"
            )
            print("  largest files:")
            for nbytes, rel in largest_files(out):
                print(f"{'':20}{mib(nbytes)}  {rel}")
            entries, folder = widest_folder(out)
            print(f"  most entries in one folder: {entries:,} ({folder})")
            if size > HUGO_MAX_PAGES:
                print(f"  Hugo: not run above {HUGO_MAX_PAGES:,} pages (its memory grows with the site)")
            warn_if_changed(started, f"{size:,} pages")
        print(f"\n1,000,000-scenario grid: {grid_time():.3f} s")
        print(probe_line(Path(tmp) / "probe-last", "after the builds"))
        print("deleting the benchmark folders")


def default_site(work: Path) -> None:
    """Cold builds of the repository's own content/ (search on), each into a new folder; the first also
    compiles the templates into the runs' cache folder, as a first build on a new machine does.

    After each, Hugo builds as many Markdown pages (made from one of the site's family pages, as for the
    synthetic sizes), and each build's time is set against the Hugo build right after it: an absolute
    target moves with the VM's speed, which a ratio taken minute by minute mostly cancels.
    """
    runs, hugos, hugo = [], [], None
    for n in range(1, DEFAULT_SITE_RUNS + 1):
        folder = work / f"site-{n}"
        runs.append(run_build(ROOT / "content", folder))
        if n == 1:
            hugo = hugo_site(folder, work)
        if hugo is not None:
            hugos.append(hugo_build(hugo, n))
    run = middle(runs)
    built = re.search(r"built (\d+) articles", run.line)
    pages = int(built.group(1)) if built else None
    print("\nthe default site (content/, search on)", flush=True)
    print(row("cold build:", run, pages))
    print(f"{'':20}{run.line}")
    walls = ", ".join(f"{r.wall:.2f}" for r in runs)
    print(
        f"{'':20}{len(runs)} runs, each into a new folder: {walls} s (the first compiles the templates); "
        f"median {run.wall:.2f} s, target under {DEFAULT_SITE_TARGET} s"
    )
    if hugos:
        ratios = [k.wall / h.wall for k, h in zip(runs, hugos, strict=True)]
        print(row("Hugo, same count:", middle(hugos), pages))
        print(
            f"{'':20}{len(hugos)} runs, each right after one above: {', '.join(f'{r.wall:.2f}' for r in hugos)} s; "
            f"costpress / Hugo, run by run: {', '.join(f'{r:.3f}' for r in ratios)}; median {median(ratios):.3f}"
        )


def paired_rounds(content: Path, work: Path, out: Path) -> tuple[Run, Run, list[Run]]:
    """COLD_RUNS rounds of: a cold build into a folder of its own (none deleted: see above), Hugo's build of
    the same pages, and one price change on the site just built. Each ratio is taken within its round."""
    colds, hugos, changes, hugo = [], [], [], None
    for n in range(1, COLD_RUNS + 1):
        folder = out if n == COLD_RUNS else work / f"site-{n}"  # the last goes on to the no-op and more changes
        colds.append(run_build(content, folder))
        if n == 1:
            hugo = hugo_site(folder, work)
        if hugo is not None:
            hugos.append(hugo_build(hugo, n))
        change_price(content)
        changes.append(run_build(content, folder))
    pages = sum(1 for _ in out.glob("*/index.html"))
    cold = middle(colds)
    print(row("cold build:", cold, pages))
    print(f"{'':20}{cold.line}")
    print(f"{'':20}{len(colds)} rounds: {', '.join(f'{r.wall:.2f}' for r in colds)} s")
    change = middle(changes)
    print(row("one price change:", change))
    print(f"{'':20}{change.line}")
    ratios = [c.wall / k.wall for c, k in zip(changes, colds, strict=True)]
    print(
        f"{'':20}each round's first change after its cold build: {', '.join(f'{r.wall:.2f}' for r in changes)} s; "
        f"change / cold, round by round: {', '.join(f'{r:.3f}' for r in ratios)}; median {median(ratios):.3f}"
    )
    if hugos:
        hugo_run = middle(hugos)
        print(row("Hugo, same pages:", hugo_run, pages))
        ratios = [k.wall / h.wall for k, h in zip(colds, hugos, strict=True)]
        print(
            f"{'':20}{len(hugos)} rounds: {', '.join(f'{r.wall:.2f}' for r in hugos)} s; costpress cold / Hugo, "
            f"round by round: {', '.join(f'{r:.3f}' for r in ratios)}; median {median(ratios):.3f}"
        )
    else:
        print("  Hugo: not installed (Debian package hugo), no comparison")
    noop = run_build(content, out)
    for _ in range(2):  # a price refresh job makes one change after another
        change_price(content)
        changes.append(run_build(content, out))
    return cold, noop, changes[-3:]


def single_round(content: Path, work: Path, out: Path, smaller: Path | None) -> tuple[Run, Run, list[Run]]:
    """One cold build (with the 10,000-page size in the same run: set against cold builds of it made just
    before and just after), then the no-op and three price changes in a row."""
    # the smaller size's builds go beside its own, whose compiled templates they find as its rounds did
    before = run_build(smaller, smaller.parent / "site-before") if smaller is not None else None
    cold = run_build(content, out)
    after = run_build(smaller, smaller.parent / "site-after") if smaller is not None else None
    pages = sum(1 for _ in out.glob("*/index.html"))
    print(row("cold build:", cold, pages))
    print(f"{'':20}{cold.line}")
    if before is not None and after is not None:
        ratio = cold.wall / ((before.wall + after.wall) / 2)
        print(
            f"{'':20}{HUGO_MAX_PAGES:,} pages cold just before and just after: {before.wall:.2f}, "
            f"{after.wall:.2f} s; this size / their mean = {ratio:.1f}x"
        )
    noop = run_build(content, out)
    changes = []
    for _ in range(3):
        change_price(content)
        changes.append(run_build(content, out))
    print(row("one price change:", changes[0]))
    print(f"{'':20}{changes[0].line}")
    print(f"{'':20}one price change / cold = {changes[0].wall / cold.wall:.3f} (the first after the cold build)")
    return cold, noop, changes


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
    if where is not None and os.path.exists(where) and not os.path.isdir(where):
        raise SystemExit(f"benchmarks/run.py: --dir {where}: not a folder")
    try:
        main(sizes + ([100_000] if large and 100_000 not in sizes else []), where)
    except KeyboardInterrupt:  # the benchmark's folders are gone by now (TemporaryDirectory)
        raise SystemExit("benchmarks/run.py: interrupted") from None
