"""Each kernel's registers and stack frame, read from a cubin's ELF `.nv.info` section, as
the driver reports them once the cubin is loaded (no GPU needed).

ptxas records them as attributes of the section's entries: EIATTR_REGCOUNT and
EIATTR_FRAME_SIZE, each a 4-byte symbol index (the kernel) and a 4-byte value. The tools
that stand in for a GPU (tools/precompile_threads.py) take a kernel's occupancy from them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

_REGCOUNT = 0x2F
_FRAME_SIZE = 0x11
#: Entry formats: no value, a byte, a 2-byte value, or a sized value that follows.
_NVAL, _BVAL, _HVAL, _SVAL = 1, 2, 3, 4


@dataclass(frozen=True)
class KernelResources:
    """What ptxas gave one kernel: registers per thread, stack frame bytes per thread."""

    registers: int
    frame: int = 0


def _sections(elf: bytes) -> tuple[dict[str, tuple[int, ...]], list[tuple[int, ...]]]:
    """The ELF64 section headers, by name and in order."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        raise ValueError("not a 64-bit ELF file (a cubin)")
    (offset,) = struct.unpack_from("<Q", elf, 0x28)
    size, count, names_index = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, offset + i * size) for i in range(count)]
    names_offset = headers[names_index][4]
    return {_string(elf, names_offset + h[0]): h for h in headers}, headers


def _string(elf: bytes, start: int) -> str:
    return elf[start : elf.index(b"\0", start)].decode()


def kernel_resources(cubin: bytes) -> dict[str, KernelResources]:
    """Each kernel's KernelResources, by its (mangled) name."""
    named, headers = _sections(cubin)
    symbols = named[".symtab"]
    strings = headers[symbols[6]][4]  # (sh_link: the symbol table's string table)

    def symbol_name(index: int) -> str:
        (name,) = struct.unpack_from("<I", cubin, symbols[4] + index * symbols[9])
        return _string(cubin, strings + name)

    values: dict[str, dict[int, int]] = {}
    info = named[".nv.info"]
    position, end = info[4], info[4] + info[5]
    while position < end:
        form, attribute = cubin[position], cubin[position + 1]
        if form == _SVAL:
            (size,) = struct.unpack_from("<H", cubin, position + 2)
            if attribute in (_REGCOUNT, _FRAME_SIZE) and size == 8:
                index, value = struct.unpack_from("<II", cubin, position + 4)
                values.setdefault(symbol_name(index), {})[attribute] = value
            position += 4 + size
        else:
            position += 2 if form == _NVAL else 4
    return {
        name: KernelResources(found[_REGCOUNT], found.get(_FRAME_SIZE, 0))
        for name, found in values.items()
        if _REGCOUNT in found
    }
