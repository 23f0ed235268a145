"""A short digest, per pass, of everything that decides what a conv2d_gw8 pass compiles to
and launches.

Timings belong to one version of a pass's kernels: a latency model trained on rows timed
with an older kernel source, tiling spec or spio-dims header would learn a kernel that no
longer exists. The config-times CSVs carry this digest per row (`write_config_times`), and
spio-perfmodel keeps rows of different digests apart. The package version does not serve:
it changes at releases, the kernels change between them.

The digest is per pass so that a change to one pass (wgrad's reduction, say) leaves the
other passes' timings and models valid: only that pass needs new campaigns.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from pathlib import Path

#: Files of this folder every pass compiles from or launches with: the rings' layout, the
#: tiling helpers, the layer params, and fprop.py (the compile requests and launch plumbing
#: the other passes import).
SHARED_FILES = ("conv2d_gw8_ring.cuh", "_tiling.py", "params.py", "fprop.py")

#: Each pass's own files: its device source, its generator spec (layouts, constants, the
#: config space; wgrad's types header in a file of its own) and its launcher (launch
#: geometry, which kernels run). dgrad is fprop's kernel on flipped weights, so fprop's
#: source and spec shape it too. wgrad's heuristic (wgrad_heuristic.py, wgrad_pointwise.py
#: and wgrad_pixel_groups.py for 1 x 1 filters, and wgrad_tma_tile.py for GPUs with TMA) and
#: fprop and dgrad's one-wave, ring-depth, segments, pixel-groups and 1 x 1 walk rules
#: (one_wave.py, ring_depth.py, fprop_segments.py, fprop_pixel_groups.py,
#: fprop_pointwise.py) are left out: they decide which
#: config runs, not what a config compiles to. So is pass_params.py, which names the layer
#: dgrad_spec turns around for fprop's kernel.
PASS_FILES: dict[str, tuple[str, ...]] = {
    "fprop": ("conv2d_gw8_fprop.cu", "fprop_spec.py"),
    "dgrad": ("conv2d_gw8_fprop.cu", "fprop_spec.py", "dgrad_spec.py", "dgrad.py"),
    "wgrad": (
        "conv2d_gw8_wgrad.cu",
        "conv2d_gw8_wgrad_copies.cuh",
        "conv2d_gw8_wgrad_reduce.cuh",
        "conv2d_gw8_wgrad_segments.cuh",
        "conv2d_gw8_wgrad_shape.cuh",
        "conv2d_gw8_wgrad_sums.cuh",
        "conv2d_gw8_wgrad_warps.cuh",
        "wgrad_spec.py",
        "wgrad_types.py",
        "wgrad.py",
        "_tensor_maps.py",
    ),
}
DIGEST_LENGTH = 12

#: spio-dims' modules that cannot change a generated header: its command line, its version,
#: its error classes and the parser of `@spio` blocks in source files (the kernels build their
#: specs in Python). Left out so that a release of spio-dims that touches only these leaves the
#: shipped latency models in use.
GENERATOR_FILES_LEFT_OUT = frozenset(
    {"__init__.py", "_cli.py", "_errors.py", "_parse.py", "_version.py"}
)


def pass_files(pass_name: str) -> list[Path]:
    """The files of this folder that decide what pass_name compiles to and launches."""
    if pass_name not in PASS_FILES:
        raise ValueError(f"pass_name must be one of {sorted(PASS_FILES)}, got {pass_name!r}")
    here = Path(str(resources.files(__package__)))
    return [here / name for name in sorted({*SHARED_FILES, *PASS_FILES[pass_name]})]


@functools.cache
def sources_digest(pass_name: str) -> str:
    """The first DIGEST_LENGTH hex digits of the SHA-256 of pass_name's files (pass_files)
    and spio-dims' headers and generator modules (but GENERATOR_FILES_LEFT_OUT; file names
    and contents, in sorted order). ValueError for a pass_name other than fprop, dgrad and
    wgrad."""
    import spio.dims

    files = pass_files(pass_name)
    include = Path(spio.dims.include_dir())
    files += sorted(p for p in include.rglob("*") if p.is_file())
    generator = Path(spio.dims.__file__).parent
    files += sorted(p for p in generator.glob("*.py") if p.name not in GENERATOR_FILES_LEFT_OUT)
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:DIGEST_LENGTH]
