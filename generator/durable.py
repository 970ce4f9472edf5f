"""Publishing without waiting for the disk, and noticing a restart that may have lost those writes.

A build that swaps a new tree in does not wait for the new files to reach
the disk: a restart of the machine is the only thing that can lose writes
the kernel holds, and a build knows when one happened. Before such a swap,
`.<out>.boot-id` beside the output folder receives the id the kernel gives
this boot (`/proc/sys/kernel/random/boot_id`), and that one small file,
the new site's marker and the folder holding it are flushed (fsync), so a
folder published this way is always recognised as costpress's.

The next build compares that id with the running boot's. The same id: every
write since is either on disk or still in the kernel's cache, where every
reader sees it, so the caches and the no-op shortcut can trust the folder
as usual. Another id: the machine restarted (or lost power) since, and a
page may have come back empty or short while its folder looks untouched.
That build then trusts nothing it remembers (`restarted`): it renders every
page and compares every published file byte for byte, as `--force` does,
and so rewrites whatever the restart damaged. After it, the file names the
new boot, or goes when nothing was published without waiting.

Where the system gives no boot id (anything but Linux), or the file cannot
be written, a build waits for the disk before it swaps, as it always did
before. An in-place publish (a price refresh) always waits: its journal
must name files that are on disk.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path

BOOT_ID = "/proc/sys/kernel/random/boot_id"


def record_path(out: Path) -> Path:
    return out.parent / f".{out.name}.boot-id"


@functools.cache
def boot_id() -> str | None:
    """The running boot's id (Linux), or None where the system gives none; read once a process."""
    try:
        with open(BOOT_ID, "rb") as fh:
            found = fh.read(100).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return found or None


def _recorded(out: Path) -> str | None:
    """The boot id the last build that swapped without waiting wrote; None when there is no such file."""
    try:
        with open(record_path(out), "rb") as fh:
            return fh.read(100).decode("ascii", "replace").strip()
    except FileNotFoundError:
        return None
    except OSError:
        return ""  # there but unreadable: nothing tells which boot wrote the site, so it counts as another


def restarted(out: Path) -> bool:
    """Whether `out` was published without waiting for the disk in a boot that has ended since."""
    recorded = _recorded(out)
    return recorded is not None and recorded != boot_id()


def fsync_path(path: str) -> None:
    """Flush one file or folder to the disk (fsync); OSError when it cannot be."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def note_unsynced(out: Path, staging: str, marker: str) -> bool:
    """Before a swap that does not wait for the disk: flush the staging folder's `marker` and the folder,
    and make `.<out>.boot-id` name this boot, on disk. False when it cannot (no boot id, or an error):
    the caller then waits for the disk instead.

    The marker on disk keeps the folder costpress's whatever else a power cut
    loses; the boot id on disk before the swap tells the next build, after a
    restart, to compare every file.
    """
    current = boot_id()
    if current is None:
        return False
    path = record_path(out)
    if path.is_symlink():  # a link there is not costpress's to write through
        return False
    try:
        fsync_path(f"{staging}/{marker}")
        fsync_path(staging)
        if _recorded(out) != current:
            # Written where it lies: a write cut short leaves a file naming no boot, which the next
            # build reads as a restart (it compares everything), and no temporary file behind. O_NOFOLLOW:
            # not through a link made since the look above
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            try:
                os.write(fd, f"{current}\n".encode("ascii"))
            finally:
                os.close(fd)
        # flushed even when an earlier build of this boot wrote it: it may have been stopped before it could
        fsync_path(os.fspath(path))
        fsync_path(os.fspath(path.parent))
    except OSError:
        return False
    return True


def forget(out: Path) -> None:
    """After a build that read every published file and wrote only what reached the disk: no restart can
    have damaged what it left, so the next build need not compare everything again."""
    path = record_path(out)
    if not path.is_symlink():  # a link there is not costpress's to remove
        with contextlib.suppress(OSError):
            path.unlink()
