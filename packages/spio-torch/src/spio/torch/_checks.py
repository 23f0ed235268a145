"""Argument checks the functional entries and the operators share: each error names the
argument, what was given and what is allowed.

The operators (spio::conv2d_gw8 and its gradients, spio::mm, spio::addmm) run the same checks
in their CPU, CUDA and fake implementations, so every path refuses the same arguments with
the same message as spio.functional's entries. The checks are plain comparisons of sizes, so
they run on symbolic sizes under tracing too (as guards).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import torch
from spio.kernels.conv2d_gw8.params import MAX_ELEMENTS, MAX_KERNEL_SIZE
from spio.kernels.matmul.params import VECTOR
from torch.fx.experimental.symbolic_shapes import statically_known_true

from ._transforms import refuse_tangents

#: Channels per group of the grouped convolution.
GROUP_WIDTH = 8
#: The activations' and weights' dtypes the kernels take, with spio-kernels' names for them.
DTYPES = {torch.float16: "float16", torch.bfloat16: "bfloat16"}

_SIDES = ("top", "bottom", "left", "right")
#: The calls that carry forward-mode tangents through the operators (refuse_tangents).
_CONV_ENTRY = "spio.functional.conv2d_gw8"
_PRODUCT_ENTRIES = "spio.functional.linear or spio.functional.matmul"


def check_tensor(name: str, tensor: Any, dims: int = 0) -> None:
    """A float16 or bfloat16 torch.Tensor, of `dims` dimensions unless dims is 0."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if dims and tensor.dim() != dims:
        raise ValueError(f"{name} must be {dims}-D, got shape {tuple(tensor.shape)}")
    if tensor.dtype not in DTYPES:
        raise TypeError(
            f"{name} must be float16 or bfloat16 (fp32 accumulation inside), got "
            f"{tensor.dtype}{_half_precision_hint(tensor)}"
        )


def _half_precision_hint(tensor: torch.Tensor) -> str:
    """How to run a floating-point tensor of another dtype in half precision. An fp32 model
    is the usual cause; autocast casts it, but not float64, and not inside an
    autocast(enabled=False) region."""
    if not tensor.is_floating_point():
        return ""
    device_type = tensor.device.type
    if torch.amp.is_autocast_available(device_type) and torch.is_autocast_enabled(device_type):
        return (
            f"; torch.autocast is enabled for {device_type} but leaves {tensor.dtype} as it is "
            "(as it does for torch's own ops): cast it to float16 or bfloat16"
        )
    return (
        "; cast it (a module: .half() or .bfloat16()) or run it where torch.autocast is "
        f"enabled for {device_type} (not inside an autocast(enabled=False) region)"
    )


def check_same_device(first: str, a: torch.Tensor, second: str, b: torch.Tensor) -> None:
    if b.device != a.device:
        raise ValueError(f"{second} is on {b.device}, {first} on {a.device}")


def check_same_dtype_and_device(first: str, a: torch.Tensor, second: str, b: torch.Tensor) -> None:
    if b.dtype != a.dtype:
        raise TypeError(f"{second} must have {first}'s dtype {a.dtype}, got {b.dtype}")
    check_same_device(first, a, second, b)


def check_multiple(value: int, what: Callable[[], str]) -> None:
    """ValueError unless value is a multiple of VECTOR; what() names it (called only then:
    the message's shapes would cost every call of a small layer its time)."""
    if value % VECTOR:
        raise ValueError(
            f"{what()} must be a multiple of {VECTOR} (the kernels move rows as 16-byte "
            f"vectors), got {value}"
        )


def check_bias(bias: Any, size: int, first: str, like: torch.Tensor) -> None:
    """A vector of `size` values of like's dtype and device (`first` names like)."""
    if not isinstance(bias, torch.Tensor):
        raise TypeError(f"bias must be a torch.Tensor or None, got {type(bias).__name__}")
    if bias.dim() != 1 or bias.shape[0] != size:
        raise ValueError(f"bias must have shape ({size},), got {tuple(bias.shape)}")
    check_same_dtype_and_device(first, like, "bias", bias)


# ---- the grouped convolution -------------------------------------------------------------


def _integer(value: Any) -> int:
    """value as an int where operator.index takes it (an int, a NumPy integer, an integer
    tensor of one element) and it is no bool; else TypeError."""
    if isinstance(value, bool):
        raise TypeError(f"{value!r} is a bool")
    return operator.index(value)


