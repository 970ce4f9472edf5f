"""Operations on whole folders of a site: linking, unlinking and moving files folder by folder without
following links, the exchange of two folders, and the journal of an in-place publish."""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from generator import guard, write
from generator.errors import BuildError
from generator.write import check_path

AT_FDCWD = -100
RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> bool:
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


def by_folder(rels) -> dict[str, list[str]]:
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


def in_threads(func, groups) -> None:
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


DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def open_folder(top: str, folder: str, make: bool = False) -> tuple[int, int | None]:
    """(fd of top/folder, fd of its parent or None for top itself), each step opened without following links;
    with `make`, each missing step is made first.

    A folder that became a symbolic link after the build looked at the tree
    (someone replaced it mid-build) is not followed: OSError instead, so
    nothing outside the tree is read, written or removed through it.
    """
    fd = os.open(top, DIR_FLAGS)
    parent = None
    try:
        for part in folder.split("/") if folder else ():
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            child = os.open(part, DIR_FLAGS, dir_fd=fd)
            if parent is not None:
                os.close(parent)
            parent, fd = fd, child
    except BaseException:
        os.close(fd)
        if parent is not None:
            os.close(parent)
        raise
    return fd, parent


def unlink_folder(top: str, folder: str, names: list[str]) -> None:
    try:
        fd, parent = open_folder(top, folder)
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


def write_journal(staging: Path, moved: list[str], removed: list[str]) -> None:
    """Put the journal in the staging folder in one step (written beside it, synced, renamed)."""
    lines = [JOURNAL_HEAD, *(f"- {rel}\n" for rel in removed), *(f"+ {rel}\n" for rel in moved)]
    base = os.fspath(staging)
    write._write_file(f"{base}/{JOURNAL}.tmp", "".join(lines).encode("utf-8"))
    write.sync_filesystem(base)
    os.rename(f"{base}/{JOURNAL}.tmp", f"{base}/{JOURNAL}")


def read_journal(staging: Path) -> tuple[list[str], list[str]] | None:
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


def why_not_in_place(staging: Path, out: Path, folders: set[str]) -> str | None:
    """Why files cannot be moved from `staging` into `out` and its `folders` (and removed from them), or None.

    Checked before the journal is written, so that nothing has changed when
    the answer is no: a rename cannot cross file systems (an output folder
    that is a mount point, a container's volume), and it needs write access
    to the folder it changes. Without these checks the journal's removals
    would be made and the first move would fail, on every later build too.
    """
    device = os.stat(staging).st_dev
    for folder in ("", *sorted(folders)):
        path = out / folder if folder else out
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue  # made by the move, inside a folder checked here
        if not stat.S_ISDIR(st.st_mode):
            continue  # a file that the new site turns into a folder: removed first
        if st.st_dev != device:
            return (
                f"{path} is on another file system than {staging}, where a build writes first (a mount point?), "
                "and files cannot be renamed across file systems; build into a folder inside the mount instead"
            )
        if not os.access(path, os.W_OK | os.X_OK):
            return f"{path} is not writable"
    return None


def apply_journal(staging: Path, out: Path) -> None:
    """Make the moves and removals a journal lists (again, if a killed build made some), then drop staging.

    Removals come first, so a path that turns from a file into a folder (or
    back) is free when its new file arrives; emptied folders go with them.
    The marker moves last. A file already moved is skipped, so this can be
    repeated after a kill at any point.
    """
    moved, removed = read_journal(staging)
    top, base = os.fspath(out), os.fspath(staging)
    try:
        for folder, names in by_folder(removed).items():
            unlink_folder(top, folder, names)
        remove_empty(top, {rel.rpartition("/")[0] for rel in removed})
        groups = by_folder(rel for rel in moved if rel != guard.MARKER)
        if guard.MARKER in moved:
            groups.setdefault("", []).append(guard.MARKER)  # the top folder's group is moved last
            groups[""] = groups.pop("")
        for folder, names in groups.items():
            move_folder(base, top, folder, names)
        write.sync_filesystem(top)  # the moves are on disk before the journal goes
        os.unlink(f"{base}/{JOURNAL}")
        guard.remove_tree(staging)
    except OSError as exc:
        raise BuildError(
            f"cannot finish publishing into {out}: {exc}; the next build finishes it (its journal is kept)"
        ) from None


