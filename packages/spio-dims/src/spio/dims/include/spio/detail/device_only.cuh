// Included first by every .cuh header: a host compiler stops here with one message that says
// what to do, rather than deep inside cuda_fp16.h or at the first threadIdx.
#pragma once

#include "spio/macros.h"  // SPIO_CUDA

#if !SPIO_CUDA
#error "spio's .cuh headers are device code (nvcc, NVRTC); host code includes spio/spio.h"
#endif
