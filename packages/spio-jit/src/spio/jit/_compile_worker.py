"""The loop of one compile worker process of compile_in_workers (see _workers).

The parent starts it as `python -c BOOT SYS_PATH` (the parent's sys.path, so the worker
imports the same spio-jit, and finds the same NVRTC), then writes requests to its stdin and
reads the answers from its stdout, one at a time: each message is an 8-byte big-endian
length, then that many bytes of pickle. A request is a prepared compile (_compile._Prepared);
the answer is ("code", CompiledCode) or ("error", the exception NVRTC's compile raised).
Before the first request it writes READY, once it has imported what compiling needs: a
worker that cannot start (another interpreter's packages, a broken install) ends before
that, which the parent tells apart from a worker that died on a request.

The worker compiles without the disk cache: the parent looks the key up, holds its lock and
stores the entry, as it does for a compile in its own process. It exits when its stdin ends
(the parent closed it, or died).
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from typing import IO

#: The program the parent runs with `python -c`; argv[1] is the parent's sys.path as JSON.
BOOT = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from spio.jit._compile_worker import serve; serve()"
)

#: The first message of a worker that started.
READY = b"ready"

_LENGTH = struct.Struct(">Q")


def read_message(stream: IO[bytes]) -> bytes | None:
    """One message's bytes from stream, or None where the stream ended first."""
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(header)
    body = stream.read(size)
    return body if len(body) == size else None


def write_message(stream: IO[bytes], body: bytes) -> None:
    """Write one message (body, length first) and flush it."""
    stream.write(_LENGTH.pack(len(body)) + body)
    stream.flush()


def _answer(pickled: bytes) -> bytes:
    from spio.jit._compile import _compile_now

    try:
        return pickle.dumps(("code", _compile_now(pickle.loads(pickled))))
    except Exception as error:
        try:
            return pickle.dumps(("error", error))
        except Exception:  # an exception that does not pickle: its type and text do
            from spio.jit._errors import SpioJitError

            return pickle.dumps(("error", SpioJitError(f"{type(error).__name__}: {error}")))


def serve() -> None:
    """Answer requests from stdin on stdout until stdin ends."""
    # The answers go through a private copy of stdout; anything else that writes to fd 1
    # (a library's print) lands on stderr instead of corrupting a message.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    requests = sys.stdin.buffer
    import spio.jit._compile  # noqa: F401  (NVRTC itself loads at the first compile)

    try:
        write_message(answers, READY)
    except BrokenPipeError:
        return
    while (pickled := read_message(requests)) is not None:
        try:
            write_message(answers, _answer(pickled))
        except BrokenPipeError:
            return  # the parent is gone
