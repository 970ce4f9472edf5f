"""A small pool of forked worker processes: chunks of tasks out, results back, nothing else.

multiprocessing.Pool kept three threads busy in the main process. The one that
watches for dead workers also waits on the results pipe, so it woke up for
every chunk a worker sent back and fought the thread reading results for the
GIL: 0.3 s of CPU in a 10,000-page build on two cores, taken from the workers.
Here the main process reads results itself and sleeps in one `wait()` between
them.

Workers take chunks from one shared queue, so a slow chunk never holds the
others up. The main process keeps only a few chunks queued per worker (their
bytes fit in the pipe), so it never blocks writing while a worker blocks on a
full results pipe. Results are handed back by chunk number; callers ask for
them in the order they need.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import signal
import traceback
from collections import deque
from collections.abc import Callable

from generator.errors import BuildError

# Chunks queued per worker beyond the one it is working on.
AHEAD = 2


class Workers:
    """`count` forked processes that apply `func` to each chunk of tasks submitted: it takes the chunk's
    tasks as a list and returns their results in the same order. `describe` says what a chunk's tasks are
    for (the pages it renders), to name them when the worker working on it dies."""

    def __init__(self, count: int, func: Callable[[list], list], describe: Callable[[list], str] | None = None):
        reap()  # an earlier pool's workers (a long-running `serve`) are gone by now
        ctx = mp.get_context("fork")
        self._describe = describe
        self._chunks: dict[int, list] = {}  # the chunks queued, by number, until their results come back
        # the number of the chunk each worker is on (-1: none), written by the worker: what it had when it died
        self._current = ctx.Array("q", [-1] * count, lock=False)
        self._tasks = ctx.SimpleQueue()
        _widen(self._tasks._writer)  # a chunk of figures parts at 100,000 pages (~150 KB) is queued at once
        self._procs: list = []
        self._results: list[mpc.Connection] = []
        self._waiting: deque = deque()  # (chunk number, tasks) not yet queued
        self._queued = 0  # chunks queued or being worked on
        self._done: dict[int, list] = {}
        self._next = 0
        self._stopped = False  # the workers were told to exit after the queued chunks
        # Objects the workers inherit are moved out of the collector's sight while forking: the
        # workers' collections skip them (and leave their memory pages shared with this process).
        gc.freeze()
        try:
            for index in range(count):
                reader, writer = ctx.Pipe(duplex=False)
                _widen(writer)
                serving = (func, self._tasks, writer, os.getpid(), self._current, index)
                proc = ctx.Process(target=_serve, args=serving, daemon=True)
                proc.start()
                writer.close()  # the worker holds the only write end: its exit shows as end of file
                self._procs.append(proc)
                self._results.append(reader)
        except BaseException:
            self.terminate()
            raise
        finally:
            gc.unfreeze()  # here, in the main process; the workers keep them frozen
        # This process only writes tasks: with its copy of the read end closed, the workers hold the only
        # ones, so a task written when every worker has died fails at once (EPIPE) rather than waiting for
        # ever for a reader (a chunk larger than the pipe, written while the last worker died).
        self._tasks._reader.close()

    def __len__(self) -> int:
        return len(self._procs)

    def submit(self, tasks: list, chunksize: int) -> list[int]:
        """Queue tasks in chunks; returns the chunk numbers, to pass to `results`.

        Chunks hold `chunksize` tasks until the last few, which shrink with
        what is left, so the workers run out of work at about the same time
        (a last chunk of 64 pages kept one worker busy ~50 ms after the other).
        """
        if self._stopped:
            raise RuntimeError("tasks submitted after the workers were told to stop")
        numbers = []
        start = 0
        while start < len(tasks):
            size = max(min(chunksize, 4), min(chunksize, (len(tasks) - start) // (4 * len(self._procs))))
            self._waiting.append((self._next, tasks[start : start + size]))
            numbers.append(self._next)
            self._next += 1
            start += size
        self._feed()
        return numbers

    def results(self, number: int) -> list:
        """The results of one chunk, in task order, once a worker has sent them."""
        while number not in self._done:
            self._receive()
        return self._done.pop(number)

    def _feed(self) -> None:
        while self._waiting and self._queued < (AHEAD + 1) * len(self._procs):
            self._put(self._waiting.popleft())
            self._queued += 1

    def _put(self, item) -> None:
        try:
            self._tasks.put(item)
        except BrokenPipeError:  # no worker is left to read it
            raise self._died() from None
        if item is not None:
            self._chunks[item[0]] = item[1]

    def _receive(self) -> None:
        open_ends = [conn for conn in self._results if not conn.closed]
        if not open_ends:  # every worker has exited, and a result is still awaited
            raise self._died()
        for conn in mpc.wait(open_ends):
            try:
                kind, number, payload = conn.recv()
            except EOFError:
                died = self._results.index(conn)
                if not self._stopped or self._current[died] in self._chunks:  # told to stop, it may exit when
                    raise self._died(died) from None  # it owes no results
                conn.close()  # told to stop, it exited
                continue
            if kind == "error":
                raise payload
            self._done[number] = payload
            self._chunks.pop(number, None)
            self._queued -= 1
        self._feed()

    def _died(self, index: int | None = None) -> BuildError:
        """The error for a worker that stopped without sending all its results: how it ended and, when known,
        what it was working on (`describe`)."""
        how = []
        if index is not None:
            proc = self._procs[index]
            proc.join(5)  # its pipe is closed: it has exited, or is about to
            if proc.exitcode is not None and proc.exitcode < 0:
                try:
                    name = signal.Signals(-proc.exitcode).name
                except ValueError:
                    name = f"signal {-proc.exitcode}"
                how.append(f"killed by {name}{', as when the system runs out of memory' if name == 'SIGKILL' else ''}")
            elif proc.exitcode:
                how.append(f"exit status {proc.exitcode}")
            chunk = self._chunks.get(self._current[index])
            if chunk is not None and self._describe is not None:
                how.append(f"it was working on {self._describe(chunk)}")
        return BuildError(
            "a worker process stopped before finishing its pages" + (f" ({'; '.join(how)})" if how else "")
        )

    def poll(self) -> None:
        """Take whatever results are ready, without waiting, and queue more chunks in their place.

        A caller busy with other work calls this now and then, so the workers
        never run out of queued chunks meanwhile.
        """
        open_ends = [conn for conn in self._results if not conn.closed]
        if self._waiting and open_ends and mpc.wait(open_ends, 0):
            self._receive()

    def stop(self) -> bool:
        """Tell the workers to exit once the chunks already queued are done; False if some still wait to be queued.

        A worker with nothing left exits at once, and its exit (unmapping a
        hundred MB) overlaps what the main process does next instead of
        being waited for in `close`.
        """
        self._feed()
        if self._waiting:
            return False
        if not self._stopped:
            self._stopped = True
            for _ in self._procs:
                self._put(None)
        return True

    def close(self) -> None:
        """Let the workers finish and exit. When every result was read, they have nothing left to do but
        exit, and are not waited for here (unmapping a worker's memory took 0.01 s at the end of a
        10,000-page price refresh, while this process could be publishing): `reap` waits for them."""
        while not self.stop():
            self._receive()
        if self._queued or self._waiting:  # results not read: the workers may still be writing files
            for proc in self._procs:
                proc.join()
        else:
            _EXITING.extend(self._procs)
        self._release()

    def terminate(self) -> None:
        """Stop the workers now (an error or an interrupt in the main process)."""
        for proc in self._procs:
            if proc.is_alive():
                proc.terminate()
        for proc in self._procs:
            proc.join()
        self._release()

    def _release(self) -> None:
        for conn in self._results:
            conn.close()
        self._tasks.close()
        self._procs, self._results = [], []

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.close()
        else:
            self.terminate()


class Aside:
    """One forked process that calls `func()` once while this one goes on (work done ahead on the other core).

    `result` waits for what it returned: None when it raised or died, for the
    caller to do the work itself. `close` stops it at once if its result was
    never taken (the caller stopped first); otherwise it has already exited.
    """

    def __init__(self, func: Callable[[], object]) -> None:
        self._pool = Workers(1, lambda tasks: [func() for _ in tasks])
        self._number = self._pool.submit([None], 1)[0]
        self._pool.stop()
        self._taken = False

    def result(self):
        self._taken = True
        try:
            return self._pool.results(self._number)[0]
        except Exception:  # it raised, or died
            return None
        finally:
            self._pool.close()

    def close(self) -> None:
        if not self._taken:
            self._pool.terminate()


# Workers of closed pools that were told to exit, with every result read, and not yet waited for (reap)
_EXITING: list = []


def reap() -> None:
    """Wait for the workers of closed pools to exit (they had nothing left to do when their pool closed)."""
    while _EXITING:
        _EXITING.pop().join()


def _widen(conn: mpc.Connection) -> None:
    """Let a pipe hold a whole chunk (~300 KB of results, ~150 KB of tasks) so it is handed over without
    waiting for a read: a worker's results, or the main process's tasks while the workers are busy."""
    try:
        import fcntl

        fcntl.fcntl(conn.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):  # not Linux, or above the system's limit: the default works
        pass


PIPE_BYTES = 1 << 20


PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when its parent dies (Linux), so no worker outlives a killed build.

    A worker whose parent is already gone when this runs exits at once.
    """
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the workers still stop when their task pipe closes
        pass
    if os.getppid() != parent:
        os._exit(1)


