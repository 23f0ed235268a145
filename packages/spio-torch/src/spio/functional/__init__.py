"""Functional PyTorch operators of Spio.

`conv2d_gw8`: grouped 2-D convolution with 8 channels per group (the operator
spio::conv2d_gw8 of torch.library, with autograd, fake tensors for torch.compile and CUDA
graph capture). `linear` and `matmul`: torch.nn.functional.linear and 2-D torch.matmul on
Spio's tensor-core matmul (the operator spio::mm, likewise). Importing this module registers
the operators with PyTorch; it initializes no GPU.
"""

from spio.torch._functional import conv2d_gw8
from spio.torch._linear import linear, matmul

__all__ = ["conv2d_gw8", "linear", "matmul"]
