// Promise: += keeps the left operand's type, so it refuses an addend it cannot count exactly.
// expect: cannot add a finer fold in place
#include "test_types.h"

K8 finer() {
    K8 k8(1);
    k8 += K(3);
    return k8;
}
