"""The worker processes of compile_many, and what happens when one dies.

Workers are started with the "spawn" method (safe with CUDA and threads in the parent) and
never see SIGINT (see _ctrl_c), so Ctrl-C reaches only the caller, which notices it between
waits, cancels what is queued, stops the workers and raises KeyboardInterrupt.

A worker exits when its parent is gone, which it sees by its parent pid changing (POSIX
gives an orphan a new parent; Windows does not, so there it stays). Nothing else would end
it: killed (SIGKILL, SIGTERM, the OOM killer), the parent tells no one, and an idle worker
waits on the pool's queue forever, since it holds the queue's other end itself.

One worker dying (NVRTC crashing on a variant, the OOM killer) breaks a
ProcessPoolExecutor: every unfinished variant fails with BrokenProcessPool. Each worker
therefore reports which variant it starts, before it unpickles it, and after a break the
variants are sorted out: one whose worker died by itself (not by the pool's SIGTERM to the
survivors) is a suspect and is compiled once more, alone in a fresh pool, so that only a
variant that kills its worker twice fails, naming how; every other unfinished variant goes
to a fresh pool. Variants that no worker started in two fresh pools fail with the workers'
exit statuses; where the workers exited with status 1 as they started (a script that calls
compile_many unguarded at import time, which every spawned worker imports), the error says
to guard the call.
"""

from __future__ import annotations

import concurrent.futures as futures
import multiprocessing
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from spio.jit import _cache
from spio.jit._compile import CompiledCode, run_compile
from spio.jit._ctrl_c import deferred_ctrl_c, sigint_blocked
from spio.jit._errors import SpioJitError
from spio.jit._exit_status import describe_exit

_POLL_S = 0.2
# How often a worker checks that its parent still runs.
_PARENT_POLL_S = 0.5
# How long a stopped worker is waited for after SIGTERM, and again after SIGKILL.
_JOIN_S = 5.0
# Fresh pools after which variants that no worker started are given up on.
_MAX_ROUNDS_WITHOUT_PROGRESS = 2
_NOT_STARTED = (
    "not compiled: worker processes kept dying before they started this variant, in "
    f"{_MAX_ROUNDS_WITHOUT_PROGRESS} fresh pools"
)

# A variant: (the caller's key, its prepared request).
Variant = tuple[Any, Any]
# Told each variant's outcome: (key, prepared, CompiledCode or the exception).
Finish = Callable[[Any, Any, "CompiledCode | BaseException"], None]

# In a worker: where it reports (its pid, the variant's index) as it starts a variant.
_started: Any = None


def _worker_init(parent: int, started: Any) -> None:
    global _started
    # Ctrl-C in a terminal signals the whole process group; the parent handles it. Where
    # SIGINT could not be blocked while the worker started (Windows), ignore it from here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _started = started
    threading.Thread(
        target=_exit_without_parent, args=(parent,), name="spio-jit-parent-watch", daemon=True
    ).start()


def _exit_without_parent(parent: int) -> None:
    # The parent's pid is passed in, not read here: the parent may be gone already.
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL_S)
    os._exit(1)


def _worker(index: int, pickled: bytes, cache_enabled: bool) -> CompiledCode | BaseException:
    """Compile one variant in a worker; return the result or the exception."""
    _started.put((os.getpid(), index))
    prepared = pickle.loads(pickled)
    cache = _cache.default_cache() if cache_enabled else None
    try:
        return run_compile(prepared, cache)
    except Exception as error:
        try:
            pickle.dumps(error)
        except Exception:
            return SpioJitError(f"{type(error).__name__}: {error}")
        return error


