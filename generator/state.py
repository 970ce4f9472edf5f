"""The no-op fast path: a digest of every build input, kept beside the output folder.

After a build publishes, `.<out>.build-state` records a digest of content/,
templates/, costpress's own source and the versions of the libraries that shape
the output, plus the inode and modification time of every output folder. When the next
build finds the same digest and untouched folders, nothing can differ, so it
stops before loading pandas or any content. With other inputs but untouched
folders, a build trusts the folder to hold what the last one wrote
(`untouched_output`). A file rewritten in place
(not replaced) is not noticed: `build --force` renders everything, and
`build --check` always compares every byte. This module
imports only the standard library to keep that path fast.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import NamedTuple

# The installed libraries whose version can change what a build writes (the digests of a no-op check and of
# every page name them). A build imports neither pandas nor numpy (only `estimate` does; tested), so an
# upgrade of either leaves the published pages standing.
LIBRARIES = ("jinja2", "markdown-it-pyrs", "PyYAML", "markupsafe", "pagefind-bin")


def state_path(out: Path) -> Path:
    return out.parent / f".{out.name}.build-state"


class OddInput(Exception):
    """An input tree holds a special file, or a link that leads out of it: no digest, no shortcut."""


def input_files(folder: Path) -> list[Path]:
    """Every file under folder, links followed while they stay inside it; OddInput for anything else."""
    found, odd = _scan(folder, "input")
    if odd:
        raise OddInput(odd[0])
    return found


def odd_inputs(folder: Path, label: str) -> list[str]:
    """One line for each special file, dangling link, link loop or link out of `folder`, never its contents."""
    return _scan(folder, label)[1]


def _scan(folder: Path, label: str) -> tuple[list[Path], list[str]]:
    """The regular files under folder (links followed while they stay inside it), and a line for anything else.

    A folder's entries say whether each is a plain file, a folder or a link
    (os.scandir), so only links cost a look of their own: resolving every
    folder's real path and stat'ing every file (as with os.walk) made a
    10,000-page site's content scan 5-7 ms, twice a build.
    """
    found: list[Path] = []
    odd: list[str] = []
    top = os.path.realpath(folder)
    seen: set[str] = set()
    pending = [(os.fspath(folder), top)]  # (a folder to read, its real path), read in order
    while pending:
        root, real = pending.pop()
        try:
            with os.scandir(root) as it:
                entries = sorted(it, key=_name)
        except OSError:  # unreadable, or gone meanwhile: skipped, as os.walk skips it
            continue
        if real in seen or not _inside(real, top):  # a link loop, or a link out of the tree
            odd.append(
                f"{root}: a link that leads out of the {label} folder (or back into itself); costpress reads "
                "only files inside it"
            )
            continue
        seen.add(real)
        folders = []
        for entry in entries:
            link = entry.is_symlink()
            if entry.is_dir():  # (through a link too)
                if entry.name != "__pycache__":
                    folders.append((entry.path, os.path.realpath(entry.path) if link else f"{real}/{entry.name}"))
            elif not link and entry.is_file(follow_symlinks=False) or link and _plain_file(entry.path, top):
                found.append(Path(entry.path))
            elif link and not os.path.exists(entry.path):
                odd.append(f"{entry.path}: a link to nothing; remove it")
            elif link and not _inside(os.path.realpath(entry.path), top):
                odd.append(
                    f"{entry.path}: a link that leads out of the {label} folder; costpress reads only files inside it"
                )
            else:
                odd.append(f"{entry.path}: not a regular file (a pipe, socket or device); remove it")
        pending.extend(reversed(folders))  # the first folder is read next, as a walk from the top goes
    return found, odd


def _name(entry: os.DirEntry) -> str:
    return entry.name


def _inside(real: str, top: str) -> bool:
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _plain_file(path: str, top: str) -> bool:
    """A regular file (through links that stay inside `top`)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # a dangling link
        return False
    if not stat.S_ISREG(mode):
        return False
    return not os.path.islink(path) or _inside(os.path.realpath(path), top)


def inputs_digest(content: Path, templates: Path, options: str = "") -> str | None:
    """sha256 over every input file's path and bytes, costpress's source and library versions.

    None when an input folder holds a special file or a link out of it: the
    build then runs in full and reports it.
    """
    try:
        return _digest((("content", content), ("templates", templates)), options)
    except OddInput:
        return None


def code_digest(templates: Path) -> str:
    """sha256 over the templates, costpress's source and library versions: what every page shares."""
    return _digest((("templates", templates),))


