"""costpress outside this repository: a wheel installed with its dependencies into a fresh venv,
`costpress init` in an empty folder, `costpress build` there, and one template overridden.

This installs from the package index (pandas, plotly and the rest), so it takes a while; it runs
in temporary folders only, with HOME pointed at one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from generator.starter import ARTICLES


def _run(args, cwd, env):
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{' '.join(map(str, args))}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_wheel_installs_inits_builds_and_takes_an_override(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    dist, venv, work = tmp_path / "dist", tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    # a copy of the source tree, so the build leaves nothing (build/, *.egg-info) in the repository
    src = tmp_path / "src"
    src.mkdir()
    for name in ("generator", "pyproject.toml", "README.md"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copyfile
        copy(ROOT / name, src / name)
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(src)], tmp_path, env)
    wheel = next(dist.glob("costpress-*.whl"))
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, env)
    # --no-compile: byte-compiling every dependency (pandas above all) is two-thirds of the install and tests nothing
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-compile", str(wheel)], tmp_path, env)
    costpress = str(venv / "bin" / "costpress")

    _run([costpress, "init", "blog"], work, env)
    blog = work / "blog"
    _run([costpress, "build", "--strict"], blog, env)
    for slug in ARTICLES.values():
        assert (blog / "site" / slug / "index.html").is_file(), slug

    theme_dir = _run([str(venv / "bin" / "python"), "-c", "import generator.theme as t; print(t.DEFAULT)"], blog, env)
    assert str(venv) in theme_dir  # the installed package's theme, not this repository's
    (blog / "templates").mkdir()
    base = (Path(theme_dir.strip()) / "base.html").read_text()
    (blog / "templates" / "base.html").write_text(base.replace("</footer>", "<p>Built by our team</p></footer>"))
    _run([costpress, "build"], blog, env)
    page = (blog / "site" / ARTICLES["flops"] / "index.html").read_text()
    assert "Built by our team" in page
