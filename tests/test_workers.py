"""The forked worker pool: ordered results, errors raised in the main process, no hang on a dead worker."""

from __future__ import annotations

import functools
import os
import platform
import signal
import subprocess
import sys

import pytest

from generator.errors import BuildError
from generator.workers import Workers


def each(func):
    """A chunk function that applies `func` to each task (a pool's function takes a whole chunk)."""
    return functools.partial(_each, func)


def _each(func, chunk: list) -> list:
    return [func(task) for task in chunk]


def square(n: int) -> tuple[int, int]:
    return n, n * n


def fail_on_seven(n: int) -> int:
    if n == 7:
        raise ValueError("seven")
    return n


def die_on_five(n: int) -> int:
    if n == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return n


def test_results_come_back_by_chunk_in_task_order():
    with Workers(2, each(square)) as pool:
        first = pool.submit([100], 1)
        numbers = pool.submit(list(range(50)), 4)
        got = [item for number in numbers for item in pool.results(number)]
        assert pool.results(first[0]) == [(100, 10_000)]
    assert got == [(n, n * n) for n in range(50)]


def slow_square(n: int) -> tuple[int, int]:
    import time

    time.sleep(0.2)
    return square(n)


def test_a_closed_pool_waits_for_its_workers_only_while_they_owe_results():
    """With every result read, closing a pool leaves its workers to exit on their own, and `reap` waits for
    them; with results unread, closing waits for the workers, which may still be writing files."""
    from generator import workers

    with Workers(2, each(square)) as pool:
        numbers = pool.submit(list(range(8)), 2)
        assert [pool.results(n) for n in numbers]
        procs = list(pool._procs)
    assert workers._EXITING == procs
    workers.reap()
    assert workers._EXITING == [] and all(proc.exitcode == 0 for proc in procs)
    with Workers(2, each(slow_square)) as pool:
        pool.submit(list(range(4)), 1)  # results never read
        procs = list(pool._procs)
    assert workers._EXITING == [] and all(proc.exitcode == 0 for proc in procs)


def chunk_sizes(chunk: list[int]) -> list[tuple[int, int]]:
    return [(n, len(chunk)) for n in chunk]


def test_the_function_gets_each_chunk_whole():
    with Workers(2, chunk_sizes) as pool:
        numbers = pool.submit(list(range(10)), 4)
        got = [item for number in numbers for item in pool.results(number)]
    assert got == [(n, 4 if n < 8 else 2) for n in range(10)]


def test_an_error_in_a_worker_is_raised_in_the_main_process():
    with pytest.raises(ValueError, match="seven"), Workers(2, each(fail_on_seven)) as pool:
        for number in pool.submit(list(range(20)), 3):
            pool.results(number)


def test_a_killed_worker_stops_the_build_instead_of_hanging():
    with pytest.raises(BuildError, match="worker process stopped"), Workers(2, each(die_on_five)) as pool:
        for number in pool.submit(list(range(20)), 2):
            pool.results(number)


def test_a_dead_workers_error_says_how_it_ended_and_what_it_was_working_on():
    """The signal that killed it (SIGKILL is also what the system's out-of-memory killer sends) and its chunk,
    as `describe` names it; the build's own describe names pages (test_build)."""
    with pytest.raises(BuildError) as caught, Workers(2, each(die_on_five), lambda chunk: f"tasks {chunk}") as pool:
        for number in pool.submit(list(range(20)), 2):
            pool.results(number)
    assert str(caught.value) == (
        "a worker process stopped before finishing its pages (killed by SIGKILL, as when the system runs out"
        " of memory; it was working on tasks [4, 5])"
    )


def _busy_then_dead(chunk: list) -> list:
    import time

    time.sleep(0.3)
    os._exit(1)


