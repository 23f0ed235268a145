"""The latency models that ship with spio-perfmodel: one file per GPU and pass.

They live in the package, at models/<gpu>/<pass>.ubj, where <gpu> is the GPU's name as the
driver reports it in lower case with runs of other characters than letters and digits as
"_" ("NVIDIA H200" -> nvidia_h200). Each was trained on one version of the kernels (its
`kernel`): models/README.md says how they were made and how to make them again.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ._model import LatencyModel
from ._passes import kernel_pass

#: Where a shipped model's file lives, relative to the models folder.
MODEL_FILE = "{gpu}/{pass_name}.ubj"


def gpu_folder(gpu: str) -> str:
    """The models folder of a GPU name: lower case, other characters than a-z0-9 as "_"."""
    folder = re.sub(r"[^a-z0-9]+", "_", gpu.lower()).strip("_")
    if not folder:
        raise ValueError(f"gpu must name a GPU, got {gpu!r}")
    return folder


def models_dir() -> Path:
    """The folder of the shipped models (inside the installed package)."""
    return Path(str(resources.files("spio.perfmodel"))) / "models"


def shipped_model_path(pass_name: str, gpu: str) -> Path:
    """Where the shipped model of pass_name on gpu is, or would be."""
    name = kernel_pass(pass_name).name
    return models_dir() / MODEL_FILE.format(gpu=gpu_folder(gpu), pass_name=name)


@dataclass(frozen=True)
class ShippedModel:
    """One shipped model file and what it was trained for."""

    pass_name: str
    gpu: str
    kernel: str
    path: Path


def shipped_models() -> list[ShippedModel]:
    """Every shipped model, read from its file (needs xgboost)."""
    found = []
    for path in sorted(models_dir().glob(MODEL_FILE.format(gpu="*", pass_name="*"))):
        model = load_shipped_file(path)
        found.append(ShippedModel(model.pass_name, model.gpu, model.kernel, path))
    return found


@functools.lru_cache(maxsize=64)
def shipped_model(pass_name: str, gpu: str) -> LatencyModel | None:
    """The shipped model of pass_name on gpu (looked up and loaded once per process: the
    look-up, a resource path and a stat, cost a config choice 0.15 ms on two cores), or
    None."""
    path = shipped_model_path(pass_name, gpu)
    return load_shipped_file(path) if path.is_file() else None


@functools.cache
def load_shipped_file(path: Path) -> LatencyModel:
    return LatencyModel.load(path)
