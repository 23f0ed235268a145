// Promise: range(begin, end) counts one dimension.
// expect: same dimension type
#include "test_types.h"

int wrong() {
    int n = 0;
    for (auto i : spio::range(I(0), J(4))) n += i.get();
    return n;
}
