"""The launch function written out for one plan: one launch shape, one list of argument types.

A launch of a known plan runs one generated function with no loop and no attribute look-up:
it checks that the arguments still have the plan's types, checks each array's device,
takes the pointers and, on torch's current stream (the common case), calls cuda.core's
launch directly. For (tensor, tensor, int32) with torch's stream the function is

    def run(args, stream):
        if type(args) is not tuple and type(args) is not list:
            raise Replan
        try:
            a0, a1, a2, = args
        except (TypeError, ValueError):
            raise Replan from None
        if type(a0) is not T0 or type(a1) is not T1 or type(a2) is not T2:
            raise Replan
        if a0.get_device() != device or a1.get_device() != device:
            raise ArgError("not on the kernel's device")
        v0 = a0.data_ptr()
        v1 = a1.data_ptr()
        v2 = a2
        if stream is None:
            handle = current_stream(device)
            entry = streams_get(handle)
            if entry is None:
                entry = stream_entry(handle)
            core_stream, contextless, _ = entry
            if not contextless or current_device() == device:
                try:
                    core_launch(core_stream, config, core_kernel, v0, v1, v2)
                except Exception as error:
                    failed(error, core_stream, contextless, config, [v0, v1, v2])
                return
        general(stream, framework, config, [v0, v1, v2])

Everything else (an explicit stream, CuPy's stream, a default stream of another device's
context) goes through `general`, the Kernel's full stream logic. Only indices go into the
text, so equal argument kinds give equal code; the types and helpers are bound as closure
variables, which read faster than globals or attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from spio.jit._args import ArgError, Converter, torch_pointer


class Replan(Exception):  # noqa: N818 (a control-flow signal, not an error)
    """The arguments do not match the plan's types or count: make (or find) another plan."""


# run(args, stream): launch, or raise Replan / ArgError (ArgPacker.pack names the argument).
Launcher = Callable[[Sequence[Any], Any], None]


def write_launcher(
    types: Sequence[type],
    steps: Sequence[Converter | None],
    *,
    device: int,
    framework: str | None,
    torch_getters: tuple[Callable[[int], int], Callable[[], int]] | None,
    config: Any,
    core_kernel: Any,
    core_launch: Callable[..., Any],
    streams_get: Callable[[int], Any],
    stream_entry: Callable[[int], Any],
    general: Callable[[Any, str | None, Any, list[Any]], None],
    failed: Callable[[Exception, Any, bool, Any, list[Any]], None],
) -> Launcher:
    """Return the launch function of one plan (see the module doc for its text).

    steps[i] converts argument i (None: passed as is; torch_pointer: inlined as
    get_device() and data_ptr()). torch_getters, when given, inline torch's current
    stream of the kernel's device for launches without an explicit stream.
    """
    count = len(types)
    names = [f"a{index}" for index in range(count)]
    values = [f"v{index}" for index in range(count)]
    body = [
        "if type(args) is not tuple and type(args) is not list:",
        "    raise Replan",
        "try:",
        f"    {', '.join(names) + ',' if names else '()'} = args",
        "except (TypeError, ValueError):",
        "    raise Replan from None",
    ]
    if count:
        mismatch = " or ".join(f"type({name}) is not T{i}" for i, name in enumerate(names))
        body += [f"if {mismatch}:", "    raise Replan"]
    tensors = [name for name, step in zip(names, steps, strict=True) if step is torch_pointer]
    if tensors:
        elsewhere = " or ".join(f"{name}.get_device() != device" for name in tensors)
        body += [f"if {elsewhere}:", '    raise ArgError("not on the kernel\'s device")']
    for index, (name, step) in enumerate(zip(names, steps, strict=True)):
        if step is torch_pointer:
            body.append(f"v{index} = {name}.data_ptr()")
        elif step is None:
            body.append(f"v{index} = {name}")
        else:
            body += [
                f"v{index}, d{index} = steps[{index}]({name})",
                f"if d{index} != device and d{index} >= 0:",
                '    raise ArgError("not on the kernel\'s device")',
            ]
    listed = f"[{', '.join(values)}]"
    call = f"core_launch(core_stream, config, core_kernel{''.join(', ' + v for v in values)})"
    if torch_getters is not None:
        body += [
            "if stream is None:",
            "    handle = current_stream(device)",
            "    entry = streams_get(handle)",
            "    if entry is None:",
            "        entry = stream_entry(handle)",
            "    core_stream, contextless, _ = entry",
            "    if not contextless or current_device() == device:",
            "        try:",
            f"            {call}",
            "        except Exception as error:",
            f"            failed(error, core_stream, contextless, config, {listed})",
            "        return",
        ]
    body.append(f"general(stream, framework, config, {listed})")

    parameters = [f"T{index}" for index in range(count)]
    parameters += [
        "steps", "device", "framework", "config", "core_kernel", "core_launch",
        "current_stream", "current_device", "streams_get", "stream_entry", "general",
        "failed", "Replan", "ArgError",
    ]  # fmt: skip
    source = f"def make({', '.join(parameters)}):\n    def run(args, stream):\n"
    source += "".join(f"        {line}\n" for line in body) + "    return run\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, "<spio.jit launcher>", "exec"), namespace)
    current_stream, current_device = torch_getters or (None, None)
    launcher: Launcher = namespace["make"](
        *types,
        tuple(steps),
        device,
        framework,
        config,
        core_kernel,
        core_launch,
        current_stream,
        current_device,
        streams_get,
        stream_entry,
        general,
        failed,
        Replan,
        ArgError,
    )
    return launcher
