// The main() every suite shares: registers its benchmarks, then runs Google Benchmark.
#pragma once

#include <benchmark/benchmark.h>

/// Defines main() for a suite whose benchmarks register_fn registers.
#define BENCH_MAIN(register_fn)                                       \
  int main(int argc, char** argv) {                                   \
    register_fn();                                                    \
    benchmark::Initialize(&argc, argv);                               \
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1; \
    benchmark::RunSpecifiedBenchmarks();                              \
    benchmark::Shutdown();                                            \
    return 0;                                                         \
  }
