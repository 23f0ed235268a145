"""The rings' swizzle (conv2d_gw8_ring.cuh's ring_slot), compiled for the host with g++: for
every count of groups per pixel a block may take, each pixel's slots are its groups in
another order, and ldmatrix's eight consecutive pixels of one group (from any column, as
wgrad's filter columns shift them) land on the eight 16-byte bank positions of a 128-byte
line, without conflicts."""

from __future__ import annotations

import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest

#: Groups per pixel checked: the powers of two the kernels always took, and the whole pixels
#: and runs wgrad_pixel_groups gives blocks (12 and 20) with every other count up to 24.
MAX_GROUPS = 24

# The header's device qualifiers as host code, and stand-ins for the typed dimensions and the
# cp.async its templates name (never instantiated here).
PROGRAM = r"""
#define __device__
#define __host__
#define __forceinline__ inline
struct X { int get() const { return 0; } };
struct G { int get() const { return 0; } };
struct SLOT { explicit SLOT(int) {} };
namespace spio { namespace arch { template <typename... A> void cp_async_cg_16(A...) {} } }
#include "conv2d_gw8_ring.cuh"
#include <cstdio>

template <int kGroups>
int check() {
    int bad = 0;
    for (int x = 0; x < 64; ++x) {
        bool seen[kGroups] = {};
        for (int g = 0; g < kGroups; ++g) {
            const int slot = conv2d_gw8::ring_slot<kGroups>(x, g);
            if (slot < 0 || slot >= kGroups || seen[slot]) ++bad;
            else seen[slot] = true;
        }
    }
    for (int g = 0; g < kGroups; ++g) {
        for (int x0 = 0; x0 < 32; ++x0) {
            bool bank[8] = {};
            for (int x = x0; x < x0 + 8; ++x) {
                const int cell = (x * kGroups + conv2d_gw8::ring_slot<kGroups>(x, g)) % 8;
                if (bank[cell]) ++bad;
                bank[cell] = true;
            }
        }
    }
    if (bad) std::printf("%d groups: %d bad slots\n", kGroups, bad);
    return bad;
}

template <int... kGroups>
int check_all(int) { return (check<kGroups>() + ...); }

int main() {
    return check_all<GROUPS>(0) ? 1 : 0;
}
"""


def test_ring_slots_permute_each_pixel_and_spread_over_the_banks(tmp_path: Path) -> None:
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("g++ is not installed")
    header_dir = Path(str(resources.files("spio.kernels.conv2d_gw8")))
    source = tmp_path / "ring_swizzle.cpp"
    source.write_text(PROGRAM)
    binary = tmp_path / "ring_swizzle"
    groups = ",".join(str(g) for g in range(1, MAX_GROUPS + 1))
    build = subprocess.run(
        [compiler, "-std=c++17", "-Wall", "-Wno-unknown-pragmas", "-Werror", f"-DGROUPS={groups}",
         "-I", str(header_dir),
         str(source), "-o", str(binary)],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(binary)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout
