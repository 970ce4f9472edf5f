"""What a build may replace, and one build of a folder at a time.

A build publishes by swapping a new tree in for the output folder and
deleting the old one, so the folder must be one costpress wrote. Every build
writes a marker, `.costpress`, at the top of the site: it names every file
the build wrote. A later build replaces the folder only when it does not
exist, is empty, or holds the marker and nothing the marker does not name.
The content and templates folders, folders that contain them, the home
folder, the file-system root and any folder inside a site costpress
publishes are refused whatever they hold.

Builds of one folder take an exclusive lock (`flock`) on `.<name>.lock`
beside it for their whole run, so two builds never publish into one folder
at once: the second waits, or with `--no-wait` stops with a message naming
the first one's process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from generator.errors import BuildError, unmade_folder

MARKER = ".costpress"
MARKER_HEAD = (
    "# Written by costpress build. It replaces this folder on every build, and only while\n"
    "# the folder holds nothing but the files named below. Do not add files here.\n"
)


def target(out: Path) -> Path:
    """The absolute folder a build publishes into: a symlink's target, never the link itself."""
    absolute = Path(os.path.abspath(out))
    return absolute.resolve() if absolute.is_symlink() else absolute


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def refuse_place(out: Path, shown: str, guarded: Iterable[tuple[str, Path]]) -> None:
    """BuildError when `out` (absolute, links followed) is a place no build may replace.

    `guarded` names the folders a build reads (content, templates): the output
    may be none of them, contain none of them, and lie inside none of them.
    """
    real = _real(out)
    if real == Path(real.anchor):
        raise BuildError(f"refusing to build into {shown}: it is the file-system root; choose a folder such as site/")
    home = os.environ.get("HOME")
    if home:
        home_real = _real(Path(home))
        if real == home_real:
            raise BuildError(f"refusing to build into {shown}: it is your home folder; choose a folder such as site/")
        if real in home_real.parents:
            raise BuildError(f"refusing to build into {shown}: it contains your home folder ({home})")
    for what, folder in guarded:
        inner = _real(folder)
        if real == inner:
            raise BuildError(f"refusing to build into {shown}: it is the {what} folder; choose a folder such as site/")
        if real in inner.parents:
            raise BuildError(f"refusing to build into {shown}: it contains the {what} folder ({folder})")
        if inner in real.parents:
            raise BuildError(f"refusing to build into {shown}: it lies inside the {what} folder ({folder})")
    site = published_site_around(real)
    if site is not None:  # the next build of that site would find files it did not write
        raise BuildError(
            f"refusing to build into {shown}: it lies inside {site}, a site costpress publishes "
            "(its next build would refuse the files); choose a folder outside it"
        )


def published_site_around(path: Path) -> Path | None:
    """The nearest folder above `path` (absolute) that holds a costpress marker: a site a build publishes."""
    for parent in path.parents:
        if (parent / MARKER).is_file():
            return parent
    return None


def manifest(paths: Iterable[str]) -> bytes:
    """The marker's bytes: a short header, then every other file the build wrote, sorted."""
    return b"".join(manifest_pieces(paths))


MANIFEST_LINES = 10_000  # paths per encoded piece


def manifest_pieces(paths: Iterable[str]) -> list[bytes]:
    """`manifest`, as pieces a few thousand lines long: the marker of a 100,000-page site names 600,000
    files (32 MB), and made in one piece it took four times that while it was being joined."""
    names = sorted(p for p in paths if p != MARKER)
    pieces = [MARKER_HEAD.encode("utf-8")]
    for start in range(0, len(names), MANIFEST_LINES):
        pieces.append(("\n".join(names[start : start + MANIFEST_LINES]) + "\n").encode("utf-8"))
    return pieces


def listed_files(path: str) -> list[str] | None:
    """The files a marker names, in its order (sorted), or None when the file is not a costpress marker."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return listed_in(data)


def listed_in(data: bytes) -> list[str] | None:
    """listed_files for a marker's bytes."""
    if not data.startswith(MARKER_HEAD.encode("utf-8")):
        return None
    # decoded from a view: a copy of 600,000 paths' bytes less the head (a 100,000-page site's) is not made
    return str(memoryview(data)[len(MARKER_HEAD.encode("utf-8")) :], "utf-8", "replace").splitlines()


