#pragma once
// The interface every search strategy implements. A strategy proposes the next point of the unit
// cube from the trials so far; it owns no I/O and draws randomness only from Rngs derived from the
// study seed, so that the same seed and the same tells give the same proposals.
#include <yaml-cpp/yaml.h>

#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tune/space/space.hpp"
#include "tune/study/trial.hpp"

namespace tune {

struct StrategyContext {
  const Space& space;
  Direction direction;
  std::uint64_t seed;
  std::uint64_t ask_index;  // how many asks the study has answered before this one
  const std::vector<Trial>& trials;
};

struct Proposal {
  Eigen::VectorXd unit;  // snapped
  std::string source;
  bool in_model = false;
  double test_statistic = std::numeric_limits<double>::quiet_NaN();
  std::size_t model_size = 0;
  double acquisition = std::numeric_limits<double>::quiet_NaN();
};

// Either a proposal, or the reason the strategy has nothing more to propose.
struct ProposalResult {
  std::optional<Proposal> proposal;
  std::string stop_reason;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;

  virtual ProposalResult propose(const StrategyContext& context) = 0;
  // Called once a trial has completed (its value is set), in the order of the tells.
  virtual void on_complete(const StrategyContext& context, const Trial& trial) {
    (void)context;
    (void)trial;
  }

  // Options and internal state, so that a loaded study continues exactly where it was.
  virtual YAML::Node save() const = 0;
  // Restores the state saved by save() (options are read by make_strategy); the trials are those
  // of the loaded study.
  virtual void restore(const YAML::Node& node, const StrategyContext& context) = 0;
};

// Whether `unit` equals the point of a pending trial (parallel suggestions must differ).
bool coincides_with_pending(const Eigen::VectorXd& unit, const std::vector<Trial>& trials);

}  // namespace tune
