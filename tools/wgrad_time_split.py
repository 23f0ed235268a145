"""Where the wgrad pass's time goes on one layer: its main kernel with parts cut out, and a
timeline of each block's phases (GPU).

    python tools/wgrad_time_split.py [--layers NxCxHxWxK ...]

For each layer (the N = 32 target's, or --layers' N x C x H x W x K: K x K filters, padding
K // 2) and the launcher's deterministic config and its atomic-sums twin:

- cut: the whole pass, the main kernel alone, and the main kernel's source with one part
  cut out (its sums are then wrong; only the time counts): `no_global_store` (the block's
  sums are added up in shared memory but neither stored nor added atomically),
  `slabs_only` (the warps' accumulators reach shared memory, then the block ends),
  `walk_only` (the block ends after its walk), `no_walk` (a walk of no rows: launch, set-up
  and the end alone) and `empty` (the block ends once the previous grid has). CUDA-graph
  replays of 20 launches, three alternating rounds, the fastest round's median.
- timeline: the main kernel with `%globaltimer` read by each block at its entry, after the
  wait for the previous grid, at the walk's end, after the accumulators' stores to shared
  memory and at its end, over 20 launches in a CUDA graph: when the walks and the blocks
  end against the earliest start, and the gap from one launch's last block to the next
  launch's first; then, with each block's `%smid`, the walks' spread within a launch and
  whether it follows the SMs or the blocks (the data each walks): each one's mean walk over
  the even launches against the odd ones.

The cuts and probes are text edits of the kernel's source at fixed places (ANCHOR_*): the
tool stops with a message where the source no longer has one of them.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import torch
from wgrad_timing import layers_and_copy

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, bench, wgrad, wgrad_spec
from spio.kernels.conv2d_gw8.fprop import compile_requested
from spio.perfmodel import choose_config

NAMED = [(32, 64, 64, 64, 3)]
LAUNCHES = 20
ROUNDS = 3

ANCHOR_WAIT = "    spio::arch::wait_for_previous_grids();\n"
ANCHOR_ALLOW = "    spio::arch::allow_next_grid_launch();\n"
ANCHOR_WALK_END = "    sync_walkers();  // the rings' memory now holds the accumulators\n"
ANCHOR_SLABS_END = "#ifdef CONV2D_GW8_ATOMIC_SUMS\n    // One sum of the group slice's weights"
ANCHOR_STORE = "        *reinterpret_cast<float4*>(partial[cell].get()) = sum;"
ANCHOR_ADD = "        add_atomically(partial[cell].get(), sum);"
ANCHOR_WALK_ROWS = "    int walk_rows = kWalkImages * step_rows + skip_top;"
ANCHOR_END = "    });\n#ifdef CONV2D_GW8_BIAS_GRAD\n    // One thread per output channel"

# A value no sum takes: stores under it keep the compiler from dropping the work before them.
_NEVER = "1.2345e-30f"
_KEEP_ACCUMULATORS = (
    "    { float t = 0.0f;\n"
    "      for (int i = 0; i < AccTile::storage_size(); ++i)\n"
    "        for (int e = 0; e < AccFrag::size(); ++e) t += acc_data[i].get(e);\n"
    f"      if (t == {_NEVER}) partials_ptr[threadIdx.x] = t; }}\n"
)
CUTS: dict[str, list[tuple[str, str]]] = {
    "main kernel": [],
    "no_global_store": [
        (ANCHOR_STORE, f"        if (sum.x == {_NEVER})\n" + ANCHOR_STORE),
        (ANCHOR_ADD, f"        if (sum.x == {_NEVER})\n" + ANCHOR_ADD),
    ],
    "slabs_only": [(ANCHOR_SLABS_END, "    return;\n" + ANCHOR_SLABS_END)],
    "walk_only": [(ANCHOR_WALK_END, ANCHOR_WALK_END + _KEEP_ACCUMULATORS + "    return;\n")],
    "no_walk": [
        (ANCHOR_WALK_ROWS, "    int walk_rows = 0 * (kWalkImages * step_rows + skip_top);")
    ],
    "empty": [(ANCHOR_WAIT, ANCHOR_WAIT + "    if (blockDim.x > 0) return;\n")],
}


def _clock(name: str) -> str:
    """A statement that reads %globaltimer into t_<name>."""
    return (
        f'unsigned long long t_{name}; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_{name}));'
    )


#: After the workspace's partial sums (RECORD_OFFSET floats in): a launch counter per block,
#: then per block and launch eight u64: the %globaltimer at entry, at start (the previous grid
#: done), at the walk's end, once the accumulators are in shared memory and at the end, the
#: launch's index and the SM the block ran on (one unused).
RECORD_OFFSET = 64
_PROBES = [
    (ANCHOR_ALLOW, "    " + _clock("entry") + "\n" + ANCHOR_ALLOW),
    (ANCHOR_WAIT, ANCHOR_WAIT + "    " + _clock("start") + "\n"),
    (ANCHOR_WALK_END, ANCHOR_WALK_END + "    " + _clock("walk") + "\n"),
    (ANCHOR_SLABS_END, "    " + _clock("slabs") + "\n" + ANCHOR_SLABS_END),
    (
        ANCHOR_END,
        "    });\n    sync_walkers();\n    if (threadIdx.x == 0) {\n        "
        + _clock("end")
        + "\n        unsigned long long* const base = reinterpret_cast<unsigned long long*>("
        f"partials_ptr + static_cast<long long>(kPartials) * kWeights + {RECORD_OFFSET});\n"
        "        const unsigned long long launch = atomicAdd(base + blockIdx.x, 1ull);\n"
        f"        unsigned long long* const at = base + gridDim.x + "
        f"(blockIdx.x * {LAUNCHES} + launch % {LAUNCHES}) * 8;\n"
        "        at[0] = t_entry; at[1] = t_start; at[2] = t_walk; at[3] = t_slabs;\n"
        "        at[4] = t_end; at[5] = launch;\n"
        '        unsigned smid; asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));\n'
        "        at[6] = smid;\n    }\n" + ANCHOR_END[len("    });\n") :],
    ),
]


def edited_request(
    params: Conv2dGw8Params, config: Any, arch: str, edits: list[tuple[str, str]]
) -> Any:
    """wgrad's compile request for config with each (anchor, replacement) applied once."""
    request = wgrad.compile_request(params, config, arch)
    source = request.source
    for anchor, replacement in edits:
        if source.count(anchor) != 1:
            raise SystemExit(f"the wgrad source no longer has this place once: {anchor!r}")
        source = source.replace(anchor, replacement)
    return dataclasses.replace(request, source=source)


