#pragma once
// A test suite run twice: with the GP's AVX loops (where the processor has AVX) and with them
// switched off, so that the SSE2 paths a processor without AVX runs are held to the same
// references. TEST_P(Suite, Name) with `using Suite = SimdPaths;`, then TUNE_SIMD_PATHS_SUITE(Suite).
#include <gtest/gtest.h>

#include "tune/gp/simd_paths.hpp"

class SimdPaths : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { tune::set_avx_loops_enabled(GetParam()); }
  void TearDown() override { tune::set_avx_loops_enabled(true); }
};

#define TUNE_SIMD_PATHS_SUITE(suite)                                          \
  INSTANTIATE_TEST_SUITE_P(SimdPaths, suite, ::testing::Values(true, false), \
                           [](const ::testing::TestParamInfo<bool>& path) { return path.param ? "avx" : "sse2"; })
