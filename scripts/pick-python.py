"""Print the Python that `make` should make .venv with: the fastest build, on this machine, of the Python
version that `python3` is (3.11 or newer).

Run by the Makefile as `python3 scripts/pick-python.py` when .venv does not exist yet (`PYTHON=... make`
chooses one instead). A machine often holds two builds of the same Python version, and they differ in
speed, not in what costpress writes: on the 2-core VM the project is measured on, the 3.11 that `python3`
finds (built by pyenv with its defaults: no profile-guided optimisation, libpython as a shared library)
ran a fixed loop in 0.42-0.50 s where Debian's own /usr/bin/python3.11 took 0.31-0.35 s, and a cold
10,000-page build about a tenth faster; both build the default site byte for byte the same
(docs/build-speed.md). Other versions are left alone: the dependencies may have no wheels for them yet.

The candidates are `python3`, then `python3.X` (X: python3's minor version) as PATH finds it, then
/usr/bin and /usr/local/bin's `python3.X` and `python3`. Each is asked for its version and its real
executable (pyenv's `python3` is a script that runs another), and kept when it is python3's version and
can make a virtual environment (`venv` and `ensurepip` import). Each kept one runs the loop in three new
processes, timed inside each; the first stays unless another's shortest time is at least a tenth
shorter, so that two equally fast builds do not swap from one run to the next. The choice and the times
go to standard error, the path to standard output; when nothing can be asked, the answer is `python3`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

LOOP = "s = 0\nfor i in range(5_000_000):\n    s += i * i\n"  # benchmarks/run.py times it too (CALIBRATION)
TIMED = f"import time\nstart = time.perf_counter()\n{LOOP}print(time.perf_counter() - start)\n"
ASK = (
    "import sys, importlib.util as u; "
    "ok = sys.version_info >= (3, 11) and all(u.find_spec(m) for m in ('venv', 'ensurepip')); "
    "print(int(ok), '%d.%d' % sys.version_info[:2], sys.executable)"
)
BETTER = 0.9  # another build replaces the first only when it takes at most this much of its time


def ask(name: str) -> tuple[str, str] | None:
    """(version, real executable) of the Python `name` runs, when it is 3.11+ and can make a venv."""
    path = shutil.which(name)
    if path is None:
        return None
    try:
        answer = subprocess.run([path, "-c", ASK], capture_output=True, text=True, timeout=30)
        ok, version, executable = answer.stdout.split(maxsplit=2)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    return (version, os.path.realpath(executable.strip())) if ok == "1" else None


def builds() -> list[str]:
    """Each distinct build of python3's version that can make a venv, python3's own first."""
    first = ask("python3")
    if first is None:
        return []
    version, found = first[0], [first[1]]
    for name in (
        f"python{version}",
        *(f"{where}/python{v}" for where in ("/usr/bin", "/usr/local/bin") for v in (version, "3")),
    ):
        other = ask(name)
        if other is not None and other[0] == version and other[1] not in found:
            found.append(other[1])
    return found


def loop_time(python: str, runs: int = 3) -> float:
    """The shortest time LOOP took in `python`, timed inside the process (its start-up, slower the first time
    its files are read from disk, is left out), over `runs` new processes."""
    times = []
    for _ in range(runs):
        done = subprocess.run([python, "-c", TIMED], check=True, timeout=60, capture_output=True, text=True)
        times.append(float(done.stdout))
    return min(times)


def main() -> None:
    pythons = builds()
    if len(pythons) < 2:
        print(pythons[0] if pythons else "python3")
        return
    times = {python: loop_time(python) for python in pythons}
    chosen = pythons[0]
    fastest = min(pythons, key=times.get)
    if times[fastest] <= BETTER * times[chosen]:
        chosen = fastest
    said = ", ".join(f"{python} {seconds:.2f} s" for python, seconds in times.items())
    print(f"pick-python: {chosen} for .venv (a fixed loop: {said}; PYTHON=... make chooses)", file=sys.stderr)
    print(chosen)


if __name__ == "__main__":
    main()
