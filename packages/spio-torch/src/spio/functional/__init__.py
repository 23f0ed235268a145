"""Functional PyTorch operators of Spio (`spio.functional.conv2d_gw8`, ...).

The operators are registered with `torch.library` by spio-torch; this module is their
stable import path, the one Spio's documentation uses. Each operator arrives with its
kernel: the grouped convolution operators with spio-kernels' `conv2d_gw8`.
"""

__all__: list[str] = []
