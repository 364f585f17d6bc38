#include "tune/study/minimize.hpp"

#include <cmath>
#include <stdexcept>

#include "tune/io/yaml_values.hpp"
#include "tune/strategy/strategy_factory.hpp"
#include "tune/study/study.hpp"

namespace tune {

MinimizeResult minimize(const std::function<double(const Config&)>& objective, const Space& space,
                        const MinimizeOptions& options) {
  // Before, a result with best_value 0 and "no evaluation succeeded" came back, as if every one failed.
  if (options.evaluations == 0) throw std::invalid_argument("minimize: evaluations must be >= 1");
  std::unique_ptr<Strategy> strategy =
      options.strategy == "ucb" || options.strategy == "ei"
          ? make_gp_bandit(acquisition_type_from_string(options.strategy), options.gp)
          : make_strategy(options.strategy);
  Study study(space, std::move(strategy), StudyOptions{options.direction, options.seed});
  MinimizeResult result;
  while (result.evaluations < options.evaluations) {
    const std::optional<Suggestion> s = study.ask();
    if (!s) {
      result.stop_reason = study.stop_reason();
      break;
    }
    ++result.evaluations;
    double value = 0.0;
    try {
      value = objective(s->config);
    } catch (const std::exception& e) {
      study.fail(s->id, std::string("the objective threw: ") + e.what());
      continue;
    } catch (...) {  // (`throw 42` escaped minimize, and the history was lost with it)
      study.fail(s->id, "the objective threw something that is not a std::exception");
      continue;
    }
    // A value tell() refuses is the objective's, not an exception of the objective's: before, a
    // returned 1e200 was recorded as "the objective threw: tell: trial 1 has the value 1e+200 ...".
    if (!std::isfinite(value))
      study.fail(s->id, "the objective returned a non-finite value");
    else if (std::abs(value) > kMaxObjectiveMagnitude)
      study.fail(s->id, "the objective returned " + format_double(value) + ", beyond the +-" +
                            format_double(kMaxObjectiveMagnitude) + " the models can compute with");
    else
      study.tell(s->id, value);
  }
  result.history = study.trials();
  if (const Trial* best = study.best()) {
    result.best_config = best->config;
    result.best_value = *best->value;
  } else if (result.stop_reason.empty()) {
    result.stop_reason = "no evaluation succeeded";
  }
  return result;
}

}  // namespace tune
