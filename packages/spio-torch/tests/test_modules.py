"""Conv2dGw8 and convert: nn.Conv2d's grouped 8-channel case run by Spio (CPU path)."""

from __future__ import annotations

import copy
import io
import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from devices import DEVICES
from torch import nn
from torch.nn.utils import prune

import spio.functional as spio_f
from spio.torch import Conv2dGw8, convert, ineligible_because


def test_module_is_an_nn_conv2d_and_runs_the_operator() -> None:
    module = Conv2dGw8(16, 3, padding=1, dtype=torch.float16)
    assert isinstance(module, nn.Conv2d)
    assert module.groups == 2
    x = torch.randn(2, 16, 6, 5).half()
    expected = spio_f.conv2d_gw8(x, module.weight, module.bias, padding=1)
    torch.testing.assert_close(module(x), expected, atol=0, rtol=0)
    assert set(module.state_dict()) == {"weight", "bias"}


def test_convert_swaps_eligible_convs_and_shares_their_parameters() -> None:
    model = nn.Sequential(
        nn.Conv2d(16, 16, 3, padding=1, groups=2),  # converted
        nn.ReLU(),
        nn.Sequential(nn.Conv2d(16, 16, 5, padding="same", groups=2, bias=False)),  # converted
        nn.Conv2d(16, 32, 1),  # out != in
        nn.Conv2d(32, 32, 3, stride=2, groups=4),  # stride
    ).half()
    weight = model[0].weight
    x = torch.randn(1, 16, 8, 8).half()
    expected = model(x)
    names = convert(model)
    assert names == ["0", "2.0"]
    assert isinstance(model[0], Conv2dGw8)
    assert isinstance(model[2][0], Conv2dGw8)
    assert type(model[3]) is nn.Conv2d
    assert type(model[4]) is nn.Conv2d
    assert model[0].weight is weight  # an optimizer built before still holds it
    assert weight.is_contiguous(memory_format=torch.channels_last)  # laid out for Spio
    assert model[2][0].bias is None
    torch.testing.assert_close(model(x), expected, atol=1e-2, rtol=1e-2)


