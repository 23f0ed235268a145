"""Compile options and target architectures, validated before NVRTC sees them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_STANDARDS = ("c++11", "c++14", "c++17", "c++20")
# sm_90, sm_90a (arch-specific), sm_100f (family-specific).
_ARCH = re.compile(r"^sm_(?P<number>\d{2,3})(?P<suffix>[af]?)$")
# The first SM of each suffix: architecture-specific targets came with sm_90, family-specific
# ones with sm_100 (NVRTC's own error for sm_89a names only its --nv_arch flag).
_FIRST_WITH_SUFFIX = {"a": 90, "f": 100}
_KEYED = " (the cache key covers the files under include_dirs and in-memory headers only)"
# Flags spio-jit sets itself from compile()'s arguments; extra_flags must not repeat them:
# (flag, what to use instead, why).
_MANAGED_FLAGS = (
    ("-arch", "arch=", ""),
    ("--gpu-architecture", "arch=", ""),
    ("-std", "CompileOptions.std", ""),
    ("--std", "CompileOptions.std", ""),
    ("--maxrregcount", "CompileOptions.max_registers", ""),
    ("-maxrregcount", "CompileOptions.max_registers", ""),
    ("--include-path", "include_dirs=[...]", _KEYED),
    ("-I", "include_dirs=[...]", _KEYED),
    ("--pre-include", "headers={name: text} and an #include in the source", _KEYED),
    ("-include", "headers={name: text} and an #include in the source", _KEYED),
)
# NVRTC takes these joined to their value too ("-I/opt/include").
_JOINED_FLAGS = ("-I",)
# Flags after which NVRTC makes no loadable cubin or PTX, and why.
_REFUSED_FLAGS = (
    ("-dlto", "it makes LTO IR for a link step, which spio-jit does not have"),
    ("--dlink-time-opt", "it makes LTO IR for a link step, which spio-jit does not have"),
    ("-fdevice-syntax-only", "it only checks the syntax and makes no kernels"),
    ("--fdevice-syntax-only", "it only checks the syntax and makes no kernels"),
)


@dataclass(frozen=True)
class CompileOptions:
    """How NVRTC compiles a program; frozen, so it can be part of a cache key.

    Attributes:
        std: the C++ standard: "c++11", "c++14", "c++17" or "c++20".
        lineinfo: emit line information for profilers (-lineinfo).
        debug: emit device debug information and disable optimization (-G).
        max_registers: cap on registers per thread (--maxrregcount), or None for no cap.
        extra_flags: further NVRTC flags, passed verbatim after the others
            (e.g. ("--use_fast_math", "-Xptxas=-v")). Refused: flags that compile()'s
            arguments set (the architecture, the standard, include paths) and flags after
            which NVRTC makes no loadable code (-dlto, --fdevice-syntax-only).
    """

    std: str = "c++17"
    lineinfo: bool = False
    debug: bool = False
    max_registers: int | None = None
    extra_flags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.std not in _STANDARDS:
            raise ValueError(f"std={self.std!r} is not one of {', '.join(_STANDARDS)}")
        for name in ("lineinfo", "debug"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        registers = self.max_registers
        allowed = f"max_registers must be None or an int in 1..255, got {registers!r}"
        if isinstance(registers, bool) or not isinstance(registers, int | None):
            raise TypeError(allowed)
        if registers is not None and not 1 <= registers <= 255:
            raise ValueError(allowed)
        flags = self.extra_flags
        # A sequence, since the flags' order is part of the cache key: a set's order changes
        # from process to process with str hashing, a generator would be used up here.
        if (
            not isinstance(flags, Sequence)
            or isinstance(flags, str)
            or not all(isinstance(f, str) for f in flags)
        ):
            raise TypeError(f"extra_flags must be a sequence of str, got {flags!r}")
        # Lists are accepted for convenience and stored as a tuple to keep options hashable.
        object.__setattr__(self, "extra_flags", tuple(flags))
        for flag in self.extra_flags:
            for managed, instead, why in _MANAGED_FLAGS:
                if _sets(flag, managed):
                    raise ValueError(f"extra_flags sets {flag!r}; use {instead} instead{why}")
            for refused, why in _REFUSED_FLAGS:
                if _sets(flag, refused):
                    raise ValueError(f"extra_flags has {flag!r}, which spio-jit cannot use: {why}")

    def nvrtc_flags(self) -> tuple[str, ...]:
        """Return these options as NVRTC command-line flags (without the architecture)."""
        flags = [f"--std={self.std}"]
        if self.lineinfo:
            flags.append("-lineinfo")
        if self.debug:
            flags.append("-G")
        if self.max_registers is not None:
            flags.append(f"--maxrregcount={self.max_registers}")
        flags.extend(self.extra_flags)
        return tuple(flags)


def _sets(flag: str, option: str) -> bool:
    """Return True when flag is option, alone or with its value."""
    if option in _JOINED_FLAGS:
        return flag.startswith(option)
    return flag == option or flag.startswith((option + "=", option + " "))


def parse_arch(arch: str) -> tuple[int, str]:
    """Return (SM number, suffix) of "sm_90" / "sm_90a" / "sm_100f"; raise ValueError otherwise."""
    if not isinstance(arch, str):
        raise TypeError(f"arch must be a str like 'sm_90', got {arch!r}")
    match = _ARCH.match(arch.strip())
    if match is None:
        raise ValueError(
            f"arch={arch!r} is not a GPU architecture; use 'sm_<major><minor>' such as 'sm_80', "
            "'sm_90' or 'sm_90a' (a cubin is always built for one exact architecture)"
        )
    number, suffix = int(match["number"]), match["suffix"]
    first = _FIRST_WITH_SUFFIX.get(suffix)
    if first is not None and number < first:
        kind = "architecture-specific" if suffix == "a" else "family-specific"
        raise ValueError(
            f"arch={arch!r} does not exist: {kind} targets ('{suffix}') start at sm_{first}; "
            f"use 'sm_{number}'"
        )
    return number, suffix


def check_arch(arch: str, supported: Sequence[int], nvrtc_version: str) -> str:
    """Return arch normalized, or raise ValueError if this NVRTC cannot target it."""
    number, suffix = parse_arch(arch)
    if supported and number not in supported:
        listed = ", ".join(f"sm_{n}" for n in supported)
        raise ValueError(
            f"arch={arch!r} is not supported by NVRTC {nvrtc_version}; it supports {listed}"
        )
    return f"sm_{number}{suffix}"


def arch_of(major: int, minor: int) -> str:
    """Return the architecture name of a compute capability, e.g. (9, 0) -> "sm_90"."""
    return f"sm_{major}{minor}"
