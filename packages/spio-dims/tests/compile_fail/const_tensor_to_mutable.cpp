// Promise: a read-only view does not convert back to a writable one.
// expect: conversion from | no viable conversion
#include "test_types.h"

using ConstA = spio::Tensor<const float, spio::DimInfo<I, 16, 32>, spio::DimInfo<K, 32, 1>>;

A wrong(const float* data) {
    A a = ConstA(data);
    return a;
}