def main() -> None:
    layers, _ = layers_and_copy(__doc__.splitlines()[0], NAMED)
    arch = spio.jit.device_info(0).arch
    for params in layers:
        chosen = choose_config("wgrad", params).config
        configs = {"deterministic": chosen, "atomic sums": wgrad.atomic_config_on(params, chosen)}
        x = torch.randn(params.n, params.h, params.w, params.c, device="cuda", dtype=torch.float16)
        grad_y = torch.randn(
            params.n, params.p, params.q, params.c, device="cuda", dtype=torch.float16
        )
        grad_w = torch.zeros(wgrad_spec.weight_count(params), device="cuda")
        print(f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}", flush=True)
        for name, config in configs.items():
            print(f" {name}: {config}", flush=True)
            cut_times(params, config, arch, x, grad_y, grad_w)
            timeline(params, config, arch, x, grad_y)


def _main_launcher(
    params: Conv2dGw8Params,
    config: Any,
    kernel: Any,
    workspace: torch.Tensor,
    x: torch.Tensor,
    grad_y: torch.Tensor,
) -> Callable[[], None]:
    launch = wgrad.wgrad_launch(params, config)
    args: tuple[Any, ...] = (workspace, x, grad_y)
    if launch.tensor_maps is not None:
        args += launch.tensor_maps((x.data_ptr(), grad_y.data_ptr()))
    geometry = launch.geometry

    def run() -> None:
        stream = torch.cuda.current_stream().cuda_stream
        kernel.launch(geometry.grid, geometry.block, args, geometry.shared_mem, stream, True)

    return run


