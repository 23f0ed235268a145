"""The one definition of Spio's GPU tier, shared by `nox -s gpu` and tools/gpu-tests.sh.

Run as a script it runs the tier with pytest and writes a log and JUnit XML into --out.
It needs only the standard library and pytest, so it runs in any environment where the
workspace packages are installed (a nox session, or the GPU machine's preinstalled Python).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Every package's tests and the cross-package flows; the `gpu` marker selects the tier, less
# the tests also marked `slow` (every config of every pass on the shape set, about 9400
# kernels) unless --slow asks for them.
TEST_PATHS = (
    "packages/spio-dims/tests",
    "packages/spio-jit/tests",
    "packages/spio-kernels/tests",
    "packages/spio-perfmodel/tests",
    "packages/spio-torch/tests",
    "tests/integration",
)
MARKER = "gpu and not slow"
SLOW_MARKER = "gpu"


def no_gpu_reason() -> str | None:
    """Return why this machine cannot run the GPU tier, or None when it can."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "nvidia-smi not found (no NVIDIA driver)"
    try:
        listing = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"nvidia-smi failed: {error}"
    if listing.returncode != 0 or "GPU" not in listing.stdout:
        return f"nvidia-smi lists no GPU ({listing.stderr.strip() or listing.stdout.strip()})"
    return None


def pytest_args(out_dir: Path, slow: bool = False) -> list[str]:
    """Return the pytest command line of the GPU tier, writing JUnit XML into out_dir (slow:
    with the slow GPU tests)."""
    paths = [path for path in TEST_PATHS if (ROOT / path).is_dir()]
    return [
        *paths,
        "-m",
        SLOW_MARKER if slow else MARKER,
        "-p",
        "no:cacheprovider",
        f"--junitxml={out_dir / 'gpu-tier.xml'}",
        "-v",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "gpu-out", help="log + JUnit dir")
    parser.add_argument(
        "--slow", action="store_true", help="also run the slow GPU tests (every config)"
    )
    # Everything else (-x, -k EXPR, a test path) goes to pytest unchanged.
    args, pytest_extra = parser.parse_known_args(argv)
    reason = no_gpu_reason()
    if reason is not None:
        print(f"GPU tier skipped: {reason}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pytest", *pytest_args(args.out, args.slow), *pytest_extra]
    print("+", " ".join(command), flush=True)
    with (args.out / "gpu-tier.log").open("w") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if process.stdout is None:
            raise RuntimeError("pytest's output pipe did not open")
        for line in process.stdout:
            sys.stdout.write(line)
            log.write(line)
        return process.wait()


if __name__ == "__main__":
    sys.exit(main())