def test_the_weight_is_kept_in_channels_last_memory() -> None:
    # C x 8 x R x S in channels_last memory is C x R x S x 8: what the kernels read in place.
    module = Conv2dGw8(16, 3, padding=1)
    assert module.weight.is_contiguous(memory_format=torch.channels_last)
    assert not module.weight.is_contiguous()
    plain = nn.Conv2d(16, 16, 3, padding=1, groups=2)
    module.load_state_dict(plain.state_dict())
    assert module.weight.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(module.weight, plain.weight)
    module.half()
    assert module.weight.dtype == torch.float16
    assert module.weight.is_contiguous(memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(module.parameters())
    x = torch.randn(2, 16, 6, 6).half()
    module(x).float().sum().backward()
    optimizer.step()
    assert module.weight.is_contiguous(memory_format=torch.channels_last)


def test_checkpoints_load_either_way() -> None:
    plain = nn.Conv2d(16, 16, 3, padding=1, groups=2)
    spio = Conv2dGw8(16, 3, padding=1)
    spio.load_state_dict(plain.state_dict())
    assert torch.equal(spio.weight, plain.weight)
    other = nn.Conv2d(16, 16, 3, padding=1, groups=2)
    other.load_state_dict(spio.state_dict())
    assert torch.equal(other.weight, plain.weight)


def test_autocast_casts_input_and_weight() -> None:
    module = Conv2dGw8(16, 3, padding=1)  # fp32 parameters, as under mixed precision
    x = torch.randn(1, 16, 5, 5)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = module(x)
    assert y.dtype == torch.bfloat16
    expected = nn.functional.conv2d(x, module.weight, module.bias, padding=1, groups=2)
    torch.testing.assert_close(y.float(), expected, atol=0.1, rtol=0.05)


@pytest.mark.parametrize(
    ("conv", "reason"),
    [
        (nn.Conv2d(16, 16, 3, groups=4), "groups = 4 for 16 channels"),
        (nn.Conv2d(16, 16, 3, dilation=2, groups=2), "dilation (2, 2)"),
        (nn.Conv2d(16, 16, 3, padding=1, groups=2, padding_mode="reflect"), "padding_mode"),
        (nn.Conv2d(16, 16, 9, groups=2), "kernel 9 x 9"),
        (nn.Conv2d(16, 16, 3, padding=3, groups=2), "padding (3, 3) for a 3 x 3 kernel"),
        (nn.Conv2d(16, 16, 3, padding=-1, groups=2), "padding (-1, -1) for a 3 x 3 kernel"),
        (nn.Linear(4, 4), "a Linear, not an nn.Conv2d"),
        (Conv2dGw8(16, 3), "it is a Conv2dGw8 already"),
        (nn.LazyConv2d(16, 3), "a LazyConv2d, a subclass of nn.Conv2d"),
        (
            nn.utils.parametrizations.weight_norm(nn.Conv2d(16, 16, 3, groups=2)),
            "its weight has parametrizations",
        ),
    ],
)
def test_ineligible_convs_say_why(conv: nn.Module, reason: str) -> None:
    found = ineligible_because(conv)
    assert found is not None
    assert reason in found
    if isinstance(conv, nn.Conv2d) and type(conv) is nn.Conv2d:
        with pytest.raises(ValueError, match="cannot become a Conv2dGw8"):
            Conv2dGw8.from_conv2d(conv)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        ((12, 3), {}, ValueError, "channels must be a positive multiple of 8, got 12"),
        (("16", 3), {}, TypeError, "channels must be an int, .*got '16'"),
        ((8.0, 3), {}, TypeError, "channels must be an int, .*got 8.0"),
        ((True, 3), {}, TypeError, "channels must be an int, .*got True"),
        ((16, (3,)), {}, TypeError, r"kernel_size must be .* from 1 to 7, got \(3,\)"),
        ((16, (3, 3, 3)), {}, TypeError, r"kernel_size must be .*, got \(3, 3, 3\)"),
        ((16, 8), {}, ValueError, "kernel_size must be .* from 1 to 7, got 8"),
        ((16, -1), {}, ValueError, "kernel_size must be .*, got -1"),
        ((16, 3), {"padding": (1, 2, 3, 4)}, TypeError, r"padding must be .*got \(1, 2, 3, 4\)"),
        ((16, 3), {"padding": 1.5}, TypeError, "padding must be .*got 1.5"),
        ((16, 3), {"padding": "full"}, ValueError, "padding must be .*'same'.*got 'full'"),
        ((16, 3), {"padding": -1}, ValueError, r"from 0 up to \(2, 2\).*got -1"),
        ((16, (3, 5)), {"padding": (1, 5)}, ValueError, r"up to \(2, 4\).*got \(1, 5\)"),
    ],
)
def test_constructor_errors_name_the_argument_the_value_and_what_is_allowed(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Conv2dGw8(*args, **kwargs)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("stride", (2, 2)),
        ("stride", 2),
        ("dilation", (2, 2)),
        ("padding_mode", "reflect"),
        ("groups", 1),
        ("padding", (3, 3)),
        ("padding", -1),
        ("padding", 1.5),
        ("padding", "full"),
        ("kernel_size", (5, 5)),
        ("in_channels", 32),
        ("out_channels", 32),
    ],
)
def test_assigning_a_setting_forward_would_ignore_raises_and_keeps_the_old_value(
    name: str, value: Any
) -> None:
    # The forward pass reads the padding alone: a stride of 2 taken in place (as torchvision
    # and timm helpers do) would have given a full-size output.
    module = Conv2dGw8(16, 3, padding=1, dtype=torch.float16)
    previous = getattr(module, name)
    with pytest.raises(ValueError, match=rf"cannot set {name} = {re.escape(repr(value))} on a "):
        setattr(module, name, value)
    assert getattr(module, name) == previous
    x = torch.randn(1, 16, 5, 5).half()
    assert module(x).shape == (1, 16, 5, 5)


