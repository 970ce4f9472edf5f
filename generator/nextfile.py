"""The state files beside the output folder (the row cache, the listing caches, the page cache): the next
version of one, written a record at a time behind a header line that names its format and the sha256 of
everything after it, and `read`, which takes a whole file only when its header and digest hold.

The header goes in last, so a file cut short by a crash never has a digest that matches; the file is
`<name>.tmp` until its owner puts it in place once the site is published, or removes it when the build
fails. Best effort, like every cache: a file that cannot be written is dropped, and the next build
computes what it would have held.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

from generator.write import read_file


def header(head: str, digest: str) -> bytes:
    """The first line of a state file in format `head` whose records have sha256 `digest`."""
    return f"{head} {digest}\n".encode()


def read(path: Path, head: str) -> tuple[memoryview, str] | None:
    """A state file's records (a view of the one read) and their sha256, when the file is in format `head`
    and its header gives that digest; None when it is missing, unreadable, of another format or damaged."""
    try:
        data = read_file(os.fspath(path))
    except OSError:
        return None
    cut = data.find(b"\n", 0, len(head) + 66)
    if cut < 0:
        return None
    records = memoryview(data)[cut + 1 :]
    digest = hashlib.sha256(records).hexdigest()
    return (records, digest) if data[: cut + 1] == header(head, digest) else None


class NextFile:
    def __init__(self, tmp: Path | None, head: str) -> None:
        self.tmp = tmp  # None: nothing is written (no output folder, or the file was dropped)
        self.head = head
        self._fh = None
        self._hash = hashlib.sha256()

    def write(self, data: bytes) -> None:
        """One record's bytes, the file opened with a placeholder header on the first."""
        if self.tmp is None:
            return
        try:
            if self._fh is None:
                self._fh = open(self.tmp, "wb")  # noqa: SIM115 (open until close or discard)
                self._fh.write(header(self.head, "0" * 64))
            self._hash.update(data)
            self._fh.write(data)
        except OSError:
            self.discard()

    def close(self) -> bool:
        """The header with the records' digest, and the file closed: True when it is whole."""
        if self._fh is None:
            return False
        try:
            self._fh.seek(0)
            self._fh.write(header(self.head, self._hash.hexdigest()))
            self._fh.close()
            self._fh = None
            return True
        except OSError:
            self.discard()
            return False

    def digest(self) -> str:
        """The sha256 of the records written so far: the one the header gives, once closed."""
        return self._hash.hexdigest()

    def discard(self) -> None:
        """Remove the file (and write no more)."""
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                self.tmp.unlink()
            self.tmp = None
