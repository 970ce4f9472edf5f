"""Files of your own: everything under content/static/ is published as it is, at the same path in the site.

A static host often wants a file the build cannot make: `CNAME` and
`.nojekyll` for GitHub Pages, `_headers` or `_redirects` for Netlify and
Cloudflare Pages, a `favicon.ico`, an image an article links to. The output
folder refuses files costpress did not write, so these go in
`content/static/`: the build copies each one byte for byte and lists it in
the marker like any file it made, and the next build replaces or removes it
as the folder changes.

A file of your own never takes the place of one the build makes, and never
goes into a folder the build writes files into (a page's folder, `assets/`,
`tags/`, the search index): those folders are the build's, and a file
mixed into them would be replaced or removed with them. The top of the site
and folders of your own (`images/`, `.well-known/`) are free.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from generator.errors import BuildError
from generator.guard import MARKER
from generator.state import OddInput, input_files
from generator.write import SAFE_REL, Files

if TYPE_CHECKING:
    from generator.publish import Publisher

FOLDER = "static"


def paths(root: Path, problems: list[str], shown: str) -> tuple[str, ...]:
    """The files under root/static/ as output paths, sorted; a problem for a name the site cannot hold.

    `shown` is how messages name the static folder (content/static). The
    content folder was checked for links out of it and special files before
    this runs.
    """
    folder = root / FOLDER
    if not folder.is_dir():
        return ()
    cut = len(str(folder)) + 1
    out = []
    try:
        found = input_files(folder)
    except OddInput as exc:  # made since the content folder was checked
        problems.append(str(exc))
        return ()
    for path in found:
        rel = str(path)[cut:]
        if rel.rpartition("/")[2] == MARKER:  # (in a folder too: a marker there would make it look like a site)
            problems.append(f"{shown}/{rel}: {MARKER} is the name of costpress's own list of the files it wrote")
        elif not SAFE_REL.match(rel):
            problems.append(f"{shown}/{rel!r}: expected a file name without control characters or backslashes")
        else:
            out.append(rel)
    out.sort()
    seen: dict[str, str] = {}
    for rel in out:  # on a file system that ignores case (macOS's, by default) one would overwrite the other
        other = seen.setdefault(rel.casefold(), rel)
        if other != rel:
            problems.append(f"{shown}/{rel}: differs from {shown}/{other} only in case; expected one of them")
    return tuple(out)


def place(files: Files | Publisher, root: Path, rels: tuple[str, ...], shown: str) -> None:
    """Add each static file to `files`, after everything the build makes but the marker; BuildError, naming
    the file, for one that would take the place of the build's own files or go into one of its folders."""
    taken = _Folded(*files.layout())  # the build's own files: the ones added below cannot meet each other
    for rel in rels:
        why = taken.conflict(rel)
        if why is not None:
            raise BuildError(
                f"{shown}/{rel}: {why}; put files of your own at the top of the site or in a folder of their own"
            )
        try:
            data = (root / FOLDER / rel).read_bytes()
        except OSError as exc:
            raise BuildError(f"{shown}/{rel}: cannot be read ({exc.strerror or exc})") from None
        files.add(rel, data)


class _Folded:
    """The build's paths and folders without regard to case: on a file system that ignores it (macOS's, by
    default) `Index.html` would be the build's `index.html`, and `Assets/logo.png` would land in `assets/`."""

    def __init__(self, paths: Iterable[str], folders: Iterable[str], holding: Iterable[str]):
        self.paths = {name.casefold(): name for name in paths}
        self.folders = {name.casefold(): name for name in folders}
        self.holding = {name.casefold(): name for name in holding}

    def conflict(self, rel: str) -> str | None:
        """Why a file of the user's own may not go at `rel`, or None: the path is one of the build's or a folder
        of them, or lies in a folder (other than the top) that directly holds some of them."""
        key = rel.casefold()
        if key in self.paths:
            return f"the build writes {self.paths[key]} itself"
        if key in self.folders:
            return f"the build writes files into {self.folders[key]}/"
        parts = key.split("/")
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            if folder in self.paths:
                return f"the build writes {self.paths[folder]} as a file"
            if folder in self.holding:
                return f"{self.holding[folder]}/ is a folder the build writes files into"
        return None