def test_an_assigned_padding_is_the_one_forward_runs() -> None:
    module = Conv2dGw8(16, 3, padding=1, dtype=torch.float16)
    module.padding = 0
    module.stride = 1  # what it already runs, in another of nn.Conv2d's forms
    x = torch.randn(1, 16, 5, 5).half()
    expected = spio_f.conv2d_gw8(x, module.weight, module.bias, padding=0)
    assert expected.shape == (1, 16, 3, 3)
    torch.testing.assert_close(module(x), expected, atol=0, rtol=0)


def test_deepcopy_torch_save_and_torch_compile_keep_the_module_working() -> None:
    module = Conv2dGw8(16, 3, padding=1, dtype=torch.float16)
    x = torch.randn(2, 16, 6, 6).half()
    expected = module(x)
    buffer = io.BytesIO()
    torch.save(module, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    for twin in (copy.deepcopy(module), loaded):
        assert type(twin) is Conv2dGw8
        assert twin.weight.is_contiguous(memory_format=torch.channels_last)
        torch.testing.assert_close(twin(x), expected, atol=0, rtol=0)
        with pytest.raises(ValueError, match="cannot set stride"):
            twin.stride = (2, 2)
    compiled = torch.compile(module, backend="aot_eager", fullgraph=True)
    torch.testing.assert_close(compiled(x), expected, atol=0, rtol=0)


@pytest.mark.parametrize(
    ("wrap", "tensor"),
    [
        (nn.utils.weight_norm, "weight"),
        (nn.utils.spectral_norm, "weight"),
        (lambda conv: prune.l1_unstructured(conv, "weight", amount=0.5), "weight"),
        (lambda conv: prune.l1_unstructured(conv, "bias", amount=0.5), "bias"),
    ],
    ids=["weight_norm", "spectral_norm", "pruned weight", "pruned bias"],
)
def test_convert_leaves_convs_whose_weight_a_hook_computes(
    wrap: Callable[[nn.Conv2d], nn.Module], tensor: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # old-style weight_norm is deprecated
        wrapped = wrap(nn.Conv2d(16, 16, 3, padding=1, groups=2))
    reason = ineligible_because(wrapped)
    assert reason is not None
    assert f"its {tensor} is not a Parameter" in reason
    model = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, groups=2), nn.ReLU(), wrapped)
    assert convert(model) == ["0"]
    assert model[2] is wrapped


def test_convert_swaps_nothing_when_a_replacement_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    model = nn.Sequential(
        nn.Conv2d(16, 16, 3, padding=1, groups=2), nn.Conv2d(16, 16, 3, padding=1, groups=2)
    )
    from_conv2d = Conv2dGw8.from_conv2d
    made: list[Conv2dGw8] = []

    def fail_on_the_second(conv: nn.Conv2d) -> Conv2dGw8:
        if made:
            raise RuntimeError("out of memory")
        made.append(from_conv2d(conv))
        return made[0]

    monkeypatch.setattr(Conv2dGw8, "from_conv2d", fail_on_the_second)
    with pytest.raises(RuntimeError, match="out of memory"):
        convert(model)
    assert [type(layer) for layer in model] == [nn.Conv2d, nn.Conv2d]


def test_convert_carries_a_convs_hooks_over_and_their_handles_still_remove_them() -> None:
    conv = nn.Conv2d(16, 16, 3, padding=1, groups=2).half()
    model = nn.Sequential(conv, nn.ReLU())
    calls: list[str] = []
    handles = [
        conv.register_forward_pre_hook(lambda module, args: calls.append("pre")),
        conv.register_forward_pre_hook(
            lambda module, args, kwargs: calls.append("pre with kwargs"), with_kwargs=True
        ),
        conv.register_forward_hook(lambda module, args, output: calls.append("forward")),
        conv.register_forward_hook(
            lambda module, args, kwargs, output: calls.append("always, with kwargs"),
            with_kwargs=True,
            always_call=True,
        ),
        conv.register_full_backward_hook(
            lambda module, grad_input, grad_output: calls.append("backward")
        ),
    ]
    assert convert(model) == ["0"]
    assert isinstance(model[0], Conv2dGw8)
    x = torch.randn(1, 16, 5, 5).half().requires_grad_()
    model(x).float().sum().backward()
    assert calls == ["pre", "pre with kwargs", "forward", "always, with kwargs", "backward"]
    calls.clear()
    for handle in handles:
        handle.remove()
    model(x).float().sum().backward()
    assert calls == []


