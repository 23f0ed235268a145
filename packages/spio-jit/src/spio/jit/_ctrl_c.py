"""Ctrl-C while a worker pool runs: noticed at safe points, never raised mid-bookkeeping.

Python raises KeyboardInterrupt between any two bytecodes of the main thread. Inside
concurrent.futures that can leave a future's lock held (futures.wait() acquires every
future's lock one by one before it waits), and the pool's manager thread then blocks on
that lock forever, so stopping the pool hangs. While a pool runs, SIGINT therefore only
sets a flag, which the caller checks between waits.

Workers must not see Ctrl-C either: a terminal sends it to the whole process group, and a
worker still importing (before its initializer can ignore SIGINT) would die and break the
pool. Where the platform allows, SIGINT is blocked while workers start; spawned children
inherit the mask and keep it, so the signal never reaches them.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


class CtrlC:
    """Whether SIGINT arrived since the watch began."""

    def __init__(self) -> None:
        self._seen = threading.Event()

    @property
    def pressed(self) -> bool:
        return self._seen.is_set()

    def _record(self, signum: int, frame: Any) -> None:
        self._seen.set()


@contextlib.contextmanager
def deferred_ctrl_c() -> Iterator[CtrlC]:
    """Record SIGINT instead of raising it, for the duration of the block.

    Only Python's default handler is replaced: a handler the program installed itself, or
    SIG_IGN, stays in charge. Signal handlers can only be set from the main thread; other
    threads never receive KeyboardInterrupt, so there the block changes nothing.
    """
    watch = CtrlC()
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield watch
        return
    signal.signal(signal.SIGINT, watch._record)
    try:
        yield watch
    finally:
        # A second Ctrl-C during cleanup after this point interrupts as usual.
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread (and in children started meanwhile) for the block.

    A SIGINT that arrives meanwhile stays pending and is delivered when the block ends.
    On platforms without pthread_sigmask (Windows) this does nothing.
    """
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        yield
        return
    previous = mask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, previous)