def _digest(folders, options: str = "") -> str:
    h = hashlib.sha256(options.encode())  # build options that change the output (--drafts, --base-url)
    package = Path(__file__).resolve().parent
    for label, folder in (*folders, ("generator", package)):
        cut = len(os.path.join(os.fspath(folder), ""))  # the scan's paths are the folder's name and theirs
        for path in map(os.fspath, input_files(folder)):
            if path.endswith(".pyc"):
                continue
            h.update(f"{label}/{path[cut:].replace(os.sep, '/')}\0".encode())
            with open(path, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    for name, version in library_versions():
        h.update(f"{name}={version}\0".encode())
    h.update(sys.version.encode())
    return h.hexdigest()


def _dist_key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def library_versions() -> tuple[tuple[str, str], ...]:
    """(name, version) of each of LIBRARIES, "-" when not installed, as the import path finds them first.

    Read from the names of the installed `<name>-<version>.dist-info` folders:
    what importlib.metadata.version answers for a pip install, without the 30 ms
    that importing importlib.metadata adds to every build and no-op check.
    """
    wanted = {_dist_key(name) for name in LIBRARIES}
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for folder in names:
            if folder.endswith(".dist-info"):
                dist, _, version = folder.removesuffix(".dist-info").partition("-")
                key = _dist_key(dist)
                if key in wanted:
                    found.setdefault(key, version)
    return tuple((name, found.get(_dist_key(name), "-")) for name in LIBRARIES)


def output_stats(out: Path) -> dict[str, list[int]]:
    """Inode and modification time of every folder in the output, and how many files each holds.

    A folder's mtime moves whenever a file in it is created, deleted or replaced
    (publishing and most editors replace files), so this notices a touched site
    without a stat per file: on 10,000 pages that stat cost most of the no-op time.
    """
    stats: dict[str, list[int]] = {}
    pending = [("", os.fspath(out))]
    while pending:
        prefix, folder = pending.pop()
        st = os.stat(folder)
        files = 0
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((prefix + entry.name + "/", entry.path))
                else:
                    files += 1
        stats[prefix or "."] = [st.st_ino, st.st_mtime_ns, files]
    return dict(sorted(stats.items()))


# The last state file parsed: (its identity: path, inode, mtime, size) -> its data. A build reads it twice,
# for the no-op shortcut and then to trust the output folder (10,000 folders: 10 ms a parse).
_last_saved: list = [None, None]


def _saved(out: Path):
    """The state file beside `out`, parsed (not to be changed by callers); None when missing or not JSON."""
    try:
        with open(state_path(out), "rb") as fh:
            st = os.fstat(fh.fileno())
            key = (os.fspath(out), st.st_ino, st.st_mtime_ns, st.st_size)
            if _last_saved[0] == key:
                return _last_saved[1]
            saved = json.loads(fh.read())
    except (OSError, ValueError, RecursionError):
        return None
    _last_saved[:] = [key, saved]
    return saved


def unchanged(out: Path, digest: str) -> tuple[int, list[str]] | None:
    """When nothing changed since the recorded build: its number of output files and its warnings."""
    saved = _saved(out)
    if not isinstance(saved, dict) or saved.get("inputs") != digest or not out.is_dir():
        return None
    folders, warnings = saved.get("folders"), saved.get("warnings", [])
    if not isinstance(folders, dict) or not _same_folders(out, folders) or not isinstance(warnings, list):
        return None
    return sum(entry[2] for entry in folders.values()), [str(w) for w in warnings]


class Untouched(NamedTuple):
    folders: dict  # output_stats as recorded
    marker: bytes  # the marker file's bytes, as the build wrote them
    page_cache: str | None  # the sha256 of the page cache that build wrote (pagecache.read checks it)
    check: FolderCheck | None = None  # whether the folders are as recorded (asked before trusting the rest)
    marker_digest: str | None = None  # the marker's sha256, as recorded (and checked against its bytes)


def untouched_output(out: Path, marker: str, deferred: bool = False) -> Untouched | None:
    """The folders the last recorded build left (output_stats) and the bytes of its marker file (`marker`,
    relative to `out`), when the output folder is still as it left them, whatever the inputs now; else None.

    The same test as the no-op shortcut's: every folder has the inode and
    modification time recorded after publishing, so no file was added,
    removed or replaced since (a file rewritten in place is not noticed; see
    the module's note). The marker is the exception: its sha256 must be the
    one recorded, so the list of files it gives is the one the build wrote,
    each path checked then. A build then knows the folder's files from the
    marker and the sizes in the page cache without reading the folder.

    With `deferred`, the folders are checked by a child process while this
    one goes on (FolderCheck): the answer's `check` then says whether they
    are as recorded, and the caller must ask it before relying on the rest.
    """
    saved = _saved(out)
    folders = saved.get("folders") if isinstance(saved, dict) else None
    if not (isinstance(folders, dict) and folders and out.is_dir()):
        return None
    try:
        with open(os.path.join(out, marker), "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if saved.get("marker") != hashlib.sha256(data).hexdigest():  # edited in place since: read the folder instead
        return None
    check = FolderCheck(out, folders, forked=deferred)
    if not deferred and not check.result():
        return None
    page_cache = saved.get("page_cache")
    return Untouched(folders, data, page_cache if isinstance(page_cache, str) else None, check, saved["marker"])


# From this many recorded folders on, a deferred FolderCheck runs in a child process (below it, forking
# costs about what the stats do).
FORK_MIN_FOLDERS = 1000


class FolderCheck:
    """Whether every folder the last build left is there as recorded (_same_folders), made at once or, with
    `forked` and enough folders, by a child process forked here: `result()` waits for its answer.

    A stat per folder took 25 ms at 10,000 pages, before anything else of a
    price change could start; in a child it runs on the other core while
    this process loads the content (the build asks for the answer before its
    workers fork). The child only stats and exits: its exit status is the
    answer, and anything that goes wrong in it answers "not as recorded".
    """

    def __init__(self, out: Path, folders: dict, forked: bool = False):
        self._answer: bool | None = None
        self._pid: int | None = None
        self._parent = os.getpid()
        if forked and len(folders) >= FORK_MIN_FOLDERS and hasattr(os, "fork"):
            with contextlib.suppress(OSError):
                self._pid = os.fork()
            if self._pid == 0:  # the child: no Python clean-up, no handler of the parent's, just the answer
                code = 1
                try:
                    import signal

                    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to act on
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    code = 0 if _same_folders(out, folders) else 1
                finally:
                    os._exit(code)
        if self._pid is None:
            self._answer = _same_folders(out, folders)
        self._out, self._folders = out, folders

    def result(self) -> bool:
        if self._answer is None:
            answer = None
            if os.getpid() == self._parent:  # (a process forked since cannot wait for it: it checks again)
                with contextlib.suppress(ChildProcessError):
                    _, status = os.waitpid(self._pid, 0)
                    answer = os.waitstatus_to_exitcode(status) == 0
            self._answer = answer if answer is not None else _same_folders(self._out, self._folders)
        return self._answer

    def close(self) -> None:
        """Reap the child, if it was not asked (a build that stopped early)."""
        if self._answer is None and os.getpid() == self._parent:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(self._pid, 0)
            self._answer = False


def _same_folders(out: Path, folders: dict) -> bool:
    """Every folder the last build left is there with its inode and modification time.

    A stat per recorded folder, no listing: a file or folder created, deleted or
    replaced changes its parent's mtime, so a folder added anywhere shows in the
    folder that holds it. (Listing every folder was 2.6 s of a 100,000-page no-op.)
    """
    try:
        with folder_stats_in(out) as stat_of:
            for rel, entry in folders.items():
                if not isinstance(entry, list) or len(entry) != 3 or entry[:2] != stat_of(rel):
                    return False
    except OSError:
        return False
    return True


@contextlib.contextmanager
def folder_stats_in(out: Path):
    """Inside: a function giving [inode, mtime] of a folder of `out` named as output_stats names it ('.',
    'a/', 'a/b/'), by a stat relative to the open output folder: the kernel resolves one name, not the whole
    path, and 10,000 stats take about a tenth less time than by whole paths (docs/build-speed.md). OSError
    when `out` or the folder is missing, or for a name that is not inside `out`."""
    root = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def stat_of(rel: str) -> list[int]:
        if rel.startswith("/"):  # os.stat would ignore the folder it is given
            raise OSError(f"not a folder inside {out}: {rel}")
        st = os.stat(rel, dir_fd=root)
        return [st.st_ino, st.st_mtime_ns]

    try:
        yield stat_of
    finally:
        os.close(root)


def record(
    out: Path,
    digest: str,
    warnings: list[str] = (),
    folders: dict | None = None,
    marker: str | None = None,
    page_cache: str | None = None,
    marker_digest: str | None = None,
) -> None:
    """Remember this build's inputs, warnings and the output folder it left; best effort.

    `folders` is output_stats(out) when the caller already knows it (the Publisher does). `marker` names the
    site's marker file (relative to `out`): its sha256 is kept for untouched_output (`marker_digest` when the
    caller knows it: a marker the build left as it was), as is `page_cache`, the sha256 of the page cache
    this build wrote.
    """
    folders = output_stats(out) if folders is None else folders
    saved = {"inputs": digest, "folders": folders, "warnings": list(warnings)}
    if page_cache is not None:
        saved["page_cache"] = page_cache
    if marker_digest is not None:
        saved["marker"] = marker_digest
    elif marker is not None:
        try:
            with open(os.path.join(out, marker), "rb") as fh:
                saved["marker"] = hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            pass
    write_json(state_path(out), saved)


def write_json(path: Path, data) -> None:
    """Replace a cache file in one step (a reader sees the old or the new one); best effort."""
    write_text(path, json.dumps(data, sort_keys=True))


def write_text(path: Path, text: str) -> None:
    """write_json for text that is already JSON."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes | list[bytes]) -> None:
    """write_text for text already encoded as UTF-8 (or its pieces in order, not joined first)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.writelines([data] if type(data) is bytes else data)
        os.replace(tmp, path)
    except OSError:
        pass


def forget(out: Path) -> None:
    try:
        state_path(out).unlink()
    except OSError:
        pass