def test_from_conv2d_runs_the_convs_hooks_on_the_new_module() -> None:
    conv = nn.Conv2d(16, 16, 3, padding=1, groups=2).half()
    hooked: list[nn.Module] = []
    handle = conv.register_forward_hook(lambda module, args, output: hooked.append(module))
    module = Conv2dGw8.from_conv2d(conv)
    x = torch.randn(1, 16, 5, 5).half()
    module(x)
    assert hooked == [module]
    handle.remove()
    module(x)
    assert hooked == [module]


def test_convert_converts_every_use_of_a_shared_conv() -> None:
    conv = nn.Conv2d(16, 16, 3, padding=1, groups=2)
    model = nn.Sequential(conv, nn.ReLU(), conv)
    assert convert(model) == ["0", "2"]
    assert isinstance(model[0], Conv2dGw8)
    assert model[2] is model[0]  # still one layer, applied twice
    assert model[0].weight is conv.weight


def test_convert_refuses_a_bare_conv_and_points_to_from_conv2d() -> None:
    # convert cannot replace the object it was given; it used to return [] silently.
    with pytest.raises(TypeError, match=r"Conv2dGw8\.from_conv2d\(conv\)"):
        convert(nn.Conv2d(16, 16, 3, padding=1, groups=2))


def test_an_fp32_module_is_told_how_to_run_in_half_precision() -> None:
    conv = Conv2dGw8(16, 3, padding=1)  # fp32 parameters, as nn.Conv2d's default
    with pytest.raises(TypeError, match=r"cast it \(a module: \.half\(\) or \.bfloat16\(\)\)"):
        conv(torch.randn(1, 16, 6, 6))


# ---- the meta device, state it would drop, inference mode, assign, tracers -----------------


def test_a_module_on_the_meta_device_runs_its_forward_for_shapes() -> None:
    # torch.is_autocast_enabled("meta") raised in the forward pass.
    module = Conv2dGw8(16, 3, padding=1, device="meta", dtype=torch.float16)
    assert module(torch.empty(2, 16, 8, 8, device="meta", dtype=torch.float16)).shape == (
        2,
        16,
        8,
        8,
    )
    with torch.device("meta"):
        model = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, groups=2, dtype=torch.float16))
        convert(model)
        assert model(torch.empty(2, 16, 8, 8, dtype=torch.float16)).shape == (2, 16, 8, 8)


def _with_buffer(conv: nn.Conv2d) -> None:
    conv.register_buffer("scale", torch.ones(16))


def _with_parameter(conv: nn.Conv2d) -> None:
    conv.register_parameter("gate", nn.Parameter(torch.zeros(1)))


def _with_submodule(conv: nn.Conv2d) -> None:
    conv.norm = nn.BatchNorm2d(16)


def _with_attribute(conv: nn.Conv2d) -> None:
    conv.tag = "stem"


def _with_state_dict_hook(conv: nn.Conv2d) -> None:
    conv._register_state_dict_hook(lambda module, state, prefix, local: None)


def _with_load_post_hook(conv: nn.Conv2d) -> None:
    conv.register_load_state_dict_post_hook(lambda module, keys: None)


