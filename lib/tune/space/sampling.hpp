#pragma once
// Space-filling and random designs on the unit cube, one point per column.
#include <Eigen/Core>
#include <cstdint>
#include <memory>

#include "tune/random/rng.hpp"

namespace tune {

// n points drawn independently and uniformly from [0,1]^dim.
Eigen::MatrixXd uniform_points(std::size_t dim, std::size_t n, Rng& rng);

// Sobol low-discrepancy sequence (Boost.Random's sobol engine, Joe-Kuo direction numbers), with an
// optional random shift modulo 1 (Cranley-Patterson rotation) so that different seeds give
// different but equally well spread point sets. The unshifted sequence skips the origin.
class SobolSequence {
 public:
  explicit SobolSequence(std::size_t dim);
  SobolSequence(std::size_t dim, Rng& shift_rng);  // random shift drawn from shift_rng
  ~SobolSequence();
  SobolSequence(SobolSequence&&) noexcept;
  SobolSequence& operator=(SobolSequence&&) noexcept;

  std::size_t dim() const { return dim_; }
  Eigen::VectorXd next();
  Eigen::MatrixXd next(std::size_t n);  // n points, one per column

 private:
  struct Engine;
  std::size_t dim_;
  Eigen::VectorXd shift_;
  std::unique_ptr<Engine> engine_;
};

// Convenience: the first n points of a (shifted) Sobol sequence.
Eigen::MatrixXd sobol_points(std::size_t dim, std::size_t n, Rng& shift_rng);

}  // namespace tune