# How much free memory at the top of its heap a worker keeps rather than gives back to the system. glibc's
# default gives it back past 128 KB, and a worker's heap grows and shrinks with every chunk of pages, so
# the same memory came back each time as new pages, one page fault each: 50,000-65,000 faults a worker in
# a 10,000-page cold build, against about 15,000 with 8 MB or more kept (and the same peak memory).
HEAP_KEPT = 16 << 20
M_TRIM_THRESHOLD = -1  # mallopt's parameter (glibc's malloc.h)


def keep_heap() -> None:
    """Have glibc keep up to HEAP_KEPT of free memory at the top of this process's heap (nothing elsewhere)."""
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(M_TRIM_THRESHOLD, HEAP_KEPT)
    except (OSError, AttributeError):  # not glibc (no mallopt): its allocator's own behaviour stays
        pass


# Collections of the middle generation between two full collections in a worker (Python's default is 10).
# A worker's full collections found nothing to free (the pages' cyclic garbage dies young), and each walked
# every object the worker had made and kept (its caches of text, numbers and SVG pieces): at 100,000 pages
# 42 of them took 2 s of each worker's time, at 10,000 pages 4 took 0.1 s.
FULL_COLLECTION_EVERY = 100
# Objects made (net of those freed) before a young collection in a worker; Python's default is 700. A worker
# holds a chunk's pages until their results go back, so a young collection found mostly live objects, and
# promoted them to be walked again in the middle generation: at 10,000 pages 650 young and 58 middle ones
# took 0.09 s of each worker and freed about 3,000 objects. After 10,000 objects: 7-10, 0.02 s, as many freed.
YOUNG_COLLECTION_AFTER = 10_000


