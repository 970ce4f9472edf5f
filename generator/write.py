"""The one writer that touches the output folder.

A build writes the files that changed beside the output folder while pages
render, then publishes them in one of two ways. When most of the site is
unchanged (a price refresh) the new files are moved into the published
folder one by one, each by a rename, after a journal listing every move is
on disk: a build killed halfway is finished by the next one. Otherwise (or
with `--swap`) the unchanged files are hard-linked into the new tree and the
two folders are exchanged in one step, so a reader of the folder sees the old
site or the new one, never a mix. Unchanged files keep their modification time
either way.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from generator import guard, state
from generator.errors import BuildError

AT_FDCWD = -100
# A relative POSIX path: no leading '/', no backslash, no control characters.
SAFE_REL = re.compile(r"^[^/\\\x00-\x1f][^\\\x00-\x1f]*$")
RENAME_EXCHANGE = 2


def _folder_of(rel: str) -> str:
    """The folder of an output path as state.output_stats names it: '.' or 'a/b/'."""
    folder = rel.rpartition("/")[0]
    return f"{folder}/" if folder else "."


def page_files(folder: str, rels: list[str]) -> list[str]:
    """`rels` when each is a file directly in `folder` (checked once) and none repeats; else BuildError."""
    if rels:
        check_path(folder)
    start = len(folder) + 1
    for rel in rels:
        name = rel[start:]
        if not rel.startswith(folder) or rel[start - 1 : start] != "/" or not SAFE_REL.match(name) or "/" in name:
            raise BuildError(f"refusing to write outside the output folder: {rel!r}")
        if name in (".", ".."):
            raise BuildError(f"refusing to write outside the output folder: {rel!r}")
    return rels


def check_path(rel: str) -> list[str]:
    """The parts of a safe relative output path; BuildError for anything that could leave the folder."""
    wrapped = f"/{rel}/"  # an empty, '.' or '..' part shows as '//', '/./' or '/../'
    if not SAFE_REL.match(rel) or "//" in wrapped or "/./" in wrapped or "/../" in wrapped:
        raise BuildError(f"refusing to write outside the output folder: {rel!r}")
    return rel.split("/")


class Files:
    """Output files by relative POSIX path; refuses unsafe or repeated paths."""

    def __init__(self) -> None:
        self._files: dict[str, bytes | None] = {}
        self._folders: set[str] = set()
        self._counts: dict[str, int] = {}  # files directly in each folder ('' for the top), kept as files come

    def keep(self, rel: str) -> None:
        """A file that stays exactly as the output folder has it (an incremental build did not re-render it)."""
        self.add(rel, None)

    def add(self, rel: str, data: bytes | None, checked: bool = False) -> None:
        """Take one file; `checked` when check_path already passed it (a worker's Publisher.store)."""
        parts = rel.split("/") if checked else check_path(rel)
        if rel in self._files:
            raise BuildError(f"two pages want the same output path: {rel}")
        if rel in self._folders:
            raise BuildError(f"output path {rel} is also a folder of other output files")
        folder = rel.rpartition("/")[0]
        if len(parts) > 1 and folder not in self._folders:
            # a known folder had its own parents checked when it was first seen
            for i in range(1, len(parts)):
                parent = "/".join(parts[:i])
                if parent in self._files:
                    raise BuildError(f"output path {rel} lies under a file of the same name")
                self._folders.add(parent)
        self._files[rel] = data
        self._counts[folder] = self._counts.get(folder, 0) + 1

    def add_page(self, folder: str, rels: list[str]) -> None:
        """`add` (checked, no bytes) for files that all lie directly in `folder`: its parents are checked once."""
        if not rels:
            return
        self.add(rels[0], None, checked=True)
        files, folders = self._files, self._folders
        for rel in rels[1:]:
            if rel in files:
                raise BuildError(f"two pages want the same output path: {rel}")
            if rel in folders:
                raise BuildError(f"output path {rel} is also a folder of other output files")
            files[rel] = None
        self._counts[folder] += len(rels) - 1

    def keep_page(self, folder: str, rels: list[str]) -> None:
        """`keep` for the files of one page, all directly in `folder` (a page-cache entry names them)."""
        self.add_page(folder, page_files(folder, rels))

    def items(self) -> list[tuple[str, bytes | None]]:
        return sorted(self._files.items())

    def names(self) -> set[str]:
        return set(self._files)

    def paths(self) -> list[str]:
        return list(self._files)

    def folders(self) -> dict[str, int]:
        """Every folder the files need, as state.output_stats names it ('.', 'a/', 'a/b/'), and its file count."""
        counts = dict.fromkeys([".", *(f"{folder}/" for folder in self._folders)], 0)
        for folder, files in self._counts.items():
            counts[f"{folder}/" if folder else "."] += files  # as _folder_of names it, once per folder
        return counts

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, rel: str) -> bool:
        return rel in self._files

    def __getitem__(self, rel: str) -> bytes:
        return self._files[rel]