def _stop(executor: futures.ProcessPoolExecutor, pending: Iterable[futures.Future[Any]]) -> None:
    """Cancel queued work and end the workers now, without waiting for running compiles;
    return once every worker has exited."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    terminate = getattr(executor, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
    else:
        # The shutdown is flagged first, as 3.14's terminate_workers does: the manager
        # thread then cancels the queued futures itself. (Futures cancelled here, a worker's
        # death had it set an exception on them: InvalidStateError in 3.11's manager thread.)
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
    # The manager thread joins the workers without a timeout (and, where it had ended, not
    # at all, leaving the caller to count a SIGTERMed worker alive).
    _reap(processes)
    if manager is not None:
        manager.join(_JOIN_S)
    for future in pending:
        future.cancel()  # (those the pool had not reached; the others have their outcome)


def _reap(processes: Iterable[Any]) -> None:
    """Join each SIGTERMed worker, and kill one SIGTERM has not ended within _JOIN_S.

    A worker can outlive SIGTERM for good: NVRTC 12 handles SIGTERM while it compiles, with
    a handler that calls exit(), which hung waiting on the C library's atexit lock where the
    signal came while NVRTC was registering an atexit function (CI, cu12, a Ctrl-C test)."""
    for process in processes:
        process.join(_JOIN_S)
        if process.is_alive():
            process.kill()
            process.join(_JOIN_S)


def _round(
    variants: list[Variant], pool_size: int, cache_enabled: bool, finish: Finish
) -> tuple[list[tuple[int, str]], list[int], list[int | None]]:
    """Compile variants in one pool. Return, if the pool broke, the indices of the variants
    whose worker died on them (with how it died) and of those left unfinished otherwise; and
    the exit codes of the pool's workers."""
    context = multiprocessing.get_context("spawn")
    started = context.SimpleQueue()
    executor = futures.ProcessPoolExecutor(
        max_workers=pool_size,
        mp_context=context,
        initializer=_worker_init,
        initargs=(os.getpid(), started),
    )
    pending: dict[futures.Future[Any], int] = {}
    started_by: dict[int, int] = {}  # variant index -> pid of the worker that started it
    broken: list[int] = []
    try:
        with deferred_ctrl_c() as ctrl_c:
            with sigint_blocked():  # the workers start here and inherit the blocked mask
                for index, (_, prepared) in enumerate(variants):
                    work = executor.submit(_worker, index, pickle.dumps(prepared), cache_enabled)
                    pending[work] = index
            # Spawned by the submits above; kept to read their exit codes after a break.
            processes = dict(getattr(executor, "_processes", None) or {})
            while pending and not ctrl_c.pressed:
                # The timeout bounds how long a Ctrl-C waits to be noticed.
                done, _ = futures.wait(
                    pending, timeout=_POLL_S, return_when=futures.FIRST_COMPLETED
                )
                _read_starts(started, started_by)
                for future in done:
                    index = pending.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool:
                        broken.append(index)
                        continue
                    except Exception as error:
                        outcome = SpioJitError(f"worker process failed: {error!r}")
                    finish(*variants[index], outcome)
            if ctrl_c.pressed:
                raise KeyboardInterrupt
    except BaseException:
        # Ctrl-C is live again here: a second one interrupts a stop that takes too long.
        _stop(executor, pending)
        raise
    if broken:
        # The broken pool's manager thread SIGTERMed the workers left and joins them
        # without a timeout: one SIGTERM leaves alive would hang the shutdown.
        _reap(processes.values())
    executor.shutdown(wait=True)
    _read_starts(started, started_by)
    started.close()
    died, unfinished = _sort_out(broken, started_by, processes)
    return died, unfinished, [process.exitcode for process in processes.values()]


def _read_starts(started: Any, started_by: dict[int, int]) -> None:
    while not started.empty():
        pid, index = started.get()
        started_by[index] = pid


def _sort_out(
    broken: list[int], started_by: dict[int, int], processes: dict[int, Any]
) -> tuple[list[tuple[int, str]], list[int]]:
    """Split a broken pool's unfinished variants into those whose worker died by itself
    while compiling them, and the others."""
    died, unfinished = [], []
    for index in sorted(broken):
        pid = started_by.get(index)
        process = processes.get(pid) if pid is not None else None
        exitcode = None if process is None else process.exitcode
        # The pool ends the survivors with SIGTERM; without exit codes, any start suspects.
        if pid is not None and exitcode != -signal.SIGTERM:
            died.append((index, describe_exit(exitcode)))
        else:
            unfinished.append(index)
    return died, unfinished


def _not_started(exit_codes: list[int | None]) -> str:
    """Why the variants no worker started failed, from the last pool's workers' exit codes."""
    # Those the pool ended itself (SIGTERM to the survivors, once one worker had died).
    own = [code for code in exit_codes if code != -signal.SIGTERM]
    if own and all(code == 1 for code in own):
        # A spawned worker first imports the caller's main module. A script that calls
        # compile_many at import time calls it again there, and multiprocessing refuses to
        # start a pool from a process still starting up: RuntimeError, exit status 1.
        return (
            f"{_NOT_STARTED}: they exited with status 1 as they started, from a Python error "
            "that each printed to stderr. The usual cause is a script that calls compile_many "
            "when it is imported: workers are spawned, and each imports the main module, so "
            'guard the call with `if __name__ == "__main__":`'
        )
    deaths = sorted({describe_exit(code) for code in exit_codes}) or ["their exit statuses unknown"]
    return f"{_NOT_STARTED} ({', '.join(deaths)}): out of memory, or killed from outside"


def compile_in_pool(
    variants: list[Variant], pool_size: int, cache_enabled: bool, finish: Finish
) -> None:
    """Compile variants in up to pool_size worker processes, telling finish each outcome
    (see the module doc for how a worker's death is handled)."""
    queue = variants
    suspects: list[tuple[Variant, str]] = []
    rounds_without_progress = 0
    while queue:
        died, unfinished, exit_codes = _round(
            queue, min(pool_size, len(queue)), cache_enabled, finish
        )
        suspects += [(queue[index], death) for index, death in died]
        progressed = len(unfinished) < len(queue)
        queue = [queue[index] for index in unfinished]
        rounds_without_progress = 0 if progressed else rounds_without_progress + 1
        if queue and rounds_without_progress == _MAX_ROUNDS_WITHOUT_PROGRESS:
            for key, prepared in queue:
                finish(key, prepared, SpioJitError(_not_started(exit_codes)))
            break
    for (key, prepared), death in suspects:
        died, unfinished, _ = _round([(key, prepared)], 1, cache_enabled, finish)
        if died or unfinished:
            again = died[0][1] if died else "it ended without a result"
            finish(
                key,
                prepared,
                SpioJitError(
                    f"the worker process compiling this variant died ({death}), and again when "
                    f"the variant was compiled alone ({again}): NVRTC may crash on it, or the "
                    "machine ran out of memory"
                ),
            )
