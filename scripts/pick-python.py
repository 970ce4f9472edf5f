"""Print the Python that `make` should make .venv with: the fastest Python 3.11 or newer on this machine.

Run by the Makefile as `python3 scripts/pick-python.py` when .venv does not exist yet (`PYTHON=... make`
chooses one instead). Machines often have more than one Python 3.11+, and they differ in speed, not in
what costpress writes: on the 2-core VM the project is measured on, the Python that `python3` finds there
(built by pyenv with its defaults: no profile-guided optimisation, libpython as a shared library) ran a
fixed loop in 0.42-0.50 s where Debian's own /usr/bin/python3.11 took 0.32-0.33 s, and a cold
10,000-page build about a tenth faster; both build the default site byte for byte the same
(docs/build-speed.md).

The candidates are `python3` and `python3.11` to `python3.14` as PATH finds them, then /usr/bin/python3
and /usr/local/bin/python3. Each is asked for its version and its real executable (pyenv's `python3` is a
script that runs another), and kept when it is 3.11 or newer and can make a virtual environment
(`venv` and `ensurepip` import). Each kept one runs the loop in three new processes, timed inside each;
the first candidate found stays unless another's shortest time is at least a tenth shorter, so that two
equally fast Pythons do not swap from one run to the next. The choice and the times go to standard error, the path to
standard output; when nothing can be asked, the answer is `python3`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

CANDIDATES = ["python3", *(f"python3.{minor}" for minor in range(11, 15)), "/usr/bin/python3", "/usr/local/bin/python3"]
LOOP = "s = 0\nfor i in range(5_000_000):\n    s += i * i\n"  # benchmarks/run.py's CALIBRATION
TIMED = f"import time\nstart = time.perf_counter()\n{LOOP}print(time.perf_counter() - start)\n"
ASK = (
    "import sys, importlib.util as u; "
    "ok = sys.version_info >= (3, 11) and all(u.find_spec(m) for m in ('venv', 'ensurepip')); "
    "print(int(ok), sys.executable)"
)
BETTER = 0.9  # another Python replaces the first found only when it takes at most this much of its time


def real_pythons() -> list[str]:
    """Each distinct interpreter behind CANDIDATES that is 3.11+ and can make a venv, in CANDIDATES' order."""
    found: list[str] = []
    for name in CANDIDATES:
        path = shutil.which(name)
        if path is None:
            continue
        try:
            answer = subprocess.run([path, "-c", ASK], capture_output=True, text=True, timeout=30)
            ok, executable = answer.stdout.split(maxsplit=1)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            continue
        executable = os.path.realpath(executable.strip())
        if ok == "1" and executable not in found:
            found.append(executable)
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
    pythons = real_pythons()
    if not pythons:
        print("python3")
        return
    if len(pythons) == 1:
        print(pythons[0])
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
