"""A short digest of everything that decides what the conv2d_gw8 kernels compile to.

Timings belong to one version of the kernels: a latency model trained on rows timed with an
older kernel source, tiling spec or spio-dims header would learn a kernel that no longer
exists. The config-times CSVs carry this digest per row (`write_config_times`), and
spio-perfmodel keeps rows of different digests apart. The package version does not serve:
it changes at releases, the kernels change between them.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from pathlib import Path

#: Files of this folder that shape the compiled kernels: the device sources and the
#: generator specs (layouts, constants). The heuristics choose among configs and do not.
_KERNEL_SUFFIXES = (".cu", ".cuh")
_SPEC_MODULES = ("fprop_spec.py", "dgrad_spec.py", "wgrad_spec.py", "_tiling.py", "params.py")
DIGEST_LENGTH = 12


@functools.cache
def sources_digest() -> str:
    """The first DIGEST_LENGTH hex digits of the SHA-256 of the kernels' sources, their specs
    and spio-dims' headers and generator (file names and contents, in sorted order)."""
    import spio.dims

    here = Path(str(resources.files(__package__)))
    files = sorted(p for p in here.iterdir() if p.suffix in _KERNEL_SUFFIXES)
    files += [here / name for name in _SPEC_MODULES]
    include = Path(spio.dims.include_dir())
    files += sorted(p for p in include.rglob("*") if p.is_file())
    generator = Path(spio.dims.__file__).parent
    files += sorted(generator.glob("*.py"))
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:DIGEST_LENGTH]