@dataclass
class Diff:
    changed: list[str]
    added: list[str]
    removed: list[str]
    unchanged: int

    @property
    def clean(self) -> bool:
        return not (self.changed or self.added or self.removed)

    def lines(self) -> list[str]:
        return (
            [f"changed: {p}" for p in sorted(self.changed)]
            + [f"missing: {p}" for p in sorted(self.added)]
            + [f"extra:   {p}" for p in sorted(self.removed)]
        )


def existing(out: Path) -> dict[str, str]:
    """Files under the output folder by relative POSIX path."""
    return scan(out)[0]


def scan(out: Path) -> tuple[dict[str, str], list[str]]:
    """Files under the output folder by relative POSIX path, and the links and special files among them."""
    found: dict[str, str] = {}
    odd: list[str] = []
    if not out.is_dir():
        return {}, []
    pending = [("", os.fspath(out))]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((prefix + entry.name + "/", entry.path))
                else:
                    found[prefix + entry.name] = entry.path
                    if not entry.is_file(follow_symlinks=False):
                        odd.append(prefix + entry.name)
    return {rel: found[rel] for rel in sorted(found)}, sorted(odd)


def compare(files: Files, out: Path, have: dict[str, str] | None = None) -> Diff:
    """What differs between the rendered files and the output folder."""
    have = existing(out) if have is None else have
    changed, added, same = [], [], 0
    for rel, data in files.items():
        path = have.get(rel)
        if path is None:
            if data is None:
                raise BuildError(f"a kept file is missing from the output folder: {rel}")
            added.append(rel)
        elif data is None:
            same += 1
        elif os.stat(path).st_size != len(data) or _read(path) != data:
            changed.append(rel)
        else:
            same += 1
    removed = sorted(set(have) - files.names())
    return Diff(changed, added, removed, same)


