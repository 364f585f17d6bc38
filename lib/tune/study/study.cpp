#include "tune/study/study.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tune/io/yaml_values.hpp"

namespace tune {

Study::Study(Space space, std::unique_ptr<Strategy> strategy, StudyOptions options)
    : space_(std::move(space)), strategy_(std::move(strategy)), options_(options) {
  if (!strategy_) throw std::invalid_argument("Study: no strategy");
  if (space_.dim() == 0) throw std::invalid_argument("Study: the search space has no parameters");
  if (options_.resolution) {
    validate(*options_.resolution);
    // The strategy chooses the level; a parameter of the same name would be searched as well.
    for (const Parameter& p : space_.parameters())
      if (p.name == options_.resolution->parameter)
        throw std::invalid_argument("Study: the resolution's parameter '" + p.name +
                                    "' is also a parameter of the space; the strategy chooses its level, remove it "
                                    "from the space");
  }
  strategy_->check_levels(options_.resolution ? options_.resolution->levels() : 1);
  strategy_->check_space(space_);
  if (options_.max_trials) strategy_->check_trial_budget(*options_.max_trials);
  if (options_.cost_budget) {
    if (!(*options_.cost_budget > 0 && std::isfinite(*options_.cost_budget)))
      throw std::invalid_argument("Study: the cost budget must be finite and > 0");
    if (!options_.resolution)
      throw std::invalid_argument("Study: a cost budget counts the costs of resolution levels; give a resolution, or "
                                  "use max_trials");
    const Resolution& r = *options_.resolution;
    // The objective is the full run's: a budget that cannot pay for one never observes it.
    if (!r.measured() && *options_.cost_budget < r.costs.back())
      throw std::invalid_argument("Study: the cost budget " + format_double(*options_.cost_budget) +
                                  " is below the cost " + format_double(r.costs.back()) +
                                  " of one full-resolution run; raise it");
  }
  if (options_.max_trials && *options_.max_trials == 0) throw std::invalid_argument("Study: max_trials must be >= 1");
}

Study::Study(Study&&) noexcept = default;
Study& Study::operator=(Study&&) noexcept = default;
Study::~Study() = default;

StrategyContext Study::context() const {
  StrategyContext c{space_, options_.direction, options_.seed, ask_count_, trials_};
  if (options_.resolution) {
    c.resolution = &*options_.resolution;
    c.level_costs = level_costs();
  }
  if (options_.cost_budget) c.remaining_budget = *options_.cost_budget - spent_cost(c.level_costs);
  // With cost limits, the end of the budget: nothing is pending (worst_case_fits keeps the others
  // out), and less is left than the longest limit. The strategy then sees each level at its limit,
  // so that what it proposes fits even at its worst; at the level's mean cost, a run near the end
  // spent 202 of a budget of 200 when the runs then being made cost far more than the mean.
  if (!level_cost_limits_.empty() && options_.cost_budget && pending_count() == 0 &&
      c.remaining_budget < longest_cost_limit())
    c.level_costs = level_cost_limits_;
  return c;
}

std::vector<double> Study::level_costs() const {
  if (!options_.resolution) return {};
  std::vector<double> costs = tune::level_costs(*options_.resolution, trials_);
  // No run costs more than its limit. A guess above it (extrapolated from cheaper levels) would make
  // the strategy and exceeds_cost_budget refuse a run that waits_for_a_guessed_cost found room for
  // at its limit, and charge a pending run more than it can spend. A lower guess stands: the limit
  // is a worst case, not an estimate.
  if (options_.resolution->measured() && !level_cost_limits_.empty())
    for (std::size_t l = 0; l < costs.size(); ++l) costs[l] = std::min(costs[l], level_cost_limits_[l]);
  return costs;
}

double Study::spent_cost() const { return spent_cost(level_costs()); }

double Study::spent_cost(const std::vector<double>& costs_by_level) const {
  // Without a resolution every trial counts 1.
  const std::vector<double> costs = options_.resolution ? costs_by_level : std::vector<double>{1.0};
  double spent = 0.0;
  for (const Trial& t : trials_) spent += trial_cost(t, costs);
  return spent;
}

std::optional<StudyRecommendation> Study::recommendation() const {
  const std::optional<Recommendation> r = strategy_->recommend(context());
  if (!r) return std::nullopt;
  StudyRecommendation out;
  out.unit = space_.snap(r->unit);
  out.config = space_.decode(out.unit);
  out.mean = options_.direction == Direction::maximize ? r->mean : -r->mean;
  out.sd = r->sd;
  out.sd_scale = r->sd_scale;
  if (r->region) {
    StudyRegion region;
    region.lower = r->region->lower;
    region.upper = r->region->upper;
    region.box = decode_box(space_, region.lower, region.upper);
    region.mean = options_.direction == Direction::maximize ? r->region->mean : -r->region->mean;
    region.sd = r->region->sd;
    out.region = std::move(region);
  }
  return out;
}

std::optional<Suggestion> Study::ask() {
  // A configuration the user enqueued after the strategy stopped still runs (budgets permitting):
  // before, it was accepted and silently never handed out.
  if (finished_ && enqueued_.empty()) return std::nullopt;
  if (waits_for_a_guessed_cost()) return std::nullopt;
  if (options_.max_trials && trials_.size() - imported_count() >= *options_.max_trials) {
    stop_reason_ = "the trial budget of " + std::to_string(*options_.max_trials) + " is spent";
    if (pending_count() == 0) finished_ = true;
    return std::nullopt;
  }
  if (!enqueued_.empty()) return ask_enqueued();
  const StrategyContext c = context();
  // A strategy that does not budget itself proposes a full run: one that cannot fit is not asked for
  // (the ask still counts, as when the study refused the proposal after asking).
  if (options_.resolution && !strategy_->keeps_to_cost_budget() &&
      exceeds_cost_budget(options_.resolution->top(), c.level_costs, c.remaining_budget, "")) {
    ++ask_count_;
    return std::nullopt;
  }
  ProposalResult result = strategy_->propose(c);
  ++ask_count_;
  if (!result.proposal) {
    stop_reason_ = result.stop_reason;
    if (pending_count() == 0) finished_ = true;
    return std::nullopt;
  }
  Proposal& p = *result.proposal;
  // A cost-aware strategy's proposal fits (checked above for the others); never overshoot all the same.
  if (options_.resolution &&
      exceeds_cost_budget(p.level.value_or(options_.resolution->top()), c.level_costs, c.remaining_budget, ""))
    return std::nullopt;
  stop_reason_.clear();
  Trial t;
  t.id = trials_.size();
  t.config = space_.decode(p.unit);
  t.unit = std::move(p.unit);
  t.source = std::move(p.source);
  t.in_model = p.in_model;
  t.test_statistic = p.test_statistic;
  t.model_size = p.model_size;
  t.acquisition = p.acquisition;
  if (options_.resolution) {
    t.level = p.level.value_or(options_.resolution->top());
    if (*t.level > options_.resolution->top())
      throw std::logic_error("strategy " + strategy_->name() + " proposed resolution level " + std::to_string(*t.level) +
                             " of a resolution with " + std::to_string(options_.resolution->levels()) + " levels");
  }
  trials_.push_back(std::move(t));
  return suggestion_of(trials_.back());
}

void Study::raise_cost_budget(double budget) {
  if (!options_.cost_budget) throw std::invalid_argument("raise_cost_budget: the study has no cost budget to raise");
  if (!(std::isfinite(budget) && budget > *options_.cost_budget))
    throw std::invalid_argument("raise_cost_budget: " + format_double(budget) + " is not above the present budget of " +
                                format_double(*options_.cost_budget));
  options_.cost_budget = budget;
  // The study's own stop and the cost-aware strategies' both say so; another stop (a strategy with
  // nothing left to propose) stands.
  if (stopped_for_cost_budget()) {
    finished_ = false;
    stop_reason_.clear();
  }
}

// With a cost budget, a run at `level` that does not fit what remains of it ends the asking (its
// reason recorded; the study finished once nothing is pending).
bool Study::exceeds_cost_budget(std::size_t level, const std::vector<double>& costs, double remaining,
                                std::string_view which_run) {
  if (!options_.cost_budget || level >= costs.size() || costs[level] <= remaining) return false;
  stop_reason_ = std::string(kCostBudgetExhausted) + ": the next run" + std::string(which_run) +
                 " does not fit the remaining budget";
  if (pending_count() == 0) finished_ = true;
  return true;
}

// With a cost budget and measured costs, nothing is handed out while a trial is pending at a level
// no trial has completed at: that run's cost is a guess, before any run (one at a time until the
// first cost is in: a guessed cost either blocks every run, a guess above the budget, or lets every
// worker start one that may not fit) and for a level not yet run, guessed from the others. A
// trainer's full run took 3 s where its cheap runs suggested 0.54 s, and four workers started four
// full runs on that guess, spending 12 of a budget of 5. The check comes before the strategy
// proposes, since the level is only known from a proposal and a discarded proposal would leave the
// strategy's record of its queries (cmets's tree) ahead of the study's trials.
// With cost limits (set_level_cost_limits) one rule replaces these waits, for every pending run:
// worst_case_fits. A guess is then no risk, and neither is a level's mean cost that the runs now
// being made exceed (runs near the optimum 15 times slower than the ones that priced the level
// spent 38 of a budget of 25).
bool Study::waits_for_a_guessed_cost() {
  if (!options_.cost_budget || !options_.resolution || !options_.resolution->measured()) return false;
  const Resolution& r = *options_.resolution;
  if (!level_cost_limits_.empty()) {
    if (pending_count() == 0 || worst_case_fits()) return false;
    stop_reason_ = "waiting for running trials: the budget left with each of them at its time limit does not cover "
                   "one more run at the longest limit (" + format_double(longest_cost_limit()) + ")";
    return true;
  }
  if (!costs_calibrated(r, trials_)) {
    if (pending_count() == 0) return false;
    stop_reason_ = "waiting for the first run's measured cost to estimate the levels' costs";
    return true;
  }
  for (const Trial& t : trials_)
    if (t.status == TrialStatus::pending && t.level && !level_cost_measured(r, trials_, *t.level)) {
      stop_reason_ = "waiting for the measured cost of trial " + std::to_string(t.id) + " at " + r.parameter + " " +
                     format_double(r.values[*t.level]) + ", a level whose cost is still a guess (no run there has completed)";
      return true;
    }
  return false;
}

// Whether the budget left pays for the next run at any level even if every pending run costs its
// limit: finished trials count their cost, pending ones their level's limit, and what is left must
// cover the largest limit, since the level is only known once the strategy has proposed. The pending
// runs and the next cannot then spend more than the budget, however wrong the costs' estimates.
bool Study::worst_case_fits() const {
  const std::vector<double> costs = level_costs();
  double committed = 0.0;
  for (const Trial& t : trials_)
    committed += t.status == TrialStatus::pending
                     ? level_cost_limits_[t.level.value_or(options_.resolution->top())] + t.interrupted_cost
                     : trial_cost(t, costs);
  return *options_.cost_budget - committed >= longest_cost_limit();
}

double Study::longest_cost_limit() const {
  return *std::max_element(level_cost_limits_.begin(), level_cost_limits_.end());
}

void Study::set_level_cost_limits(std::vector<double> limits) {
  if (!limits.empty()) {
    if (!options_.resolution)
      throw std::invalid_argument("set_level_cost_limits: cost limits are per resolution level; the study has no resolution");
    if (limits.size() != options_.resolution->levels())
      throw std::invalid_argument("set_level_cost_limits: " + std::to_string(limits.size()) + " limits for " +
                                  std::to_string(options_.resolution->levels()) + " levels; give one per level");
    for (std::size_t l = 0; l < limits.size(); ++l)
      if (!(std::isfinite(limits[l]) && limits[l] > 0))
        throw std::invalid_argument("set_level_cost_limits: the limit of level " + std::to_string(l) +
                                    " must be finite and > 0");
  }
  level_cost_limits_ = std::move(limits);
}

Suggestion Study::suggestion_of(const Trial& t) const {
  Suggestion s{t.id, t.config, t.level, std::nullopt};
  if (t.level) s.resolution_value = options_.resolution->values[*t.level];
  return s;
}

Config Study::checked_config(Config config, std::optional<std::size_t> level, const char* action) const {
  const std::string what(action);
  if (!strategy_->accepts_enqueued_trials())
    throw std::invalid_argument(what + ": strategy " + strategy_->name() +
                                " runs only configurations it chose itself (gpoo evaluates cells of its "
                                "partition, bnb the points of its lattice); use ei, ucb, cmets, cmes, random or sobol");
  const std::vector<bool> applying = space_.active(config);
  for (std::size_t i = 0; i < space_.dim(); ++i)
    if (applying[i] && !config.contains(space_.parameters()[i].name))
      throw std::invalid_argument(what + ": parameter '" + space_.parameters()[i].name +
                                  "' has no value; give every parameter of the space" +
                                  (space_.has_conditions() ? " that applies to the configuration" : ""));
  try {
    (void)space_.encode(config);
  } catch (const SpaceError& e) {
    throw std::invalid_argument(what + ": " + e.what());
  }
  if (level && !options_.resolution) throw std::invalid_argument(what + ": a level needs a study with a resolution");
  if (level && *level > options_.resolution->top())
    throw std::invalid_argument(what + ": level " + std::to_string(*level) + " of a resolution with " +
                                std::to_string(options_.resolution->levels()) + " levels (0 to " +
                                std::to_string(options_.resolution->top()) + ")");
  // The space accepts 2.0 for an integer and 1 for a float; the trial holds each value as the
  // space's type, as every other trial does (and as a loaded study reads it back): handed out as a
  // double, an integer made the user's std::get<std::int64_t> throw, and the trial's configuration
  // changed type across save() / load().
  for (const Parameter& p : space_.parameters()) {
    if (!config.contains(p.name)) continue;  // a conditional parameter that does not apply
    Value& v = config.at(p.name);
    if (p.type == ParamType::integer && std::holds_alternative<double>(v))
      v = static_cast<std::int64_t>(std::get<double>(v));
    else if (p.type == ParamType::floating && std::holds_alternative<std::int64_t>(v))
      v = static_cast<double>(std::get<std::int64_t>(v));
  }
  return config;
}

void Study::enqueue(Config config, std::optional<std::size_t> level) {
  config = checked_config(std::move(config), level, "enqueue");
  const std::size_t at = level.value_or(options_.resolution ? options_.resolution->top() : 0);
  enqueued_.push_back({std::move(config), at});
}

std::optional<Suggestion> Study::ask_enqueued() {
  const Enqueued& next = enqueued_.front();
  if (options_.cost_budget && options_.resolution) {
    const std::vector<double> costs = level_costs();
    if (exceeds_cost_budget(next.level, costs, *options_.cost_budget - spent_cost(costs), " (enqueued)"))
      return std::nullopt;
  }
  ++ask_count_;
  stop_reason_.clear();
  finished_ = false;
  Trial t;
  t.id = trials_.size();
  t.unit = space_.snap(space_.encode(next.config));
  t.config = next.config;  // exactly as given: decode(unit) may round a log-scaled value
  t.source = "enqueued";
  t.in_model = true;  // the user chose it; a compressed model's informativeness test is not asked
  if (options_.resolution) t.level = next.level;
  enqueued_.erase(enqueued_.begin());
  trials_.push_back(std::move(t));
  return suggestion_of(trials_.back());
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

namespace {
void check_value(double value, std::uint64_t id, const char* action) {
  if (!std::isfinite(value))
    throw std::invalid_argument(std::string(action) + ": trial " + std::to_string(id) +
                                " has a non-finite value; report it with fail()");
  if (std::abs(value) > kMaxObjectiveMagnitude)
    throw std::invalid_argument(std::string(action) + ": trial " + std::to_string(id) + " has the value " +
                                format_double(value) + ", beyond the +-" + format_double(kMaxObjectiveMagnitude) +
                                " the models can compute with; report a diverged run with fail(), or rescale the "
                                "objective (its logarithm, say)");
}

void check_cost(const std::optional<double>& cost, std::uint64_t id) {
  if (cost && !(std::isfinite(*cost) && *cost >= 0))
    throw std::invalid_argument("trial " + std::to_string(id) + ": a cost must be finite and >= 0");
  // A few costs of 1e308 summed to inf: the spend and the levels' estimates read "infs".
  if (cost && *cost > kMaxObjectiveMagnitude)
    throw std::invalid_argument("trial " + std::to_string(id) + ": the cost " + format_double(*cost) +
                                " is beyond the " + format_double(kMaxObjectiveMagnitude) +
                                " a budget can sum; give it in larger units");
}

// Without a resolution every trial counts 1 against the budgets: a cost told with one (15.5 spent by
// two trials) mixed its unit with trial counts.
void check_cost_has_a_resolution(const std::optional<double>& cost, const std::optional<Resolution>& resolution,
                                 std::uint64_t id, const char* action) {
  if (cost && !resolution)
    throw std::invalid_argument(std::string(action) + ": trial " + std::to_string(id) +
                                ": a cost is told only in a study with a resolution; without one every trial counts 1");
}
}  // namespace

void Study::tell(std::uint64_t id, double value, std::optional<double> cost) {
  // Which trial first: a NaN told to an unknown or finished trial is a wrong id before a wrong value.
  Trial& t = pending_trial(id, "tell");
  check_value(value, id, "tell");
  check_cost(cost, id);
  check_cost_has_a_resolution(cost, options_.resolution, id, "tell");
  // Without it the trial would be charged its level's guessed cost, and with no cost ever told the
  // guesses (proportional to the levels' values, at an arbitrary scale) would never spend the budget.
  if (!cost && options_.cost_budget && options_.resolution && options_.resolution->measured())
    throw std::invalid_argument("tell: trial " + std::to_string(id) +
                                ": this study measures its levels' costs against a cost budget; give the trial's "
                                "cost (its run time) as tell's third argument");
  // All or nothing: the strategy takes the result in with the trial complete (as it must see it),
  // and if it throws (it refuses the value, an internal error) the trial is pending again and the
  // strategy restored to its state before the tell. Completed first, a refused tell left a trial
  // the strategy had not seen, or had half taken in (ei's model naming it while it was not
  // complete), in every later save, and the trial could then be neither told again nor failed.
  const YAML::Node before = strategy_->updates_on_complete() ? strategy_->save() : YAML::Node();
  t.value = value;
  t.cost = cost;
  t.status = TrialStatus::complete;
  try {
    strategy_->on_complete(context(), t);
  } catch (const std::exception& e) {
    t.value.reset();
    t.cost.reset();
    t.status = TrialStatus::pending;
    if (!strategy_->updates_on_complete()) throw;
    try {
      strategy_->restore(before, context());
    } catch (const std::exception& restore_error) {
      throw std::logic_error("tell: trial " + std::to_string(id) + ": " + e.what() +
                             "; the strategy could not be restored to its state before the tell: " + restore_error.what());
    }
    throw;
  }
}

std::uint64_t Study::import_result(Config config, double value, std::optional<std::size_t> level, std::string origin) {
  std::vector<ImportedResult> one;
  one.push_back({std::move(config), value, level, std::move(origin)});
  return import_results(std::move(one));
}

std::uint64_t Study::import_results(std::vector<ImportedResult> results) {
  const std::uint64_t first = trials_.size();
  std::vector<Trial> made;
  made.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    ImportedResult& r = results[i];
    // Every result is checked before any is taken in: all or nothing.
    const std::string which = results.size() > 1 ? "import_results: result " + std::to_string(i) : "import_result";
    Config config = checked_config(std::move(r.config), r.level, which.c_str());
    // (tell's message names a pending trial and fail(): an import has neither)
    if (!std::isfinite(r.value) || std::abs(r.value) > kMaxObjectiveMagnitude)
      throw std::invalid_argument(which + ": the value " + format_double(r.value) +
                                  " is not a result the models can take in (finite, within +-" +
                                  format_double(kMaxObjectiveMagnitude) + "); a run without a result is not imported");
    if (r.origin.empty()) throw std::invalid_argument(which + ": say where the result comes from (origin is empty)");
    Trial t;
    t.id = first + i;
    t.unit = space_.snap(space_.encode(config));
    t.config = std::move(config);  // exactly as given, as an enqueued one
    t.status = TrialStatus::complete;
    t.value = r.value;
    t.source = "imported";
    t.in_model = true;  // a result, not a proposal: there is no pending point to test for informativeness
    if (options_.resolution) t.level = r.level.value_or(options_.resolution->top());
    t.imported_from = std::move(r.origin);
    made.push_back(std::move(t));
  }
  // One save of the strategy for the whole batch: one per result made importing n results O(n^2)
  // (2000 took 10 s).
  const YAML::Node before = strategy_->updates_on_complete() ? strategy_->save() : YAML::Node();
  for (Trial& t : made) trials_.push_back(std::move(t));
  try {
    for (std::size_t id = first; id < trials_.size(); ++id) strategy_->on_complete(context(), trials_[id]);
  } catch (const std::exception& e) {
    trials_.resize(first);
    if (!strategy_->updates_on_complete()) throw;
    try {
      strategy_->restore(before, context());
    } catch (const std::exception& restore_error) {
      throw std::logic_error("import_result: " + std::string(e.what()) +
                             "; the strategy could not be restored to its state before the import: " +
                             restore_error.what());
    }
    throw;
  }
  return first;
}

std::size_t Study::imported_count() const {
  return static_cast<std::size_t>(std::count_if(trials_.begin(), trials_.end(), [](const Trial& t) { return t.imported(); }));
}

void Study::tell_pruned(std::uint64_t id, std::int64_t step, double last_value, std::optional<double> cost) {
  Trial& t = pending_trial(id, "tell_pruned");
  if (!std::isfinite(last_value))
    throw std::invalid_argument("tell_pruned: trial " + std::to_string(id) +
                                " has a last value that is not finite; a pruning rule judges finite values only");
  check_cost(cost, id);
  check_cost_has_a_resolution(cost, options_.resolution, id, "tell_pruned");
  t.cost = cost;
  t.status = TrialStatus::failed;
  t.failure_reason = "pruned at step " + std::to_string(step) + " (its last value " + format_double(last_value) + ")";
  t.pruned = Trial::Pruned{step, last_value};
}

void Study::add_interrupted_cost(std::uint64_t id, double cost) {
  Trial& t = pending_trial(id, "add_interrupted_cost");
  if (!options_.resolution)
    throw std::invalid_argument("add_interrupted_cost: trial " + std::to_string(id) +
                                ": the study has no resolution, so its budget counts trials, not costs");
  check_cost(cost, id);
  t.interrupted_cost += cost;
}

void Study::fail(std::uint64_t id, std::string reason, std::optional<double> cost) {
  Trial& t = pending_trial(id, "fail");
  check_cost(cost, id);
  check_cost_has_a_resolution(cost, options_.resolution, id, "fail");
  t.cost = cost;
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
    if (t.status == TrialStatus::complete && (!t.level || *t.level == options_.resolution->top()) &&
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
