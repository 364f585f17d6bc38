#include "tune/study/study.hpp"

#include <cmath>
#include <stdexcept>

namespace tune {

Study::Study(Space space, std::unique_ptr<Strategy> strategy, StudyOptions options)
    : space_(std::move(space)), strategy_(std::move(strategy)), options_(options) {
  if (!strategy_) throw std::invalid_argument("Study: no strategy");
  if (space_.dim() == 0) throw std::invalid_argument("Study: the search space has no parameters");
}

Study::Study(Study&&) noexcept = default;
Study& Study::operator=(Study&&) noexcept = default;
Study::~Study() = default;

StrategyContext Study::context() const {
  return StrategyContext{space_, options_.direction, options_.seed, ask_count_, trials_};
}

std::optional<Suggestion> Study::ask() {
  if (finished_) return std::nullopt;
  ProposalResult result = strategy_->propose(context());
  ++ask_count_;
  if (!result.proposal) {
    stop_reason_ = result.stop_reason;
    if (pending_count() == 0) finished_ = true;
    return std::nullopt;
  }
  stop_reason_.clear();
  Proposal& p = *result.proposal;
  Trial t;
  t.id = trials_.size();
  t.config = space_.decode(p.unit);
  t.unit = std::move(p.unit);
  t.source = std::move(p.source);
  t.in_model = p.in_model;
  t.test_statistic = p.test_statistic;
  t.model_size = p.model_size;
  t.acquisition = p.acquisition;
  trials_.push_back(std::move(t));
  return Suggestion{trials_.back().id, trials_.back().config};
}

Trial& Study::pending_trial(std::uint64_t id, const char* action) {
  if (id >= trials_.size())
    throw std::invalid_argument(std::string(action) + ": no trial with id " + std::to_string(id));
  Trial& t = trials_[id];
  if (t.status != TrialStatus::pending)
    throw std::invalid_argument(std::string(action) + ": trial " + std::to_string(id) + " is already " +
                                to_string(t.status));
  return t;
}

void Study::tell(std::uint64_t id, double value) {
  if (!std::isfinite(value))
    throw std::invalid_argument("tell: trial " + std::to_string(id) + " has a non-finite value; report it with fail()");
  Trial& t = pending_trial(id, "tell");
  t.value = value;
  t.status = TrialStatus::complete;
  strategy_->on_complete(context(), t);
}

void Study::fail(std::uint64_t id, std::string reason) {
  Trial& t = pending_trial(id, "fail");
  t.status = TrialStatus::failed;
  t.failure_reason = std::move(reason);
}

const Trial& Study::trial(std::uint64_t id) const {
  if (id >= trials_.size()) throw std::invalid_argument("no trial with id " + std::to_string(id));
  return trials_[id];
}

const Trial* Study::best() const {
  const Trial* best = nullptr;
  for (const Trial& t : trials_)
    if (t.status == TrialStatus::complete &&
        (!best || reward_of(*t.value, options_.direction) > reward_of(*best->value, options_.direction)))
      best = &t;
  return best;
}

std::size_t Study::pending_count() const {
  std::size_t n = 0;
  for (const Trial& t : trials_) n += t.status == TrialStatus::pending;
  return n;
}

}  // namespace tune