def _write_file(path: str, data: bytes | list[bytes], folder: int | None = None) -> None:
    """Create or replace one file: three system calls where open() makes six (fstat, ioctl, lseek).

    `data` may be a list of pieces, written in order with writev: a large
    file (figures.json, 26 MB at 10,000 pages) need not be joined in memory first.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666, dir_fd=folder)
    try:
        if type(data) is list:
            _write_pieces(fd, data)
            return
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


IOV_BATCH = 512  # pieces per writev call, under any system's IOV_MAX


def _write_pieces(fd: int, pieces: list[bytes]) -> None:
    views = [memoryview(p) for p in pieces if p]
    i = 0
    while i < len(views):
        done = os.writev(fd, views[i : i + IOV_BATCH])
        if not done:
            raise OSError("writev wrote nothing")
        while done:  # step past what was written; a short write leaves part of a piece
            if done >= len(views[i]):
                done -= len(views[i])
                i += 1
            else:
                views[i], done = views[i][done:], 0


_syncfs = None  # libc's syncfs, looked up on first use; False where there is none


def sync_filesystem(folder: str) -> None:
    """Write what is cached for the file system that holds `folder` to its disk.

    syncfs(2) where the C library has it (Linux): os.sync() would wait for every
    file system of the machine, so a build beside a large download or another
    job's writes waited for theirs too. Elsewhere, os.sync().
    """
    global _syncfs
    if _syncfs is None:
        try:
            import ctypes

            _syncfs = ctypes.CDLL(None, use_errno=True).syncfs
        except (OSError, AttributeError):
            _syncfs = False
    if _syncfs:
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            fd = None
        if fd is not None:
            try:
                if _syncfs(fd) == 0:
                    return
            finally:
                os.close(fd)
    os.sync()


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _siblings(out: Path) -> tuple[Path, Path]:
    return out.parent / f".{out.name}.staging", out.parent / f".{out.name}.old"


def clean_leftovers(out: Path) -> None:
    """Undo what an interrupted build left beside the output folder (call it holding the build lock).

    If a build died between the two renames of the fallback swap, the old site
    sits in .<name>.old with no output folder: put it back first. If it died
    while moving files into the output folder, its journal is in the staging
    folder: make the rest of the moves, so the site is the new one. A leftover
    is deleted only when a build made it (it holds the staging marker, or the
    site marker, or no file at all); anything else by that name is refused.
    """
    staging, old = _siblings(out)
    if old.is_dir() and not old.is_symlink() and not out.exists() and not out.is_symlink():
        os.rename(old, out)
    if staging.is_dir() and not staging.is_symlink() and _read_journal(staging) is not None:
        _apply_journal(staging, out)  # killed while moving files in: finish the moves, then the folder goes
    for path in (staging, old):
        if not path.exists() and not path.is_symlink():
            continue
        if path.is_symlink() or not path.is_dir() or not guard.is_ours(path):
            raise BuildError(
                f"refusing to build: {path} is in the way, and costpress did not make it; move it elsewhere"
            )
        guard.remove_tree(path)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two folders (Linux renameat2); False when not supported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        func = libc.renameat2
    except (OSError, AttributeError):
        return False
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = func(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: filesystem cannot exchange
        return False
    raise BuildError(f"cannot swap {a} and {b}: {os.strerror(err)}")


# What a build may write or remove in place, as a share of the new site's files (see Publisher.finish).
IN_PLACE_SHARE = 0.5
PUBLISH_MODES = ("auto", "swap", "in-place")


class Publisher:
    """Writes a new site beside `out` while pages are still rendering; `finish` publishes it.

    Each file is compared with the published one as it arrives and written to
    the staging folder only when it differs, so a build never holds the whole
    site in memory. `finish` either moves those files into the output folder
    (journalled), or hard-links the unchanged files into the staging folder
    and exchanges it with the output folder in one step; `abort` (any error
    before that) removes the staging folder and leaves the site as it was.
    """

    def __init__(self, out: Path, shown: str | None = None, mode: str = "auto"):
        """`out` as guard.target gives it (absolute, links followed); `shown` is how the user named it.

        `mode` is how `finish` publishes: "swap" (a whole new tree, exchanged in
        one step), "in-place" (the changed files moved in, journalled) or
        "auto" (in place when at most half of the new site's files are
        written or removed, else a swap).
        """
        if mode not in PUBLISH_MODES:
            raise ValueError(f"unknown publish mode {mode!r}")
        self.mode = mode
        shown = shown or str(out)
        clean_leftovers(out)
        if out.exists() and not out.is_dir():
            raise BuildError(f"refusing to build into {shown}: it exists and is not a folder")
        self.out = out
        # As the last build left it: its files are the ones its marker lists, without a walk of the folder
        folders = state.untouched_output(out)
        listed = guard.listed_files(f"{os.fspath(out)}/{guard.MARKER}") if folders is not None else None
        self.trusted = listed is not None
        # folder -> [inode, mtime, files] as recorded, while true of the folder (see folder_stats)
        self._recorded: dict[str, list] = folders if listed is not None else {}
        if listed is not None:
            base = os.fspath(out)
            self.have = {rel: f"{base}/{rel}" for rel in (guard.MARKER, *listed) if rel}
        else:
            self.have, links = scan(out)
            guard.check_owned(shown, self.have, links)
        self.staging, self.old = _siblings(out)
        self._base = os.fspath(self.staging)
        try:
            os.makedirs(self.staging)
            # the marker with no files listed: a build killed before the end leaves a tree the next one may delete
            _write_file(f"{self._base}/{guard.MARKER}", guard.manifest(()))
        except OSError as exc:
            with contextlib.suppress(OSError):
                guard.remove_tree(self.staging, missing_ok=True)
            raise BuildError(f"cannot write the new site beside {shown}: {exc}") from None
        self._paths = Files()  # checks every output path; holds no bytes
        self.changed: list[str] = []
        self.added: list[str] = []
        self.unchanged: list[str] = []
        self._outcomes = {"added": self.added, "changed": self.changed, "unchanged": self.unchanged}
        self._made: set[str] = set()
        self._seen: dict[str, tuple[int, int]] = {}  # folder -> (inode, mtime) a worker read after writing it
        self._flusher: threading.Thread | None = None
        self._flushed = threading.Event()

    # Seconds between background flushes of written files while a large site renders.
    FLUSH_EVERY = 1.0

    def start_flushing(self) -> None:
        """Hand written files to the disk every second while pages render, from a background thread.

        The final sync before the swap then has little left to write: on a
        10,000-page build on disk it took 0.8 s of the build's 8.7 s when
        nothing had been written back before it (the kernel keeps a few
        hundred MB dirty for up to 30 s). The flushes change nothing a reader
        sees: the staging folder is not the site until the swap.
        """
        if self._flusher is not None:
            return

        def flush() -> None:
            while not self._flushed.wait(self.FLUSH_EVERY):
                sync_filesystem(self._base)

        self._flusher = threading.Thread(target=flush, name="costpress-flush", daemon=True)
        self._flusher.start()

    def _stop_flushing(self) -> None:
        if self._flusher is not None:
            self._flushed.set()
            self._flusher.join()
            self._flusher = None

    def _folder(self, folder: str) -> str:
        """A folder of the staging tree, made if needed (plain string work: os.makedirs is Python code)."""
        path = f"{self._base}/{folder}"
        if path not in self._made:
            try:
                os.mkdir(path)  # a page's folder: its parent (the staging folder) usually exists
            except FileExistsError:
                pass
            except FileNotFoundError:
                os.makedirs(path, exist_ok=True)
            self._made.add(path)
        return path

    def _write(self, rel: str, data: bytes) -> None:
        self._folder(rel.rpartition("/")[0])
        try:
            _write_file(f"{self._base}/{rel}", data)
        except OSError as exc:
            self.abort()
            raise BuildError(f"cannot write the new site beside {self.out}: {exc}") from None

    def _compare(self, rel: str, data: bytes | list[bytes] | None) -> str:
        """'added', 'changed' or 'unchanged': what writing `data` (bytes, or pieces in order) at `rel` would do."""
        check_path(rel)
        path = self.have.get(rel)
        if path is None:
            if data is None:
                raise BuildError(f"a kept file is missing from the output folder: {rel}")
            return "added"
        if data is None:
            return "unchanged"
        size = sum(map(len, data)) if type(data) is list else len(data)
        if os.stat(path).st_size == size and _read(path) == (b"".join(data) if type(data) is list else data):
            return "unchanged"
        return "changed"

    def current(self, rel: str) -> bytes:
        """A file as the new site will have it: written to staging by this build, or else the published one."""
        try:
            return _read(f"{self._base}/{rel}")
        except FileNotFoundError:
            pass
        path = self.have.get(rel)
        if path is None:
            raise BuildError(f"{rel} is missing from the new site")
        try:
            return _read(path)
        except OSError as exc:
            raise BuildError(f"cannot read {rel} of the published site: {exc.strerror}") from None

    def store(self, rel: str, data: bytes | None) -> str:
        """Compare one file with the published one and write it to staging if it differs.

        Returns 'added', 'changed' or 'unchanged'. It touches no shared state,
        so worker processes call it for their own pages and the main process
        records the outcome with `record`.
        """
        status = self._compare(rel, data)
        if status != "unchanged":
            self._write(rel, data)
        return status

    def store_page(self, folder: str, files: list[tuple[str, bytes]]) -> tuple[list, tuple[int, int] | None]:
        """`store` for the files of one page, all directly in `folder`, through one open handle on the folder.

        Returns each file's (path, size, outcome) and, when every file was
        written, the folder's inode and mtime: the swap renames only the
        folder above it, so the published folder has the same ones and
        folder_stats need not stat it again. Opening files by name inside the
        open folder spares the kernel their whole path, six times a page.
        """
        out, fd = [], None
        try:
            for rel, data in files:
                name = rel[len(folder) + 1 :]
                if not rel.startswith(f"{folder}/") or "/" in name:
                    raise BuildError(f"{rel} is not a file directly in {folder}/")
                status = self._compare(rel, data)
                if status != "unchanged":
                    if fd is None:
                        fd = os.open(self._folder(folder), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                    _write_file(name, data, fd)
                out.append((rel, len(data), status))
            if fd is None or any(status == "unchanged" for _, _, status in out):
                return out, None
            st = os.fstat(fd)
            return out, (st.st_ino, st.st_mtime_ns)
        except OSError as exc:
            self.abort()
            raise BuildError(f"cannot write the new site beside {self.out}: {exc}") from None
        finally:
            if fd is not None:
                os.close(fd)

    def record(self, rel: str, status: str) -> None:
        """Note the outcome of `store` for one file (`store` checked the path)."""
        self._paths.add(rel, None, checked=True)
        self._outcomes[status].append(rel)

    def record_page(self, folder: str, outcomes: list[tuple[str, int, str]]) -> bool:
        """`record` for the files `store_page` stored for one page; True if it wrote any of them."""
        self._paths.add_page(folder, [rel for rel, _size, _status in outcomes])
        written = False
        for rel, _size, status in outcomes:
            self._outcomes[status].append(rel)
            written = written or status != "unchanged"
        return written

    def add(self, rel: str, data: bytes | None) -> None:
        self.record(rel, self.store(rel, data))
        self._seen.pop(_folder_of(rel), None)  # written here, after any worker looked at its folder

    def seen(self, folder: str, stat: tuple[int, int]) -> None:
        """Record the stat `store_page` read in a worker ('slug/'), so `folder_stats` need not stat it again."""
        self._seen[folder] = stat

    def keep(self, rel: str) -> None:
        self.add(rel, None)

    def keep_page(self, folder: str, rels: list[str]) -> None:
        """`keep` for the files of one page, all directly in `folder`: no bytes are compared or written."""
        have = self.have
        for rel in page_files(folder, rels):
            if rel not in have:
                raise BuildError(f"a kept file is missing from the output folder: {rel}")
        self._paths.add_page(folder, rels)
        self.unchanged.extend(rels)

    def abort(self) -> None:
        self._stop_flushing()
        with contextlib.suppress(OSError):
            guard.remove_tree(self.staging, missing_ok=True)

    def folder_stats(self) -> dict[str, list[int]] | None:
        """After `finish`: what state.output_stats would read from the output folder, from a stat per folder.

        The published tree holds exactly the files recorded here, so only each
        folder's inode and mtime need the file system (a walk of 10,000 folders
        took 0.13 s at the end of every large build). Page folders that workers
        wrote whole were stat'ed by them, in parallel, right after writing
        (stat'ing 10,000 freshly made folders here took 0.11 s); after moving
        files in, folders that received or lost none are as recorded when the
        build began. None if a folder is gone.
        """
        counts = self._paths.folders()
        stats = {}
        try:
            root = os.open(self.out, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return None
        try:
            # names relative to the open output folder: the kernel resolves one component, not the whole path
            recorded = self._recorded
            for folder in sorted(counts):
                known = self._seen.get(folder)
                if known is None and folder in recorded:
                    known = recorded[folder][:2]
                if known is None:
                    st = os.stat(folder, dir_fd=root)
                    known = st.st_ino, st.st_mtime_ns
                stats[folder] = [*known, counts[folder]]
        except OSError:
            return None
        finally:
            os.close(root)
        return stats

    def finish(self) -> Diff:
        """Swap the new site in; write nothing when it equals the published one."""
        self._stop_flushing()
        removed = sorted(rel for rel in self.have if rel not in self._paths)  # no set of every new path
        # in the order pages came back (fixed by the article order); Diff.lines sorts when printing
        diff = Diff(self.changed, self.added, removed, len(self.unchanged))
        if diff.clean:
            self.abort()
            return diff
        written = len(diff.changed) + len(diff.added)
        if self.out.is_dir() and (
            self.mode == "in-place"
            or (self.mode == "auto" and written + len(diff.removed) <= IN_PLACE_SHARE * (written + diff.unchanged))
        ):
            self._publish_in_place(diff)
            return diff
        self._recorded = {}  # a new tree: every folder has a new inode
        out, staging, old = self.out, self.staging, self.old
        try:
            os.makedirs(staging, exist_ok=True)
            groups = _by_folder(self.unchanged)
            for folder in groups:
                self._seen.pop(f"{folder}/" if folder else ".", None)  # a link changes its folder's mtime
            marker = groups.get("", [])
            if guard.MARKER in marker:  # replaces the placeholder written when staging began, in one step
                marker.remove(guard.MARKER)
                os.link(self.have[guard.MARKER], f"{self._base}/{guard.MARKER}.new")
                os.rename(f"{self._base}/{guard.MARKER}.new", f"{self._base}/{guard.MARKER}")
            _in_threads(self._link_folder, groups.items())
            sync_filesystem(self._base)  # the new tree is on disk before it becomes the site
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError):
                raise BuildError(f"cannot write the new site beside {out}: {exc}") from None
            raise
        if out.exists():
            if _exchange(staging, out):
                _remove_site(staging, self.have)
            else:
                os.rename(out, old)
                os.rename(staging, out)
                _remove_site(old, self.have)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            os.rename(staging, out)
        return diff

    def _publish_in_place(self, diff: Diff) -> None:
        """Move the written files into the output folder and remove the files the new site lacks.

        The written files and then a journal naming every move and removal
        reach the disk first: from then on a build killed at any point leaves
        the journal, and the next build (clean_leftovers) makes the rest of
        the moves. Until then the published site is as it was. Each file is
        replaced by one rename, so a reader never finds half a file; for the
        few milliseconds of the moves, some pages may be new and others old.
        """
        self._stop_flushing()
        self._seen.clear()  # the folders that receive files get new modification times
        # Those folders, the ones made or emptied, and the folders above them, are stat'ed again;
        # every other folder is as it was recorded when this build began
        for rel in (*diff.changed, *diff.added, *diff.removed):
            folder = rel
            while folder:
                folder = folder.rpartition("/")[0]
                self._recorded.pop(f"{folder}/" if folder else ".", None)
        try:
            sync_filesystem(self._base)  # the new files are on disk before the journal names them
            _write_journal(self.staging, [*diff.changed, *diff.added], diff.removed)
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError):
                raise BuildError(f"cannot write the new site beside {self.out}: {exc}") from None
            raise
        _apply_journal(self.staging, self.out)

    def _link_folder(self, folder: str, names: list[str]) -> None:
        """Hard-link unchanged files of one folder from the published tree into staging (same bytes, same mtime)."""
        if not names:
            return
        src, parent = _open_folder(os.fspath(self.out), folder)  # links inside the published tree not followed
        if parent is not None:
            os.close(parent)
        try:
            dst = os.open(self._folder(folder) if folder else self._base, os.O_RDONLY | os.O_DIRECTORY)
            try:
                for name in names:
                    try:
                        os.link(name, name, src_dir_fd=src, dst_dir_fd=dst)
                    except OSError:  # a file system without hard links: copy the bytes and times
                        rel = f"{folder}/{name}" if folder else name
                        shutil.copy2(self.have[rel], f"{self._base}/{rel}")
            finally:
                os.close(dst)
        finally:
            os.close(src)

    def paths(self) -> list[str]:
        """Every file this build recorded so far."""
        return list(self._paths.names())


def _by_folder(rels) -> dict[str, list[str]]:
    """File names grouped by their folder ('' for the top), folders in first-seen order."""
    groups: dict[str, list[str]] = {}
    for rel in rels:
        folder, _, name = rel.rpartition("/")
        names = groups.get(folder)
        if names is None:
            names = groups[folder] = []
        names.append(name)
    return groups


# Threads that link or unlink files: the system calls release the GIL, so two keep two cores busy
# (a price change on a 10,000-page site links and then removes 60,000 files).
FILE_THREADS = 2


def _in_threads(func, groups) -> None:
    """func(folder, names) for every group, spread over FILE_THREADS threads; the first error is raised."""
    groups = list(groups)
    if len(groups) < 64:
        for folder, names in groups:
            func(folder, names)
        return
    from concurrent.futures import ThreadPoolExecutor

    share = (len(groups) + FILE_THREADS - 1) // FILE_THREADS

    def run(part):
        for folder, names in part:
            func(folder, names)

    with ThreadPoolExecutor(FILE_THREADS) as pool:
        for done in [pool.submit(run, groups[i : i + share]) for i in range(0, len(groups), share)]:
            done.result()


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def _open_folder(top: str, folder: str) -> tuple[int, int | None]:
    """(fd of top/folder, fd of its parent or None for top itself), each step opened without following links.

    A folder that became a symbolic link after the build looked at the tree
    (someone replaced it mid-build) is not followed: OSError instead, so
    nothing outside the tree is read or removed through it.
    """
    fd = os.open(top, _DIR_FLAGS)
    parent = None
    try:
        for part in folder.split("/") if folder else ():
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            if parent is not None:
                os.close(parent)
            parent, fd = fd, child
    except BaseException:
        os.close(fd)
        if parent is not None:
            os.close(parent)
        raise
    return fd, parent


def _unlink_folder(top: str, folder: str, names: list[str]) -> None:
    try:
        fd, parent = _open_folder(top, folder)
    except OSError:  # gone, or not a plain folder any more: left to guard.remove_tree
        return
    try:
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=fd)
        if parent is not None:  # emptied: gone now (a folder that still holds anything is left to remove_tree)
            with contextlib.suppress(OSError):
                os.rmdir(folder.rpartition("/")[2], dir_fd=parent)
    finally:
        os.close(fd)
        if parent is not None:
            os.close(parent)


JOURNAL = ".costpress-journal"  # in the staging folder: the moves of an in-place publish, once they may begin
JOURNAL_HEAD = "costpress publish journal 1\n"


def _write_journal(staging: Path, moved: list[str], removed: list[str]) -> None:
    """Put the journal in the staging folder in one step (written beside it, synced, renamed)."""
    lines = [JOURNAL_HEAD, *(f"- {rel}\n" for rel in removed), *(f"+ {rel}\n" for rel in moved)]
    base = os.fspath(staging)
    _write_file(f"{base}/{JOURNAL}.tmp", "".join(lines).encode("utf-8"))
    sync_filesystem(base)
    os.rename(f"{base}/{JOURNAL}.tmp", f"{base}/{JOURNAL}")


def _read_journal(staging: Path) -> tuple[list[str], list[str]] | None:
    """(files to move in, files to remove) from a staging folder's journal; None when it has none."""
    try:
        with open(f"{os.fspath(staging)}/{JOURNAL}", "rb") as fh:
            text = fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(JOURNAL_HEAD):
        return None
    moved, removed = [], []
    for line in text[len(JOURNAL_HEAD) :].splitlines():
        sign, rel = line[:2], line[2:]
        check_path(rel)  # a journal names paths inside the site only
        (moved if sign == "+ " else removed if sign == "- " else []).append(rel)
    return moved, removed


def _apply_journal(staging: Path, out: Path) -> None:
    """Make the moves and removals a journal lists (again, if a killed build made some), then drop staging.

    Removals come first, so a path that turns from a file into a folder (or
    back) is free when its new file arrives; emptied folders go with them.
    The marker moves last. A file already moved is skipped, so this can be
    repeated after a kill at any point.
    """
    moved, removed = _read_journal(staging)
    top, base = os.fspath(out), os.fspath(staging)
    try:
        for folder, names in _by_folder(removed).items():
            _unlink_folder(top, folder, names)
        _remove_empty(top, {rel.rpartition("/")[0] for rel in removed})
        groups = _by_folder(rel for rel in moved if rel != guard.MARKER)
        if guard.MARKER in moved:
            groups.setdefault("", []).append(guard.MARKER)  # the top folder's group is moved last
            groups[""] = groups.pop("")
        for folder, names in groups.items():
            _move_folder(base, top, folder, names)
        sync_filesystem(top)  # the moves are on disk before the journal goes
        os.unlink(f"{base}/{JOURNAL}")
        guard.remove_tree(staging)
    except OSError as exc:
        raise BuildError(
            f"cannot finish publishing into {out}: {exc}; the next build finishes it (its journal is kept)"
        ) from None


def _move_folder(base: str, top: str, folder: str, names: list[str]) -> None:
    """Rename files of one folder from staging into the output folder (made if needed, links not followed)."""
    try:
        src = os.open(f"{base}/{folder}" if folder else base, _DIR_FLAGS)
    except FileNotFoundError:
        return
    try:
        dst = _make_folder(top, folder)
        try:
            for name in names:
                with contextlib.suppress(FileNotFoundError):  # moved before a kill: the journal is replayed
                    os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _make_folder(top: str, folder: str) -> int:
    """An open handle on top/folder, each missing part made, no part followed if it is a link."""
    fd = os.open(top, _DIR_FLAGS)
    try:
        for part in folder.split("/") if folder else ():
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _remove_empty(top: str, folders: set[str]) -> None:
    """Remove each of `folders` and their parents that are now empty, deepest first (never `top`)."""
    every = set()
    for folder in folders:
        while folder:
            every.add(folder)
            folder = folder.rpartition("/")[0]
    for folder in sorted(every, key=lambda f: (-f.count("/"), f)):
        parent, _, name = folder.rpartition("/")
        try:
            fd, up = _open_folder(top, parent)
        except OSError:
            continue
        try:
            with contextlib.suppress(OSError):  # not empty, or gone
                os.rmdir(name, dir_fd=fd)
        finally:
            os.close(fd)
            if up is not None:
                os.close(up)


def _remove_site(folder: Path, files: dict[str, str]) -> None:
    """Delete a replaced site: the files it was known to hold, folder by folder, then what is left.

    The earlier site's files are known from the scan at the start of the
    build, so most of the work is unlinking names inside an open folder (in
    two threads) and removing the emptied folder, rather than walking the
    tree; guard.remove_tree then walks what remains (the marker last).
    """
    top = os.fspath(folder)
    groups = _by_folder(rel for rel in files if rel != guard.MARKER)
    _in_threads(lambda sub, names: _unlink_folder(top, sub, names), groups.items())
    guard.remove_tree(folder)


def publish(files: Files, out: Path, shown: str | None = None, mode: str = "auto") -> Diff:
    """Make `out` hold exactly `files`; write nothing when it already does (call it holding the build lock)."""
    publisher = Publisher(out, shown, mode)  # also clears what a killed build left beside `out`
    try:
        for rel, data in files.items():
            publisher.add(rel, data)
    except BaseException:
        publisher.abort()
        raise
    return publisher.finish()
