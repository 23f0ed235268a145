// Promise: a dimension does not silently become an int (ask for get()).
// expect: cannot convert | no viable conversion
#include "test_types.h"

int implicit() {
    int n = I(3);
    return n;
}