def padding_sides(padding: Any, kernel_size: Sequence[int]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) of spio.functional.conv2d_gw8's padding argument; the
    sides' range is the layer's check (check_conv2d_gw8_layer)."""
    if type(padding) is int:  # the common form first: this runs on every call
        return (padding, padding, padding, padding)
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding == "same":
            # As torch.nn.functional.conv2d: an even filter's extra row and column go last.
            r, s = kernel_size
            return ((r - 1) // 2, r // 2, (s - 1) // 2, s // 2)
        raise ValueError(f"padding must be 'valid', 'same' or ints, got {padding!r}")
    try:
        if not isinstance(padding, (tuple, list)):
            side = _integer(padding)
            return (side, side, side, side)
        sides = [_integer(value) for value in padding]
    except TypeError:
        sides = []
    if len(sides) == 2:
        return (sides[0], sides[0], sides[1], sides[1])
    if len(sides) == 4:
        return (sides[0], sides[1], sides[2], sides[3])
    raise TypeError(
        "padding must be an int, a pair (rows, columns), a 4-tuple (top, bottom, left, "
        f"right) of ints, 'valid' or 'same', got {padding!r} ({type(padding).__name__})"
    )


def _refuse_channels(name: str, c: int) -> NoReturn:
    raise ValueError(
        f"{name} must have a multiple of {GROUP_WIDTH} channels (groups of width 8), got {c}"
    )


def check_conv2d_gw8_tensors(input: Any, weight: Any, bias: Any, name: str = "input") -> None:
    """The convolution's tensors: input (`name`) N x C x H x W, C a multiple of 8; weight
    C x 8 x R x S of its dtype and device; bias None or C floating values on its device.
    (spio.functional.conv2d_gw8 runs this on every call: it stays plain comparisons.)"""
    check_tensor(name, input, 4)
    check_tensor("weight", weight, 4)
    c = input.shape[1]
    if c % GROUP_WIDTH or c == 0:
        _refuse_channels(name, c)
    if tuple(weight.shape[:2]) != (c, GROUP_WIDTH):
        if weight.shape[1] == GROUP_WIDTH:
            # A weight of some other layer's channels: as nn.Conv2d, say it from the input's
            # side (a module's weight is what the input should have matched).
            raise ValueError(
                f"{name} has {c} channels, but weight of shape {tuple(weight.shape)} is for "
                f"{weight.shape[0]} ({name} of shape {tuple(input.shape)})"
            )
        raise ValueError(
            f"weight must be {c} x {GROUP_WIDTH} x R x S for {c} channels (out channels x "
            f"channels per group x filter), got shape {tuple(weight.shape)}"
        )
    check_same_dtype_and_device(name, input, "weight", weight)
    if bias is not None:
        if not isinstance(bias, torch.Tensor):
            raise TypeError(f"bias must be a torch.Tensor or None, got {type(bias).__name__}")
        if tuple(bias.shape) != (c,):
            raise ValueError(f"bias must have shape ({c},), got {tuple(bias.shape)}")
        if not bias.is_floating_point():
            raise TypeError(f"bias must be a floating-point tensor, got {bias.dtype}")
        check_same_device(name, input, "bias", bias)


def check_conv2d_gw8_layer(
    input_size: Sequence[int],
    kernel_size: Sequence[int],
    padding: Sequence[int],
    kernel: str = "weight's kernel size",
) -> tuple[int, int]:
    """The output's height and width (P, Q) of an N x C x H x W input under an R x S kernel
    and (top, bottom, left, right) padding; ValueError, in the arguments' terms, where the
    kernels do not take the layer. `kernel` names where R x S came from.

    Everything here depends only on the layer, so the eager path runs it once per layer
    (_cuda_passes.layer_params), and the operators, which run it on every call, remember
    the layers it passed (sizes that are ints; a tracer's symbolic sizes are checked each
    time). N may be 0 (an empty batch: the operators answer it without the kernels)."""
    if torch.compiler.is_compiling():
        # Dynamo traces the check itself (once per compiled graph); through the cache it would
        # only warn that it bypasses it.
        return _layer_output(input_size, kernel_size, padding, kernel)
    try:
        return _passed_layer(tuple(input_size), tuple(kernel_size), tuple(padding), kernel)
    except TypeError:  # symbolic sizes are not hashable
        return _layer_output(input_size, kernel_size, padding, kernel)


@functools.lru_cache(maxsize=4096)
def _passed_layer(
    input_size: tuple[int, ...], kernel_size: tuple[int, ...], padding: tuple[int, ...], kernel: str
) -> tuple[int, int]:
    # (A layer that fails raises, and is not remembered.)
    return _layer_output(input_size, kernel_size, padding, kernel)


def _layer_output(
    input_size: Sequence[int], kernel_size: Sequence[int], padding: Sequence[int], kernel: str
) -> tuple[int, int]:
    n, c, h, w = input_size
    r, s = kernel_size
    if not (1 <= r <= MAX_KERNEL_SIZE and 1 <= s <= MAX_KERNEL_SIZE):
        raise ValueError(
            f"{kernel} must be 1 to {MAX_KERNEL_SIZE} in each dimension, got {r} x {s}"
        )
    if h < 1 or w < 1:
        raise ValueError(f"input's height and width must be at least 1, got {h} x {w}")
    extents = ((r, "height"), (r, "height"), (s, "width"), (s, "width"))
    for side, value, (extent, along) in zip(_SIDES, padding, extents, strict=True):
        if value < 0 or value >= extent:
            raise ValueError(
                f"padding {side} must be 0 to {extent - 1} (below the kernel's {along} "
                f"{extent}), got {value}"
            )
    top, bottom, left, right = padding
    p = h + top + bottom - r + 1
    q = w + left + right - s + 1
    if p < 1 or q < 1:
        raise ValueError(
            f"input of {h} x {w} with padding {tuple(padding)} (top, bottom, left, right) and "
            f"a {r} x {s} kernel gives an empty output ({p} x {q}): the input plus its padding "
            "must be at least as large as the kernel"
        )
    # Only where the sizes decide it without a guard: a traced size would turn the limit into
    # a guard on a dynamic batch (torch.export refuses one without a bound), and the real call
    # checks it again. (Not `type(n) is int`: Dynamo, which strict export runs, answers it
    # True for a symbolic size.)
    if statically_known_true(n * c * h * w > MAX_ELEMENTS) or statically_known_true(
        n * c * p * q > MAX_ELEMENTS
    ):
        raise ValueError(
            f"input of {n} x {c} x {h} x {w} (output {n} x {c} x {p} x {q}) is too large: the "
            "kernels' offsets are 32-bit, so each must have fewer than 2**31 elements; split "
            "the batch"
        )
    return p, q


def _check_sizes(name: str, sizes: Sequence[int], names: tuple[str, ...]) -> None:
    """An operator's list of sizes: one for each of names (their ranges are the layer's
    checks)."""
    if len(sizes) != len(names):
        raise ValueError(
            f"{name} must be {len(names)} ints ({', '.join(names)}), got {list(sizes)}"
        )


def _check_grad_output(
    grad_output: torch.Tensor, size: tuple[int, ...], layer: Callable[[], str]
) -> None:
    """grad_output of the output's size; `layer` describes the layer for the message (built
    only when it is raised: the operators run this on every call)."""
    if tuple(grad_output.shape) != size:
        raise ValueError(
            f"grad_output must have the output's shape {size} ({layer()}), got "
            f"{tuple(grad_output.shape)}"
        )


def check_conv2d_gw8(
    input: Any, weight: Any, bias: Any, padding: Sequence[int]
) -> tuple[int, int, int, int]:
    """spio::conv2d_gw8's arguments (padding: top, bottom, left, right); returns the
    output's size."""
    check_conv2d_gw8_tensors(input, weight, bias)
    refuse_tangents("conv2d_gw8", _CONV_ENTRY, input, weight, bias)
    _check_sizes("padding", padding, _SIDES)
    n, c = input.shape[:2]
    p, q = check_conv2d_gw8_layer(input.shape, weight.shape[2:], padding)
    return (n, c, p, q)


