"""compile()'s arguments, checked and normalized before anything is keyed or compiled.

Each refusal names the argument, the value given and what is allowed. Text goes to NVRTC as
C strings of UTF-8, so text that cannot be encoded (lone surrogates, from decoding with
errors="surrogateescape") is refused here by name, and so is a NUL, after which NVRTC would
silently read nothing.
"""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Iterable, Mapping
from typing import SupportsIndex

DefineValue = str | int | float | bool | None

_MACRO = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def text(value: object, what: str) -> str:
    """Return value as str (UTF-8 bytes are decoded), or raise naming `what`."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(
                f"{what} must be UTF-8 text when given as bytes; byte {error.start} "
                f"({value[error.start : error.start + 1]!r}) is not: {error.reason}"
            ) from None
    if not isinstance(value, str):
        raise TypeError(f"{what} must be str or bytes, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{what} is not valid text: {value[error.start]!r} at index {error.start} is a "
            "lone surrogate (as text decoded with errors='surrogateescape' keeps an "
            "undecodable byte), which UTF-8 cannot encode"
        ) from None
    nul = value.find("\0")
    if nul >= 0:
        raise ValueError(
            f"{what} has a NUL character at index {nul}; NVRTC would ignore everything after it"
        )
    return value


def _one_line(value: str, what: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError(f"{what}={value!r} has a line break; it must be one line")
    return value


def source(value: object) -> str:
    """Return the program's source as str; an empty one is refused."""
    result = text(value, "source")
    if not result.strip():
        raise ValueError(f"source={result!r} is empty; there is nothing to compile")
    return result


def program_name(value: object) -> str:
    """Return the program name, one line of text."""
    if not isinstance(value, str) or not value:
        raise TypeError(f"name must be a non-empty str, got {value!r}")
    return _one_line(text(value, "name"), "name")


def headers(value: object) -> tuple[tuple[str, str], ...]:
    """Return in-memory headers as sorted (include name, contents) pairs."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise TypeError(f"headers must map include names to contents, got {value!r}")
    out = []
    for include, content in value.items():
        if not isinstance(include, str) or not include:
            raise TypeError(f"header names must be non-empty str, got {include!r}")
        text(include, f"header name {include!r}")
        out.append((include, text(content, f"headers[{include!r}]")))
    return tuple(sorted(out))


def define_flags(value: object) -> list[str]:
    """Return -D flags for a mapping of macro names to values, sorted by name."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise TypeError(
            f"defines must map macro names to values, such as {{'BLOCK': 128}}, got {value!r}"
        )
    for macro in value:
        if not isinstance(macro, str):
            raise TypeError(f"defines' keys must be macro names (str), got {macro!r}")
        if not _MACRO.match(macro):
            raise ValueError(f"define name {macro!r} is not a C identifier")
    return [_define_flag(macro, value[macro]) for macro in sorted(value)]


def _define_flag(macro: str, value: object) -> str:
    what = f"defines[{macro!r}]"
    if value is None:
        return f"-D{macro}"
    if isinstance(value, bool):
        return f"-D{macro}={int(value)}"
    if isinstance(value, str):
        return f"-D{macro}={_one_line(text(value, what), what)}"
    if isinstance(value, int | float):
        return f"-D{macro}={value}"
    if isinstance(value, SupportsIndex):  # integers of other types (numpy's)
        return f"-D{macro}={operator.index(value)}"
    raise TypeError(f"{what} must be str, int, float, bool or None, got {value!r}")


def include_dirs(value: object) -> list[str | os.PathLike[str]]:
    """Return include_dirs as a list of entries (one directory alone is accepted too)."""
    if isinstance(value, str | os.PathLike):
        value = [value]
    elif isinstance(value, bytes | bytearray) or not isinstance(value, Iterable):
        raise TypeError(
            "include_dirs must be a directory (str or os.PathLike) or a sequence of them, "
            f"got {value!r}"
        )
    entries = list(value)
    for index, entry in enumerate(entries):
        if not isinstance(entry, str | os.PathLike) or not isinstance(os.fspath(entry), str):
            raise TypeError(
                f"include_dirs[{index}] must be a directory as a str or os.PathLike, got {entry!r}"
            )
    return entries


def name_expressions(value: object) -> tuple[str, ...]:
    """Return the name expressions as a tuple of non-empty str."""
    allowed = "name_expressions must be a sequence of str, such as ['scale<float, 4>']"
    if isinstance(value, str):
        raise TypeError(f"{allowed}, not a single str ({value!r})")
    if not isinstance(value, Iterable):
        raise TypeError(f"{allowed}, got {value!r}")
    expressions = tuple(value)
    for index, expression in enumerate(expressions):
        if not isinstance(expression, str) or not expression:
            raise TypeError(
                f"name_expressions[{index}] must be a non-empty str, got {expression!r}"
            )
        text(expression, f"name_expressions[{index}]")
    return expressions