def test_a_worker_that_dies_before_reading_a_large_chunk_is_an_error_not_a_hang():
    """A chunk larger than the task pipe is written while the only worker is busy; the worker dies without
    reading it. The main process's own copy of the pipe's read end used to keep that write waiting for
    ever; now the write fails and the build stops with the dead worker's message."""

    def too_long(signum, frame):
        raise TimeoutError("the main process waited for ever to write a task")

    before = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(20)
    try:
        with pytest.raises(BuildError, match="worker process stopped"), Workers(1, _busy_then_dead) as pool:
            pool.submit([0], 1)
            pool.submit([b"x" * (4 << 20)], 1)  # 4 MB: more than the pipe holds
            pool.results(0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def collector_on(_: int) -> bool:
    import gc

    return gc.isenabled()


def collector_threshold(_: int) -> tuple[int, int, int]:
    import gc

    return gc.get_threshold()


def test_workers_collect_less_often():
    """A worker's full collections found nothing to free; they are made after FULL_COLLECTION_EVERY middle
    ones instead of Python's 10. Its young collections wait for YOUNG_COLLECTION_AFTER new objects."""
    import gc

    from generator.workers import FULL_COLLECTION_EVERY, YOUNG_COLLECTION_AFTER

    with Workers(2, each(collector_threshold)) as pool:
        (threshold,) = pool.results(pool.submit([0], 1)[0])
    assert threshold == (YOUNG_COLLECTION_AFTER, gc.get_threshold()[1], FULL_COLLECTION_EVERY)
    assert (YOUNG_COLLECTION_AFTER, FULL_COLLECTION_EVERY) == (10_000, 100)


def test_workers_collect_garbage_even_when_the_main_process_paused_its_collector():
    import gc

    gc.disable()
    try:
        with Workers(2, each(collector_on)) as pool:
            numbers = pool.submit(list(range(4)), 2)
            assert all(all(pool.results(n)) for n in numbers)
        assert not gc.isenabled()  # the main process keeps its own setting
    finally:
        gc.enable()


def test_stopped_workers_still_deliver_what_was_queued_and_refuse_more():
    """stop() lets idle workers exit early; results already queued still come back, in order."""
    with Workers(2, each(square)) as pool:
        numbers = pool.submit(list(range(40)), 2)  # 20 chunks: more than are queued at once
        assert not pool.stop()  # some still wait to be queued: nothing is told to stop yet
        got = [item for number in numbers[:-2] for item in pool.results(number)]
        assert pool.stop()  # every chunk is queued now
        with pytest.raises(RuntimeError, match="after the workers were told to stop"):
            pool.submit([1], 1)
        got += [item for number in numbers[-2:] for item in pool.results(number)]
    assert got == [(n, n * n) for n in range(40)]


def test_a_worker_killed_after_stop_is_still_an_error_not_a_hang():
    with pytest.raises(BuildError, match="worker process stopped"), Workers(2, each(die_on_five)) as pool:
        numbers = pool.submit(list(range(8)), 2)
        assert pool.stop()  # told to stop, so an end of file alone no longer means a dead worker
        for number in numbers:
            pool.results(number)


def touch(folder: str, n: int) -> int:
    with open(os.path.join(folder, str(n)), "w"):
        pass
    return n


def test_poll_keeps_the_workers_fed_while_the_caller_is_busy(tmp_path):
    """Only a few chunks are queued at a time; a caller that takes no results but polls now and then
    still gets every chunk worked on (without poll, the workers would stop after the first few)."""
    import time

    with Workers(2, each(functools.partial(touch, str(tmp_path)))) as pool:
        numbers = pool.submit(list(range(30)), 1)
        deadline = time.monotonic() + 20
        while len(os.listdir(tmp_path)) < 30 and time.monotonic() < deadline:
            pool.poll()
            time.sleep(0.01)
        assert len(os.listdir(tmp_path)) == 30
        assert [item for number in numbers for item in pool.results(number)] == list(range(30))


def _heap_churn_faults(_task=None) -> int:
    """Page faults while about 8 MB of the heap is taken and freed twenty times (objects past pymalloc's 512
    bytes come from glibc's heap), as a worker's heap grows and shrinks with each chunk of pages."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        held = [bytes(10_000) for _ in range(800)]
        del held
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="keep_heap sets glibc's trim threshold")
def test_a_worker_keeps_the_top_of_its_heap_instead_of_faulting_it_back_in():
    """With glibc's default a process gives the top of its heap back to the system past 128 KB free, and
    takes it back one page fault a page; a worker keeps it (workers.keep_heap)."""
    with Workers(1, each(_heap_churn_faults)) as pool:
        (number,) = pool.submit([None], 1)
        (in_worker,) = pool.results(number)
    code = "import sys; sys.path.insert(0, sys.argv[1]); import test_workers; print(test_workers._heap_churn_faults())"
    alone = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], capture_output=True, text=True)
    assert alone.returncode == 0, alone.stderr
    assert in_worker * 4 < int(alone.stdout)


@pytest.mark.skipif(not hasattr(__import__("fcntl"), "F_GETPIPE_SZ"), reason="pipe sizes are Linux's")
def test_the_task_pipe_holds_a_chunk_of_figures_parts_while_the_workers_are_busy():
    """A chunk of figures parts at 100,000 pages is about 150 KB; with the default 64 KB pipe the main
    process waited (0.48 s) for a busy worker to read it."""
    import fcntl

    from generator.workers import PIPE_BYTES

    with Workers(1, each(square)) as pool:
        size = fcntl.fcntl(pool._tasks._writer.fileno(), fcntl.F_GETPIPE_SZ)
    assert size >= min(PIPE_BYTES, int(open("/proc/sys/fs/pipe-max-size").read()))
