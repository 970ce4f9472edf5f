"""`costpress init DIR`: a new site that builds as it is.

The files come from `generator/starter/` (package data): the site settings,
the engine's data, price snapshots of the providers the article scaffolds
name, a README, a .gitignore and the refresh workflow. One article of each
kind is made from the scaffolds that `costpress new` uses.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

from generator import __version__, guard
from generator.errors import CostpressError, unmade_folder
from generator.escape import md_escape_text, yaml_scalar
from generator.scaffold import scaffold
from generator.theme import SCAFFOLDS

STARTER = Path(__file__).resolve().parent / "starter"
# package data cannot hold dot-files reliably: renamed on the way out
RENAMED = {"gitignore": ".gitignore", "github": ".github"}
# The files that name the site or the costpress release, and how the title is written into each: as a
# Markdown heading's text, or as a YAML value (quoted when YAML would read it as something else)
FILLED = {"README.md": md_escape_text, "site.yaml": yaml_scalar, "price-refresh.yml": str}
ARTICLES = {  # kind: slug of its example article
    "flops": "what-a-70b-fine-tune-costs",
    "market": "one-fine-tune-across-providers",
    "throughput": "a-fine-tune-on-one-small-gpu",
    "time-to-train": "a-benchmark-run-at-rental-prices",
    "memory-check": "memory-estimates-against-measurements",
}


def init_site(dest: Path, day: dt.date, title: str = "GPU cost notes") -> list[Path]:
    """Write a new site into `dest` (missing or empty); returns the files written."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise CostpressError(f"{dest}: not an empty folder (init writes a new site only into a new or empty folder)")
    site = guard.published_site_around(Path(os.path.realpath(dest)))
    if site is not None:  # the next build of that site would refuse the files written here
        raise CostpressError(f"{dest}: it lies inside {site}, a site costpress publishes; choose a folder outside it")
    why = unmade_folder(dest)
    if why is not None:  # a file where one of its parent folders goes, a folder that cannot be written
        raise CostpressError(f"{dest}: cannot make the folder ({why})")
    written = []
    for path in sorted(STARTER.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = Path(*[RENAMED.get(part, part) for part in path.relative_to(STARTER).parts])
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.name in FILLED:
            text = path.read_text().replace("__TITLE__", FILLED[rel.name](title))
            target.write_text(text.replace("__COSTPRESS__", f"costpress=={__version__}"))
        else:
            shutil.copyfile(path, target)
        written.append(target)
    for kind in sorted(ARTICLES):
        if (SCAFFOLDS / f"{kind}.md").is_file():
            written.append(scaffold(dest / "content", ARTICLES[kind], kind, day))
    return written
