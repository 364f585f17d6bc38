#pragma once
// Every random choice in tune is drawn from an Rng seeded by derive_seed(study seed, stream, index),
// so a study needs to persist only its seed and counters to replay the same choices after a load.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace tune {

using Rng = std::mt19937_64;

// SplitMix64 finaliser: a bijective mix of 64 bits.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Named streams keep unrelated random choices independent of one another.
enum class RngStream : std::uint64_t {
  initial_design = 1,
  random_search = 2,
  acquisition = 3,
  hyperparameter_fit = 4,
  fit_subset = 5,
  fallback = 6,
  candidates = 7,
  recommendation = 8,
};

constexpr std::uint64_t derive_seed(std::uint64_t seed, RngStream stream, std::uint64_t index) {
  return mix64(mix64(mix64(seed) ^ static_cast<std::uint64_t>(stream)) ^ index);
}

inline Rng make_rng(std::uint64_t seed, RngStream stream, std::uint64_t index) {
  return Rng(derive_seed(seed, stream, index));
}

// Uniform double in [0, 1) from 53 random bits; portable, unlike std::uniform_real_distribution
// whose output is implementation-defined.
inline double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// A standard normal draw by Box-Muller on two uniform01 draws: portable, unlike
// std::normal_distribution.
inline double standard_normal(Rng& rng) {
  const double u1 = std::max(uniform01(rng), 1e-300), u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace tune
