"""The one writer that touches the output folder.

A build is rendered in memory first. Publishing writes a complete new tree
beside the output folder and swaps it in, so the published folder is always
either the old site or the new one, never a mix. Files whose bytes did not
change are hard-linked from the old tree and keep their modification time.
"""

from __future__ import annotations

import ctypes
import os
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from generator.errors import BuildError

AT_FDCWD = -100
RENAME_EXCHANGE = 2


class Files:
    """Output files by relative POSIX path; refuses unsafe or repeated paths."""

    def __init__(self) -> None:
        self._files: dict[str, bytes] = {}

    def add(self, rel: str, data: bytes) -> None:
        path = PurePosixPath(rel)
        if (
            path.is_absolute()
            or not path.parts
            or any(p in ("", ".", "..") for p in path.parts)
            or "\\" in rel
            or rel != str(path)
        ):
            raise BuildError(f"refusing to write outside the output folder: {rel!r}")
        if rel in self._files:
            raise BuildError(f"two pages want the same output path: {rel}")
        for parent in path.parents:
            if str(parent) in self._files:
                raise BuildError(f"output path {rel} lies under a file of the same name")
        self._files[rel] = data

    def items(self) -> list[tuple[str, bytes]]:
        return sorted(self._files.items())

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
            [f"changed: {p}" for p in self.changed]
            + [f"missing: {p}" for p in self.added]
            + [f"extra:   {p}" for p in self.removed]
        )


def existing(out: Path) -> dict[str, Path]:
    """Files under the output folder by relative POSIX path."""
    if not out.is_dir():
        return {}
    found = {}
    for root, dirs, names in os.walk(out):
        dirs.sort()
        for name in names:
            full = Path(root) / name
            found[full.relative_to(out).as_posix()] = full
    return found


def compare(files: Files, out: Path) -> Diff:
    """What differs between the rendered files and the output folder."""
    have = existing(out)
    changed, added, same = [], [], 0
    for rel, data in files.items():
        path = have.get(rel)
        if path is None:
            added.append(rel)
        elif path.stat().st_size != len(data) or path.read_bytes() != data:
            changed.append(rel)
        else:
            same += 1
    removed = sorted(set(have) - {rel for rel, _ in files.items()})
    return Diff(changed, added, removed, same)


def _siblings(out: Path) -> tuple[Path, Path]:
    return out.parent / f".{out.name}.staging", out.parent / f".{out.name}.old"


def clean_leftovers(out: Path) -> None:
    """Undo what an interrupted build left beside the output folder.

    If a build died between the two renames of the fallback swap, the old site
    sits in .<name>.old with no output folder: put it back first.
    """
    staging, old = _siblings(out)
    if old.is_dir() and not out.exists():
        os.rename(old, out)
    for path in (staging, old):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


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


def publish(files: Files, out: Path) -> Diff:
    """Make `out` hold exactly `files`; write nothing when it already does."""
    clean_leftovers(out)
    if out.exists() and not out.is_dir():
        raise BuildError(f"{out} exists and is not a folder")
    diff = compare(files, out)
    if diff.clean:
        return diff
    staging, old = _siblings(out)
    have = existing(out)
    unchanged = set(have) - set(diff.changed) - set(diff.removed)
    try:
        for rel, data in files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if rel in unchanged:
                try:
                    os.link(have[rel], target)  # same bytes: share the file, keep its mtime
                    continue
                except OSError:
                    pass
            with open(target, "wb") as fh:
                fh.write(data)
            if rel in unchanged:
                shutil.copystat(have[rel], target)
        os.sync()  # the new tree is on disk before it becomes the site
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError):
            raise BuildError(f"cannot write the new site beside {out}: {exc}") from None
        raise
    if out.exists():
        if _exchange(staging, out):
            shutil.rmtree(staging)
        else:
            os.rename(out, old)
            os.rename(staging, out)
            shutil.rmtree(old)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.rename(staging, out)
    return diff
