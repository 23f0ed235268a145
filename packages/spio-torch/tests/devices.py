"""The devices the tests that run alike on CPU and CUDA take, the CUDA one marked `gpu`."""

from __future__ import annotations

import pytest
import torch

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=[
            pytest.mark.gpu,
            pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
        ],
    ),
]
