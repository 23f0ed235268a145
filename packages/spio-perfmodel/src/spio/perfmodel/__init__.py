"""spio.perfmodel: latency models that choose a kernel config per layer.

Measured config times (`python -m spio.kernels.bench conv2d_gw8 --all-configs --out DIR`)
are read with `read_config_times`; `LatencyModel.train` fits gradient-boosted trees
(XGBoost) to them, one model per pass and GPU; `LatencyModel.best_config` picks the config
it predicts fastest for a layer; `evaluate` measures the picks' regret on held-out layers.
Nothing here touches a GPU.
"""

from importlib.metadata import version as _version

from ._data import ConfigTime, LatencyTable, layer_key, read_config_times
from ._evaluate import Evaluation, LayerResult, evaluate
from ._features import GpuLimits, feature_matrix, feature_names
from ._model import LatencyModel, TrainingOptions
from ._passes import PASSES, KernelPass

__version__ = _version("spio-perfmodel")

__all__ = [
    "PASSES",
    "ConfigTime",
    "Evaluation",
    "GpuLimits",
    "KernelPass",
    "LatencyModel",
    "LatencyTable",
    "LayerResult",
    "TrainingOptions",
    "__version__",
    "evaluate",
    "feature_matrix",
    "feature_names",
    "layer_key",
    "read_config_times",
]
