#include "tune/gp/simd_paths.hpp"

#include <atomic>

namespace tune {
namespace {

bool processor_has_avx() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx = __builtin_cpu_supports("avx");
  return avx;
#else
  return false;
#endif
}

std::atomic<bool> avx_switched_on{true};

}  // namespace

bool avx_loops_enabled() { return processor_has_avx() && avx_switched_on.load(std::memory_order_relaxed); }

void set_avx_loops_enabled(bool enabled) { avx_switched_on.store(enabled, std::memory_order_relaxed); }

}  // namespace tune
