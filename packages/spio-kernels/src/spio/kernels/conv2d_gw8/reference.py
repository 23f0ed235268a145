"""fp32 PyTorch reference for grouped conv2d gw8 (the tests check every config against it)."""

from __future__ import annotations

from typing import Any

from .params import GROUP_WIDTH, Conv2dGw8Params


def fprop_reference(x: Any, w: Any, bias: Any, params: Conv2dGw8Params) -> Any:
    """Return y (n x p x q x c, NHWC, float32) = conv2d(x, w) + bias in fp32.

    x is n x h x w x c (NHWC), w is Spio's c x r x s x 8, bias c values or None; all are
    torch tensors of any dtype and device (computed on float32 copies).
    """
    import torch
    import torch.nn.functional as F  # noqa: N812

    x32 = x.float().permute(0, 3, 1, 2)
    w32 = w.float().permute(0, 3, 1, 2)  # K x R x S x 8 -> K x 8 x R x S
    x32 = F.pad(x32, (params.pad_left, params.pad_right, params.pad_top, params.pad_bottom))
    b32 = bias.float() if bias is not None else None
    y = F.conv2d(x32, w32, b32, groups=params.c // GROUP_WIDTH)
    return y.permute(0, 2, 3, 1).contiguous().to(torch.float32)


def dgrad_reference(grad_y: Any, w: Any, params: Conv2dGw8Params) -> Any:
    """Return grad_x (n x h x w x c, NHWC, float32), the input gradient of fprop, in fp32.

    grad_y is n x p x q x c (NHWC), w Spio's c x r x s x 8; computed by autograd through
    fprop_reference on float32 copies.
    """
    import torch

    x = torch.zeros(params.input_shape, dtype=torch.float32, device=grad_y.device)
    x.requires_grad_(True)
    y = fprop_reference(x, w.float(), None, params)
    (grad_x,) = torch.autograd.grad(y, x, grad_y.float())
    return grad_x.contiguous()


def wgrad_reference(x: Any, grad_y: Any, params: Conv2dGw8Params) -> Any:
    """Return grad_w (c x r x s x 8, Spio's layout, float32), the weight gradient, in fp32.

    x is n x h x w x c, grad_y n x p x q x c (NHWC); computed by autograd through
    fprop_reference on float32 copies.
    """
    import torch

    w = torch.zeros(params.weight_shape, dtype=torch.float32, device=grad_y.device)
    w.requires_grad_(True)
    y = fprop_reference(x.float(), w, None, params)
    (grad_w,) = torch.autograd.grad(y, w, grad_y.float())
    return grad_w.contiguous()


def wgrad_bias_reference(grad_y: Any) -> Any:
    """Return the bias gradient (c values, float32) of grad_y (n x p x q x c, NHWC): its sum
    over images, rows and columns, in float64 and then rounded to float32."""
    return grad_y.double().sum((0, 1, 2)).float()
