"""Hash what a sample of every conv2d_gw8 pass's configs compiles to and launches with, so
that two versions of the sources can be compared before relabelling their timings.

    git worktree add /tmp/old OLD_REV
    PYTHONPATH=$(ls -d /tmp/old/packages/*/src | tr '\\n' :) \\
        uv run python tools/conv_cubins_check.py > old.json
    uv run python tools/conv_cubins_check.py > new.json
    python tools/conv_cubins_check.py --compare old.json new.json

Each run compiles (NVRTC, sm_90, no cache: no GPU needed) 13 configs of each pass on three
layers (an L2-resident one, an odd-sized bf16 one with a bias, asymmetric padding and a 5 x 3
filter, and a 14 x 14 one): the pass's default and 12 spread over its space, and for wgrad
each of those also as the launcher places tiles (PLACED_FLAGS, producer warps, segments,
each with and without its padding rows left out), the code that launched rows were timed
with. It prints, per pass, each config's cubin SHA-256, the SHA-256 of the code in it
(code_digest) and its launch geometry, with the sources digests. --compare prints how many
are identical; where every config's code and geometry are, the change leaves the kernels as
they run, and `tools/relabel_timings.py` may move the timings and models to the new
digests (CONTRIBUTING, "Changing a kernel"). With --unless-defining MACRO, --compare checks
instead that exactly the configs whose new types header defines MACRO changed (the rows
`relabel_timings.py --unless-defining MACRO` leaves on the old digest). The whole cubin
also names the source's constants and template instances, so moving code between
functions changes it while the code stays the same.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

#: Conv2dGw8Params.make keyword arguments of the sampled layers.
LAYERS: tuple[dict[str, Any], ...] = (
    {"n": 32, "c": 64, "h": 64, "w": 64},
    {
        "n": 8, "c": 128, "h": 17, "w": 13, "r": 5, "s": 3, "padding": (2, 1),
        "dtype": "bfloat16", "has_bias": True,
    },
    {"n": 64, "c": 256, "h": 14, "w": 14},
)  # fmt: skip
SAMPLE = 12
PASSES = ("fprop", "dgrad", "wgrad")
#: The placement flags the wgrad launcher gives a tile (wgrad.improved_config_on; producer
#: warps only to tiles with TMA rows), which the config spaces never hold: launched rows were
#: timed with them, so each sampled wgrad tile is also hashed with them, and walking segments
#: of the stream of rows for SEGMENT_SLOTS blocks at once (wgrad_spec.stream_config), as
#: wgrad._balanced_walk places some tiles.
PLACED_FLAGS = ("padded_slabs", "lane_registers", "discard_partials")
SEGMENT_SLOTS = 264


#: The cubin sections of what the GPU runs: each kernel's machine code, its attributes
#: (registers, parameters, barriers) and its relocations (by symbol name), and its static
#: shared memory.
CODE_SECTIONS = (".text.", ".nv.info.", ".rel.text.", ".rela.text.", ".nv.shared.")


def code_digest(cubin: bytes) -> str:
    """SHA-256 of a cubin's CODE_SECTIONS (an ELF64 file), by name, in name order, with
    each relocation's symbol index replaced by the symbol's name; not of its symbol table,
    which also lists the source's unused constants. (A kernel's attributes name its constant
    bank by section index, so a change that adds a section, a global say, reads as new code.)"""
    shoff = int.from_bytes(cubin[0x28:0x30], "little")
    shentsize, shnum, shstrndx = (
        int.from_bytes(cubin[at : at + 2], "little") for at in (0x3A, 0x3C, 0x3E)
    )
    headers = []
    for index in range(shnum):
        at = shoff + index * shentsize
        name, kind = (int.from_bytes(cubin[at + k : at + k + 4], "little") for k in (0, 4))
        offset, size = (int.from_bytes(cubin[at + k : at + k + 8], "little") for k in (24, 32))
        link = int.from_bytes(cubin[at + 40 : at + 44], "little")
        headers.append((name, kind, offset, size, link))

    def text(table: int, at: int) -> str:
        start = headers[table][2] + at
        return cubin[start : cubin.index(b"\0", start)].decode()

    def symbol_names(symtab: int) -> list[str]:
        _, _, offset, size, strtab = headers[symtab]
        return [
            text(strtab, int.from_bytes(cubin[at : at + 4], "little"))
            for at in range(offset, offset + size, 24)
        ]

    sections = {}
    for name, kind, offset, size, link in headers:
        section = text(shstrndx, name)
        if not section.startswith(CODE_SECTIONS):
            continue
        body = cubin[offset : offset + size] if kind != 8 else size.to_bytes(8, "little")
        if section.startswith((".rel.", ".rela.")):
            names = symbol_names(link)
            entry = 16 if section.startswith(".rel.") else 24
            rows = []
            for at in range(0, size, entry):
                row = body[at : at + entry]
                info = int.from_bytes(row[8:16], "little")
                rows.append(row[:8] + (info & 0xFFFFFFFF).to_bytes(4, "little") + row[16:])
                rows.append(names[info >> 32].encode())
            body = b"".join(rows)
        sections[section] = body
    digest = hashlib.sha256()
    for section in sorted(sections):
        digest.update(section.encode() + len(sections[section]).to_bytes(8, "little"))
        digest.update(sections[section])
    return digest.hexdigest()


def _sample(space: list[Any]) -> list[Any]:
    step = max(1, len(space) // SAMPLE)
    return space[::step][:SAMPLE]


def _key(params: Any, config: Any) -> str:
    """params and the fields of config that differ from their defaults: a key that stays the
    same across versions of the config that add fields."""
    fields = ", ".join(
        f"{field.name}={getattr(config, field.name)!r}"
        for field in dataclasses.fields(config)
        if getattr(config, field.name) != field.default
    )
    return f"{params}|{type(config).__name__}({fields})"


def _placed(params: Any, tiles: list[Any]) -> list[Any]:
    """Each wgrad tile with PLACED_FLAGS (and producer warps where its rows come by TMA), and
    that walking segments, each also leaving out its padding rows, where check_config accepts
    them."""
    from spio.kernels.conv2d_gw8 import wgrad_spec
    from spio.kernels.conv2d_gw8._tiling import fits

    placed = []
    for tile in tiles:
        flags = {"producer": tile.tma, **dict.fromkeys(PLACED_FLAGS, True)}
        segmented = wgrad_spec.stream_config(params, tile, SEGMENT_SLOTS)
        for walk in (tile, segmented):
            config = dataclasses.replace(walk, **flags)
            # Also leaving out the padding rows (wgrad.pad_rows_config_on): its own code.
            for variant in (config, dataclasses.replace(config, skip_pad_rows=True)):
                if fits(wgrad_spec.check_config, params, variant):
                    placed.append(variant)
    return list(dict.fromkeys(placed))


def _defined_macros(types_h: str) -> list[str]:
    """The names of the macros a generated types header defines."""
    return sorted(line.split()[1] for line in types_h.splitlines() if line.startswith("#define "))


def hashes() -> dict[str, Any]:
    """{"digests": {pass: digest}, pass: {"layer|config": [cubin sha, code sha, geometry,
    the macros its types header defines]}}."""
    import spio.jit
    from spio.kernels.conv2d_gw8 import (
        Conv2dGw8Params,
        dgrad,
        dgrad_spec,
        fprop,
        fprop_spec,
        wgrad,
        wgrad_heuristic,
        wgrad_spec,
    )
    from spio.kernels.conv2d_gw8.sources_digest import sources_digest

    layers = [Conv2dGw8Params.make(**fields) for fields in LAYERS]
    out: dict[str, Any] = {"digests": {name: sources_digest(name) for name in PASSES}}
    for name, launcher, spec, default_config in (
        ("fprop", fprop, fprop_spec, fprop_spec.default_config),
        ("dgrad", dgrad, dgrad_spec, dgrad_spec.default_config),
        ("wgrad", wgrad, wgrad_spec, wgrad_heuristic.default_config),
    ):
        rows = {}
        for params in layers:
            tiles = [*_sample(spec.config_space(params)), default_config(params)]
            configs = [*tiles, *_placed(params, tiles)] if name == "wgrad" else tiles
            for config in configs:
                request = launcher.compile_request(params, config, "sm_90")
                code = spio.jit.compile(
                    request.source,
                    headers=request.headers,
                    include_dirs=request.include_dirs,
                    arch="sm_90",
                    name=request.name,
                    cache=False,
                )
                geometry = spec.launch_geometry(params, config)
                rows[_key(params, config)] = [
                    hashlib.sha256(code.cubin).hexdigest(),
                    code_digest(code.cubin),
                    str(geometry),
                    _defined_macros(request.headers["types.h"]),
                ]
        out[name] = rows
    return out


def compare(old_path: str, new_path: str, unless_defining: str | None = None) -> int:
    """Print per pass how many sampled configs compile to the same cubin, and how many to the
    same code with the same launch geometry; 0 when all of them do the latter. With
    unless_defining, 0 when exactly the configs whose (new) types header defines that macro
    differ: what `tools/relabel_timings.py --unless-defining` relabels around."""
    old, new = (json.loads(Path(path).read_text()) for path in (old_path, new_path))
    mismatched = 0
    for name in PASSES:
        pairs = [(row, new[name].get(key)) for key, row in old[name].items()]
        cubins = sum(b is not None and a[0] == b[0] for a, b in pairs)
        kept = [b is not None and a[1:3] == b[1:3] for a, b in pairs]
        print(
            f"{name}: {sum(kept)} of {len(pairs)} identical in code and launch geometry, "
            f"{cubins} in the whole cubin ({old['digests'][name]} -> {new['digests'][name]})"
        )
        if unless_defining is None:
            mismatched += kept.count(False)
            continue
        marked = [b is not None and unless_defining in b[3] for _, b in pairs]
        wrong = sum(same == mark for same, mark in zip(kept, marked, strict=True))
        mismatched += wrong
        print(
            f"  {sum(marked)} define {unless_defining}; {wrong} configs break the rule that "
            "exactly those changed"
        )
    return 0 if mismatched == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    parser.add_argument(
        "--unless-defining",
        metavar="MACRO",
        help="with --compare: expect exactly the configs whose types header defines MACRO to "
        "differ",
    )
    args = parser.parse_args()
    if args.compare:
        old, new = args.compare
        return compare(old, new, args.unless_defining)
    json.dump(hashes(), sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
