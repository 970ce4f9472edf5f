"""Shared helpers: build the default content, or a modified copy of it, into a temp folder."""

from __future__ import annotations

import atexit
import fcntl
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner

from generator.cli import cli

ROOT = Path(__file__).resolve().parent.parent
REAL_CONTENT = ROOT / "content"  # what `make site` builds and site/ in git holds

# The tests check content/ as it stood when they were written: with its price snapshots up to this date. A
# price refresh (scripts/refresh-prices.sh, the weekly workflow) adds newer snapshots, which move the family
# pages' prices, ranks and dates that tests state, and made 17 of them fail in the refresh's own `make test`,
# so no refresh could pass. With newer snapshots in content/, the tests read a copy without them: a refresh's
# test run checks the tool, and `make check` (and test_committed_site_...) that site/ is what the refreshed
# content builds. To test against newer snapshots, move this date and the expectations that move with it.
PRICES_UNTIL = "2026-11-30"


def tested_content(real: Path, until: str) -> Path:
    """`real` itself when it has no snapshot dated after `until`, else a copy of it without those (one per test
    process, removed when it ends)."""
    newer = {p for p in real.glob("prices/*/*.yaml") if p.stem > until}
    if not newer:
        return real
    copy = Path(tempfile.mkdtemp(prefix="costpress-tested-content-"))
    atexit.register(shutil.rmtree, copy, True)
    shutil.copytree(real, copy / "content", ignore=lambda folder, names: [
        name for name in names if Path(folder, name) in newer])  # fmt: skip
    return copy / "content"


CONTENT = tested_content(REAL_CONTENT, PRICES_UNTIL)
TEMPLATES = ROOT / "generator" / "theme"  # the packaged theme, passed as a full set of overrides
A = "dgx-spark-70b-qlora-cost"
B = "fine-tune-70b-cost-by-setup"


# The modules that take longest, longest first. `make test` runs `pytest -n auto --dist loadfile
# --no-loadscope-reorder`: each process takes whole modules in collection order (pytest-xdist's default order
# puts the modules with the most tests first, and its slowest ones came last: one process then sat idle for
# 12-17 s at the end of a 160 s run). Starting with these, the two processes end within a few seconds of each
# other. The list only orders the run: a module missing from it, or one that grew, still runs.
LONGEST_FIRST = (
    "test_build.py",
    "test_reading.py",
    "test_interrupt.py",
    "test_browser.py",
    "test_guard.py",
    "test_install.py",
    "test_changes_complete.py",
    "test_bad_input.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each module keeps its order


# Where a run's temporary folders go. A run writes about 1.3 GB in 180,000 files (sites built, published and
# killed mid-publish, caches, a wheel's virtual environment). On a disk, when every publish still synced, each
# syncfs also waited for the other test process's writes: in four paired runs of the suite on two cores the RAM
# disk was faster each time, by 1-30 s (148-164 s against 154-184 s on this VM's disk). So a run works on the RAM
# disk when it has room (free space on it and free memory, both at least RAM_DISK_ROOM) and nobody chose a
# place (--basetemp, TMPDIR, PYTEST_DEBUG_TEMPROOT). A run that passes removes its folder at the end, giving
# the memory back; a failed run's stays for a look until the next run starts, and the summary says where.
RAM_DISK = Path("/dev/shm")
RAM_DISK_ROOM = 4 << 30
RAM_DISK_PREFIX = "costpress-tests-"
_ON_RAM_DISK = pytest.StashKey[Path]()  # the run's folder on the RAM disk, when it has one


def ram_disk_room() -> bool:
    """Whether RAM_DISK is a tmpfs of ours to write, with RAM_DISK_ROOM free on it and in memory."""
    try:
        with open("/proc/self/mounts") as fh:
            kinds = [fields[2] for fields in map(str.split, fh) if fields[1:2] == [str(RAM_DISK)]]
        with open("/proc/meminfo") as fh:
            available = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("MemAvailable:"))
        disk = os.statvfs(RAM_DISK)
    except (OSError, StopIteration, IndexError, ValueError):  # not Linux, or no such disk
        return False
    free = disk.f_bavail * disk.f_frsize
    return kinds[-1:] == ["tmpfs"] and os.access(RAM_DISK, os.W_OK) and min(free, available) >= RAM_DISK_ROOM


