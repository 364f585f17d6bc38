#include "tune/space/sampling.hpp"

#include <boost/random/sobol.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tune {

namespace {

// Boost's Sobol engine produces 64-bit integers; only the top 53 bits are kept so that every
// coordinate is an exact double in [0, 1). For fewer than 2^53 points the dropped bits are zero.
constexpr int kept_bits = 53;
constexpr std::uint64_t kept_mask = (std::uint64_t{1} << kept_bits) - 1;
constexpr double kept_scale = 0x1.0p-53;

// Highest dimension that Boost's Joe-Kuo table supports.
constexpr std::size_t max_sobol_dimension =
    boost::random::detail::qrng_tables::sobol::max_dimension;

std::size_t checked_dim(std::size_t dim) {
  if (dim == 0 || dim > max_sobol_dimension) {
    throw std::invalid_argument("SobolSequence: dimension must be in [1, " +
                                std::to_string(max_sobol_dimension) + "], got " +
                                std::to_string(dim));
  }
  return dim;
}

}  // namespace

Eigen::MatrixXd uniform_points(std::size_t dim, std::size_t n, Rng& rng) {
  Eigen::MatrixXd points(static_cast<Eigen::Index>(dim), static_cast<Eigen::Index>(n));
  // Column by column, so that the first k points do not depend on n.
  for (Eigen::Index j = 0; j < points.cols(); ++j) {
    for (Eigen::Index i = 0; i < points.rows(); ++i) points(i, j) = uniform01(rng);
  }
  return points;
}

struct SobolSequence::Engine {
  // boost::random::sobol already skips the all-zero first point of the sequence.
  explicit Engine(std::size_t dim) : sobol(dim) {}
  boost::random::sobol sobol;
};

SobolSequence::SobolSequence(std::size_t dim)
    : dim_(checked_dim(dim)),
      shift_(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(dim))),
      engine_(std::make_unique<Engine>(dim)) {}

SobolSequence::SobolSequence(std::size_t dim, Rng& shift_rng) : SobolSequence(dim) {
  for (Eigen::Index i = 0; i < shift_.size(); ++i) shift_[i] = uniform01(shift_rng);
}

SobolSequence::~SobolSequence() = default;
SobolSequence::SobolSequence(SobolSequence&&) noexcept = default;
SobolSequence& SobolSequence::operator=(SobolSequence&&) noexcept = default;

Eigen::VectorXd SobolSequence::next() {
  if (!engine_) throw std::logic_error("SobolSequence: use of a moved-from sequence");
  Eigen::VectorXd point(static_cast<Eigen::Index>(dim_));
  for (Eigen::Index i = 0; i < point.size(); ++i) {
    // The shift is a multiple of 2^-53 (uniform01), so the rotation is exact in integers.
    const auto shift = static_cast<std::uint64_t>(shift_[i] * 0x1.0p53);
    const std::uint64_t x = (engine_->sobol() >> (64 - kept_bits)) + shift;
    point[i] = static_cast<double>(x & kept_mask) * kept_scale;
  }
  return point;
}

Eigen::MatrixXd SobolSequence::next(std::size_t n) {
  Eigen::MatrixXd points(static_cast<Eigen::Index>(dim_), static_cast<Eigen::Index>(n));
  for (Eigen::Index j = 0; j < points.cols(); ++j) points.col(j) = next();
  return points;
}

Eigen::MatrixXd sobol_points(std::size_t dim, std::size_t n, Rng& shift_rng) {
  SobolSequence sequence(dim, shift_rng);
  return sequence.next(n);
}

}  // namespace tune
