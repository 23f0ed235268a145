"""The one definition of Spio's GPU tier, shared by `nox -s gpu` and tools/gpu-tests.sh.

Run as a script it runs the tier with pytest and writes a log and JUnit XML into --out.
It needs only the standard library and pytest, so it runs in any environment where the
workspace packages are installed (a nox session, or the GPU machine's preinstalled Python).
--shard I/N runs the I-th of N consecutive parts of the tier's tests, of about equal run
time, for machines that limit how long one command may run (the GPU test machine: 10
minutes, where the whole tier takes about 33 on an H100). --jobs J runs the selected tests
in parts of about equal run time, J pytest processes at a time, each part with its own log
and JUnit XML: the tier's time is mostly NVRTC compiles on the CPU, which one process leaves
to a few cores of the GPU machine's 16. --select PATTERN keeps only the tests whose node ID
contains PATTERN (repeatable: any of them). Tests marked `gpu_alone` (they take the device's
memory, so another process's allocations would change what they see) run after the parts,
in a process of their own with nothing else on the GPU.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
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
#: The marker of tests that --jobs runs alone, after the parts.
ALONE_MARKER = "gpu_alone"


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


def tier_paths() -> list[str]:
    """The tier's test folders that exist here."""
    return [path for path in TEST_PATHS if (ROOT / path).is_dir()]


def marker_args(slow: bool) -> list[str]:
    """pytest's marker selection of the tier (slow: with the slow GPU tests)."""
    return ["-m", SLOW_MARKER if slow else MARKER]


def pytest_args(
    out_dir: Path, slow: bool = False, tests: list[str] | None = None, name: str = "gpu-tier"
) -> list[str]:
    """Return the pytest command line of the GPU tier, writing JUnit XML `name`.xml into
    out_dir (slow: with the slow GPU tests; tests: these node IDs instead of the tier's
    folders)."""
    return [
        *(tests if tests is not None else tier_paths()),
        *marker_args(slow),
        "-p",
        "no:cacheprovider",
        f"--junitxml={out_dir / f'{name}.xml'}",
        "-v",
    ]


def parse_shard(text: str) -> tuple[int, int]:
    """--shard's I/N as (I, N), 1 <= I <= N; argparse's error names what it allows."""
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise argparse.ArgumentTypeError(f"--shard must be I/N with 1 <= I <= N, got {text!r}")
    return int(index), int(count)


#: Run time of a test of these files against a typical GPU test's (fprop's and dgrad's, about
#: 0.6 s on an H100), so that --shard's parts take about as long as one another; a file not
#: named weighs 1. From the JUnit times of the tier's runs on an H100 (twenty-seventh session,
#: `nvidia-h100-x1`): with only the sanitizer's tests weighted, the last part, which holds the
#: wgrad, module and perfmodel tests, ran 575 s of the GPU machine's 600 while the first took
#: 273. The sanitizer's tests, three tools on each case in a process of its own, take 6.8-8.2 s
#: each; wgrad's atomic-sums tests, not timed there, are taken to weigh as wgrad's.
TEST_WEIGHTS = {
    "test_sanitizer_gpu.py": 12.0,
    "test_wgrad_gpu.py": 1.5,
    "test_wgrad_atomic_gpu.py": 1.5,
    "test_conv2d_gw8_gpu.py": 5.5,
    "test_autotune_gpu.py": 6.0,
    "test_collect_gpu.py": 10.0,
    "test_compare_gpu.py": 6.5,
    "test_bench_step.py": 8.5,
    "test_bench_overhead.py": 7.5,
    # Thirtieth session: one test like bench_step's, timing two small blocks (H200, with the
    # linear and matmul tests: 219 in 57 s).
    "test_bench_block.py": 8.5,
    "test_arrays_gpu.py": 7.5,
    "test_bench_gpu.py": 4.5,
    "test_pdl_chain_gpu.py": 5.5,
    "test_fragment.py": 0.5,
    "test_gpu.py": 0.2,
    "test_arch.py": 0.2,
    "test_tma.py": 0.1,
    # Twenty-eighth session, H100: 116 tests in 7.7 s after their parallel compiles, and the
    # matmul's sanitizer runs, 6.0 s each.
    "test_matmul_gpu.py": 0.15,
    "test_matmul_sanitizer_gpu.py": 10.0,
    # Twenty-ninth session, H100: 11 tests in 33.5 s, each compiling its shapes' kernels.
    "test_linear_gpu.py": 3.0,
    # Seventy-fifth session, H200: the torch.func tests, 8 on CUDA in 31 s (the batched
    # layers' kernels compiled in each).
    "test_conv2d_gw8_func.py": 6.0,
    "test_linear_func.py": 6.0,
}


