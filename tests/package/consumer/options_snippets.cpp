// The library's options structs as the README writes them, with designated initialisers that leave
// members at their defaults, compiled with the warnings a careful user turns on (-Wall -Wextra
// -Wpedantic -Werror, see CMakeLists.txt). GCC before 14 warned "missing initializer for member
// 'tune::StudyOptions::resolution'" for every such initialiser of a member without a default member
// initialiser, so the README's own example failed to build under -Werror.
#include <tune/tune.hpp>

#include <cstdint>
#include <string>

int run_options_snippets() {
  const tune::Space space({tune::Parameter::floating("x", -1, 1), tune::Parameter::integer("n", 1, 4)});
  // The README's first example, as written.
  tune::Study study(space, tune::make_strategy("ei"),
                    {.direction = tune::Direction::maximize, .seed = 7, .max_trials = 6});
  study.enqueue({{"x", 0.5}, {"n", std::int64_t{2}}});
  while (auto s = study.ask()) study.tell(s->id, -std::get<double>(s->config.at("x")) * std::get<double>(s->config.at("x")));

  tune::StudyOptions budgeted{.seed = 1, .cost_budget = 40};
  budgeted.resolution = tune::Resolution{"epochs", {1, 3, 9}};  // costs measured
  tune::Study cmets(space, tune::make_strategy("cmets"), budgeted);

  const tune::GpBanditOptions gp{.epsilon = 0.01};
  const tune::MinimizeOptions minimize{.evaluations = 4, .strategy = "ucb"};
  const tune::MultiResolutionOptions multi{.window = tune::ObservationWindow::point};
  const tune::GpooStrategyOptions gpoo{.representatives = 2};
  const tune::BnbStrategyOptions bnb{.alpha = 0.1};
  const auto result = tune::minimize(
      [](const tune::Config& c) { return std::get<double>(c.at("x")); }, space, minimize);
  return static_cast<int>(study.trials().size() + result.evaluations) + (gp.epsilon > 0) + (multi.tree ? 1 : 0) +
         static_cast<int>(gpoo.representatives + (bnb.alpha > 0) + cmets.trials().size());
}
