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
import itertools
import os
import shutil
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from generator import durable, formatting, guard, state, trees, write
from generator.errors import BuildError
from generator.write import Diff, Files, check_path


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
    if staging.is_dir() and not staging.is_symlink() and trees.read_journal(staging) is not None:
        if out.is_dir() and not out.is_symlink():
            trees.apply_journal(staging, out)  # killed while moving files in: finish the moves, then the folder goes
        else:  # the folder the moves were for is gone since: they have nowhere to go (its journal says we made it)
            guard.remove_tree(staging)
    for path in (staging, old):
        if not path.exists() and not path.is_symlink():
            continue
        if path.is_symlink() or not path.is_dir() or not guard.is_ours(path):
            raise BuildError(
                f"refusing to build: {path} is in the way, and costpress did not make it; move it elsewhere"
            )
        guard.remove_tree(path)


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
        # (the marker's bytes are as the last build wrote them, so every path it lists was checked then)
        # Its folders are checked by a child process meanwhile (state.FolderCheck): `trusted` and `have` wait
        # for the answer, and read the folder after all when it is no
        # After a restart that may have lost writes (durable.restarted), nothing the last build recorded counts
        self.restarted = durable.restarted(out)
        found = None if self.restarted else state.untouched_output(out, guard.MARKER, deferred=True)
        listed = guard.listed_in(found.marker) if found is not None else None
        self._check = found.check if listed is not None else None
        if found is not None and listed is None:
            found.check.close()
        self._shown = shown
        self._trusted = listed is not None
        # the page cache's sha256 as that build recorded it (pagecache.read), when the folder is trusted
        self.page_cache_digest: str | None = None
        self._marker_digest: str | None = None  # the published marker's sha256, when the folder is trusted
        self._marker_status: str | None = None  # what this build did with the marker (record)
        # folder -> [inode, mtime, files] as recorded, while true of the folder (see folder_stats)
        self._recorded: dict[str, list] = {}
        # The published files by relative path (Publisher reads only the keys: a file's path is _published(rel);
        # at 100,000 pages the marker's 600,000 paths as values were 60 MB more)
        self._have: dict[str, str | None]
        if listed is not None:
            self.page_cache_digest, self._recorded = found.page_cache, dict(found.folders)  # (popped from below)
            self._marker_digest = found.marker_digest
            self._have = dict.fromkeys(itertools.chain((guard.MARKER,), filter(None, listed)))  # (no tuple of all)
            del listed
        else:
            self._scan()
        self._top = os.fspath(out)
        self.staging, self.old = _siblings(out)
        self._base = os.fspath(self.staging)
        try:
            os.makedirs(self.staging)
            # the marker with no files listed: a build killed before the end leaves a tree the next one may delete
            write._write_file(f"{self._base}/{guard.MARKER}", guard.manifest(()))
        except OSError as exc:
            with contextlib.suppress(OSError):
                guard.remove_tree(self.staging, missing_ok=True)
            raise BuildError(f"cannot write the new site beside {shown}: {exc}") from None
        self._paths = Files()  # checks every output path; holds no bytes
        self.changed: list[str] = []
        self.added: list[str] = []
        self.unchanged: list[str] = []
        self._outcomes = {"added": self.added, "changed": self.changed, "unchanged": self.unchanged}
        self._held: list[list[tuple[str, Sequence[str]]]] = []  # unchanged pages held by name (keep_pages)
        self._made: set[str] = set()
        self._seen: dict[str, tuple[int, int]] = {}  # folder -> (inode, mtime) a worker read after writing it
        self._flusher: threading.Thread | None = None
        self._flushed = threading.Event()
        self.unsynced = False  # finish swapped the new tree in without waiting for the disk (durable)
        self._unread = False  # some file was kept as published without being read (keep, keep_pages)

    def _scan(self) -> None:
        """Know the published files from the folder itself (it is not as the last build left it)."""
        self._trusted, self.page_cache_digest, self._recorded, self._marker_digest = False, None, {}, None
        self._have, links = write.scan(self.out)
        guard.check_owned(self._shown, self._have, links)

    def settle(self) -> None:
        """Wait for the folder check (state.FolderCheck), if it is still out; when the folder is not as
        recorded, read it. Call it before forking a process that writes through this Publisher."""
        check, self._check = self._check, None
        if check is not None and not check.result():
            self._scan()

    @property
    def trusted(self) -> bool:
        """The output folder is as the last build left it: its files are the ones its marker lists."""
        if self._check is not None:
            self.settle()
        return self._trusted

    @property
    def have(self) -> dict[str, str | None]:
        if self._check is not None:
            self.settle()
        return self._have

    # Seconds between background flushes of written files while a large site renders.
    FLUSH_EVERY = 1.0

    def start_flushing(self) -> None:
        """Hand written files to the disk every second while pages render, from a background thread.

        The final sync before the swap then has little left to write: on a
        10,000-page build on disk it took 0.8 s of the build's 8.7 s when
        nothing had been written back before it (the kernel keeps a few
        hundred MB dirty for up to 30 s). The flushes change nothing a reader
        sees: the staging folder is not the site until the swap. A build that
        will swap without waiting for the disk (durable: a new folder, or
        `--swap`, where the system gives a boot id) has no final sync to
        spare, so it does not flush.
        """
        if self._flusher is not None:
            return
        if (self.mode == "swap" or not self.out.exists()) and durable.boot_id() is not None:
            return

        def flush() -> None:
            while not self._flushed.wait(self.FLUSH_EVERY):
                write.sync_filesystem(self._base)

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
            write._write_file(f"{self._base}/{rel}", data)
        except OSError as exc:
            self.abort()
            raise BuildError(f"cannot write the new site beside {self.out}: {exc}") from None

    def _compare(self, rel: str, data: bytes | list[bytes] | None, published: bytes | None = None) -> str:
        """'added', 'changed' or 'unchanged': what writing `data` (bytes, or pieces in order) at `rel` would do.
        `published`: the published file's bytes, when the caller has just read them (compared in memory)."""
        check_path(rel)
        if rel not in self.have:
            if data is None:
                raise BuildError(f"a kept file is missing from the output folder: {rel}")
            return "added"
        if data is None:
            self._unread = True
            return "unchanged"
        size = sum(map(len, data)) if type(data) is list else len(data)
        if published is not None:
            return "unchanged" if size == len(published) and write.starts_with(published, data) else "changed"
        path = self._published(rel)
        if os.stat(path).st_size == size and write.same_bytes(path, data if type(data) is list else [data]):
            return "unchanged"
        return "changed"

    def _published(self, rel: str) -> str:
        """The path of a published file (one `have` holds)."""
        return f"{self._top}/{rel}"

    def current(self, rel: str) -> bytes:
        """A file as the new site will have it: written to staging by this build, or else the published one."""
        try:
            return write.read_file(f"{self._base}/{rel}")
        except FileNotFoundError:
            pass
        if rel not in self.have:
            raise BuildError(f"{rel} is missing from the new site")
        try:
            return write.read_file(self._published(rel))
        except OSError as exc:
            raise BuildError(f"cannot read {rel} of the published site: {exc.strerror}") from None

    def store(self, rel: str, data: bytes | None, published: bytes | None = None) -> str:
        """Compare one file with the published one and write it to staging if it differs.

        Returns 'added', 'changed' or 'unchanged'. It touches no shared state,
        so worker processes call it for their own pages and the main process
        records the outcome with `record`. `published`: see `_compare`.
        """
        status = self._compare(rel, data, published)
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
                    write._write_file(name, data, fd)
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
        if rel == guard.MARKER:
            self._marker_status = status

    def kept_marker_digest(self) -> str | None:
        """The marker's sha256 when this build left the published one as it was (in a folder as the last build
        left it, whose state recorded it): the state needs it, and need not read 32 MB at 100,000 pages."""
        return self._marker_digest if self._marker_status == "unchanged" and self._trusted else None

    def record_page(self, folder: str, outcomes: list[tuple[str, int, str]]) -> bool:
        """`record` for the files `store_page` stored for one page; True if it wrote any of them."""
        self._paths.add_page(folder, [rel for rel, _size, _status in outcomes])
        written = False
        for rel, _size, status in outcomes:
            self._outcomes[status].append(rel)
            written = written or status != "unchanged"
        return written

    def add(self, rel: str, data: bytes | None, published: bytes | None = None) -> None:
        self.stored(rel, self.store(rel, data, published))

    def stored(self, rel: str, status: str) -> None:
        """Record the outcome of `store` for a file that is not in a page's folder (here or in a worker)."""
        self.record(rel, status)
        self._seen.pop(write._folder_of(rel), None)  # written now, after any worker looked at its folder

    def seen(self, folder: str, stat: tuple[int, int]) -> None:
        """Record the stat `store_page` read in a worker ('slug/'), so `folder_stats` need not stat it again."""
        self._seen[folder] = stat

    def keep(self, rel: str) -> None:
        self.add(rel, None)

    def layout(self) -> tuple[Iterable[str], Iterable[str], Iterable[str]]:
        """write.Files.layout of the files recorded so far."""
        return self._paths.layout()

    def keep_pages(self, pages: list[tuple[str, Sequence[str]]], checked: bool = False) -> None:
        """`keep` for the files of pages, each (folder, names of its files in it): no bytes are compared or
        written. `checked`: the names come from the page cache the last build wrote (verified), which checked
        their paths then.

        In a folder as the last build left it, such pages' files are among the
        published ones (that build's marker named them), so they are held by
        name (write.Files.hold_pages) and their paths made only if something
        asks for them: a price refresh asks for none. Otherwise each path is
        made and looked for among the published files, and the tables are
        updated at C speed (write.Files.add_pages).
        """
        self._unread = True
        if checked and self.trusted and self._paths.hold_pages(pages):
            self._held.append(pages)
            return
        pages = write.paths_in(pages, checked)
        rels = [rel for _, page in pages for rel in page]
        have = self.have
        if not all(map(have.__contains__, rels)):
            missing = next(itertools.filterfalse(have.__contains__, rels))
            raise BuildError(f"a kept file is missing from the output folder: {missing}")
        self._paths.add_pages(pages, rels)
        self.unchanged.extend(rels)

    def same_files(self) -> bool:
        """Whether the files recorded so far, with the marker, are exactly the published ones (no file
        added, none left out), in a folder trusted as the last build left it: its marker then stands as
        it is (it lists the same names, sorted, under the same header)."""
        return self.trusted and not self.added and guard.MARKER in self.have and len(self._paths) == len(self.have) - 1

    def abort(self) -> None:
        self._stop_flushing()
        if self._check is not None:  # a build that stopped before it asked
            self._check.close()
            self._check = None
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

        The folders of pages kept as the last build left them, held by name
        (keep_pages), take their recorded entry as it is when it counts the
        same files: their names alone would have cost 10,000 paths.
        """
        held = self._paths.held_folders()
        counts = self._paths.folders(held)
        stats = {}
        recorded, seen = self._recorded, self._seen
        for folder, count in held.items():
            key = f"{folder}/"
            entry = recorded.get(key)
            if entry is not None and entry[2] == count and key not in seen:
                stats[key] = entry
            else:
                counts[key] = count
        try:
            with state.folder_stats_in(self.out) as stat_of:
                for folder in counts:
                    known = seen.get(folder)
                    if known is None and folder in recorded:
                        known = recorded[folder][:2]
                    if known is None:
                        known = stat_of(folder)
                    stats[folder] = [*known, counts[folder]]
        except OSError:
            return None
        return stats

    def finish(self) -> Diff:
        """Swap the new site in; write nothing when it equals the published one."""
        self._stop_flushing()
        # Every recorded path but the added ones is a published one (_compare, keep_pages) and none repeats
        # (write.Files): when they number as many as the published files, none of those is left to remove
        if len(self._paths) - len(self.added) == len(self.have):
            removed = []
        else:
            removed = sorted(self._paths.missing(self.have))  # no set of every new path
        # in the order pages came back (fixed by the article order); Diff.lines sorts when printing
        held = sum(len(names) for pages in self._held for _, names in pages)
        diff = Diff(self.changed, self.added, removed, len(self.unchanged) + held)
        if diff.clean:
            self.abort()
            self._verified()
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
            held = (rel for pages in self._held for _, rels in write.paths_in(pages) for rel in rels)
            groups = trees.by_folder(itertools.chain(self.unchanged, held))
            for folder in groups:
                self._seen.pop(f"{folder}/" if folder else ".", None)  # a link changes its folder's mtime
            marker = groups.get("", [])
            if guard.MARKER in marker:  # replaces the placeholder written when staging began, in one step
                marker.remove(guard.MARKER)
                os.link(self._published(guard.MARKER), f"{self._base}/{guard.MARKER}.new")
                os.rename(f"{self._base}/{guard.MARKER}.new", f"{self._base}/{guard.MARKER}")
            trees.in_threads(self._link_folder, groups.items())
            # The new tree is on disk before it becomes the site; or, where a restart can be told (durable),
            # its marker is, and the boot that must not end before the rest is
            self.unsynced = durable.note_unsynced(self.out, self._base, guard.MARKER)
            if not self.unsynced:
                write.sync_filesystem(self._base)
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError):
                raise BuildError(f"cannot write the new site beside {out}: {exc}") from None
            raise
        if out.exists():
            if trees.exchange(staging, out):
                diff.strays = trees.remove_site(staging, self.have, out)
            else:
                os.rename(out, old)
                os.rename(staging, out)
                diff.strays = trees.remove_site(old, self.have, out)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            os.rename(staging, out)
        self._verified()
        return diff

    def _verified(self) -> None:
        """After publishing: a build that followed a restart (durable.restarted) and read every published file
        it kept, publishing only what reached the disk, leaves nothing a restart can have damaged."""
        if self.restarted and not self.unsynced and not self._unread:
            durable.forget(self.out)

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
        touched = set()
        for rel in (*diff.changed, *diff.added, *diff.removed):
            folder = rel
            while folder:
                folder = folder.rpartition("/")[0]
                if folder in touched:
                    break
                touched.add(folder)
                self._recorded.pop(f"{folder}/" if folder else ".", None)
        moved = [*diff.changed, *diff.added]
        try:
            folders = {rel.rpartition("/")[0] for rel in (*moved, *diff.removed)}
            why = trees.why_not_in_place(self.staging, self.out, folders)
            if why is not None:  # stop before anything changes
                raise BuildError(f"cannot publish into {self.out}: {why}")
            write.sync_filesystem(self._base)  # the new files are on disk before the journal names them
            trees.write_journal(self.staging, moved, diff.removed)
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError):
                raise BuildError(f"cannot write the new site beside {self.out}: {exc}") from None
            raise
        trees.apply_journal(self.staging, self.out)
        diff.strays = self._appeared(touched)
        self._verified()

    def _appeared(self, folders: set[str]) -> trees.Strays | None:
        """Files someone put, while this build ran, in the folders it moved files into or out of: names the
        build does not record. Left where they are; the build says so, and records no state, so the next
        one reads the folder and refuses it (folder_stats would take the folders as they are now, these files
        included). Each folder's names are counted, and compared only where the count is not the site's."""
        expected = self._paths.entries(folders)
        found = []
        for folder in sorted(folders):
            try:
                names = os.listdir(f"{self._top}/{folder}" if folder else self._top)
            except OSError:  # emptied and removed
                continue
            if len(names) != expected[folder]:
                known = self._paths.names_in(folder)
                for name in set(names) - known:  # a folder someone made: the files in it (an empty one is none)
                    rel = f"{folder}/{name}" if folder else name
                    inside = trees.files_under(f"{self._top}/{rel}")
                    found += [rel] if inside is None else [f"{rel}/{sub}" for sub in inside]
        return trees.Strays(self.out, sorted(found), []) if found else None

    def _link_folder(self, folder: str, names: list[str]) -> None:
        """Hard-link unchanged files of one folder from the published tree into staging (same bytes, same mtime)."""
        if not names:
            return
        src, parent = trees.open_folder(os.fspath(self.out), folder)  # links inside the published tree not followed
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
                        shutil.copy2(self._published(rel), f"{self._base}/{rel}")
            finally:
                os.close(dst)
        finally:
            os.close(src)

    def paths(self) -> list[str]:
        """Every file this build recorded so far."""
        return list(self._paths.names())


def strays_said(diff: Diff, shown: str) -> list[str]:
    """What to tell the user about files someone put in the site while it was being built (trees.remove_site),
    one line each for those left in place and those kept beside it; none when there were none."""
    strays = diff.strays
    if strays is None:
        return []

    def told(names: list[str]) -> tuple[str, str, str, str]:
        """'2 files', 'CNAME, a/b.txt', and the pronouns for them."""
        shown_names = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        it, they = ("it", "it is") if len(names) == 1 else ("them", "they are")
        return formatting.count(len(names), "file"), shown_names, it, they

    said = []
    if strays.kept:
        files, names, it, they = told(strays.kept)
        said.append(
            f"{files} appeared in {shown} while it was being built ({names}); costpress did not write {it} and "
            f"left {it} there, but the next build will refuse the folder until {they} moved out (a file of your "
            "own to publish goes in the content folder's static/)"
        )
    if strays.stranded:
        files, names, it, they = told(strays.stranded)
        said.append(
            f"{files} that appeared in {shown} while it was being built could not be left there: the new site "
            f"has a file or folder at the same place ({names}); {they} kept in {strays.folder}: move {it} out "
            "before the next build"
        )
    return said


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
