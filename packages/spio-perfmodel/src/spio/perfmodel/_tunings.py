"""Autotuning's choices kept on disk, so that a layer's pass is timed once per GPU and kernels
rather than once per process: a restarted training run starts at once and runs the same
configs (whose timings may tie within noise, and whose weight gradients' bits depend on the
config).

An entry is a small JSON file under spio-jit's cache directory (`autotune-v2/`, beside its
compiled kernels; SPIO_JIT_CACHE_DIR moves both, SPIO_JIT_DISABLE_CACHE=1 turns both off),
named by a hash of everything the choice depends on: the GPU's name, the pass, the kernels'
sources digest, the layer, the model whose shortlist was timed and its length, and this
format. Entries are written atomically (a temporary file renamed over the name), so readers
in other processes see the old entry or the new one; one that cannot be read or does not
hold a valid config counts as absent and is timed again. `spio-perfmodel tunings --forget`
(forget_tunings) deletes them all.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._passes import kernel_pass

#: (2: wgrad's tunings time each shortlisted tile's walks, _select._with_walks; a choice
#: kept by format 1 never saw them.)
FORMAT = 2


def tunings_dir() -> Path | None:
    """The directory of kept tunings, or None where spio-jit's cache is turned off."""
    import spio.jit

    info = spio.jit.cache_info()
    return info.directory / f"autotune-v{FORMAT}" if info.enabled else None


def tuning_key(
    pass_name: str,
    gpu: str,
    kernels: str,
    params: Conv2dGw8Params,
    model_gpu: str,
    count: int,
) -> dict[str, Any]:
    """What a tuning's choice depends on, as JSON-ready fields."""
    return {
        "format": FORMAT,
        "pass": pass_name,
        "gpu": gpu,
        "kernels": kernels,
        "layer": dataclasses.asdict(params),
        "model_gpu": model_gpu,
        "count": count,
    }


def _path(directory: Path, key: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return directory / digest[:2] / f"{digest}.json"


def load_tuning(key: dict[str, Any]) -> tuple[Any, Path] | None:
    """The config kept for key and its file, or None (none kept, unreadable, or not a valid
    config of the layer)."""
    directory = tunings_dir()
    if directory is None:
        return None
    path = _path(directory, key)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if record["key"] != json.loads(json.dumps(key)):
            return None  # a hash collision, or an entry written by hand
        spec = kernel_pass(key["pass"])
        config = spec.config_type(**record["config"])
        params = Conv2dGw8Params(**_fields(key["layer"]))
        spec.check_config(params, config)
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return config, path


def store_tuning(key: dict[str, Any], config: Any, reason: str) -> None:
    """Keep config for key (atomically; a failure to write is not an error: the next process
    times the layer again)."""
    directory = tunings_dir()
    if directory is None:
        return
    path = _path(directory, key)
    record = {"key": key, "config": dataclasses.asdict(config), "reason": reason}
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(record, file, sort_keys=True)
            os.replace(temp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)


def unusable_reason(directory: Path) -> str | None:
    """Why tunings cannot be kept in directory (made where missing), or None where they can:
    the nearest of it and its parents that exists is a file, or cannot be written to. A
    failed store is silent (store_tuning), so `spio-perfmodel tunings` asks this."""
    existing = next(path for path in (directory, *directory.parents) if path.exists())
    if not existing.is_dir():
        return f"{existing.absolute()} is a file, not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing.absolute()} is not writable"
    return None


def kept_tunings() -> list[Path]:
    """The files of every kept tuning (none where spio-jit's cache is turned off)."""
    directory = tunings_dir()
    return sorted(directory.glob("*/*.json")) if directory is not None else []


def forget_tunings() -> int:
    """Delete every kept tuning (and leftover temporaries); return how many there were."""
    directory = tunings_dir()
    kept = len(kept_tunings())
    if directory is not None and directory.is_dir():
        shutil.rmtree(directory, ignore_errors=True)
    return kept


def _fields(layer: dict[str, Any]) -> dict[str, Any]:
    """Conv2dGw8Params' fields from dataclasses.asdict's (JSON made the padding a list)."""
    return {**layer, "padding": tuple(layer["padding"])}
