"""spio.perfmodel: latency models that choose a kernel config per layer.

Measured config times (`python -m spio.kernels.bench conv2d_gw8 --all-configs --out DIR`)
are read with `read_config_times`; `LatencyModel.train` fits gradient-boosted trees
(XGBoost) to them, one model per pass and GPU; `LatencyModel.best_config` picks the config
it predicts fastest for a layer; `evaluate` measures the picks' regret on held-out layers
(`evaluate_held_out`, on layers chosen by the caller). `choose_config` picks a layer's
config on a GPU: with the model that ships for that GPU and these kernels
(`shipped_models`), else with the kernels' heuristic; `tune_config` times the model's
shortlist on the GPU instead (SPIO_CONFIG_SELECTION=autotune, or
`set_selection_mode("autotune")`, makes choose_config do so);
`compare` times its picks against the heuristic's. Training and evaluating touch no GPU.
"""

from importlib.metadata import version as _version

from ._compare import Comparison, compare
from ._data import ConfigTime, LatencyTable, layer_key, read_config_times
from ._evaluate import Evaluation, LayerResult, evaluate, evaluate_held_out
from ._features import GpuLimits, feature_matrix, feature_names
from ._model import LatencyModel, TrainingOptions
from ._passes import PASSES, KernelPass
from ._select import (
    ConfigChoice,
    choose_config,
    heuristic_config,
    tune_config,
)
from ._selection_mode import selection_mode, set_selection_mode
from ._shipped import ShippedModel, shipped_model, shipped_models

__version__ = _version("spio-perfmodel")

__all__ = [
    "PASSES",
    "Comparison",
    "ConfigChoice",
    "ConfigTime",
    "Evaluation",
    "GpuLimits",
    "KernelPass",
    "LatencyModel",
    "LatencyTable",
    "LayerResult",
    "ShippedModel",
    "TrainingOptions",
    "__version__",
    "choose_config",
    "compare",
    "evaluate",
    "evaluate_held_out",
    "feature_matrix",
    "feature_names",
    "heuristic_config",
    "layer_key",
    "read_config_times",
    "selection_mode",
    "set_selection_mode",
    "shipped_model",
    "shipped_models",
    "tune_config",
]
