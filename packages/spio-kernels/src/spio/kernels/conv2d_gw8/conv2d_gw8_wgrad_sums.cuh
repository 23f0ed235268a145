// How the wgrad kernel's blocks add up their weights' sums after the walk: 16-byte cells added
// in registers, and with WgradConfig.atomic_sums added into the one sum atomically. Part of
// conv2d_gw8_wgrad.cu's source, which includes it after its own constants; spio.kernels
// compiles them into one module (wgrad.compile_request).
#pragma once

// sum += v, element by element.
__device__ __forceinline__ void add_to(float4& sum, const float4& v) {
    sum.x += v.x;
    sum.y += v.y;
    sum.z += v.z;
    sum.w += v.w;
}

#ifdef CONV2D_GW8_ATOMIC_SUMS
// *address += v with atomic adds: one 16-byte reduction on sm_90 and newer, four 4-byte ones
// before (the order of the blocks' additions is not fixed either way).
__device__ __forceinline__ void add_atomically(float* address, const float4& v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float4*>(address), v);
#else
    atomicAdd(address, v.x);
    atomicAdd(address + 1, v.y);
    atomicAdd(address + 2, v.z);
    atomicAdd(address + 3, v.w);
#endif
}

// Cells from one block's first add to the next block's: 17 whole 128-byte lines, so that a
// warp's 32 adds still cover 4 whole lines and neighbouring blocks start far apart.
constexpr int kStaggerCells = 17 * 8;
#endif