def _remove_earlier_runs() -> None:
    """Remove the folders earlier runs of this user left on the RAM disk (failed ones), unless still running."""
    for folder in RAM_DISK.glob(f"{RAM_DISK_PREFIX}*"):
        try:
            pid = int(folder.name[len(RAM_DISK_PREFIX) :].split("-")[0])
            if folder.lstat().st_uid != os.getuid() or not folder.is_dir() or folder.is_symlink():
                continue
            os.kill(pid, 0)  # that run is still going
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (ValueError, OSError):
            continue


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    chosen = config.option.basetemp or os.environ.get("TMPDIR") or os.environ.get("PYTEST_DEBUG_TEMPROOT")
    if hasattr(config, "workerinput") or chosen or not ram_disk_room():  # a worker is given its folder
        return
    _remove_earlier_runs()
    config.option.basetemp = tempfile.mkdtemp(prefix=f"{RAM_DISK_PREFIX}{os.getpid()}-", dir=RAM_DISK)
    config.stash[_ON_RAM_DISK] = Path(config.option.basetemp)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    folder = session.config.stash.get(_ON_RAM_DISK, None)
    if folder is not None and exitstatus == 0:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    folder = config.stash.get(_ON_RAM_DISK, None)
    if folder is not None and exitstatus != 0 and folder.exists():
        terminalreporter.write_line(
            f"this run's temporary folders are in {folder} (in memory until the next run removes it)"
        )


@pytest.fixture(autouse=True, scope="session")
def _temporary_home(tmp_path_factory):
    """Every test runs with HOME in a temporary folder, and the cache folder under it (XDG_CACHE_HOME, where
    compiled templates are kept): nothing a build or a tool writes lands in the real ones."""
    old = {name: os.environ.get(name) for name in ("HOME", "XDG_CACHE_HOME")}
    home = tmp_path_factory.mktemp("home")
    os.environ["HOME"] = str(home)
    os.environ["XDG_CACHE_HOME"] = str(home / ".cache")
    yield
    for name, value in old.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# What a failed build may leave beside the output folder: the last build's state files and the lock
KEPT_STATE = (".site.build-state", ".site.page-cache", ".site.parse-cache", ".site.lock", ".site.boot-id")


def leftovers(folder: Path) -> list[str]:
    """What publishing left beside `folder/site`: the names of `.site.*`, but the boot id a swap records on
    purpose (generator/durable.py)."""
    return sorted(p.name for p in folder.glob(".site.*") if p.name != ".site.boot-id")


