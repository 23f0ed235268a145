"""Check the built distributions as a user receives them (nox's `wheels` session).

    python tools/wheel_check.py contents DIST     # what each wheel and sdist in DIST holds
    python tools/wheel_check.py installed         # the installed wheels work together

`contents` reads the wheels and sdists `uv build --all-packages` wrote: each ships its
licence, a py.typed marker for every package it installs, the data its code reads (headers,
kernel sources, shipped models), no tests or bytecode, and requires the other spio
distributions within bounds. `installed` runs in an environment where the wheels are
installed as pip installs them (not editable), from a directory outside the checkout: the
generator writes a header, NVRTC compiles a kernel that includes it, and every shipped
latency model describes the kernels the installed spio-kernels compiles (its sources
digest), so that choose_config will use it. Every check that fails is printed; the exit
status is 1 if any did.
"""

from __future__ import annotations

import argparse
import re
import sys
import tarfile
import zipfile
from collections.abc import Callable
from email.parser import Parser
from pathlib import Path

#: The distributions of the workspace and the import packages each installs.
PACKAGES: dict[str, tuple[str, ...]] = {
    "spio-dims": ("spio/dims",),
    "spio-jit": ("spio/jit",),
    "spio-kernels": ("spio/kernels",),
    "spio-perfmodel": ("spio/perfmodel",),
    "spio-torch": ("spio/torch", "spio/functional"),
}

#: Files each wheel must hold: what its code reads at run time.
DATA: dict[str, tuple[str, ...]] = {
    "spio-dims": ("spio/dims/include/spio/spio.h", "spio/dims/include/spio/arch/mma.cuh"),
    "spio-kernels": (
        "spio/kernels/conv2d_gw8/conv2d_gw8_fprop.cu",
        "spio/kernels/conv2d_gw8/conv2d_gw8_wgrad.cu",
    ),
    "spio-perfmodel": (
        "spio/perfmodel/models/nvidia_h200/fprop.ubj",
        "spio/perfmodel/models/nvidia_h100_80gb_hbm3/wgrad.ubj",
    ),
    "spio-torch": ("spio/torch/_demo_transpose.cu",),
}

#: A requirement on another spio distribution: its name, then a version specifier with an
#: upper bound (0.x releases may break their dependents).
BOUNDED = re.compile(r"^(spio-[a-z]+)(\[[a-z0-9,]+\])?\s*(\S*<[^;]*)")


def _built(dist: Path, name: str, suffix: str) -> Path:
    """The one file of distribution name in dist that ends in suffix (.whl or .tar.gz)."""
    matches = sorted(dist.glob(f"{name.replace('-', '_')}-*{suffix}"))
    if len(matches) != 1:
        raise SystemExit(f"expected one {suffix} of {name} in {dist}, found {len(matches)}")
    return matches[0]


def wheel_problems(name: str, wheel: Path) -> list[str]:
    """What is wrong with the wheel of distribution name, in words (empty: nothing)."""
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
        metadata_name = next(f for f in files if f.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(metadata_name).decode("utf-8"))
    problems = []
    if not any(re.search(r"\.dist-info/licenses/LICENSE$", f) for f in files):
        problems.append("no LICENSE in .dist-info/licenses")
    for package in PACKAGES[name]:
        if f"{package}/py.typed" not in files:
            problems.append(f"no {package}/py.typed")
    problems += [f"missing {path}" for path in DATA.get(name, ()) if path not in files]
    problems += [
        f"ships {f}"
        for f in sorted(files)
        if "/tests/" in f or f.startswith("tests/") or "__pycache__" in f or f.endswith(".pyc")
    ]
    for requirement in metadata.get_all("Requires-Dist") or []:
        if requirement.startswith("spio-") and not BOUNDED.match(requirement):
            problems.append(f"requires {requirement!r} without an upper bound")
    if not metadata.get_all("Project-URL"):
        problems.append("no Project-URL")
    return problems


def sdist_problems(sdist: Path) -> list[str]:
    """What is wrong with an sdist, in words: it must carry its licence."""
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    return [] if any(n.endswith("/LICENSE") for n in names) else ["no LICENSE"]


def check_contents(dist: Path) -> list[str]:
    """Every problem of the wheels and sdists in dist, each prefixed with its file's name."""
    problems = []
    for name in PACKAGES:
        wheel, sdist = _built(dist, name, ".whl"), _built(dist, name, ".tar.gz")
        problems += [f"{wheel.name}: {p}" for p in wheel_problems(name, wheel)]
        problems += [f"{sdist.name}: {p}" for p in sdist_problems(sdist)]
    return problems


def _installed_not_editable() -> list[str]:
    import spio.kernels

    location = Path(spio.kernels.__file__).resolve()
    if "site-packages" not in location.parts:
        return [f"spio.kernels is imported from {location}, not an installed wheel"]
    return []


def _generator_and_nvrtc() -> list[str]:
    import spio.dims
    import spio.jit

    header = spio.dims.generate(
        [spio.dims.Tensor("A", spio.dims.dtype.float, spio.dims.Dims(i=4, j=8))]
    )
    source = '#include "types.h"\nextern "C" __global__ void k(float* a) { a[threadIdx.x] = 0; }\n'
    code = spio.jit.compile(
        source,
        arch="sm_90",
        headers={"types.h": header},
        include_dirs=[spio.dims.include_dir()],
        cache=False,
    )
    return [] if code.code else ["NVRTC compiled an empty cubin"]


def _models_fit_the_kernels() -> list[str]:
    from spio.kernels.conv2d_gw8.sources_digest import sources_digest
    from spio.perfmodel import shipped_models

    problems = []
    models = shipped_models()
    if not models:
        return ["no shipped latency models"]
    for model in models:
        digest = sources_digest(model.pass_name)
        if model.kernel != digest:
            problems.append(
                f"the shipped {model.pass_name} model for {model.gpu} timed kernels "
                f"{model.kernel}; the installed ones are {digest}: choose_config would not use it"
            )
    return problems


#: The checks of `installed`, each returning its problems.
INSTALLED_CHECKS: tuple[Callable[[], list[str]], ...] = (
    _installed_not_editable,
    _generator_and_nvrtc,
    _models_fit_the_kernels,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    contents = commands.add_parser("contents", help="check the wheels and sdists in DIST")
    contents.add_argument("dist", type=Path)
    commands.add_parser("installed", help="check the installed wheels work together")
    args = parser.parse_args(argv)
    if args.command == "contents":
        problems = check_contents(args.dist)
    else:
        problems = [p for check in INSTALLED_CHECKS for p in check()]
    for problem in problems:
        print(f"wheel_check: {problem}", file=sys.stderr)
    if not problems:
        print(f"wheel_check {args.command}: every check passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
