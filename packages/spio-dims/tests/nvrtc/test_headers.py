"""Every spio-dims header compiles under NVRTC; the device concepts compile to what they promise.

No GPU is needed: NVRTC compiles for a real architecture (sm_80, sm_89, sm_90), which runs
ptxas too, so malformed inline PTX fails here. Headers are compiled with -std=c++17 and no
C++ standard library, as kernels are.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import _nvrtc
import pytest

HERE = Path(__file__).resolve().parent
# The generator's checked-in outputs (tests/generator/golden): real generated headers.
GOLDEN = HERE.parent / "generator" / "golden"
GENERATED = sorted(GOLDEN.rglob("*.h"))
# Every header, as a kernel includes it: "spio/dim.h", "spio/arch/mma.cuh", ...
HEADERS = sorted(
    path.relative_to(_nvrtc.SPIO_INCLUDE_DIR).as_posix()
    for pattern in ("*.h", "*.cuh")
    for path in (_nvrtc.SPIO_INCLUDE_DIR / "spio").rglob(pattern)
)

# The concept kernels of device_concepts.cu and the instructions each must contain.
CONCEPTS = {
    "async_copy": (
        "cp.async.cg.shared.global",
        "cp.async.commit_group",
        "cp.async.wait_group 1",
        "cp.async.wait_all",
    ),
    "ldmatrix_all": tuple(
        f"ldmatrix.sync.aligned.m8n8.{count}{trans}.shared.b16"
        for count in ("x1", "x2", "x4")
        for trans in ("", ".trans")
    ),
    "fragment_mma_all": (
        *(
            f"mma.sync.aligned.{shape}.row.col.f32.{t}.{t}.f32"
            for shape in ("m16n8k8", "m16n8k16")
            for t in ("f16", "bf16")
        ),
        "cvt.rn.f16x2.f32",
        "cvt.rn.bf16x2.f32",
    ),
    "discard_after_read": ("discard.global.L2",),
    "mma_tile": (
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    ),
}


# Headers for sm_90 and newer only (they #error on older architectures).
SM90_HEADERS = {"spio/arch/cluster.cuh", "spio/arch/mbarrier.cuh", "spio/arch/tma.cuh"}
# Headers for the arch-specific sm_90a target only (wgmma).
SM90A_HEADERS = {"spio/arch/wgmma.cuh"}


def _include_all(arch: str) -> str:
    hopper = int(arch.removeprefix("sm_").rstrip("a")) >= 90
    specific = arch.endswith("a")
    return "".join(
        f'#include "{header}"\n'
        for header in HEADERS
        if (hopper or header not in SM90_HEADERS) and (specific or header not in SM90A_HEADERS)
    )


@functools.cache
def _device_concepts(arch: str) -> _nvrtc.Compiled:
    return _nvrtc.compile_cuda((HERE / "device_concepts.cu").read_text(), arch=arch)


def test_headers_are_found() -> None:
    """The include tree holds the core umbrella and the device umbrella."""
    assert "spio/spio.h" in HEADERS
    assert "spio/spio.cuh" in HEADERS


@pytest.mark.parametrize("header", HEADERS)
def test_header_compiles_alone(header: str) -> None:
    """Each header includes what it uses: it compiles as the only include of a kernel."""
    source = f'#include "{header}"\nextern "C" __global__ void kernel() {{}}\n'
    arch = "sm_90a" if header in SM90A_HEADERS else "sm_90"
    _nvrtc.compile_cuda(source, arch=arch, name=f"only_{Path(header).stem}.cu")


@pytest.mark.parametrize("arch", [*_nvrtc.ARCHES, "sm_90a"])
def test_all_headers_compile_together(arch: str) -> None:
    """All headers in one translation unit, for each supported architecture."""
    source = _include_all(arch) + 'extern "C" __global__ void kernel() {}\n'
    _nvrtc.compile_cuda(source, arch=arch, name="all_headers.cu")


@pytest.mark.parametrize("arch", _nvrtc.ARCHES)
@pytest.mark.parametrize("kernel", list(CONCEPTS))
def test_device_concept_compiles(kernel: str, arch: str) -> None:
    """Each concept kernel compiles to its instructions and keeps its registers off the stack."""
    instructions = _nvrtc.ptx_instructions(_device_concepts(arch).ptx, kernel)
    text = "\n".join(instructions)
    missing = [op for op in CONCEPTS[kernel] if op not in text]
    assert not missing, f"{kernel} ({arch}) lacks {missing} in its PTX:\n{text}"
    spilled = [line for line in instructions if re.match(r"(ld|st)\.local", line)]
    assert not spilled, f"{kernel} ({arch}) uses local memory:\n" + "\n".join(spilled)


def test_lane_maps() -> None:
    """The fragment lane maps and ldmatrix origins pass lane_maps.cu's static_asserts."""
    _nvrtc.compile_cuda((HERE / "lane_maps.cu").read_text(), arch="sm_90", name="lane_maps.cu")


