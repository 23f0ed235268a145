"""nn.Conv2d's grouped 8-channel case run by Spio, and the conversion of a model's layers.

`Conv2dGw8` is an nn.Conv2d (same parameters, same state_dict keys, so checkpoints load
either way) restricted to what spio.functional.conv2d_gw8 computes: C in = C out, groups of
8 channels, stride 1, dilation 1, zero padding. `convert` swaps every such nn.Conv2d of a
model for one, sharing its parameters and hooks, and reports the convs it left as they are
with the reasons (`ineligible_because`: among them any state a Conv2dGw8 would not carry
over, such as another buffer or a state_dict hook).

Its weight is kept in channels_last memory, torch's memory format for NHWC training (what
`model.to(memory_format=torch.channels_last)` does to every conv weight). For a C x 8 x R x
S weight that is C x R x S x 8 in memory, the layout Spio's kernels read: a call then reads
the weight in place instead of copying it (a copy kernel and about 10 us of host time per
forward pass), and its gradient is written in the same layout. `.to()`, `.half()`, state
dicts (load_state_dict with assign=True too) and optimizers keep the layout;
`weight.view(...)` needs `reshape` instead, as for any channels_last weight.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, cast, get_overloads, overload

import torch
from torch import nn
from torch.nn.utils import parametrize

from ._cuda_passes import GROUP_WIDTH
from ._functional import conv2d_gw8

_MAX_KERNEL = 7
_PADDING_WORDS = ("valid", "same")

#: The nn.Conv2d attributes that say what a conv computes. Conv2dGw8's forward pass reads
#: only the padding of them, so an assignment to any of them is checked when it is made
#: (Conv2dGw8.__setattr__), not on every call.
_SETTINGS = frozenset(
    {
        "in_channels",
        "out_channels",
        "kernel_size",
        "stride",
        "padding",
        "dilation",
        "groups",
        "padding_mode",
    }
)

#: nn.Module's per-module hook tables and the flag saying which kind its backward hooks are.
#: They are private to torch; from_conv2d shares them, so that a conv's hooks run on its
#: replacement and the handles that registered them still remove them.
_HOOK_ATTRIBUTES = (
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_backward_pre_hooks",
    "_backward_hooks",
    "_is_full_backward_hook",
)


#: The tables of a module's state_dict and load_state_dict hooks, which a Conv2dGw8 would
#: not run: convert refuses a conv that has any (_state_it_would_drop).
_STATE_DICT_HOOKS = {
    "_state_dict_pre_hooks": "a state_dict pre-hook",
    "_state_dict_hooks": "a state_dict hook",
    "_load_state_dict_pre_hooks": "a load_state_dict pre-hook",
    "_load_state_dict_post_hooks": "a load_state_dict post-hook",
}


def ineligible_because(conv: nn.Module) -> str | None:
    """Why conv cannot become a Conv2dGw8, or None when it can."""
    if isinstance(conv, Conv2dGw8):
        return "it is a Conv2dGw8 already"
    if parametrize.is_parametrized(conv):
        names = ", ".join(cast(nn.ModuleDict, conv.parametrizations).keys())
        return (
            f"its {names} has parametrizations (parametrizations.weight_norm, spectral_norm, "
            "...), which a Conv2dGw8 sharing the Parameters would skip: convert first, then "
            "add them, or remove them (parametrize.remove_parametrizations)"
        )
    if type(conv) is not nn.Conv2d:
        if isinstance(conv, nn.Conv2d):
            return (
                f"a {type(conv).__name__}, a subclass of nn.Conv2d whose own code a Conv2dGw8 "
                "would not run (only nn.Conv2d itself is converted)"
            )
        return f"a {type(conv).__name__}, not an nn.Conv2d"
    for name in ("weight", "bias"):
        tensor = getattr(conv, name)
        # Old-style wrappers replace the Parameter with a tensor they recompute before each
        # call; a Conv2dGw8 sharing the Parameters would miss the recomputation.
        if tensor is not None and not isinstance(tensor, nn.Parameter):
            return (
                f"its {name} is not a Parameter (weight_norm, spectral_norm or pruning "
                "compute it in a hook)"
            )
    return _unsupported_settings(conv) or _state_it_would_drop(conv)


def _state_it_would_drop(conv: nn.Conv2d) -> str | None:
    """What conv holds beyond a plain nn.Conv2d's weight, bias, settings and forward and
    backward hooks (which from_conv2d shares), in words, or None. A Conv2dGw8 would drop
    it: a buffer or parameter from its state_dict and its optimizer, an attribute its
    hooks read, a state_dict hook old checkpoints need."""
    held = [f"parameter {name!r}" for name in conv._parameters if name not in ("weight", "bias")]
    held += [f"buffer {name!r}" for name in conv._buffers]
    held += [f"submodule {name!r}" for name in conv._modules]
    held += [f"attribute {name!r}" for name in sorted(vars(conv).keys() - _plain_attributes())]
    held += [words for table, words in _STATE_DICT_HOOKS.items() if getattr(conv, table, None)]
    if not held:
        return None
    return (
        f"it holds {', '.join(held)}, beyond what nn.Conv2d has, which a Conv2dGw8 would "
        "not carry over"
    )


@functools.cache
def _plain_attributes() -> frozenset[str]:
    """The instance attributes of a plain nn.Conv2d, in this torch version."""
    return frozenset(vars(nn.Conv2d(GROUP_WIDTH, GROUP_WIDTH, 1, device="meta")))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_pair(value: Any) -> tuple[int, int] | None:
    """value as (rows, columns) where it is an int or a pair of ints (nn.Conv2d's forms),
    else None."""
    if _is_int(value):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(map(_is_int, value)):
        return (value[0], value[1])
    return None


def _unsupported_settings(conv: nn.Conv2d) -> str | None:
    """Which of conv's settings Conv2dGw8 cannot run, in words, or None. Any value is
    described, not raised on: after construction a setting can be assigned anything."""
    c = conv.in_channels
    if conv.out_channels != c:
        return f"{c!r} in channels and {conv.out_channels!r} out channels (they must be equal)"
    if not _is_int(c) or c < GROUP_WIDTH or c % GROUP_WIDTH:
        return f"{c!r} channels (a positive multiple of {GROUP_WIDTH})"
    if not _is_int(conv.groups) or conv.groups != c // GROUP_WIDTH:
        return f"groups = {conv.groups!r} for {c} channels (needs {GROUP_WIDTH} channels per group)"
    if _int_pair(conv.stride) != (1, 1) or _int_pair(conv.dilation) != (1, 1):
        return f"stride {conv.stride!r} and dilation {conv.dilation!r} (both must be 1)"
    if conv.padding_mode != "zeros":
        return f"padding_mode {conv.padding_mode!r} (needs 'zeros')"
    kernel = _int_pair(conv.kernel_size)
    if kernel is None:
        return f"kernel_size {conv.kernel_size!r} (an int or a pair of ints)"
    r, s = kernel
    if not (1 <= r <= _MAX_KERNEL and 1 <= s <= _MAX_KERNEL):
        return f"kernel {r} x {s} (1 to {_MAX_KERNEL} each)"
    weight_shape = tuple(conv.weight.shape)
    if weight_shape[2:] != kernel:
        return f"kernel_size {kernel} for a weight of shape {weight_shape} (they must match)"
    if not _padding_fits(conv.padding, kernel):
        return f"padding {conv.padding!r} for a {r} x {s} kernel ({_allowed_padding(kernel)})"
    return None


def _padding_fits(padding: Any, kernel: tuple[int, int]) -> bool:
    """Whether padding is one of nn.Conv2d's forms that conv2d_gw8 runs for kernel: "valid",
    "same", or an int or a pair of ints each from 0 to its extent - 1."""
    if isinstance(padding, str):
        return padding in _PADDING_WORDS
    rows_and_columns = _int_pair(padding)
    if rows_and_columns is None:
        return False
    return all(0 <= p < k for p, k in zip(rows_and_columns, kernel, strict=True))


def _allowed_padding(kernel: tuple[int, int]) -> str:
    r, s = kernel
    return (
        f"'valid', 'same', or an int or a (rows, columns) pair of ints from 0 up to "
        f"({r - 1}, {s - 1}), the kernel's extent - 1"
    )


def _check_arguments(channels: Any, kernel_size: Any, padding: Any) -> None:
    """Raise TypeError (a form nn.Conv2d does not take) or ValueError (a value out of range)
    naming the argument, where nn.Conv2d's constructor would fail obscurely, allocate a
    weight of any size or keep a padding that only the first call rejects."""
    if not _is_int(channels):
        raise TypeError(f"channels must be an int, a positive multiple of 8, got {channels!r}")
    if channels < GROUP_WIDTH or channels % GROUP_WIDTH:
        raise ValueError(f"channels must be a positive multiple of 8, got {channels}")
    kernel = _int_pair(kernel_size)
    allowed_kernel = f"an int or a pair of ints from 1 to {_MAX_KERNEL}"
    if kernel is None:
        raise TypeError(f"kernel_size must be {allowed_kernel}, got {kernel_size!r}")
    if not all(1 <= k <= _MAX_KERNEL for k in kernel):
        # A channel count where the kernel size goes: nn.Conv2d's order of arguments.
        hint = (
            f" (Conv2dGw8 takes {_SIGNATURES[0]}, or nn.Conv2d's {_SIGNATURES[1]} with "
            "in_channels == out_channels)"
            if _is_int(kernel_size) and kernel_size > _MAX_KERNEL
            else ""
        )
        raise ValueError(f"kernel_size must be {allowed_kernel}, got {kernel_size!r}{hint}")
    if not _padding_fits(padding, kernel):
        in_form = isinstance(padding, str) or _int_pair(padding) is not None
        error = ValueError if in_form else TypeError
        r, s = kernel
        raise error(
            f"padding must be {_allowed_padding(kernel)} for a {r} x {s} kernel, got {padding!r}"
        )


def _check_fixed_settings(
    channels: int, stride: Any, dilation: Any, groups: Any, padding_mode: Any
) -> None:
    """ValueError naming an nn.Conv2d setting given a value other than the one Conv2dGw8
    runs: stride 1, dilation 1, channels // 8 groups (None: that), zero padding."""
    for name, value in (("stride", stride), ("dilation", dilation)):
        if _int_pair(value) != (1, 1):
            raise ValueError(f"{name} must be 1 (Conv2dGw8 runs {name} 1 only), got {value!r}")
    if groups is not None and not (_is_int(groups) and groups == channels // GROUP_WIDTH):
        raise ValueError(
            f"groups must be channels // {GROUP_WIDTH} = {channels // GROUP_WIDTH} "
            f"({GROUP_WIDTH} channels per group), got {groups!r}"
        )
    if padding_mode != "zeros":
        raise ValueError(f"padding_mode must be 'zeros', got {padding_mode!r}")


class Conv2dGw8(nn.Conv2d):
    """A grouped nn.Conv2d with 8 channels per group, stride 1, run by Spio's kernels.

    `Conv2dGw8(channels, kernel_size, padding=0, bias=True, device=None, dtype=None)`, or
    nn.Conv2d's signature, `Conv2dGw8(in_channels, out_channels, kernel_size, stride=1,
    padding=0, dilation=1, groups=None, bias=True, padding_mode="zeros", device=None,
    dtype=None)`, taken where in_channels or out_channels is named or the second positional
    argument repeats the first (`Conv2dGw8(64, 64, 3, padding=1)`).

    Args:
        channels: input and output channels, a multiple of 8 (nn.Conv2d's in_channels and
            out_channels, equal).
        kernel_size: R (and S) from 1 to 7, an int or a pair.
        padding: an int, a pair, "valid" or "same" (nn.Conv2d's forms), each side at most the
            kernel's extent - 1.
        bias, device, dtype: as nn.Conv2d.
        stride, dilation, groups, padding_mode: nn.Conv2d's settings, taken (as keywords in
            Conv2dGw8's own form) with the values Conv2dGw8 runs only: 1, 1, channels // 8
            (or None), "zeros".

    It takes an unbatched C x H x W input as nn.Conv2d does. Under torch.autocast the input
    and the weight are cast to the autocast dtype, as autocast does for nn.Conv2d. The
    forward pass is spio.functional.conv2d_gw8, one call of it, so torch.fx traces it as one
    node.

    Assigning a setting after construction (`conv.stride = (2, 2)`, `conv.padding = 0`, ...)
    is checked when it is made: a value Conv2dGw8 cannot run is refused with a ValueError and
    the previous value kept, so the forward pass never ignores a setting.

    Raises:
        TypeError, ValueError: an argument out of scope; the message names it, what was given
            and what is allowed.
    """

    #: Whether assignments to the settings are checked; off while nn.Conv2d's constructor
    #: sets them one by one.
    _checks_settings: bool = False

    # The two signatures Conv2dGw8 takes: _constructor_arguments binds the arguments to one.
    @overload
    def __init__(
        self,
        channels: int,
        kernel_size: int | tuple[int, int],
        padding: int | tuple[int, int] | str = 0,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        stride: int | tuple[int, int] = 1,
        dilation: int | tuple[int, int] = 1,
        groups: int | None = None,
        padding_mode: str = "zeros",
    ) -> None: ...

    @overload
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] | str = 0,
        dilation: int | tuple[int, int] = 1,
        groups: int | None = None,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        arguments = _constructor_arguments(args, kwargs)
        channels = arguments["channels"]
        padding = arguments["padding"]
        _check_arguments(channels, arguments["kernel_size"], padding)
        _check_fixed_settings(
            channels,
            arguments["stride"],
            arguments["dilation"],
            arguments["groups"],
            arguments["padding_mode"],
        )
        super().__init__(
            channels,
            channels,
            arguments["kernel_size"],
            padding=padding,
            groups=channels // GROUP_WIDTH,
            bias=arguments["bias"],
            device=arguments["device"],
            dtype=arguments["dtype"],
        )
        reason = _unsupported_settings(self)
        if reason is not None:
            raise ValueError(f"Conv2dGw8 cannot run {reason}")
        _keep_channels_last(self.weight)
        self._checks_settings = True

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _SETTINGS or not self._checks_settings:
            super().__setattr__(name, value)
            return
        previous = getattr(self, name)
        super().__setattr__(name, value)
        reason = _unsupported_settings(self)
        if reason is not None:
            super().__setattr__(name, previous)
            raise ValueError(
                f"cannot set {name} = {value!r} on a Conv2dGw8: it cannot run {reason}"
            )

    def extra_repr(self) -> str:
        # The constructor's own form, so that the repr evaluates to an equal module.
        text = f"{self.in_channels}, kernel_size={self.kernel_size}"
        if self.padding != (0, 0):
            text += f", padding={self.padding!r}"
        if self.bias is None:
            text += ", bias=False"
        return text

    def _load_from_state_dict(self, *args: Any, **kwargs: Any) -> None:
        super()._load_from_state_dict(*args, **kwargs)
        # load_state_dict(assign=True) puts the checkpoint's tensor in place as it is laid out
        # (an nn.Conv2d's weight is contiguous): lay it out for the kernels again.
        _keep_channels_last(self.weight)

    @classmethod
    def from_conv2d(cls, conv: nn.Conv2d) -> Conv2dGw8:
        """A Conv2dGw8 sharing conv's parameters and hooks; ValueError says why conv does not
        qualify.

        The forward pre-hooks, forward hooks and backward hooks registered on conv run on the
        new module too, and the handles that registered them remove them from both.
        """
        reason = ineligible_because(conv)
        if reason is not None:
            raise ValueError(f"this {type(conv).__name__} cannot become a Conv2dGw8: {reason}")
        # nn.Conv2d types them as any length; ineligible_because has checked they are pairs.
        kernel_size: Any = conv.kernel_size
        padding: Any = conv.padding
        module = cls(conv.in_channels, kernel_size, padding, conv.bias is not None, device="meta")
        module.weight = conv.weight  # the same Parameter objects: optimizers keep working
        module.bias = conv.bias
        _keep_channels_last(module.weight)
        module.train(conv.training)
        _share_hooks(conv, module)
        return module

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return conv2d_gw8(input, self.weight, self.bias, self.padding)


def _unannotated(function: Any) -> inspect.Signature:
    """function's signature without self and annotations, as a message shows it."""
    parameters = list(inspect.signature(function).parameters.values())[1:]
    return inspect.Signature([p.replace(annotation=inspect.Parameter.empty) for p in parameters])


#: Conv2dGw8's own signature and nn.Conv2d's, as its __init__ overloads declare them.
_SIGNATURES = tuple(_unannotated(f) for f in get_overloads(Conv2dGw8.__init__))


def _constructor_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Conv2dGw8's arguments by its own names (channels, kernel_size, ...), bound to
    nn.Conv2d's signature where in_channels or out_channels is named or the second
    positional argument repeats the first (channels: never a kernel size, 1 to 7), else to
    its own."""
    own, conv2d = _SIGNATURES
    in_conv2d_form = bool(kwargs.keys() & {"in_channels", "out_channels"}) or (
        len(args) >= 2 and _is_int(args[0]) and _is_int(args[1]) and args[1] == args[0]
    )
    signature = conv2d if in_conv2d_form else own
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(
            f"Conv2dGw8 takes {own} or nn.Conv2d's {conv2d}; as "
            f"{'the latter' if in_conv2d_form else 'the former'}: {error}"
        ) from None
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    if in_conv2d_form:
        in_channels = arguments.pop("in_channels")
        out_channels = arguments.pop("out_channels")
        if out_channels != in_channels:
            raise ValueError(
                "in_channels and out_channels must be equal (Conv2dGw8 maps C channels to C), "
                f"got {in_channels!r} and {out_channels!r}"
            )
        arguments["channels"] = in_channels
    return arguments


def _keep_channels_last(weight: torch.Tensor) -> None:
    """Lay weight out in channels_last memory in place (the same Parameter object, so
    optimizers and the modules sharing it keep working); a no-op where it is already."""
    if not weight.is_contiguous(memory_format=torch.channels_last):
        # In inference mode exactly where weight is an inference tensor, whatever the
        # caller's mode: a copy made inside it would be one, which no later training step
        # could save for backward (and the Parameter is shared with the model that convert
        # was given).
        with torch.inference_mode(weight.is_inference()), torch.no_grad():
            weight.data = weight.data.contiguous(memory_format=torch.channels_last)


def _share_hooks(source: nn.Module, target: nn.Module) -> None:
    """Give target source's hook tables, the same objects, so that source's hooks run on
    target and their handles remove them. (The flag of the backward hooks' kind is a value,
    copied: register hooks on the replacement, not on the module it replaced.)"""
    for name in _HOOK_ATTRIBUTES:
        # A torch version without one of these keeps target's own.
        value = getattr(source, name, None)
        if value is not None:
            setattr(target, name, value)


class Conversion(list[str]):
    """What convert did: the names of the layers it swapped for Conv2dGw8s (the list
    itself, as convert has always returned), and in `skipped` the names of the nn.Conv2d
    layers it left as they are, each with the reason (ineligible_because)."""

    def __init__(self, converted: list[str], skipped: dict[str, str]) -> None:
        super().__init__(converted)
        #: Each nn.Conv2d left as it is, by name: why it is not a Conv2dGw8.
        self.skipped = skipped


def convert(model: nn.Module) -> Conversion:
    """Replace, in place, every nn.Conv2d of model that Spio runs (ineligible_because) with a
    Conv2dGw8 sharing its parameters and hooks; return the converted modules' names, a list
    whose `skipped` maps the name of each nn.Conv2d left as it is to the reason.

    model itself is changed, and stays the model to call: `convert(model)`, then
    `model(x)` (the result is a list of names, not a model). A conv used in several places
    becomes one Conv2dGw8 used in the same places, each of its names listed. The
    replacements are all made before any is put in place, so an error leaves model's layers
    as they were. The shared weights are laid out in channels_last memory (see the module
    doc). Convert a model before wrapping it in DistributedDataParallel or FSDP, which lay
    out their buckets by the parameters' strides.

    Raises:
        TypeError: model is itself an nn.Conv2d, which convert cannot replace in place.
    """
    if type(model) is nn.Conv2d:
        raise TypeError(
            "convert replaces the layers inside a model, not the model itself; for a single "
            "nn.Conv2d, use Conv2dGw8.from_conv2d(conv)"
        )
    replacements: dict[int, Conv2dGw8] = {}
    swaps: list[tuple[nn.Module, str, Conv2dGw8]] = []
    names: list[str] = []
    skipped: dict[str, str] = {}
    for name, parent in model.named_modules():
        # _modules rather than named_children(), which lists a module held twice once.
        for slot, child in parent._modules.items():
            if not isinstance(child, nn.Conv2d) or isinstance(child, Conv2dGw8):
                continue
            path = f"{name}.{slot}" if name else slot
            reason = ineligible_because(child)
            if reason is not None:
                skipped[path] = reason
                continue
            if id(child) not in replacements:
                replacements[id(child)] = Conv2dGw8.from_conv2d(child)
            swaps.append((parent, slot, replacements[id(child)]))
            names.append(path)
    for parent, slot, module in swaps:
        setattr(parent, slot, module)
    return Conversion(names, skipped)
