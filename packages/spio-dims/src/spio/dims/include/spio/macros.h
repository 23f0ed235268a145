// Portability macros: the few things about host and device code that only the preprocessor can
// say. Everything else in spio-dims is ordinary C++17.
//
// The same headers compile three ways:
//   - host C++17 (g++, clang++): SPIO_CUDA is 0 and the markers below expand to nothing;
//   - nvcc (__CUDACC__) and NVRTC (__CUDACC_RTC__): SPIO_CUDA is 1 and functions are marked
//     for both host and device, so kernels and host-side unit tests share one definition.
#pragma once

// SPIO_CUDA: 1 when compiling CUDA (nvcc or NVRTC), else 0. Test it with `#if SPIO_CUDA`.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SPIO_CUDA 1
#else
#define SPIO_CUDA 0
#endif

// SPIO_HOST_DEVICE marks a function that runs on both sides; SPIO_DEVICE one that needs device
// built-ins (threadIdx, ...) and exists only when SPIO_CUDA is 1.
#if SPIO_CUDA
#define SPIO_HOST_DEVICE __host__ __device__
#define SPIO_DEVICE __device__
#else
#define SPIO_HOST_DEVICE
#define SPIO_DEVICE
#endif
