"""The errors spio-jit raises: each carries what a user needs to act on it.

Input validation raises the built-in ValueError and TypeError; these classes cover what the
compiler and the driver report. All pickle, so compile_many can return them from workers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# NVRTC diagnostics look like `kernel.cu(12): error: expected a ";"`; warnings carry a
# number (`warning #177-D:`) and fatal ones say `catastrophic error`.
_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\n]+?)\((?P<line>\d+)\): "
    r"(?P<severity>catastrophic error|error|warning|remark)(?: #[\w-]+)?: (?P<message>.*)$",
    re.MULTILINE,
)
_CONTEXT_LINES = 2
_MAX_EXCERPTS = 5
_MAX_LOG_LINES_IN_MESSAGE = 40
# CompileManyError's message shows this many failed variants; .errors holds them all.
_MAX_VARIANTS_IN_MESSAGE = 20
_MAX_LINES_PER_VARIANT = 8


class SpioJitError(Exception):
    """Base class of the errors raised by spio.jit."""


class NvrtcNotFoundError(SpioJitError, RuntimeError):
    """No usable NVRTC library could be loaded; the message says what to install."""


@dataclass(frozen=True)
class Diagnostic:
    """One error or warning that NVRTC reported, located in a file and line."""

    file: str
    line: int
    severity: str
    message: str

    @property
    def is_error(self) -> bool:
        """Return True for errors (including catastrophic ones), False for warnings."""
        return "error" in self.severity


def parse_diagnostics(log: str) -> list[Diagnostic]:
    """Return the located diagnostics of an NVRTC log, in the order NVRTC wrote them."""
    return [
        Diagnostic(m["file"], int(m["line"]), m["severity"], m["message"].strip())
        for m in _DIAGNOSTIC.finditer(log)
    ]


def _excerpt(text: str, line: int) -> str:
    """Return the lines around `line` (1-based) with line numbers and a marker on it."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    first = max(1, line - _CONTEXT_LINES)
    last = min(len(lines), line + _CONTEXT_LINES)
    width = len(str(last))
    out = []
    for number in range(first, last + 1):
        marker = ">" if number == line else " "
        out.append(f"  {marker} {number:>{width}} | {lines[number - 1]}")
    return "\n".join(out)


class CompileError(SpioJitError):
    """NVRTC rejected a program.

    Attributes:
        name: the program name given to NVRTC (the file name in diagnostics).
        arch: the target architecture, e.g. "sm_90".
        log: NVRTC's full log, verbatim.
        options: the NVRTC options of the failed compile, in order.
        result: NVRTC's result code name, e.g. "NVRTC_ERROR_COMPILATION".
        diagnostics: the located errors and warnings parsed from the log.
        excerpts: for each of the first errors, its source lines with context.
        hint: a suggestion when the failure has a known cause, else "".
    """

    def __init__(
        self,
        *,
        name: str,
        arch: str,
        log: str,
        options: Sequence[str],
        result: str,
        source: str = "",
        headers: Mapping[str, str] | None = None,
        hint: str = "",
    ) -> None:
        self.name = name
        self.arch = arch
        self.log = log
        self.options = tuple(options)
        self.result = result
        self.hint = hint
        self.diagnostics = parse_diagnostics(log)
        self.excerpts = self._make_excerpts(source, headers or {})
        super().__init__(self._message())

    def _make_excerpts(self, source: str, headers: Mapping[str, str]) -> tuple[str, ...]:
        texts: dict[str, str] = {self.name: source, **headers}
        excerpts = []
        for diag in [d for d in self.diagnostics if d.is_error][:_MAX_EXCERPTS]:
            text = texts.get(diag.file)
            if text is None:
                text = _read_text(diag.file)
                texts[diag.file] = text
            body = _excerpt(text, diag.line)
            head = f"{diag.file}({diag.line}): {diag.severity}: {diag.message}"
            excerpts.append(f"{head}\n{body}" if body else head)
        return tuple(excerpts)

    @property
    def errors(self) -> list[Diagnostic]:
        """Return the diagnostics that are errors."""
        return [d for d in self.diagnostics if d.is_error]

    def _message(self) -> str:
        count = len(self.errors)
        what = f"{count} error{'s' if count != 1 else ''}" if count else self.result
        parts = [f"NVRTC could not compile {self.name!r} for {self.arch} ({what})."]
        if self.excerpts:
            parts.extend(self.excerpts)
            if count > len(self.excerpts):
                parts.append(f"... and {count - len(self.excerpts)} more errors (see .log)")
        else:
            log_lines = self.log.strip().splitlines()
            shown = log_lines[:_MAX_LOG_LINES_IN_MESSAGE]
            parts.append("NVRTC log:\n" + "\n".join(f"  {line}" for line in shown))
            if len(log_lines) > len(shown):
                parts.append(f"  ... {len(log_lines) - len(shown)} more lines (see .log)")
        if self.hint:
            parts.append(f"Hint: {self.hint}")
        parts.append("NVRTC options: " + " ".join(self.options))
        return "\n\n".join(parts)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.__dict__.copy(), str(self)))


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _rebuild(cls: type[Exception], state: dict[str, Any], message: str) -> Exception:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class CudaError(SpioJitError, RuntimeError):
    """The CUDA driver returned an error.

    Attributes:
        name: the CUresult name, e.g. "CUDA_ERROR_INVALID_VALUE" (None when unknown).
        code: the CUresult value (None when unknown).
        detail: the driver's description of the error.
        call: the driver call or spio-jit operation that failed.
    """

    def __init__(self, name: str | None, code: int | None, detail: str, call: str) -> None:
        self.name = name
        self.code = code
        self.detail = detail
        self.call = call
        label = name or "CUDA error"
        super().__init__(f"{call} failed: {label}: {detail}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.code, self.detail, self.call))


class CompileManyError(SpioJitError):
    """Some variants of compile_many failed; the others compiled.

    The message lists the first failures; .errors holds every one.

    Attributes:
        results: the compiled variants, keyed like the input.
        errors: the failed variants, keyed like the input, each with its exception.
    """

    def __init__(self, results: Mapping[Any, Any], errors: Mapping[Any, BaseException]) -> None:
        self.results = dict(results)
        self.errors = dict(errors)
        total = len(self.results) + len(self.errors)
        lines = [f"{len(self.errors)} of {total} variants failed to compile:"]
        for key, error in list(self.errors.items())[:_MAX_VARIANTS_IN_MESSAGE]:
            first = str(error).strip().splitlines()
            summary = (
                "\n      ".join(first[:_MAX_LINES_PER_VARIANT]) if first else type(error).__name__
            )
            lines.append(f"  - variant {key!r}: {type(error).__name__}: {summary}")
        left_out = len(self.errors) - _MAX_VARIANTS_IN_MESSAGE
        if left_out > 0:
            lines.append(f"  ... and {left_out} more failed variants (see .errors)")
        super().__init__("\n".join(lines))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.results, self.errors))


# Tracebacks and reprs name the public spelling (spio.jit.CompileError); pickling finds the
# classes there too.
for _public in (SpioJitError, NvrtcNotFoundError, CompileError, CudaError, CompileManyError):
    _public.__module__ = "spio.jit"