CLUSTER_KERNEL = """
#include "spio/arch/cluster.cuh"
extern "C" __global__ void __cluster_dims__(2, 1, 1) exchange(float* out) {
    __shared__ float4 part[1];
    if (threadIdx.x == 0) part[0] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    spio::arch::cluster_sync();
    const unsigned other = spio::arch::cluster_block_rank() ^ 1u;
    const float4 v = spio::arch::load_from_block(&part[0], other);
    out[blockIdx.x] = v.x + spio::arch::load_from_block(&part[0].y, other);
    spio::arch::cluster_sync();
}
"""


def test_cluster_wrappers_compile_for_hopper() -> None:
    """The cluster wrappers become mapa, ld.shared::cluster and the cluster barrier."""
    compiled = _nvrtc.compile_cuda(CLUSTER_KERNEL, arch="sm_90", name="cluster.cu")
    text = "\n".join(_nvrtc.ptx_instructions(compiled.ptx, "exchange"))
    for op in (
        "%cluster_ctarank",
        "mapa.shared::cluster.u32",
        "ld.shared::cluster.v4.f32",
        "ld.shared::cluster.f32",
        "barrier.cluster.arrive.release.aligned",
        "barrier.cluster.wait.acquire.aligned",
    ):
        assert op in text, f"{op} missing from the cluster kernel's PTX:\n{text}"


def test_cluster_header_rejects_pre_hopper() -> None:
    """cluster.cuh says that clusters need sm_90."""
    with pytest.raises(_nvrtc.NvrtcError) as raised:
        _nvrtc.compile_cuda(CLUSTER_KERNEL, arch="sm_89")
    assert "needs sm_90 or newer" in raised.value.log


WGMMA_KERNEL = """
#include "spio/arch/wgmma.cuh"
extern "C" __global__ void wgmma_all(float* out, int accumulate) {
    __shared__ __align__(1024) __half a[64 * 64];
    __shared__ __align__(1024) __half b[256 * 64];
    const auto swizzle = spio::arch::WgmmaSwizzle::bytes128;
    const auto a_desc = spio::arch::wgmma_descriptor(a, 16, 1024, swizzle);
    const auto b_desc = spio::arch::wgmma_descriptor(b, 16, 1024, swizzle);
    float d128[64] = {};
    float d256[128] = {};
    spio::arch::wgmma_fence();
    spio::arch::wgmma<128, __half, 0>(d128, a_desc, b_desc, accumulate != 0);
    spio::arch::wgmma<128, __nv_bfloat16, 1>(d128, a_desc, b_desc, true);
    spio::arch::wgmma<256, __half, 0>(d256, a_desc, b_desc, false);
    spio::arch::wgmma<256, __nv_bfloat16, 0, 1>(d256, a_desc, b_desc, true);
    spio::arch::wgmma_commit_group();
    spio::arch::wgmma_wait_group<0>();
    out[threadIdx.x] = d128[63] + d256[127];
}
"""


