"""compile_many(): many variants in a pool of worker processes.

Variants already in the cache are read in the calling process; only misses go to the pool,
and variants with the same cache key (identical requests) are compiled once. The pool
(see _pool) survives Ctrl-C, outlives no caller, and loses only the variant a dying worker
was compiling. Because workers are spawned, a script that calls compile_many at import time
needs the usual `if __name__ == "__main__":` guard.

Error policy: every variant is attempted. If any fail, CompileManyError is raised after
the others complete; it carries `.results` (the variants that compiled) and `.errors`
(each failed variant's exception, keyed like the input). Catch it to keep the partial
results, as an autotuner discarding infeasible variants would.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from spio.jit import _env
from spio.jit._compile import (
    CompiledCode,
    CompileRequest,
    chosen_cache,
    lookup,
    prepare_request,
    run_compile,
)
from spio.jit._errors import CompileManyError


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _show_progress(progress: bool | None) -> bool:
    if progress is not None:
        if not isinstance(progress, bool):
            raise TypeError(f"progress must be True, False or None, got {progress!r}")
        return progress
    forced = _env.progress()
    if forced is not None:
        return forced
    try:
        return bool(sys.stderr.isatty())
    # No stderr (pythonw), a stream without isatty, or a closed one (ValueError).
    except (AttributeError, ValueError, OSError):
        return False


def _variants(
    requests: Mapping[Any, CompileRequest] | Iterable[CompileRequest],
) -> list[tuple[Any, CompileRequest]]:
    if isinstance(requests, CompileRequest):
        raise TypeError(
            "requests must be a list or dict of CompileRequests, got a single CompileRequest; "
            "pass [request] (or use compile())"
        )
    if isinstance(requests, Mapping):
        items = list(requests.items())
    elif isinstance(requests, Iterable) and not isinstance(requests, str | bytes):
        items = list(enumerate(requests))
    else:
        raise TypeError(f"requests must be a list or dict of CompileRequests, got {requests!r}")
    for key, request in items:
        if not isinstance(request, CompileRequest):
            raise TypeError(f"variant {key!r} is a {type(request).__name__}, not a CompileRequest")
    return items


def _worker_count(workers: int | None) -> int | None:
    count = workers if workers is not None else _env.workers()
    if count is None:
        return None
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"workers must be a positive int or None, got {count!r}")
    if count < 1:
        raise ValueError(f"workers must be a positive int, got {count!r}")
    return count


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
            name) or as an iterable (keyed by position). Identical requests are compiled
            once.
        workers: worker processes; default SPIO_JIT_WORKERS, else the CPUs this process may
            use. 1 compiles in the calling process. Never more than the cache misses.
        progress: show a progress bar on stderr; None means SPIO_JIT_PROGRESS, else only
            when stderr is a terminal.
        cache: False skips the disk cache; a bool, as for compile().

    Returns:
        The compiled code for every variant, keyed like requests.

    Raises:
        CompileManyError: some variants failed (after all were attempted); it carries the
            partial `.results` and the `.errors` by key. A variant whose worker process
            died (NVRTC crashed, out of memory) is compiled once more, alone, and fails
            only if its worker dies again; the other variants are unaffected.
        KeyboardInterrupt: on Ctrl-C, after the workers were stopped.
    """
    items = _variants(requests)
    count = _worker_count(workers)
    disk = chosen_cache(cache)
    show = _show_progress(progress)

    results: dict[Any, CompiledCode] = {}
    errors: dict[Any, BaseException] = {}
    misses: list[tuple[Any, Any]] = []
    twins: dict[str, list[Any]] = {}  # cache key -> the variants that share it
    for key, request in items:
        try:
            prepared = prepare_request(request)
        except Exception as error:
            errors[key] = error
            continue
        hit = lookup(prepared, disk)
        if hit is not None:
            results[key] = hit
        elif prepared.key in twins:
            twins[prepared.key].append(key)
        else:
            twins[prepared.key] = [key]
            misses.append((key, prepared))

    from tqdm import tqdm

    with tqdm(
        total=len(items),
        initial=len(results) + len(errors),
        disable=not show,
        desc="spio-jit compile",
        unit="kernel",
        file=sys.stderr,
    ) as bar:

        def finish(key: Any, prepared: Any, outcome: CompiledCode | BaseException) -> None:
            for twin in twins[prepared.key]:
                if isinstance(outcome, CompiledCode):
                    results[twin] = outcome
                else:
                    errors[twin] = outcome
            bar.update(len(twins[prepared.key]))

        pool_size = min(count or _cpu_count(), len(misses))
        if pool_size <= 1:
            for key, prepared in misses:
                try:
                    outcome: CompiledCode | BaseException = run_compile(prepared, disk)
                except Exception as error:
                    outcome = error
                finish(key, prepared, outcome)
        else:
            from spio.jit._pool import compile_in_pool

            compile_in_pool(misses, pool_size, disk is not None, finish)

    ordered = {key: results[key] for key, _ in items if key in results}
    if errors:
        raise CompileManyError(ordered, {key: errors[key] for key, _ in items if key in errors})
    return ordered
