// dtypes.h on a host compiler: layout-compatible stand-ins for CUDA's vector types.
#include <type_traits>  // std::is_trivially_copyable_v

#include "spio_test.h"   // UTEST, EXPECT_*
#include "test_types.h"  // AGlobal, SmemA: tensors of uint4

static_assert(sizeof(uint4) == 16 && alignof(uint4) == 16);
static_assert(sizeof(int4) == 16 && alignof(int4) == 16);
static_assert(sizeof(float4) == 16 && alignof(float4) == 16);
static_assert(sizeof(uint2) == 8 && alignof(uint2) == 8);
static_assert(sizeof(float2) == 8 && alignof(float2) == 8);
static_assert(std::is_trivially_copyable_v<uint4> && std::is_trivially_copyable_v<float2>);

UTEST(Dtypes, VectorTensorsStepInWholeVectors) {
    uint4 data[SmemA::storage_size()];
    const auto s = SmemA(data);
    EXPECT_EQ(
        reinterpret_cast<const char*>(s[CHECKERS(1)].get()) - reinterpret_cast<const char*>(data),
        16);
    s[CHECKERS(3)]->w = 9u;
    EXPECT_EQ(data[3].w, 9u);
    const float4 f = {1.0f, 2.0f, 3.0f, 4.0f};
    EXPECT_EQ(f.z, 3.0f);
    const int4 v = {-1, -2, -3, -4};
    EXPECT_EQ(v.w, -4);
    const uint2 u = {5u, 6u};
    const float2 g = {0.5f, 1.5f};
    EXPECT_EQ(u.y + static_cast<unsigned>(g.y), 7u);
}