@pytest.mark.parametrize(
    ("add", "reason"),
    [
        (_with_buffer, "buffer 'scale'"),
        (_with_parameter, "parameter 'gate'"),
        (_with_submodule, "submodule 'norm'"),
        (_with_attribute, "attribute 'tag'"),
        (_with_state_dict_hook, "a state_dict hook"),
        (_with_load_post_hook, "a load_state_dict post-hook"),
    ],
)
def test_convert_leaves_a_conv_holding_state_it_would_drop_and_says_why(
    add: Callable[[nn.Conv2d], None], reason: str
) -> None:
    # convert dropped them: the state_dict lost keys, hooks reading them failed.
    model = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, groups=2))
    add(model[0])
    keys = set(model.state_dict())
    found = ineligible_because(model[0])
    assert found is not None
    assert reason in found
    assert "would not carry over" in found
    assert convert(model) == []
    assert type(model[0]) is nn.Conv2d
    assert set(model.state_dict()) == keys


def test_convert_in_inference_mode_leaves_the_weights_trainable() -> None:
    # The channels_last copy made in inference mode was an inference tensor, which the next
    # training step could not save for backward.
    model = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, groups=2)).to(torch.bfloat16)
    with torch.inference_mode():
        convert(model)
    assert not model[0].weight.is_inference()
    x = torch.randn(2, 16, 6, 6, dtype=torch.bfloat16, requires_grad=True)
    model(x).float().sum().backward()
    assert model[0].weight.grad is not None


def test_load_state_dict_with_assign_keeps_the_channels_last_layout() -> None:
    # The checkpoint's contiguous tensor took the weight's place as it was laid out.
    plain = nn.Conv2d(16, 16, 3, padding=1, groups=2, dtype=torch.float16)
    with torch.device("meta"):
        module = Conv2dGw8(16, 3, padding=1, dtype=torch.float16)
    module.load_state_dict(plain.state_dict(), assign=True)
    assert module.weight.device.type == "cpu"
    assert module.weight.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(module.weight, plain.weight)


def test_fx_symbolic_trace_records_the_module_as_one_call() -> None:
    # torch.is_autocast_enabled was handed an FX proxy for the device type.
    model = nn.Sequential(Conv2dGw8(16, 3, padding=1, dtype=torch.bfloat16), nn.ReLU())
    traced = torch.fx.symbolic_trace(model)
    calls = [node.target for node in traced.graph.nodes if node.op == "call_function"]
    assert calls == [spio_f.conv2d_gw8]  # (nn.ReLU stays a call of the module)
    x = torch.randn(2, 16, 6, 6, dtype=torch.bfloat16)
    assert torch.equal(traced(x), model(x))


@pytest.mark.parametrize("image_size", ["static", "dynamic"])
@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
@pytest.mark.parametrize("device", DEVICES)
def test_torch_export_takes_an_unbounded_batch_and_image_size(
    device: str, strict: bool, image_size: str
) -> None:
    # Strict export (Dynamo) failed on an unbounded batch: the 2**31-element limit was checked
    # where `type(n) is int`, which Dynamo answers True for a traced size, so it became a
    # guard that the batch's declared range broke.
    from torch.export import Dim, export

    model = nn.Sequential(Conv2dGw8(16, 3, padding=1, dtype=torch.float16), nn.ReLU())
    model = model.to(device, memory_format=torch.channels_last)
    example = torch.randn(2, 16, 6, 6, dtype=torch.float16, device=device)
    dims = {0: Dim("batch")}
    shapes = [(5, 16, 6, 6), (1, 16, 6, 6), (0, 16, 6, 6)]
    if image_size == "dynamic":
        dims |= {2: Dim("height", min=1), 3: Dim("width", min=1)}
        shapes += [(1, 16, 1, 1), (3, 16, 9, 4)]
    exported = export(model, (example,), dynamic_shapes=(dims,), strict=strict)
    for shape in shapes:
        x = torch.randn(*shape, dtype=torch.float16, device=device)
        torch.testing.assert_close(exported.module()(x), model(x), atol=0, rtol=0)


# ---- nn.Conv2d's signature, input and repr ---------------------------------------------------


