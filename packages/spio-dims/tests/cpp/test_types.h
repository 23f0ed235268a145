// Hand-written declarations in exactly the form the generator emits
// (docs/dims/generated-code.md), so the C++ tests do not depend on the generator.
#pragma once

#include "spio/spio.h"  // the library under test

struct I : spio::Dim<I> {
    using spio::Dim<I>::Dim;
};

struct J : spio::Dim<J> {
    using spio::Dim<J>::Dim;
};

struct K : spio::Dim<K> {
    using spio::Dim<K>::Dim;
};

struct X : spio::Dim<X> {
    using spio::Dim<X>::Dim;
};

struct CHECKERS : spio::Dim<CHECKERS> {
    using spio::Dim<CHECKERS>::Dim;
};

struct PING : spio::Dim<PING> {
    using spio::Dim<PING>::Dim;
};

struct SWIZZLE : spio::Dim<SWIZZLE> {
    using spio::Dim<SWIZZLE>::Dim;
};

using I16 = spio::Fold<I, 16>;
using J8 = spio::Fold<J, 8>;
using J16 = spio::Fold<J, 16>;
using K8 = spio::Fold<K, 8>;
using K16 = spio::Fold<K, 16>;

struct BLOCK_I : spio::Fold<I, 64, BLOCK_I> {
    using spio::Fold<I, 64, BLOCK_I>::Fold;
};

struct WARP_J : spio::Fold<J, 32, WARP_J> {
    using spio::Fold<J, 32, WARP_J>::Fold;
};

// Lesson 1: I(16) x K(32) and K(32) x J(64).
using A = spio::Tensor<float, spio::DimInfo<I, 16, 32>, spio::DimInfo<K, 32, 1>>;
using B = spio::Tensor<float, spio::DimInfo<K, 32, 64>, spio::DimInfo<J, 64, 1>>;
using C = spio::Tensor<float, spio::DimInfo<I, 16, 64>, spio::DimInfo<J, 64, 1>>;

// Lesson 4: a tile of C with C's row stride.
using C_tile = spio::Tensor<float, spio::DimInfo<I, 8, 64>, spio::DimInfo<J, 32, 1>>;

// Lesson 3: Dims(k8=4, i=4, k=-1), the interleaved layout K8(4) x I(4) x K(8).
using AFolded =
    spio::Tensor<float, spio::DimInfo<K8, 4, 32>, spio::DimInfo<I, 4, 8>, spio::DimInfo<K, 8, 1>>;

// Seed 001: Dims(k16=4, i=64, k8=2), constant, of 16-byte vectors.
using AGlobal = spio::Tensor<const uint4, spio::DimInfo<K16, 4, 128>, spio::DimInfo<I, 64, 2>,
                             spio::DimInfo<K8, 2, 1>>;

// Seed 001: Dims(ping=2, k16=2, i16=2, checkers=32), a checkerboarded shared-memory tile.
using SmemA = spio::Tensor<uint4, spio::DimInfo<PING, 2, 128>, spio::DimInfo<K16, 2, 64>,
                           spio::DimInfo<I16, 2, 32>, spio::DimInfo<CHECKERS, 32, 1>>;
using SmemChecker = spio::CheckerboardIndex<8, I, K8, CHECKERS>;

// Dims(ping=2, swizzle=64): two 1024-byte periods of the 128-byte TMA swizzle.
using SmemSwizzled = spio::Tensor<uint4, spio::DimInfo<PING, 2, 64>, spio::DimInfo<SWIZZLE, 64, 1>>;
using SmemSwizzle = spio::SwizzleIndex<8, I, K8, SWIZZLE>;

// Lesson 5.
using BlockIndex = spio::CompoundIndex<spio::DimInfo<I16, 32, 32>, spio::DimInfo<J16, 32, 1>>;
using ThreadIndex =
    spio::CompoundIndexFrom<spio::ThreadIdxX, spio::DimInfo<I, 16, 16>, spio::DimInfo<J, 16, 1>>;
