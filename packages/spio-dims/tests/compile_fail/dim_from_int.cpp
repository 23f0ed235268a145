// Promise: an int does not silently become a dimension (the constructor is explicit).
// expect: conversion from | no viable conversion
#include "test_types.h"

I implicit() {
    I i = 3;
    return i;
}
