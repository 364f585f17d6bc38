#include "tune/strategy/random_strategy.hpp"

#include "tune/io/yaml_values.hpp"
#include "tune/space/sampling.hpp"

namespace tune {

namespace {
// Discrete spaces can hand out a point that is already pending; redraw a bounded number of times.
constexpr int kMaxRedraws = 1000;
}  // namespace

ProposalResult RandomStrategy::propose(const StrategyContext& context) {
  Rng rng = make_rng(context.seed, RngStream::random_search, context.ask_index);
  for (int attempt = 0; attempt < kMaxRedraws; ++attempt) {
    Eigen::VectorXd u = context.space.snap(uniform_points(context.space.dim(), 1, rng).col(0));
    if (!coincides_with_pending(u, context.trials)) return {Proposal{.unit = u, .source = "random"}, {}};
  }
  return {std::nullopt, "every point of the space is pending"};
}

YAML::Node RandomStrategy::save() const {
  YAML::Node node;
  node["name"] = name();
  return node;
}

void RandomStrategy::restore(const YAML::Node&, const StrategyContext&) {}

Eigen::VectorXd shifted_sobol_point(const Space& space, std::uint64_t seed, RngStream stream, std::uint64_t index) {
  Rng shift_rng = make_rng(seed, stream, 0);
  SobolSequence sequence(space.dim(), shift_rng);
  Eigen::VectorXd u;
  for (std::uint64_t i = 0; i <= index; ++i) u = sequence.next();
  return space.snap(u);
}

ProposalResult SobolStrategy::propose(const StrategyContext& context) {
  Rng shift_rng = make_rng(context.seed, RngStream::random_search, 0);
  SobolSequence sequence(context.space.dim(), shift_rng);
  for (std::uint64_t i = 0; i < next_index_; ++i) sequence.next();
  for (int attempt = 0; attempt < kMaxRedraws; ++attempt) {
    Eigen::VectorXd u = context.space.snap(sequence.next());
    ++next_index_;
    if (!coincides_with_pending(u, context.trials)) return {Proposal{.unit = u, .source = "sobol"}, {}};
  }
  return {std::nullopt, "every point of the space is pending"};
}

YAML::Node SobolStrategy::save() const {
  YAML::Node node;
  node["name"] = name();
  node["next_index"] = next_index_;
  return node;
}

void SobolStrategy::restore(const YAML::Node& node, const StrategyContext&) {
  next_index_ = read_uint(require(node, "next_index"), "strategy.next_index");
}

}  // namespace tune
