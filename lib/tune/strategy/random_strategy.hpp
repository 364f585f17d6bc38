#pragma once
// Baselines: independent uniform points, and a randomly shifted Sobol sequence.
#include "tune/random/rng.hpp"
#include "tune/strategy/strategy.hpp"

namespace tune {

class RandomStrategy final : public Strategy {
 public:
  bool updates_on_complete() const override { return false; }  // on_complete is the base's no-op
  std::string name() const override { return "random"; }
  ProposalResult propose(const StrategyContext& context) override;
  YAML::Node save() const override;
  void restore(const YAML::Node& node, const StrategyContext& context) override;
};

class SobolStrategy final : public Strategy {
 public:
  bool updates_on_complete() const override { return false; }  // on_complete is the base's no-op
  std::string name() const override { return "sobol"; }
  ProposalResult propose(const StrategyContext& context) override;
  YAML::Node save() const override;
  void restore(const YAML::Node& node, const StrategyContext& context) override;

 private:
  std::uint64_t next_index_ = 0;  // position in the sequence
};

// Point `index` of the Sobol sequence shifted by the seed's random shift, snapped to the space.
Eigen::VectorXd shifted_sobol_point(const Space& space, std::uint64_t seed, RngStream stream, std::uint64_t index);

}  // namespace tune