def read_tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`, by relative POSIX path, with its bytes (links to files read through, as
    Path.is_file does). Walked with os.walk: the default site's 12,770 files in 0.23-0.29 s, against 0.38-0.42 s
    through Path.rglob."""
    found = {}
    for top, _dirs, names in os.walk(folder):
        rel = os.path.relpath(top, folder).replace(os.sep, "/")
        prefix = "" if rel == "." else f"{rel}/"
        for name in names:
            path = os.path.join(top, name)
            if os.path.isfile(path):
                with open(path, "rb") as fh:
                    found[prefix + name] = fh.read()
    return dict(sorted(found.items()))


def run_cli(*args: str):
    """Invoke the CLI in-process; returns click's Result."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def cli_build(content: Path, out: Path, *extra: str):
    """`costpress build` of `content` into `out`, the packaged theme as the site's templates."""
    return run_cli("build", "--content", str(content), "--out", str(out), "--templates", str(TEMPLATES), *extra)


@pytest.fixture
def home_in_tmp(tmp_path, monkeypatch) -> Path:
    """HOME in the test's own temporary folder (the user cache a build keeps goes there)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def make_content(
    tmp: Path, edits: dict[str, str | Callable[[str], str] | None] | None = None, families: bool | str = False
) -> Path:
    """Copy content/ into tmp and apply edits: new text, a function of the old text, or None to delete.

    Page families are left out unless asked for (families=True: the 70B family; "all": every one),
    to keep builds quick,
    and with them the price snapshots of providers that only a family uses (no article names them),
    which would otherwise warn that no article uses them.
    """
    dest = tmp / "content"
    shutil.copytree(CONTENT, dest, ignore=None if families else shutil.ignore_patterns("families"))
    if families and families != "all":  # the 70B family only: the other one adds 1,700 pages to every build
        (dest / "families" / "open-models.md").unlink()
    if not families:
        named = "\n".join(p.read_text() for p in (dest / "articles").glob("*.md"))
        for folder in (dest / "prices").iterdir():
            if not re.search(rf"\b{re.escape(folder.name)}\b", named):
                shutil.rmtree(folder)
    for rel, edit in (edits or {}).items():
        path = dest / rel
        if edit is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        text = edit(path.read_text()) if callable(edit) else edit
        path.write_text(text)
    return dest


def build(tmp: Path, content: Path | None = None, out: Path | None = None):
    out = out or tmp / "site"
    result = run_cli("build", "--content", str(content or CONTENT), "--out", str(out), "--templates", str(TEMPLATES))
    return result, out


def replace(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, f"{old!r} not in file"
        return text.replace(old, new)

    return edit


NBHY = "\u2011"  # pages keep "8-bit" on one line with a non-breaking hyphen; a reader reads a hyphen


class Built:
    """A built site with parsed pages. Text comes as a reader reads it: white space collapsed, hyphens plain."""

    def __init__(self, out: Path):
        self.out = out

    def html(self, slug: str) -> BeautifulSoup:
        return BeautifulSoup((self.out / slug / "index.html").read_text(), "html.parser")

    def md(self, slug: str) -> str:
        return (self.out / slug / "index.md").read_text()

    def text(self, slug: str) -> str:
        """Visible text of the HTML article, whitespace collapsed."""
        soup = self.html(slug)
        for tag in soup(["script", "style"]):
            tag.decompose()
        return " ".join(soup.get_text(" ").split()).replace(NBHY, "-")

    def md_text(self, slug: str) -> str:
        return " ".join(self.md(slug).split()).replace(NBHY, "-")

    def table(self, slug: str, table_id: str) -> list[list[str]]:
        """Rows of a table (header row first) as lists of cell texts."""
        table = self.html(slug).find("table", id=f"{slug}-{table_id}")
        assert table is not None, f"no table {table_id} on {slug}"
        return [
            [" ".join(c.get_text(" ").split()).replace(NBHY, "-") for c in tr.find_all(["th", "td"])]
            for tr in table.find_all("tr")
        ]

    def md_table(self, slug: str, caption_start: str) -> list[list[str]]:
        """Rows of the GFM table that follows a 'Table: <caption>' line in the Markdown page."""
        lines = self.md(slug).splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("Table: " + caption_start))
        rows = []
        for line in lines[start + 1 :]:
            if not line.strip() and rows:
                break
            if line.startswith("|"):
                cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
                if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                    rows.append([c.replace("\\", "").replace(NBHY, "-") for c in cells])
        return rows


@pytest.fixture(scope="session")
def site(tmp_path_factory, worker_id) -> Built:
    """The default content, built once per test run and read, never written, by the tests.

    The processes of `pytest -n` share one build: the first to ask makes it in
    the run's temporary folder while the others wait on a lock, then each reads
    where it is (a build of the default site's 12,770 files took 7-14 s of
    each process on a disk).
    """
    if worker_id == "master":  # one process: its own temporary folder
        result, out = build(tmp_path_factory.mktemp("default"))
        assert result.exit_code == 0, result.output
        return Built(out)
    shared = tmp_path_factory.getbasetemp().parent  # the run's folder, above each process's own
    done = shared / "default-site.done"
    with open(shared / "default-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            tmp = Path(tempfile.mkdtemp(prefix="default-", dir=shared))  # a failed attempt's folder is left aside
            result, out = build(tmp)
            assert result.exit_code == 0, result.output
            done.write_text(str(out))
    return Built(Path(done.read_text()))