def run_weight(test: str) -> float:
    """The relative run time of test (a node ID): TEST_WEIGHTS' of its file, else 1."""
    file = test.split("::", 1)[0].rsplit("/", 1)[-1]
    return TEST_WEIGHTS.get(file, 1.0)


def shard(
    tests: list[str], index: int, count: int, weights: list[float] | None = None
) -> list[str]:
    """The index-th (from 1) of count consecutive parts of tests, of about equal total weight
    (weights: one per test, default 1 each; with equal weights the parts' sizes are at most
    one apart). A test goes to the part in which the middle of its weight falls. Consecutive,
    so that a module's tests, which share its compiled kernels, mostly stay in one part."""
    weights = weights if weights is not None else [1.0] * len(tests)
    if len(weights) != len(tests):
        raise ValueError(f"weights: one per test ({len(tests)}), got {len(weights)}")
    total = sum(weights)
    if total <= 0:
        return []
    part: list[str] = []
    before = 0.0
    for test, weight in zip(tests, weights, strict=True):
        middle = before + weight / 2
        if min(int(middle * count / total), count - 1) == index - 1:
            part.append(test)
        before += weight
    return part


def parse_jobs(text: str) -> int:
    """--jobs J as an int, 1 <= J <= MAX_JOBS; argparse's error names what it allows."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_JOBS:
        raise argparse.ArgumentTypeError(
            f"--jobs must be an int from 1 to {MAX_JOBS}, got {text!r}"
        )
    return int(text)


#: Most pytest processes --jobs runs at once: the GPU machine's 16 cores, two each (a
#: process's own compile pool, spio.jit's, takes the cores it finds).
MAX_JOBS = 8


def selected(tests: list[str], patterns: list[str]) -> list[str]:
    """The tests whose node ID contains any of patterns, in order (all of them without
    patterns)."""
    if not patterns:
        return tests
    return [test for test in tests if any(pattern in test for pattern in patterns)]


def collect(slow: bool, alone: bool = False) -> list[str]:
    """The node IDs of the tier's tests, in pytest's order (collection only: a few seconds);
    alone: only those marked ALONE_MARKER."""
    markers = marker_args(slow)
    if alone:
        markers[-1] = f"({markers[-1]}) and {ALONE_MARKER}"
    command = [sys.executable, "-m", "pytest", *tier_paths(), *markers, "--collect-only"]
    listing = subprocess.run(
        [*command, "-q", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True
    )
    if listing.returncode != 0:
        raise RuntimeError(f"collecting the GPU tier failed:\n{listing.stdout}{listing.stderr}")
    return [line for line in listing.stdout.splitlines() if "::" in line]


def run_echoed(command: list[str], log_path: Path) -> int:
    """Run command in the repository root, echoing its output to stdout and writing it line
    by line to log_path, so that a command stopped at a time limit keeps its log so far;
    return its exit status."""
    with log_path.open("w", buffering=1) as log:
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if process.stdout is None:
            raise RuntimeError("pytest's output pipe did not open")
        for line in process.stdout:
            sys.stdout.write(line)
            log.write(line)
        return process.wait()


def last_line(path: Path) -> str:
    """The last non-empty line of a log (pytest's summary), or a note that it has none."""
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "(empty log)"


def failed_lines(path: Path) -> list[str]:
    """The lines of a log's short test summary (pytest -ra) that name a failed or erroring
    test, so that a report cut to its tail (the GPU machine's) still says which failed."""
    lines = path.read_text(errors="replace").splitlines()
    return [line for line in lines if line.startswith(("FAILED ", "ERROR "))]


#: Parts per --jobs process: the tests are cut into jobs x PARTS_PER_JOB consecutive parts,
#: and each process takes the next part when it finishes one, so that the processes end
#: together whatever the weights got wrong. (With one part per process, weighed for one
#: process at a time, the H200's run of the whole tier with 8 jobs left two parts, fprop's
#: and the matmul's, running a minute or more after the other six had finished.)
PARTS_PER_JOB = 4


def run_jobs(
    tests: list[str],
    jobs: int,
    out_dir: Path,
    slow: bool,
    pytest_extra: list[str],
    alone: Collection[str] = (),
) -> int:
    """Run tests in consecutive parts of about equal run time, `jobs` pytest processes at a
    time (each starting the next part as one ends), each part writing gpu-tier-part{k}.log
    and .xml into out_dir; then those of tests in `alone` in one more process, by
    themselves (gpu-tier-alone.log and .xml). Print each part's summary line as it ends.
    Return 0 when every part passed, else the first failing part's exit status (in part
    order, the alone part last)."""
    by_themselves = [test for test in tests if test in alone]
    tests = [test for test in tests if test not in alone]
    weights = [run_weight(test) for test in tests]
    count = jobs * PARTS_PER_JOB
    parts = [(index, shard(tests, index, count, weights)) for index in range(1, count + 1)]
    parts = [(index, part) for index, part in parts if part]
    workers = max(1, (os.cpu_count() or 1) // jobs)  # (the cores, shared out)
    print(
        f"{len(tests)} tests in {len(parts)} parts, {jobs} at a time"
        + (f", then {len(by_themselves)} alone" if by_themselves else ""),
        flush=True,
    )

    # Unbuffered, as each child writes its log itself (kept so far when stopped at a limit).
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    environment.setdefault("SPIO_JIT_WORKERS", str(workers))

    def run_part(name: str, part: list[str]) -> int:
        command = [sys.executable, "-m", "pytest", *pytest_args(out_dir, slow, part, name)]
        with (out_dir / f"{name}.log").open("w") as log:
            code = subprocess.run(
                [*command, *pytest_extra],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                check=False,
            ).returncode
        log_path = out_dir / f"{name}.log"
        failed = "".join(f"\n  {line}" for line in failed_lines(log_path)) if code else ""
        print(f"{name} ({len(part)} tests): exit {code}: {last_line(log_path)}{failed}", flush=True)
        return code

    with ThreadPoolExecutor(jobs) as pool:
        codes = list(pool.map(lambda item: run_part(f"gpu-tier-part{item[0]}", item[1]), parts))
    if by_themselves:
        codes.append(run_part("gpu-tier-alone", by_themselves))
    return next((code for code in codes if code != 0), 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "gpu-out", help="log + JUnit dir")
    parser.add_argument(
        "--slow", action="store_true", help="also run the slow GPU tests (every config)"
    )
    parser.add_argument(
        "--shard",
        type=parse_shard,
        metavar="I/N",
        help="run only the I-th of N consecutive parts of the tier's tests",
    )
    parser.add_argument(
        "--jobs",
        type=parse_jobs,
        default=1,
        metavar="J",
        help=f"run the tests as J concurrent pytest processes (1 to {MAX_JOBS}; default 1)",
    )
    parser.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only the tests whose node ID contains PATTERN (repeatable)",
    )
    # Everything else (-x, -k EXPR, a test path) goes to pytest unchanged.
    args, pytest_extra = parser.parse_known_args(argv)
    reason = no_gpu_reason()
    if reason is not None:
        print(f"GPU tier skipped: {reason}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    tests = None
    if args.shard is not None or args.select or args.jobs > 1:
        everything = selected(collect(args.slow), args.select)
        tests = everything
        if args.shard is not None:
            index, count = args.shard
            tests = shard(everything, index, count, [run_weight(test) for test in everything])
            print(f"part {index} of {count}: {len(tests)} of {len(everything)} tests")
        if args.select and not everything:
            print(f"--select {' '.join(args.select)}: no test of the tier matches", file=sys.stderr)
            return 2
        if not tests:
            return 0
    if args.jobs > 1 and tests is not None:
        alone = set(collect(args.slow, alone=True))
        return run_jobs(tests, args.jobs, args.out, args.slow, pytest_extra, alone)
    arguments = pytest_args(args.out, args.slow, tests)
    command = [sys.executable, "-m", "pytest", *arguments, *pytest_extra]
    print("+", " ".join(command[:12]), "..." if len(command) > 12 else "", flush=True)
    return run_echoed(command, args.out / "gpu-tier.log")


if __name__ == "__main__":
    sys.exit(main())