def cut_times(
    params: Conv2dGw8Params,
    config: Any,
    arch: str,
    x: torch.Tensor,
    grad_y: torch.Tensor,
    grad_w: torch.Tensor,
) -> None:
    """Print the pass's, the main kernel's and each cut's time per launch."""
    requests = {cut: edited_request(params, config, arch, edits) for cut, edits in CUTS.items()}
    spio.jit.compile_many(list(requests.values()))
    launch = wgrad.wgrad_launch(params, config)
    workspace = torch.zeros(max(launch.workspace_bytes, 16) // 4, device="cuda")
    sums = grad_w if config.atomic_sums else workspace
    runs: dict[str, Callable[[], None]] = {
        "pass": lambda: launch(
            grad_w, x, grad_y, workspace=workspace, stream=torch.cuda.current_stream().cuda_stream
        )
    }
    for cut, request in requests.items():
        kernel = compile_requested(request).load(device=0).get_kernel(wgrad_spec.KERNEL_NAME)
        runs[cut] = _main_launcher(params, config, kernel, sums, x, grad_y)
    rounds: dict[str, list[float]] = defaultdict(list)
    for _ in range(ROUNDS):
        for cut, run in runs.items():
            rounds[cut].append(bench.time_us(run, LAUNCHES, graph=True))
    print(
        "   " + ", ".join(f"{cut} {min(times):.2f} us" for cut, times in rounds.items()), flush=True
    )


def timeline(
    params: Conv2dGw8Params, config: Any, arch: str, x: torch.Tensor, grad_y: torch.Tensor
) -> None:
    """Print the probed kernel's phases over LAUNCHES graph-replayed launches."""
    module = compile_requested(edited_request(params, config, arch, _PROBES)).load(device=0)
    main_kernel = module.get_kernel(wgrad_spec.KERNEL_NAME)
    grid = wgrad.wgrad_launch(params, config).geometry.grid  # the grid _main_launcher launches
    partials = 1 if config.atomic_sums else wgrad_spec.partial_count(params, config)
    first = partials * wgrad_spec.weight_count(params) + RECORD_OFFSET
    words = grid + grid * LAUNCHES * 8
    workspace = torch.zeros(first + 2 * words, device="cuda")
    run = _main_launcher(params, config, main_kernel, workspace, x, grad_y)
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(LAUNCHES):
            run()
    workspace[first:].zero_()
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    records = workspace[first : first + 2 * words].view(torch.int64).cpu()[grid:].view(-1, 8)
    by_launch: dict[int, list[list[int]]] = defaultdict(list)
    for index, record in enumerate(records.tolist()):
        # Each block's records are LAUNCHES consecutive rows: the block is index // LAUNCHES.
        by_launch[record[5]].append([*record[:5], record[6], index // LAUNCHES])
    walks, ends, gaps, previous_end = [], [], [], None
    for launch in sorted(by_launch):
        blocks = by_launch[launch]
        start = min(block[1] for block in blocks)
        walks += [block[2] - block[1] for block in blocks]
        ends.append(max(block[4] for block in blocks) - start)
        if previous_end is not None:
            gaps.append(start - previous_end)
        previous_end = max(block[4] for block in blocks)
    slabs = [block[3] - block[2] for blocks in by_launch.values() for block in blocks]
    tails = [block[4] - block[3] for blocks in by_launch.values() for block in blocks]
    print(
        f"   timeline (ns, {len(by_launch)} launches of {grid} blocks): a block's walk median "
        f"{statistics.median(walks):.0f} (max {max(walks)}), its accumulators to shared memory "
        f"{statistics.median(slabs):.0f}, its sums and stores {statistics.median(tails):.0f}; "
        f"first start to last end median {statistics.median(ends):.0f}; from one launch's last "
        f"end to the next one's first start median {statistics.median(gaps):.0f}",
        flush=True,
    )
    print_by_sm(by_launch)


def print_by_sm(by_launch: dict[int, list[list[int]]]) -> None:
    """Print whether the walks' spread follows the SMs or the blocks (the data they walk):
    for each, the mean walk over the even and over the odd launches and their correlation
    (near 1 when some walk slower every launch), the slowest and fastest; the walks' spread
    within a launch; and how far apart the blocks start."""
    starts, spreads = [], []
    for blocks in by_launch.values():
        starts.append(max(block[1] for block in blocks) - min(block[1] for block in blocks))
        walks = sorted(block[2] - block[1] for block in blocks)
        spreads.append([walks[len(walks) // 2], walks[len(walks) * 9 // 10], walks[-2], walks[-1]])
    columns = zip(*spreads, strict=True)
    median, p90, second, slowest = (statistics.median(column) for column in columns)
    print(
        f"   blocks start within {statistics.median(starts):.0f} ns of each other; a launch's "
        f"walks (medians over launches, ns): median {median:.0f}, p90 {p90:.0f}, second "
        f"slowest {second:.0f}, slowest {slowest:.0f}",
        flush=True,
    )
    for key, column in (("SM", 5), ("block", 6)):
        halves: list[dict[int, list[int]]] = [defaultdict(list), defaultdict(list)]
        for launch, blocks in by_launch.items():
            for block in blocks:
                halves[launch % 2][block[column]].append(block[2] - block[1])
        keys = sorted(set(halves[0]) & set(halves[1]))
        even = [statistics.mean(halves[0][k]) for k in keys]
        odd = [statistics.mean(halves[1][k]) for k in keys]
        both = {k: (a + b) / 2 for k, a, b in zip(keys, even, odd, strict=True)}
        ranked = sorted(both, key=both.__getitem__)
        print(
            f"   by {key} ({len(keys)}): mean walk of the even launches against the odd ones, "
            f"correlation {statistics.correlation(even, odd):.2f}\n"
            f"   slowest (ns): "
            + ", ".join(f"{k}: {both[k]:.0f}" for k in reversed(ranked[-10:]))
            + "\n   fastest (ns): "
            + ", ".join(f"{k}: {both[k]:.0f}" for k in ranked[:10]),
            flush=True,
        )


if __name__ == "__main__":
    main()
