"""Give the shipped latency models of model format 3 the configs timed on each training layer
(format 4), from the rows they were trained on, without training them again.

    python tools/models_add_timed.py

A format-3 model keeps only the fastest config measured on each training layer; choose_config
now also asks whether the heuristic's config was among those timed there
(LatencyModel.was_timed). The trees do not change: the same rows train the same trees, so
this reads each model's booster as it is, takes the rows of its pass, GPU and kernels from
packages/spio-perfmodel/data/<gpu>/seed*/, checks that their fastest config per layer is the
model's own (the same rows, then), and writes the model again in format 4 with the timed
configs' fingerprints.
"""

from __future__ import annotations

import json
from pathlib import Path

import xgboost

from spio.perfmodel._data import by_layer, read_config_times
from spio.perfmodel._features import GpuLimits
from spio.perfmodel._model import (
    _META_KEY,
    LatencyModel,
    _fastest,
    _layer_from_dict,
    config_fingerprint,
)
from spio.perfmodel._passes import kernel_pass
from spio.perfmodel._shipped import models_dir

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "packages" / "spio-perfmodel" / "data"


def migrate(path: Path) -> str:
    """Rewrite the format-3 model at path in format 4; return what was done."""
    booster = xgboost.Booster()
    booster.load_model(str(path))
    text = booster.attr(_META_KEY)
    if text is None:
        return f"{path}: no Spio metadata, left as it is"
    meta = json.loads(text)
    if meta["format"] != 3:
        return f"{path}: format {meta['format']}, left as it is"
    pass_name, gpu, kernel = meta["pass"], meta["gpu"], meta["kernel"]
    config_type = kernel_pass(pass_name).config_type
    measured = {
        _layer_from_dict(layer): config_type(**config) for layer, config in meta["measured"]
    }
    table = read_config_times(sorted(DATA.glob(f"{path.parent.name}/seed*/*_{pass_name}.csv")))
    layers = by_layer(table.select(pass_name, gpu, kernel).rows)
    fastest = {layer: _fastest(rows) for layer, rows in layers.items()}
    if fastest != measured:
        raise SystemExit(f"{path}: the rows' fastest configs differ from the model's")
    timed = {
        layer: frozenset(config_fingerprint(row.config) for row in rows)
        for layer, rows in layers.items()
    }
    limits = GpuLimits(**meta["limits"])
    LatencyModel(booster, pass_name, gpu, limits, kernel, measured, timed).save(path)
    configs = sum(len(fingerprints) for fingerprints in timed.values())
    return f"{path}: {len(timed)} layers, {configs} timed configs"


def main() -> None:
    for path in sorted(models_dir().glob("*/*.ubj")):
        print(migrate(path))


if __name__ == "__main__":
    main()
