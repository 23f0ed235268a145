"""Test, lint and docs sessions of the Spio workspace.

`nox` runs every session that needs no GPU; `nox -s gpu` runs the GPU tier. Each session
installs exactly what it tests with `uv sync --locked --package ...` into its own
environment, so a session proves that its package works with the dependencies it declares
(`session.install` cannot resolve workspace sources, `uv sync` can).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT / "tools"))

import gpu_tier  # noqa: E402  (tools/ is not a package; the GPU runner shares it)

nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = [
    "dims",
    "jit",
    "cu12",
    "nvrtc_floor",
    "kernels",
    "perfmodel",
    "torch",
    "integration",
    "wheels",
    "lint",
    "docs",
]

# The default tier: everything that needs no GPU and is not a long sweep.
DEFAULT_TIER = "not gpu and not slow"
PYTEST_EXIT_NO_TESTS = 5


def _sync(
    session: nox.Session,
    *,
    package: str | None = None,
    extras: tuple[str, ...] = (),
    groups: tuple[str, ...] = (),
    all_packages: bool = False,
) -> None:
    """Install workspace members and dependency groups from uv.lock into the session."""
    args = ["uv", "sync", "--locked", "--no-default-groups"]
    if package is not None:
        args += ["--package", package]
    if all_packages:
        args.append("--all-packages")
    args += [f"--extra={extra}" for extra in extras]
    # Without a package, a group is all the session needs (lint tools, docs tools):
    # --only-group keeps the workspace members and their heavy dependencies out.
    group_flag = "--group" if package is not None or all_packages else "--only-group"
    args += [f"{group_flag}={group}" for group in groups]
    session.run_install(
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
        external=True,
    )


def _add_without_deps(session: nox.Session, *requirements: str) -> None:
    """Install requirements (pip's syntax, `-e PATH` included) into the session's environment
    as they are, without their dependencies: what a test group's pins would clash with."""
    session.run_install(
        "uv",
        "pip",
        "install",
        "--python",
        session.virtualenv.location,
        "--no-deps",
        *requirements,
        external=True,
    )


def _pytest(
    session: nox.Session, *paths: str, marker: str = DEFAULT_TIER, keyword: str | None = None
) -> None:
    """Run pytest on `paths` (only the tests whose names match `keyword`, where given); a
    tier that collects no test fails rather than passing empty.

    pytest exits 5 when nothing was collected. Treating that as success would let a broken
    test path or an over-eager marker turn a session green while testing nothing.
    """
    code = session.run(
        "python",
        "-m",
        "pytest",
        *paths,
        "-m",
        marker,
        *(["-k", keyword] if keyword else []),
        *session.posargs,
        success_codes=[0, PYTEST_EXIT_NO_TESTS],
    )
    if code == PYTEST_EXIT_NO_TESTS:
        session.error(f"pytest collected no tests in {', '.join(paths)} for -m '{marker}'")


def _package_session(name: str, *, extras: tuple[str, ...] = ()) -> None:
    @nox.session(name=name)
    def session(session: nox.Session) -> None:
        package = f"spio-{name}"
        _sync(session, package=package, extras=extras, groups=("test",))
        _pytest(session, f"packages/{package}/tests")

    session.__doc__ = f"Run the default (no-GPU) tests of spio-{name}."


for _name in ("dims", "kernels", "perfmodel", "torch"):
    _package_session(_name)
_package_session("jit", extras=("cu13",))


#: The oldest NVRTC of each CUDA major that spio-jit's extras allow (its pyproject's floors:
#: nvidia-cuda-nvrtc >= 13.0, nvidia-cuda-nvrtc-cu12 >= 12.4), by its last patch release. The
#: other sessions get the newest from uv.lock, and a construct the newest NVRTC takes and the
#: oldest refuses would pass them: a generic lambda in wgrad's kernel did, and NVRTC 13.0,
#: the one torch's cu130 wheels pin, could compile no wgrad config.
NVRTC_FLOORS = {"13": "nvidia-cuda-nvrtc~=13.0.0", "12": "nvidia-cuda-nvrtc-cu12~=12.4.0"}


@nox.session
def cu12(session: nox.Session) -> None:
    """Prove the CUDA 12 stack: spio-jit and the spio-dims headers compile with NVRTC 12."""
    _sync(session, package="spio-jit", extras=("cu12",), groups=("test",))
    # spio-dims has no dependencies; its test group pins the CUDA 13 stack, so add the
    # package alone to this CUDA 12 environment.
    _add_without_deps(session, "-e", "packages/spio-dims")
    # spio-dims' tests call cuda.bindings directly, so they run while NVRTC 12 is the only one.
    _pytest(session, "packages/spio-dims/tests/nvrtc", "packages/spio-dims/tests/zero_cost")
    # Then CUDA 13's NVRTC goes in beside it, as another package's CUDA 13 wheels (such as
    # cupy-cuda13x[ctk]) put it beside spio-jit[cu12]: cuda.pathfinder alone would hand
    # cuda-bindings 12 that one, so spio-jit loads NVRTC 12 first, and tests/test_stack.py
    # fails unless NVRTC 12 was loaded.
    _add_without_deps(session, NVRTC_FLOORS["13"])
    session.env["SPIO_JIT_TEST_EXPECT_CUDA_MAJOR"] = "12"
    _pytest(session, "packages/spio-jit/tests")


@nox.session
@nox.parametrize("major", sorted(NVRTC_FLOORS))
def nvrtc_floor(session: nox.Session, major: str) -> None:
    """Compile spio-kernels' passes (each for every target architecture, and each pass's
    config-covering cases) with the oldest NVRTC of each supported CUDA major."""
    _sync(session, package="spio-jit", extras=(f"cu{major}",), groups=("test",))
    _add_without_deps(
        session, "-e", "packages/spio-dims", "-e", "packages/spio-kernels", NVRTC_FLOORS[major]
    )
    session.env["SPIO_JIT_TEST_EXPECT_CUDA_MAJOR"] = major
    _pytest(
        session,
        "packages/spio-jit/tests/test_stack.py",
        "packages/spio-kernels/tests/conv2d_gw8/test_arch_compiles.py",
    )
    # The compile cases that cover every value of every config field of each pass.
    kernels_tests = "packages/spio-kernels/tests/conv2d_gw8"
    _pytest(
        session,
        *(f"{kernels_tests}/test_{name}_spec.py" for name in ("fprop", "dgrad", "wgrad")),
        keyword="test_nvrtc_compiles",
    )


@nox.session
def integration(session: nox.Session) -> None:
    """Run the cross-package flows in tests/integration against the whole workspace."""
    _sync(session, all_packages=True, extras=("cu13",), groups=("test",))
    _pytest(session, "tests/integration")


@nox.session
def lint(session: nox.Session) -> None:
    """Check Python style and types, C++ formatting and the one-way package layering."""
    _sync(session, groups=("lint",))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    cpp_sources = sorted(
        str(path.relative_to(ROOT))
        for suffix in ("*.h", "*.cuh", "*.cu", "*.cpp")
        for path in ROOT.glob(f"packages/*/**/{suffix}")
        if ".venv" not in path.parts
    )
    if cpp_sources:
        session.run("clang-format", "--dry-run", "-Werror", *cpp_sources)
    session.run("python", "tools/check_layering.py")
    session.run("mypy", *sorted(str(p) for p in ROOT.glob("packages/*/src/spio")), "tools")


@nox.session
def wheels(session: nox.Session) -> None:
    """Build every distribution, check what each wheel and sdist holds, then install the
    wheels as pip would (not editable, third-party versions from uv.lock) and check that they
    work together: a generated header compiles, and the shipped models fit the installed
    kernels. spio-torch is built and checked but not installed (torch alone is gigabytes)."""
    dist = Path(session.create_tmp()).resolve() / "dist"
    shutil.rmtree(dist, ignore_errors=True)  # an earlier run's wheels of another version
    session.run("uv", "build", "--all-packages", "--out-dir", str(dist), "--quiet", external=True)
    session.run("python", str(ROOT / "tools" / "wheel_check.py"), "contents", str(dist))
    constraints = dist / "constraints.txt"
    session.run(
        "uv", "export", "--frozen", "--all-packages", "--extra", "cu13", "--no-dev", "--no-hashes",
        "--no-emit-workspace", "--quiet", "--output-file", str(constraints), external=True,
    )  # fmt: skip
    # The wheels by file, so that nothing of the same name on an index stands in for them.
    wheels = {name: next(dist.glob(f"{name}-*.whl")) for name in ("spio_dims", "spio_jit",
              "spio_kernels", "spio_perfmodel")}  # fmt: skip
    session.install(
        "--constraint", str(constraints),
        str(wheels["spio_dims"]), f"spio-jit[cu13] @ {wheels['spio_jit'].as_uri()}",
        str(wheels["spio_kernels"]), str(wheels["spio_perfmodel"]),
    )  # fmt: skip
    # From outside the checkout, so that nothing imports from its sources.
    session.chdir(dist)
    session.run("python", str(ROOT / "tools" / "wheel_check.py"), "installed")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site with warnings as errors."""
    _sync(session, groups=("docs",))
    session.env["NO_MKDOCS_2_WARNING"] = "1"  # a banner about mkdocs' future, not our docs
    session.run("mkdocs", "build", "--strict", "--site-dir", str(ROOT / "site"))


@nox.session
def gpu(session: nox.Session) -> None:
    """Run the GPU tier (tools/gpu_tier.py); on a machine without a GPU, say so and skip."""
    reason = gpu_tier.no_gpu_reason()
    if reason is not None:
        session.skip(f"no GPU tier here: {reason}")
    _sync(session, all_packages=True, extras=("cu13",), groups=("test",))
    out_dir = os.environ.get("SPIO_GPU_OUT", str(ROOT / "gpu-out"))
    session.run("python", "tools/gpu_tier.py", "--out", out_dir, *session.posargs)
