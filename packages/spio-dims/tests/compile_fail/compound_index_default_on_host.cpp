// Promise: only device code default-constructs a CompoundIndexFrom (it reads threadIdx.x);
// host code must say which index it means.
// expect: no matching
#include "test_types.h"

int wrong() {
    ThreadIndex thread;
    return thread.get();
}