def _serve(func: Callable[[list], list], tasks, results: mpc.Connection, parent: int, current, index: int) -> None:
    """A worker's loop: take a chunk, send back its results, until told to stop. `current[index]` holds the
    number of the chunk it is on (-1 between chunks), for the main process to name if it dies."""
    die_with_parent(parent)
    keep_heap()
    # the main process stops a worker with SIGTERM: it ends on the spot, as it would have without the console
    # command's handler (cli.main raises Terminated on SIGTERM, for its own clean-up)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Ctrl-C reaches every process of the build; the main process stops the workers (SIGTERM) as it cleans
    # up. Here it would only cut short this process's exit, whose finalizers then printed tracebacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.enable()  # the main process may have paused its collector for a build (cli); pages make garbage here
    # Young collections less often (YOUNG_COLLECTION_AFTER); a full one only after ten times as many middle
    # ones as Python makes (FULL_COLLECTION_EVERY)
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_COLLECTION_AFTER), middle, FULL_COLLECTION_EVERY)
    while True:
        item = tasks.get()
        if item is None:
            return
        number, chunk = item
        current[index] = number
        try:
            out = func(chunk)
        except BaseException as exc:  # a bug: hand it to the main process to raise
            results.send(("error", number, _sendable(exc)))
            return
        results.send(("ok", number, out))
        current[index] = -1


def _sendable(exc: BaseException) -> BaseException:
    """The exception itself when it survives pickling, else its traceback as text."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return RuntimeError("".join(traceback.format_exception(exc)))