def test_the_wrong_number_of_input_channels_is_blamed_on_the_input() -> None:
    # The message said the weight must be 24 x 8 x R x S.
    module = Conv2dGw8(16, 3, padding=1, dtype=torch.float16)
    with pytest.raises(ValueError, match=r"input has 24 channels, but weight .* is for 16"):
        module(torch.randn(1, 24, 4, 4, dtype=torch.float16))


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((16, 16, 3), {"padding": 1}),
        ((16, 16, 3, 1, 1), {}),
        ((), {"in_channels": 16, "out_channels": 16, "kernel_size": 3, "padding": 1}),
        ((16, 16, 3), {"stride": 1, "padding": 1, "dilation": (1, 1), "groups": 2}),
        ((16, 3, 1), {"stride": 1, "groups": 2, "padding_mode": "zeros"}),
    ],
)
def test_nn_conv2ds_signature_is_taken(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    # Conv2dGw8(16, 16, 3) said "kernel_size must be ... got 16"; nn.Conv2d's keywords were
    # unexpected.
    module = Conv2dGw8(*args, **kwargs)
    assert module.in_channels == module.out_channels == 16
    assert module.kernel_size == (3, 3)
    assert module.padding == (1, 1)
    assert module.groups == 2


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        ((16, 32, 3), {}, ValueError, r"got 32 \(Conv2dGw8 takes \(channels, kernel_size, "),
        ((), {"in_channels": 16, "out_channels": 32, "kernel_size": 3}, ValueError, "equal"),
        ((16, 16, 3), {"stride": 2}, ValueError, "stride must be 1 .*got 2"),
        ((16, 3), {"dilation": 2}, ValueError, "dilation must be 1 .*got 2"),
        ((16, 16, 3), {"groups": 1}, ValueError, r"groups must be channels // 8 = 2 .*got 1"),
        ((16, 3), {"padding_mode": "reflect"}, ValueError, "padding_mode must be 'zeros'"),
        ((16, 16), {}, TypeError, "nn.Conv2d's .*missing a required argument: 'kernel_size'"),
        ((16, 3), {"kernel": 3}, TypeError, r"Conv2dGw8 takes \(channels, kernel_size, .*'kernel'"),
    ],
)
def test_nn_conv2d_arguments_it_cannot_run_are_refused_by_name(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Conv2dGw8(*args, **kwargs)


@pytest.mark.parametrize(
    "module",
    [
        Conv2dGw8(16, 3, padding=1),
        Conv2dGw8(24, (3, 5), padding="same", bias=False),
        Conv2dGw8(8, 1),
    ],
    ids=repr,
)
def test_repr_evaluates_to_an_equal_module(module: Conv2dGw8) -> None:
    # The repr was nn.Conv2d's, which Conv2dGw8's constructor did not take.
    twin = eval(repr(module), {"Conv2dGw8": Conv2dGw8})
    assert repr(twin) == repr(module)
    for name in ("in_channels", "kernel_size", "padding", "groups"):
        assert getattr(twin, name) == getattr(module, name)
    assert (twin.bias is None) == (module.bias is None)


def test_unbatched_input_is_taken_as_nn_conv2d_takes_it() -> None:
    # A C x H x W input raised "input must be 4-D".
    module = Conv2dGw8(16, 3, padding=1, dtype=torch.float16)
    x = torch.randn(1, 16, 6, 5, dtype=torch.float16)
    y = module(x[0])
    assert y.shape == (16, 6, 5)
    assert torch.equal(y, module(x)[0])


def test_convert_reports_the_convs_it_skipped_and_why() -> None:
    model = nn.Sequential(
        nn.Conv2d(16, 16, 3, padding=1, groups=2),
        nn.Sequential(nn.Conv2d(16, 32, 1), Conv2dGw8(32, 3, padding=1)),
        nn.Conv2d(32, 32, 3, stride=2, groups=4),
    )
    result = convert(model)
    assert result == ["0"]  # still the list of names convert has always returned
    assert result.skipped == {
        "1.0": "16 in channels and 32 out channels (they must be equal)",
        "2": "stride (2, 2) and dilation (1, 1) (both must be 1)",
    }
    assert convert(model).skipped == result.skipped  # a Conv2dGw8 is not a skipped conv
