"""Files the authoring commands write into content/: a price snapshot, a benchmark record, models.yaml, a
suite's results, a new article or family.

A file that is already there with other bytes may hold someone's edits (a `confirmed: true` added to a
snapshot, a hand-written record that happens to have the same name), so `write_new` replaces it only when
asked. Every write goes to a temporary file beside the target and is renamed over it: a command stopped
part way leaves the old file or the new one, never a part of either.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from generator.errors import CostpressError, unmade_folder

WROTE, REPLACED, UNCHANGED = "wrote", "replaced", "unchanged"


def write_new(target: Path, text: str, replace: bool, hint: str) -> str:
    """Write `text` to `target`: WROTE when no file was there, UNCHANGED when it held these very bytes,
    REPLACED when it held others and `replace` is set; otherwise an error naming the file and `hint` (how to
    go on, such as the option that replaces it)."""
    data = text.encode("utf-8")
    old = _read(target)
    if old == data:
        return UNCHANGED
    if old is not None and not replace:
        raise CostpressError(f"{target}: already exists and holds something else; {hint}")
    write_whole(target, data)
    return WROTE if old is None else REPLACED


def write_created(target: Path, text: str) -> None:
    """A new file, made only if nothing has the name yet (`new article`, `new family`): a file that appears
    meanwhile is not written over, and one stopped part way is removed rather than left cut."""
    _make_folder(target)
    try:
        fh = open(target, "x", encoding="utf-8")  # noqa: SIM115 - closed below, removed when not whole
    except FileExistsError:
        raise CostpressError(f"{target}: already exists") from None
    except OSError as exc:
        raise CostpressError(f"{target}: cannot write ({exc.strerror or exc})") from None
    try:
        with fh:
            fh.write(text)
    except BaseException as exc:
        _drop(target)
        if isinstance(exc, OSError):
            raise CostpressError(f"{target}: cannot write ({exc.strerror or exc})") from None
        raise


def write_whole(target: Path, data: bytes) -> None:
    """`target`'s new bytes, through a temporary file in its folder renamed over it (keeping its permissions)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    _make_folder(target)
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        except FileNotFoundError:
            pass
        os.replace(tmp, target)
    except OSError as exc:
        _drop(tmp)
        raise CostpressError(f"{target}: cannot write ({exc.strerror or exc})") from None
    except BaseException:  # Ctrl-C between the two steps: no temporary file left in content/
        _drop(tmp)
        raise


def _make_folder(target: Path) -> None:
    why = unmade_folder(target.parent)
    if why is not None:  # a file where the folder should be, a folder that cannot be written
        raise CostpressError(f"{target.parent}: cannot make the folder ({why})")


def _drop(tmp: Path) -> None:
    try:
        tmp.unlink(missing_ok=True)
    except OSError:  # never made (its folder could not be): nothing to remove
        pass


def _read(target: Path) -> bytes | None:
    try:
        return target.read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # none there (a file in the folder's place: said on writing)
        return None
    except IsADirectoryError:
        raise CostpressError(f"{target}: is a folder; expected a file to write") from None
    except OSError as exc:
        raise CostpressError(f"{target}: cannot read ({exc.strerror or exc})") from None
