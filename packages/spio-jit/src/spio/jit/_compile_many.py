"""compile_many(): many variants in a pool of worker processes.

Variants already in the cache are read in the calling process; only misses go to the pool.
Workers are started with the "spawn" method (safe with CUDA and threads in the parent) and
never see SIGINT (see _ctrl_c), so Ctrl-C reaches only the caller, which notices it between
waits, cancels what is queued, stops the workers and raises KeyboardInterrupt. Because
workers are spawned, a script that calls compile_many at import time needs the usual
`if __name__ == "__main__":` guard.

Error policy: every variant is attempted. If any fail, CompileManyError is raised after
the others complete; it carries `.results` (the variants that compiled) and `.errors`
(each failed variant's exception, keyed like the input). Catch it to keep the partial
results, as an autotuner discarding infeasible variants would.
"""

from __future__ import annotations

import concurrent.futures as futures
import multiprocessing
import os
import pickle
import signal
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from spio.jit import _cache, _env
from spio.jit._compile import (
    CompiledCode,
    CompileRequest,
    lookup,
    prepare_request,
    run_compile,
)
from spio.jit._ctrl_c import deferred_ctrl_c, sigint_blocked
from spio.jit._errors import CompileManyError, SpioJitError

_POLL_S = 0.2


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _worker_init() -> None:
    # Ctrl-C in a terminal signals the whole process group; the parent handles it. Where
    # SIGINT could not be blocked while the worker started (Windows), ignore it from here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker(prepared: Any, cache_enabled: bool) -> CompiledCode | BaseException:
    """Compile one prepared variant in a worker; return the result or the exception."""
    cache = _cache.default_cache() if cache_enabled else None
    try:
        return run_compile(prepared, cache)
    except Exception as error:
        try:
            pickle.dumps(error)
        except Exception:
            return SpioJitError(f"{type(error).__name__}: {error}")
        return error


def _show_progress(progress: bool | None) -> bool:
    if progress is not None:
        return progress
    forced = _env.progress()
    if forced is not None:
        return forced
    return sys.stderr is not None and sys.stderr.isatty()


def _stop(executor: futures.ProcessPoolExecutor, pending: Iterable[futures.Future[Any]]) -> None:
    """Cancel queued work and end the workers now, without waiting for running compiles."""
    for future in pending:
        future.cancel()
    terminate = getattr(executor, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
    else:
        for process in list(getattr(executor, "_processes", {}).values()):
            process.terminate()
    executor.shutdown(wait=True, cancel_futures=True)


def compile_many(
    requests: Mapping[Any, CompileRequest] | Iterable[CompileRequest],
    *,
    workers: int | None = None,
    progress: bool | None = None,
    cache: bool = True,
) -> dict[Any, CompiledCode]:
    """Compile many variants in parallel worker processes.

    Args:
        requests: CompileRequests, as a mapping from a key of your choice (a config, a
            name) or as an iterable (keyed by position).
        workers: worker processes; default SPIO_JIT_WORKERS, else the CPUs this process may
            use. 1 compiles in the calling process. Never more than the cache misses.
        progress: show a progress bar on stderr; None means SPIO_JIT_PROGRESS, else only
            when stderr is a terminal.
        cache: False skips the disk cache.

    Returns:
        The compiled code for every variant, keyed like requests.

    Raises:
        CompileManyError: some variants failed (after all were attempted); it carries the
            partial `.results` and the `.errors` by key.
        KeyboardInterrupt: on Ctrl-C, after the workers were stopped.
    """
    items: list[tuple[Any, CompileRequest]] = (
        list(requests.items()) if isinstance(requests, Mapping) else list(enumerate(requests))
    )
    for key, request in items:
        if not isinstance(request, CompileRequest):
            raise TypeError(f"variant {key!r} is a {type(request).__name__}, not a CompileRequest")
    count = workers if workers is not None else _env.workers()
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValueError(f"workers must be a positive int, got {count!r}")

    disk = _cache.default_cache() if cache else None
    results: dict[Any, CompiledCode] = {}
    errors: dict[Any, BaseException] = {}
    misses: list[tuple[Any, Any]] = []
    for key, request in items:
        try:
            prepared = prepare_request(request)
        except Exception as error:
            errors[key] = error
            continue
        hit = lookup(prepared, disk)
        if hit is not None:
            results[key] = hit
        else:
            misses.append((key, prepared))

    from tqdm import tqdm

    with tqdm(
        total=len(items),
        initial=len(results) + len(errors),
        disable=not _show_progress(progress),
        desc="spio-jit compile",
        unit="kernel",
        file=sys.stderr,
    ) as bar:
        pool_size = min(count or _cpu_count(), len(misses))
        if pool_size <= 1:
            for key, prepared in misses:
                try:
                    results[key] = run_compile(prepared, disk)
                except Exception as error:
                    errors[key] = error
                bar.update(1)
        else:
            _run_pool(misses, pool_size, disk is not None, results, errors, bar)

    ordered = {key: results[key] for key, _ in items if key in results}
    if errors:
        raise CompileManyError(ordered, {key: errors[key] for key, _ in items if key in errors})
    return ordered


def _run_pool(
    misses: list[tuple[Any, Any]],
    pool_size: int,
    cache_enabled: bool,
    results: dict[Any, CompiledCode],
    errors: dict[Any, BaseException],
    bar: Any,
) -> None:
    executor = futures.ProcessPoolExecutor(
        max_workers=pool_size,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_init,
    )
    pending: dict[futures.Future[Any], Any] = {}
    try:
        with deferred_ctrl_c() as ctrl_c:
            with sigint_blocked():  # the workers start here and inherit the blocked mask
                for key, prepared in misses:
                    pending[executor.submit(_worker, prepared, cache_enabled)] = key
            while pending and not ctrl_c.pressed:
                # The timeout bounds how long a Ctrl-C waits to be noticed.
                done, _ = futures.wait(
                    pending, timeout=_POLL_S, return_when=futures.FIRST_COMPLETED
                )
                for future in done:
                    key = pending.pop(future)
                    try:
                        outcome = future.result()
                    except Exception as error:  # the worker died (BrokenProcessPool) or similar
                        outcome = SpioJitError(f"worker process failed: {error!r}")
                    if isinstance(outcome, CompiledCode):
                        results[key] = outcome
                    else:
                        errors[key] = outcome
                    bar.update(1)
            if ctrl_c.pressed:
                raise KeyboardInterrupt
    except BaseException:
        # Ctrl-C is live again here: a second one interrupts a stop that takes too long.
        _stop(executor, pending)
        raise
    executor.shutdown(wait=True)
