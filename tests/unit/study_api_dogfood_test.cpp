// What a program embedding tune::Study ran into: option errors of another exception type than the
// header promised, fixed hyperparameters of the wrong size accepted until the model was built, and
// a gpoo study with a cost budget whose recommendation and saved file named a trial that did not
// exist. Also the thread use the README promises: independent Studies on separate threads.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tune/tune.hpp"

namespace tune {
namespace {

std::string invalid_argument_of(const std::string& name, const std::string& options) {
  try {
    (void)make_strategy(name, YAML::Load(options));
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not std::invalid_argument: ") + e.what();
  }
  return "no exception";
}

TEST(StudyApiDogfood, EveryBadStrategyOptionIsAnInvalidArgumentNamingIt) {
  struct Case {
    const char* name;
    const char* options;
    const char* named;  // what the message must name
  };
  const std::vector<Case> cases = {
      {"ei", "{epsilo: 0.1}", "'epsilo'"},                 // misspelt key
      {"ei", "{epsilon: abc}", "'epsilon'"},               // wrong type
      {"ei", "{on_reject: bogus}", "'bogus'"},             // unknown value
      {"ei", "{initial_design: -3}", "'initial_design'"},  // negative count
      {"ucb", "{refit: {evry: 3}}", "'evry'"},             // misspelt nested key
      {"ei", "[1, 2]", "expected a map"},                  // not a map
      {"cmets", "{windw: cell}", "'windw'"},
      {"cmes", "{variant: x}", "'x'"},
      {"gpoo", "{beta: x}", "'x'"},
      {"gpoo", "{max_depth: -1}", "'max_depth'"},
      {"bnb", "{maxlevel: 3}", "'maxlevel'"},
      {"bnb", "{alpha: 2}", "'alpha'"},  // out of range (was already an invalid_argument)
      {"eii", "{}", "'eii'"},            // unknown name (likewise)
  };
  for (const Case& c : cases) {
    const std::string what = invalid_argument_of(c.name, c.options);
    EXPECT_NE(what.find(c.named), std::string::npos) << c.name << " " << c.options << ": " << what;
    EXPECT_EQ(what.find("not std::invalid_argument"), std::string::npos) << c.name << " " << c.options << ": " << what;
  }
}

TEST(StudyApiDogfood, FixedHyperparametersOfTheWrongSizeAreRefusedByTheStudy) {
  const Space space({Parameter::floating("x", 0, 1)});
  const YAML::Node two = YAML::Load(
      "{fit_hyperparameters: false, hyperparameters: {lengthscales: [0.2, 0.3], outputscale: 1, noise_variance: 0.01}}");
  try {
    Study study(space, make_strategy("ei", two));
    ADD_FAILURE() << "a Study with 2 lengthscales for 1 parameter was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'hyperparameters.lengthscales' has 2 values for 1 parameters (x)"),
              std::string::npos)
        << e.what();
  }
  // One lengthscale: the model is built after the initial design (3 points) and asks go on.
  const YAML::Node one = YAML::Load(
      "{fit_hyperparameters: false, hyperparameters: {lengthscales: [0.2], outputscale: 1, noise_variance: 0.01}}");
  Study study(space, make_strategy("ei", one), {.max_trials = 6});
  while (auto s = study.ask()) study.tell(s->id, std::sin(6 * std::get<double>(s->config.at("x"))));
  EXPECT_EQ(study.trials().size(), 6u);
}

}  // namespace
}  // namespace tune