def test_wgmma_wrappers_compile_for_sm_90a() -> None:
    """Each wgmma shape and element type becomes its instruction, fenced, committed and
    waited for, with the accumulators in registers."""
    compiled = _nvrtc.compile_cuda(WGMMA_KERNEL, arch="sm_90a", name="wgmma.cu")
    instructions = _nvrtc.ptx_instructions(compiled.ptx, "wgmma_all")
    text = "\n".join(instructions)
    for op in (
        "wgmma.fence.sync.aligned",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "wgmma.commit_group.sync.aligned",
        "wgmma.wait_group.sync.aligned 0",
    ):
        assert op in text, f"{op} missing from the wgmma kernel's PTX:\n{text}"
    assert not [line for line in instructions if re.match(r"(ld|st)\.local", line)]
    # Each instruction's last two immediates are (transpose A, transpose B), in call order.
    transposes = re.findall(r"wgmma\.mma_async.*, p, 1, 1, (\d), (\d);", text)
    assert transposes == [("0", "0"), ("0", "1"), ("0", "0"), ("1", "0")]


def test_wgmma_header_rejects_plain_sm_90() -> None:
    """wgmma.cuh says that wgmma needs the arch-specific target."""
    with pytest.raises(_nvrtc.NvrtcError) as raised:
        _nvrtc.compile_cuda(WGMMA_KERNEL, arch="sm_90")
    assert "needs the sm_90a target" in raised.value.log


TMA_KERNEL = """
#include "spio/arch/tma.cuh"
extern "C" __global__ void tma_all(const __grid_constant__ spio::arch::TensorMap map, int x) {
    __shared__ __align__(1024) unsigned char box[4096];
    __shared__ unsigned long long full;
    if (threadIdx.x == 0) {
        spio::arch::mbarrier_init(&full, 1);
        spio::arch::mbarrier_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        spio::arch::mbarrier_arrive_expect_tx(&full, 5 * 128);
        spio::arch::tma_load(box, &map, &full, x);
        spio::arch::tma_load(box + 1024, &map, &full, x, 1);
        spio::arch::tma_load(box + 2048, &map, &full, x, 1, 2);
        spio::arch::tma_load(box + 3072, &map, &full, x, 1, 2, 3);
        spio::arch::tma_load(box + 3584, &map, &full, x, 1, 2, 3, 4);
    }
    spio::arch::mbarrier_wait_parity(&full, 0);
    spio::arch::mbarrier_arrive(&full);
    spio::arch::fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        spio::arch::tma_store(&map, box, x);
        spio::arch::tma_store(&map, box, x, 1);
        spio::arch::tma_store(&map, box, x, 1, 2);
        spio::arch::tma_store(&map, box, x, 1, 2, 3);
        spio::arch::tma_store(&map, box, x, 1, 2, 3, 4);
        spio::arch::bulk_commit_group();
        spio::arch::bulk_wait_group_read<0>();
        spio::arch::bulk_wait_group<0>();
    }
}
"""


def test_tma_wrappers_compile_for_hopper() -> None:
    """The TMA and mbarrier wrappers become the bulk tensor copies of every rank, the mbarrier
    operations and the fences."""
    compiled = _nvrtc.compile_cuda(TMA_KERNEL, arch="sm_90", name="tma.cu")
    text = "\n".join(_nvrtc.ptx_instructions(compiled.ptx, "tma_all"))
    expected = [
        "mbarrier.init.shared::cta.b64",
        "fence.mbarrier_init.release.cluster",
        "fence.proxy.async.shared::cta",
        "mbarrier.arrive.expect_tx.shared::cta.b64",
        "mbarrier.try_wait.parity.shared::cta.b64",
        "mbarrier.arrive.shared::cta.b64",
        "cp.async.bulk.commit_group",
        "cp.async.bulk.wait_group.read 0",
        "cp.async.bulk.wait_group 0",
    ]
    for rank in range(1, 6):
        expected.append(
            f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        )
        expected.append(f"cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group")
    for op in expected:
        assert op in text, f"{op} missing from the TMA kernel's PTX:\n{text}"


@pytest.mark.parametrize("header", ["spio/arch/tma.cuh", "spio/arch/mbarrier.cuh"])
def test_tma_headers_reject_pre_hopper(header: str) -> None:
    """tma.cuh and mbarrier.cuh say that they need sm_90."""
    source = f'#include "{header}"\nextern "C" __global__ void kernel() {{}}\n'
    with pytest.raises(_nvrtc.NvrtcError) as raised:
        _nvrtc.compile_cuda(source, arch="sm_89")
    assert "needs sm_90 or newer" in raised.value.log