def move_folder(base: str, top: str, folder: str, names: list[str]) -> None:
    """Rename files of one folder from staging into the output folder (made if needed, links not followed)."""
    try:
        src = os.open(f"{base}/{folder}" if folder else base, DIR_FLAGS)
    except FileNotFoundError:
        return
    try:
        dst, parent = open_folder(top, folder, make=True)
        if parent is not None:
            os.close(parent)
        try:
            for name in names:
                with contextlib.suppress(FileNotFoundError):  # moved before a kill: the journal is replayed
                    os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def remove_empty(top: str, folders: set[str]) -> None:
    """Remove each of `folders` and their parents that are now empty, deepest first (never `top`)."""
    every = set()
    for folder in folders:
        while folder:
            every.add(folder)
            folder = folder.rpartition("/")[0]
    for folder in sorted(every, key=lambda f: (-f.count("/"), f)):
        parent, _, name = folder.rpartition("/")
        try:
            fd, up = open_folder(top, parent)
        except OSError:
            continue
        try:
            with contextlib.suppress(OSError):  # not empty, or gone
                os.rmdir(name, dir_fd=fd)
        finally:
            os.close(fd)
            if up is not None:
                os.close(up)


def remove_site(folder: Path, files: dict[str, str], into: Path | None = None) -> Strays | None:
    """Delete a replaced site: the files it was known to hold, folder by folder, then what is left.

    The earlier site's files are known from the scan at the start of the
    build, so most of the work is unlinking names inside an open folder (in
    two threads) and removing the emptied folder, rather than walking the
    tree; guard.remove_tree then walks what remains (the marker last).

    A file that is not among `files` was put there while the build ran
    (the folder held none when the build checked it), so it is not ours to
    delete: each is moved to the same place in `into` (the new site), where
    its owner left it, unless the new site has something there. The files
    that cannot go back stay where they are, and the folder loses its marker,
    so no later build takes it for one it may delete. Returns them, or None
    when there were none.
    """
    top = os.fspath(folder)
    groups = by_folder(rel for rel in files if rel != guard.MARKER)
    in_threads(lambda sub, names: unlink_folder(top, sub, names), groups.items())
    found = _strays(top)
    if not found:
        guard.remove_tree(folder)
        return None
    kept, stranded = [], []
    for rel in found:
        (kept if into is not None and _put_back(top, os.fspath(into), rel) else stranded).append(rel)
    if stranded:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(top, guard.MARKER))
    else:
        guard.remove_tree(folder)
    return Strays(folder, kept, stranded)


@dataclass
class Strays:
    """Files found in a replaced site that no build wrote: `kept` were moved into the new site, at the same
    place; `stranded` are still in `folder` (the new site had something at their place)."""

    folder: Path
    kept: list[str]
    stranded: list[str]


def _strays(top: str) -> list[str]:
    """Every file, link or special file under `top` but its marker, relative and sorted (empty folders aside)."""
    return [rel for rel in files_under(top) or () if rel != guard.MARKER]


def files_under(path: str) -> list[str] | None:
    """Every file, link or special file under the folder `path`, relative to it and sorted (empty folders
    aside; links not followed); None when `path` is not a folder (a file, or a link)."""
    if os.path.islink(path) or not os.path.isdir(path):
        return None
    found = []
    for root, dirs, files in os.walk(path):
        rel = os.path.relpath(root, path)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        links = [name for name in dirs if os.path.islink(os.path.join(root, name))]
        found.extend(prefix + name for name in (*files, *links))
    return sorted(found)


def _put_back(top: str, into: str, rel: str) -> bool:
    """Move `rel` from `top` to the same place in `into` without replacing anything there; False if it cannot."""
    src, dst = os.path.join(top, rel), os.path.join(into, rel)
    try:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        try:
            os.link(src, dst, follow_symlinks=False)  # fails rather than replace a file already there
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links
            if os.path.lexists(dst):
                return False
            os.rename(src, dst)
            return True
    except OSError:
        return False
    os.unlink(src)
    return True
