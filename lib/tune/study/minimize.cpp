#include "tune/study/minimize.hpp"

#include <cmath>
#include <stdexcept>

#include "tune/strategy/strategy_factory.hpp"
#include "tune/study/study.hpp"

namespace tune {

MinimizeResult minimize(const std::function<double(const Config&)>& objective, const Space& space,
                        const MinimizeOptions& options) {
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
    try {
      const double value = objective(s->config);
      if (std::isfinite(value)) study.tell(s->id, value);
      else study.fail(s->id, "the objective returned a non-finite value");
    } catch (const std::exception& e) {
      study.fail(s->id, std::string("the objective threw: ") + e.what());
    }
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
