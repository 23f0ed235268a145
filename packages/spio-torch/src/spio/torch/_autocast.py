"""torch.autocast for Spio's entries and operators, as autocast treats torch's conv2d and
linear: in an autocast-enabled region their floating-point operands run in the region's
dtype (float16 or bfloat16).

The functional entries cast their operands themselves (autocast_operands), since on CUDA in
eager mode they skip the operators, and with them the dispatcher's autocast keys. The
operators get the same rule as a kernel of those keys (register_autocast_rule), for direct
`torch.ops.spio` calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

#: Whether an autocast region is enabled for any device: one C call (about 0.1 us), which
#: the entries make on every call, looking further only where it holds.
autocast_enabled = torch._C._is_any_autocast_enabled


def _region_dtype(tensor: Any) -> torch.dtype | None:
    """The dtype of the autocast region enabled for tensor's device, or None where none is
    (or tensor is no tensor: the checks then refuse it by name)."""
    if not isinstance(tensor, torch.Tensor):
        return None
    device_type = tensor.device.type
    # is_autocast_enabled raises for device types autocast does not know, such as "meta".
    if not torch.amp.is_autocast_available(device_type):
        return None
    if not torch.is_autocast_enabled(device_type):
        return None
    return torch.get_autocast_dtype(device_type)


def _cast(tensor: Any, dtype: torch.dtype) -> Any:
    """tensor in dtype where autocast casts an operand: a floating-point tensor other than
    float64 (which torch's lower-precision ops leave as it is too)."""
    if (
        isinstance(tensor, torch.Tensor)
        and tensor.is_floating_point()
        and tensor.dtype != torch.float64
    ):
        return tensor.to(dtype)
    return tensor


def autocast_operands(*operands: Any) -> tuple[Any, ...]:
    """operands cast to the dtype of the autocast region enabled for the first one's device,
    as they are where none is. The entries call it only where some region is enabled
    (autocast_enabled)."""
    dtype = _region_dtype(operands[0])
    if dtype is None:
        return operands
    return tuple(_cast(operand, dtype) for operand in operands)


#: The registrations' library; kept alive for as long as the process runs them.
_LIBRARY = torch.library.Library("spio", "FRAGMENT")
_AUTOCAST_KEYS = {"cpu": "AutocastCPU", "cuda": "AutocastCUDA"}


def register_autocast_rule(operator: str, cast_arguments: Sequence[int]) -> None:
    """Give spio::operator autocast's rule on CPU and CUDA: the arguments at positions
    cast_arguments cast to the region's dtype, then the operator run with autocast off for
    the device. (torch.library.register_autocast casts to one dtype fixed at registration,
    not the region's, and casts every floating argument, where Spio's bias is added in
    fp32.)"""
    op = getattr(torch.ops.spio, operator).default
    for device_type, key in _AUTOCAST_KEYS.items():
        _LIBRARY.impl(
            operator, _autocast_kernel(op, device_type, key, cast_arguments), key, with_keyset=True
        )


def _autocast_kernel(op: Any, device_type: str, key: str, cast_arguments: Sequence[int]) -> Any:
    excluded = torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, key))

    def kernel(keyset: Any, *args: Any) -> Any:
        dtype = torch.get_autocast_dtype(device_type)
        cast = [_cast(a, dtype) if i in cast_arguments else a for i, a in enumerate(args)]
        # As torch's own autocast kernels: the operator below runs outside the region.
        with torch._C._ExcludeDispatchKeyGuard(excluded):
            return op(*cast)

    return kernel
