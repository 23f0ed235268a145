// Promise: coordinates hold dimensions only.
// expect: coordinates hold dimensions
#include "test_types.h"

int wrong() {
    const auto c = spio::make_coordinates(I(1), 2);
    return c.get<I>().get();
}
