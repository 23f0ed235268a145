// Programmatic dependent launch (sm_90): a kernel launched with the launch attribute for it
// (spio.jit.launch(..., pdl=True)) may start while the kernel before it in the stream is still
// running, so its blocks are already placed on the SMs when that kernel's last blocks finish.
// The gap between back-to-back kernels (launch, block placement) then overlaps the previous
// kernel's tail instead of following it.
//
// The contract, for every kernel that may be launched that way:
// - wait_for_previous_grids() before the first global memory access, reads and writes alike
//   (the previous kernel may still be writing this kernel's inputs, or reading its outputs);
// - allow_next_grid_launch() anywhere, early being best: the next kernel's blocks start once
//   every block of this one has called it or exited, and then wait in their own
//   wait_for_previous_grids() until this grid has finished and its writes are visible.
//
// Both are no-ops before sm_90 and for launches without the attribute (the wait then returns
// at once: the stream already ordered the kernels), so kernels call them unconditionally.
#pragma once

#include "spio/detail/device_only.cuh"  // a clear #error under a host compiler

namespace spio::arch {

// Block until every grid this one depends on has completed and its memory writes are visible.
__device__ __forceinline__ void wait_for_previous_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Let the next kernel of the stream (if launched with the attribute) start its blocks.
__device__ __forceinline__ void allow_next_grid_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

}  // namespace spio::arch