def check_conv2d_gw8_input_grad(
    grad_output: Any, weight: Any, input_size: Sequence[int], padding: Sequence[int]
) -> None:
    """spio::conv2d_gw8_input_grad's arguments: grad_output of the output's size for an
    input of input_size (N, C, H, W), weight C x 8 x R x S of grad_output's dtype."""
    check_conv2d_gw8_tensors(grad_output, weight, None, name="grad_output")
    refuse_tangents("conv2d_gw8_input_grad", _CONV_ENTRY, grad_output, weight)
    _check_sizes("input_size", input_size, ("N", "C", "H", "W"))
    _check_sizes("padding", padding, _SIDES)
    n, c = input_size[:2]
    if c != grad_output.shape[1]:
        raise ValueError(
            f"input_size's channels must be grad_output's {grad_output.shape[1]}, got "
            f"input_size {list(input_size)}"
        )
    p, q = check_conv2d_gw8_layer(input_size, weight.shape[2:], padding)
    _check_grad_output(
        grad_output,
        (n, c, p, q),
        lambda: (
            f"input_size {list(input_size)}, padding {list(padding)}, weight {tuple(weight.shape)}"
        ),
    )


def check_conv2d_gw8_weight_grad(
    input: Any, grad_output: Any, kernel_size: Sequence[int], padding: Sequence[int]
) -> None:
    """spio::conv2d_gw8_weight_grad's (and weight_bias_grad's) arguments: input
    N x C x H x W, grad_output of the output's size under an R x S kernel (kernel_size)."""
    check_tensor("input", input, 4)
    check_tensor("grad_output", grad_output, 4)
    refuse_tangents("conv2d_gw8_weight_grad", _CONV_ENTRY, input, grad_output)
    c = input.shape[1]
    if c % GROUP_WIDTH or c == 0:
        _refuse_channels("input", c)
    check_same_dtype_and_device("input", input, "grad_output", grad_output)
    _check_sizes("kernel_size", kernel_size, ("R", "S"))
    _check_sizes("padding", padding, _SIDES)
    p, q = check_conv2d_gw8_layer(input.shape, kernel_size, padding, "kernel_size")
    _check_grad_output(
        grad_output,
        (input.shape[0], c, p, q),
        lambda: (
            f"input {tuple(input.shape)}, kernel_size {list(kernel_size)}, padding {list(padding)}"
        ),
    )


