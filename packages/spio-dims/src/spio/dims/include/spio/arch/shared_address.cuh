// The shared-state-space address of a generic pointer into shared memory: what PTX's
// shared-memory instructions (ldmatrix, cp.async, mbarrier, TMA) take as an operand.
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

namespace spio::arch {

__device__ __forceinline__ unsigned shared_address(const void* smem) {
    return static_cast<unsigned>(__cvta_generic_to_shared(smem));
}

}  // namespace spio::arch