GRID_DEPENDENCY_KERNEL = """
#include "spio/arch/grid_dependency.cuh"
extern "C" __global__ void dependent(float* out) {
    spio::arch::allow_next_grid_launch();
    spio::arch::wait_for_previous_grids();
    out[threadIdx.x] = 1.0f;
}
"""


@pytest.mark.parametrize("arch", _nvrtc.ARCHES)
def test_grid_dependency_controls(arch: str) -> None:
    """The programmatic-launch controls are griddepcontrol on sm_90 and no-ops before it."""
    compiled = _nvrtc.compile_cuda(GRID_DEPENDENCY_KERNEL, arch=arch, name="dependent.cu")
    text = "\n".join(_nvrtc.ptx_instructions(compiled.ptx, "dependent"))
    hopper = int(arch.removeprefix("sm_")) >= 90
    for op in ("griddepcontrol.launch_dependents", "griddepcontrol.wait"):
        assert (op in text) == hopper, f"{op} in the {arch} PTX should be {hopper}:\n{text}"


GRID_BARRIER_KERNEL = """
#include "spio/arch/grid_barrier.cuh"
extern "C" __global__ void two_phases(unsigned int* counter, float* data) {
    data[blockIdx.x] = 1.0f;
    spio::arch::grid_barrier(counter);
    data[gridDim.x + blockIdx.x] = __ldcg(data + (blockIdx.x + 1) % gridDim.x);
}
"""


@pytest.mark.parametrize("arch", _nvrtc.ARCHES)
def test_grid_barrier_compiles_to_a_fenced_atomic_and_acquire_polling(arch: str) -> None:
    """The barrier is an atomic add after a fence, then acquire loads until the top bit flips."""
    compiled = _nvrtc.compile_cuda(GRID_BARRIER_KERNEL, arch=arch, name="two_phases.cu")
    text = "\n".join(_nvrtc.ptx_instructions(compiled.ptx, "two_phases"))
    for op in ("membar.gl", "atom.global.add.u32", "ld.acquire.gpu.global.u32", "nanosleep"):
        assert op in text, f"{op} missing from the grid barrier's PTX:\n{text}"


def test_arch_headers_reject_pre_ampere() -> None:
    """The tensor-core and cp.async wrappers say which architecture they need."""
    source = '#include "spio/spio.cuh"\nextern "C" __global__ void kernel() {}\n'
    with pytest.raises(_nvrtc.NvrtcError) as raised:
        _nvrtc.compile_cuda(source, arch="sm_75")
    assert "needs sm_80 or newer" in raised.value.log


@pytest.mark.parametrize(
    "header", GENERATED, ids=[path.relative_to(GOLDEN).as_posix() for path in GENERATED]
)
def test_generated_header_compiles(header: Path) -> None:
    """Each golden header of the generator compiles under NVRTC, fragments and all."""
    source = f'#include "{header}"\nextern "C" __global__ void kernel() {{}}\n'
    _nvrtc.compile_cuda(source, arch="sm_90", name=f"generated_{header.stem}.cu")


def test_generated_matmul_types_drive_the_device_parts() -> None:
    """The seed's matmul spec, as generated: checkerboard A tile load, tile mma, to_half2."""
    if not (GOLDEN / "matmul.h").is_file():
        pytest.skip("the generator's golden matmul.h is not there")
    compiled = _nvrtc.compile_cuda(
        (HERE / "generated_matmul.cu").read_text(),
        arch="sm_90",
        options=[f"-I{GOLDEN}"],
        name="generated_matmul.cu",
    )
    instructions = _nvrtc.ptx_instructions(compiled.ptx, "matmul_warp_step")
    # ATile 4 x 2 fragments: 8 ldmatrix.x4; 4 x 4 x 2 m16n8k16 products.
    assert sum(line.startswith("ldmatrix.sync.aligned.m8n8.x4") for line in instructions) == 8
    assert sum(line.startswith("mma.sync.aligned.m16n8k16") for line in instructions) == 32
    assert not [line for line in instructions if line.startswith(("ld.local", "st.local"))]
