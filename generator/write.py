"""The output tree as a build sees it, and the plain file operations publishing is made of.

`Files` holds a site's files by safe relative path (and `Diff` what differs
from a folder); `scan` reads a published folder; `_write_file` and
`sync_filesystem` write and flush. Publishing them (the staging folder, the
swap or the moves in place) is `generator.publish`.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.errors import BuildError

if TYPE_CHECKING:
    from generator.trees import Strays

# A relative POSIX path: no leading '/', no backslash, no control characters.
SAFE_REL = re.compile(r"^[^/\\\x00-\x1f][^\\\x00-\x1f]*\Z")  # \Z: "$" would let a final line break through


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
        # Pages whose files are held by folder and name, their paths not yet made (hold_pages): at 10,000 kept
        # pages, making, testing and storing 60,000 paths was a tenth of a price refresh
        self._held: list[list[tuple[str, Sequence[str]]]] = []
        self._held_folders: set[str] = set()
        self._held_count = 0

    def keep(self, rel: str) -> None:
        """A file that stays exactly as the output folder has it (an incremental build did not re-render it)."""
        self.add(rel, None)

    def add(self, rel: str, data: bytes | None, checked: bool = False) -> None:
        """Take one file; `checked` when check_path already passed it (a worker's Publisher.store)."""
        parts = rel.split("/") if checked else check_path(rel)
        if self._held_folders and parts[0] in self._held_folders:  # in a held page's folder: test it by path
            self._unhold()
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

    def add_pages(self, pages: list[tuple[str, list[str]]], rels: list[str] | None = None) -> None:
        """`add_page` for each (folder, files) in turn (`rels`: all their files, in order, when the caller has
        them). Where every folder is a top-level one and no path repeats or meets a folder, each table takes
        one update at C speed (the 9,922 pages a price refresh keeps took 0.05 s one by one); otherwise the
        pages go one by one, which names the first conflict."""
        if rels is None:
            rels = [rel for _, page in pages for rel in page]
        folders = [folder for folder, page in pages if page]
        if not self._held_folders.isdisjoint(folders):
            self._unhold()
        new = dict.fromkeys(rels)
        files = self._files
        if (
            "/" not in "\0".join(folders)  # a nested folder has parents to check: page by page
            and len(new) == len(rels)
            and files.keys().isdisjoint(new)
            and self._folders.isdisjoint(new)
            and files.keys().isdisjoint(folders)
        ):
            files.update(new)
            self._folders.update(folders)
            counts = self._counts
            for folder, page in pages:
                if page:
                    counts[folder] = counts.get(folder, 0) + len(page)
            return
        for folder, page in pages:
            self.add_page(folder, page)

    def keep_pages(self, pages: list[tuple[str, Sequence[str]]], checked: bool = False) -> None:
        """`keep` for the files of pages, each (folder, names of its files in it) (a page-cache entry names
        them; `checked`: a verified one, whose paths were checked when it was written)."""
        self.add_pages(paths_in(pages, checked))

    def hold_pages(self, pages: list[tuple[str, Sequence[str]]]) -> bool:
        """Take the files of pages, each (folder, names of its files in it), without making their paths,
        when each folder is a top-level one that no path recorded so far lies in or names and none repeats;
        otherwise take nothing and return False. For names whose paths were checked before (a verified page
        cache's): only the folders are tested here, and a path added later into one of them, or any use of
        the paths themselves, makes the held ones first (_unhold)."""
        folders = [folder for folder, names in pages if names]
        if (
            "/" in "\0".join(folders)
            or len(set(folders)) != len(folders)
            or not self._folders.isdisjoint(folders)
            or not self._files.keys().isdisjoint(folders)
        ):
            return False
        self._folders.update(folders)
        self._held_folders.update(folders)
        counts = self._counts
        for folder, names in pages:
            if names:
                counts[folder] = counts.get(folder, 0) + len(names)
                self._held_count += len(names)
        self._held.append(pages)
        return True

    def _unhold(self) -> None:
        """Make the held pages' paths and record them as add_pages would have."""
        held, self._held, self._held_folders, self._held_count = self._held, [], set(), 0
        files = self._files
        for pages in held:
            files.update(dict.fromkeys(path for _, rels in paths_in(pages) for path in rels))

    def items(self) -> list[tuple[str, bytes | None]]:
        self._unhold()
        return sorted(self._files.items())

    def names(self) -> set[str]:
        self._unhold()
        return set(self._files)

    def paths(self) -> list[str]:
        self._unhold()
        return list(self._files)

    def folders(self, skip: Container[str] = ()) -> dict[str, int]:
        """Every folder the files need, as state.output_stats names it ('.', 'a/', 'a/b/'), and its file count;
        less the top-level folders in `skip` (as held_folders names them)."""
        counts = dict.fromkeys([".", *(f"{folder}/" for folder in self._folders if folder not in skip)], 0)
        for folder, files in self._counts.items():
            if folder not in skip:
                counts[f"{folder}/" if folder else "."] += files  # as _folder_of names it, once per folder
        return counts

    def entries(self, folders: Iterable[str]) -> dict[str, int]:
        """How many names each of `folders` ('' for the top, 'a/b') holds in the site: its files and the
        folders directly in it."""
        subfolders = dict.fromkeys(folders, 0)
        for folder in self._folders:
            parent = folder.rpartition("/")[0]
            if parent in subfolders:
                subfolders[parent] += 1
        return {folder: self._counts.get(folder, 0) + n for folder, n in subfolders.items()}

    def names_in(self, folder: str) -> set[str]:
        """The names in `folder` ('' for the top, 'a/b') of the files and folders directly in it."""
        self._unhold()
        found = set()
        for path in itertools.chain(self._files, self._folders):
            parent, _, name = path.rpartition("/")
            if parent == folder:
                found.add(name)
        return found

    def held_folders(self) -> dict[str, int]:
        """The folders of the pages still held by name (hold_pages), each with its file count."""
        counts = self._counts
        return {folder: counts[folder] for folder in self._held_folders}

    def __len__(self) -> int:
        return len(self._files) + self._held_count

    def layout(self) -> tuple[Iterable[str], Iterable[str], Iterable[str]]:
        """The paths taken so far, the folders they need and the folders that directly hold some (a held page's
        folder among them, though its files' paths are not made)."""
        return self._files.keys(), self._folders, [folder for folder, n in self._counts.items() if n]

    def __contains__(self, rel: str) -> bool:
        self._unhold()
        return rel in self._files

    def missing(self, names: Iterable[str]) -> Iterator[str]:
        """The names that are not among the files, in their order (the test at C speed: 60,000 of them
        through `__contains__` were 0.01 s at the end of every large build)."""
        self._unhold()
        return itertools.filterfalse(self._files.__contains__, names)

    def __getitem__(self, rel: str) -> bytes:
        self._unhold()
        return self._files[rel]


def paths_in(pages: list[tuple[str, Sequence[str]]], checked: bool = True) -> list[tuple[str, list[str]]]:
    """Pages as (folder, names of its files in it) -> (folder, the files' paths); unless `checked` (names a
    build checked before), each page's paths checked as page_files does."""
    out = [(folder, list(map(f"{folder}/".__add__, names))) for folder, names in pages]
    return out if checked else [(folder, page_files(folder, rels)) for folder, rels in out]


@dataclass
class Diff:
    changed: list[str]
    added: list[str]
    removed: list[str]
    unchanged: int
    # files someone put in the published folder while the build ran (trees.Strays), found as it published
    strays: Strays | None = None

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
        elif os.stat(path).st_size != len(data) or read_file(path) != data:
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


COMPARE_BLOCK = 1 << 20  # bytes compared at a time by same_bytes


def same_bytes(path: str, pieces: list[bytes]) -> bool:
    """Whether the file holds exactly the pieces, in order: read and compared a block at a time.

    Joining the pieces and reading the whole file held two copies of it: a
    100,000-page family's first figures part is 51 MB, and comparing it that
    way was the peak of a price change's main process.
    """
    with open(path, "rb") as fh:
        for piece in pieces:
            view = memoryview(piece)
            for start in range(0, len(view), COMPARE_BLOCK):
                block = view[start : start + COMPARE_BLOCK]
                if fh.read(len(block)) != block:
                    return False
        return fh.read(1) == b""


def starts_with(data: bytes, pieces: bytes | list[bytes]) -> bool:
    """Whether `data` begins with the pieces (bytes, or a list of them in order), compared where they lie:
    no joined copy (a memoryview's own comparison goes item by item, twenty times slower)."""
    if type(pieces) is not list:
        return data.startswith(pieces)
    at, begins = 0, data.startswith
    for piece in pieces:
        if not begins(piece, at):
            return False
        at += len(piece)
    return True


def read_file(path: str) -> bytes:
    """A file's bytes, read with the operating system's calls. Python's file objects first ask for the
    file's position and whether it is a terminal: reading back 10,000 pages' figures took 9 µs a file that
    way, 6-7 µs this way."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        data = os.read(fd, os.fstat(fd).st_size + 1)  # all of it, as a rule; read on to the end regardless
        if not data:
            return data
        pieces = [data]
        while more := os.read(fd, 1 << 20):
            pieces.append(more)
        return data if len(pieces) == 1 else b"".join(pieces)
    finally:
        os.close(fd)
