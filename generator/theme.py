"""The packaged default theme, and a site's own templates over it, file by file.

The templates and assets in `generator/theme/` ship inside the package. A
site may keep a `templates/` folder of its own: any file there with the path
of a theme file is used in its place (as MkDocs' `custom_dir` and Hugo's
layout lookup do), and a site without one builds with the theme alone.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT = Path(__file__).resolve().parent / "theme"
SCAFFOLDS = Path(__file__).resolve().parent / "scaffolds"


def search_path(templates: Path | None) -> list[Path]:
    """Where templates are looked up, first match wins: the site's folder (when there is one), then the theme."""
    if templates is not None and templates.is_dir():
        return [templates, DEFAULT]
    return [DEFAULT]


def find(templates: Path | None, rel: str) -> Path:
    """The file a build uses for `rel` (such as `assets/style.css`): the site's own, else the theme's."""
    for folder in search_path(templates):
        path = folder / rel
        if path.is_file():
            return path
    return DEFAULT / rel