def _listed(path: str) -> set[str] | None:
    """listed_files as a set."""
    names = listed_files(path)
    return None if names is None else set(names)


def check_owned(shown: str, have: dict[str, str], links: list[str]) -> None:
    """BuildError unless a folder holding `have` (relative path -> path) may be replaced by a build."""
    if links:
        raise BuildError(
            f"refusing to replace {shown}: {links[0]} is a link or special file, and costpress writes only plain "
            "files; move it out of the folder"
        )
    if not have:
        return
    marker = have.get(MARKER)
    listed = _listed(marker) if marker is not None else None
    if listed is None:
        some = ", ".join(list(have)[:3])
        raise BuildError(
            f"refusing to replace {shown}: it holds {len(have):,} file{'s' if len(have) != 1 else ''} "
            f"({some}{', ...' if len(have) > 3 else ''}) and no {MARKER} marker, so costpress did not write it; "
            "build into a new or empty folder (a site built before costpress 0.2 has no marker: delete it once)"
        )
    foreign = sorted(rel for rel in have if rel not in listed and rel != MARKER)  # the same words on any disk
    if foreign:
        some = ", ".join(foreign[:3])
        raise BuildError(
            f"refusing to replace {shown}: costpress did not write {some}{', ...' if len(foreign) > 3 else ''} "
            f"({len(foreign):,} file{'s' if len(foreign) != 1 else ''} in all); move them out of the folder first "
            "(a file of your own to publish goes in the content folder's static/)"
        )


def is_ours(folder: Path) -> bool:
    """A leftover folder beside the site that a build made: it holds a marker, or no file at all.

    A build writes the marker (listing no file yet) into its staging folder
    before anything else, so a build killed at any point leaves one.
    """
    marker = folder / MARKER
    if marker.is_file() and not marker.is_symlink():
        with open(marker, "rb") as fh:
            start = fh.read(len(MARKER_HEAD))
        if MARKER_HEAD.encode("utf-8").startswith(start):  # whole, or cut short by a kill while written
            return True
    for _root, _dirs, files in os.walk(folder):
        if files:
            return False
    return True


def remove_tree(folder: Path, missing_ok: bool = False) -> None:
    """Delete a tree a build made, its top-level marker last: a build killed halfway leaves it recognisable."""
    top = os.fspath(folder)
    marker = os.path.join(top, MARKER)
    if missing_ok and not os.path.lexists(top):
        return
    for root, dirs, files in os.walk(top, topdown=False):
        for name in files:
            path = os.path.join(root, name)
            if path != marker:
                os.unlink(path)
        for name in dirs:
            path = os.path.join(root, name)
            if os.path.islink(path):
                os.unlink(path)
            else:
                os.rmdir(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(marker)
    os.rmdir(top)


def make_parent(out: Path, shown: str) -> None:
    """Make the folder `out` goes in, or say in one line why it cannot be (a file where a folder goes)."""
    why = unmade_folder(out.parent)
    if why is not None:  # say which folder, not the lock file beside it
        raise BuildError(f"cannot make the folder {out.parent} for {shown} ({why})")


def lock_path(out: Path) -> Path:
    return out.parent / f".{out.name}.lock"


@contextlib.contextmanager
def build_lock(out: Path, shown: str, wait: bool = True, say: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the exclusive lock on `out` (absolute) for the duration; wait for another build, or refuse.

    The lock file is removed before the lock is released, so nothing is left
    beside a folder a build refused. A build that waited may then hold a
    file no longer at the path: it checks, and locks the new one instead.
    """
    path = lock_path(out)
    make_parent(out, shown)
    said = False
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise BuildError(f"cannot lock {shown} for building ({path}: {exc.strerror})") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                if not wait:
                    raise BuildError(
                        f"another build of {shown} is running (pid {holder}); wait for it, or drop --no-wait"
                    ) from None
                if say is not None and not said:
                    say(f"waiting: another build of {shown} is running (pid {holder})")
                    said = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            if _same_file(fd, path):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the build before removed it as it finished: lock the file now at the path
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still held: a waiting build notices and locks a new file
        os.close(fd)  # releases the lock (workers forked under it have exited by now)


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return text if text.isdigit() else "unknown"