# ---- matrix products ---------------------------------------------------------------------


def _check_operands(a: Any, b: Any) -> None:
    """Two 2-D matrices of one 16-bit dtype on one device, a's columns b's rows."""
    check_tensor("a", a, 2)
    check_tensor("b", b, 2)
    check_same_dtype_and_device("a", a, "b", b)
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"a's columns must match b's rows: a is {tuple(a.shape)}, b is {tuple(b.shape)}"
        )


def check_matmul(a: Any, b: Any) -> None:
    """spio.functional.matmul's operands: a M x K, b K x N, K and N multiples of 8."""
    _check_operands(a, b)
    check_multiple(a.shape[1], lambda: f"K (a's columns, b's rows; a {tuple(a.shape)})")
    check_multiple(b.shape[1], lambda: f"N (b's columns; b {tuple(b.shape)})")


def check_product(a: Any, b: Any, bias: Any = None) -> None:
    """spio::mm's (and with a bias spio::addmm's) operands: what the kernels compute, which
    is more than spio.functional.matmul takes (its gradients' products too). N, the length
    of the product's rows, is a multiple of 8; so is K unless M is: A is then read as K x M,
    whose rows are M long (a weight gradient grad.t() @ input of any number of rows)."""
    _check_operands(a, b)
    refuse_tangents("mm" if bias is None else "addmm", _PRODUCT_ENTRIES, a, b, bias)
    m, k = a.shape
    check_multiple(b.shape[1], lambda: f"N (b's columns; b {tuple(b.shape)})")
    # Only for sizes known here: on a traced M (a batch's rows) the rule would be a guard, and
    # a compiled model would recompile as the batch's divisibility by 8 changes; the real
    # call checks it again.
    if type(k) is int and type(m) is int and k % VECTOR and m % VECTOR:
        raise ValueError(
            f"K (a's columns, b's rows) must be a multiple of {VECTOR} unless M (a's rows) is "
            "one (the kernels move rows of 16-byte vectors, and A's rows are K long, or M "
            f"long read transposed), got a {tuple(a.shape)}"
        )
    if bias is not None:
        check_bias(bias, b.shape[1], "a", a)
