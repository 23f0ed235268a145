"""tools/gpu_tier.py's parts: --shard I/N splits the tier's tests into N runs that add up to it."""

from __future__ import annotations

import argparse

import pytest
from tool_module import load_tool

tool = load_tool("gpu_tier")


@pytest.mark.parametrize("length", [0, 1, 7, 10, 1218])
@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_the_parts_are_the_tests_in_order_and_nearly_equal(length: int, count: int) -> None:
    tests = [f"t{i}" for i in range(length)]
    parts = [tool.shard(tests, index, count) for index in range(1, count + 1)]
    assert [test for part in parts for test in part] == tests
    assert max(map(len, parts)) - min(map(len, parts)) <= 1


def test_a_shard_is_i_of_n() -> None:
    assert tool.parse_shard("2/3") == (2, 3)
    for text in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2"):
        with pytest.raises(argparse.ArgumentTypeError, match="--shard must be I/N"):
            tool.parse_shard(text)


def test_the_tier_collects_gpu_tests_only() -> None:
    tests = tool.collect(slow=False)
    assert len(tests) > 100
    assert all(test.startswith((*tool.TEST_PATHS,)) for test in tests)
    assert any("test_wgrad_gpu.py::" in test for test in tests)
    assert not any("test_wgrad_spec.py::" in test for test in tests)  # a CPU test file


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_weighted_parts_are_the_tests_in_order_and_about_as_heavy(count: int) -> None:
    # 300 light tests, then 100 heavy ones (the sanitizer's), then 300 light ones.
    sanitizer = tool.TEST_WEIGHTS["test_sanitizer_gpu.py"]
    assert sanitizer > 5
    tests = [f"a/test_x.py::t{i}" for i in range(300)]
    tests += [f"a/test_sanitizer_gpu.py::t{i}" for i in range(100)]
    tests += [f"a/test_y.py::t{i}" for i in range(300)]
    weights = [tool.run_weight(test) for test in tests]
    assert weights.count(sanitizer) == 100
    assert weights.count(1.0) == 600
    parts = [tool.shard(tests, index, count, weights) for index in range(1, count + 1)]
    assert [test for part in parts for test in part] == tests
    heaviest = max(weights)
    loads = [sum(tool.run_weight(test) for test in part) for part in parts]
    assert max(loads) - min(loads) <= 2 * heaviest
    # By count alone the middle part would hold the heavy tests and outweigh the rest.
    if count == 3:
        by_count = [sum(map(tool.run_weight, tool.shard(tests, i, 3))) for i in (1, 2, 3)]
        assert max(by_count) - min(by_count) > 2 * heaviest


def test_weights_must_match_the_tests() -> None:
    with pytest.raises(ValueError, match="one per test"):
        tool.shard(["t0", "t1"], 1, 2, [1.0])


def test_jobs_is_a_count_from_1_to_the_most() -> None:
    assert tool.parse_jobs("1") == 1
    assert tool.parse_jobs(str(tool.MAX_JOBS)) == tool.MAX_JOBS
    for text in ("0", str(tool.MAX_JOBS + 1), "two", "-1", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="--jobs must be an int from 1"):
            tool.parse_jobs(text)


def test_select_keeps_the_tests_that_match_any_pattern_in_order() -> None:
    tests = ["a/test_x.py::t0", "a/test_y.py::t1", "a/test_x.py::t2", "b/test_z.py::t3"]
    assert tool.selected(tests, []) == tests
    assert tool.selected(tests, ["test_x.py"]) == ["a/test_x.py::t0", "a/test_x.py::t2"]
    assert tool.selected(tests, ["t3", "test_y"]) == ["a/test_y.py::t1", "b/test_z.py::t3"]
    assert tool.selected(tests, ["nothing"]) == []


def _sample_tests(folder, count: int, failing: int | None = None) -> list[str]:
    """The node IDs of `count` GPU tests written to a file in folder, test_{failing} failing."""
    tests_file = folder / "test_jobs_sample.py"
    tests_file.write_text(
        "import pytest\n\n"
        + "".join(
            f"@pytest.mark.gpu\ndef test_{i}():\n    assert {i} != {failing}\n\n"
            for i in range(count)
        )
    )
    return [f"{tests_file}::test_{i}" for i in range(count)]


def test_jobs_run_every_test_once_and_report_a_failing_part(tmp_path, capsys) -> None:
    tests = _sample_tests(tmp_path, 6, failing=3)
    status = tool.run_jobs(tests, 2, tmp_path, slow=False, pytest_extra=[])
    assert status != 0  # test_3 fails
    # Up to 2 jobs x PARTS_PER_JOB non-empty parts of the 6 tests, each its own pytest run.
    parts = min(6, 2 * tool.PARTS_PER_JOB)
    logs = sorted(tmp_path.glob("gpu-tier-part*.log"))
    assert len(logs) == parts
    assert all((tmp_path / f"{log.stem}.xml").is_file() for log in logs)
    text = "".join(log.read_text() for log in logs)
    assert text.count(" PASSED") == 5
    assert text.count(" FAILED") >= 1
    assert "test_3 FAILED" in text
    report = capsys.readouterr().out
    assert report.count("exit ") == parts
    assert "1 failed" in report
    # The failing part's report names the test, under its summary line.
    failed = [line for line in report.splitlines() if line.startswith("  FAILED ")]
    assert len(failed) == 1
    assert "test_jobs_sample.py::test_3" in failed[0]


def test_jobs_run_the_tests_marked_alone_after_the_parts_by_themselves(tmp_path, capsys) -> None:
    tests = _sample_tests(tmp_path, 4)
    status = tool.run_jobs(tests, 2, tmp_path, slow=False, pytest_extra=[], alone={tests[1]})
    assert status == 0
    alone = (tmp_path / "gpu-tier-alone.log").read_text()
    assert "test_1 PASSED" in alone
    assert alone.count(" PASSED") == 1
    parts = "".join(log.read_text() for log in tmp_path.glob("gpu-tier-part*.log"))
    assert parts.count(" PASSED") == 3
    assert "test_1 " not in parts
    report = capsys.readouterr().out
    assert "3 tests in 3 parts, 2 at a time, then 1 alone" in report
    assert report.splitlines()[-1].startswith("gpu-tier-alone (1 tests): exit 0")


def test_the_tests_marked_alone_are_gpu_tests_of_the_tier() -> None:
    alone = tool.collect(slow=False, alone=True)
    name = "test_a_device_without_room_for_the_timing_runs_the_layer_untimed"
    assert any(name in test for test in alone)
    assert set(alone) <= set(tool.collect(slow=False))
