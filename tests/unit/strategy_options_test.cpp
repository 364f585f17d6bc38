// make_strategy refuses an option the named strategy does not use (ei took ucb's beta_scale and delta
// and ignored them), names the key a typo meant, and refuses max_skipped_steps: 0 (taken as 1); a
// saved study, whose options list every field, still loads.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tune/strategy/option_fields.hpp"
#include "tune/tune.hpp"

namespace tune {
namespace {

// make_strategy's std::invalid_argument message, or "" if it takes the options (another exception
// fails the test).
std::string refusal(const std::string& name, const std::string& options) {
  try {
    return make_strategy(name, YAML::Load(options)) ? "" : "no strategy";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

TEST(StrategyOptions, AnOptionOfAnotherStrategyIsRefusedNamingWhoseItIs) {
  struct Case {
    const char* name;
    const char* options;
    const char* message;
  };
  const std::vector<Case> refused{
      {"ei", "{beta_scale: 0.5}", "strategy option 'beta_scale' is ucb's; ei does not use it ("},
      // Refused as ucb's before its range is checked: "must lie in (0, 1)" would send the user to fix a
      // value that changes nothing.
      {"ei", "{delta: 5}", "strategy option 'delta' is ucb's; ei does not use it ("},
      {"ei", "{fit: {trend_max: 10}}", "strategy option 'fit.trend_max' is cmets's and cmes's; ei does not use it ("},
      {"gpoo", "{fit: {scale_min: 0.1}}", "strategy option 'fit.scale_min' is cmets's and cmes's; gpoo does not use it ("},
      {"ucb", "{on_reject: stop, max_skipped_steps: 3}",
       "strategy option 'max_skipped_steps' is on_reject: literal's; ucb with on_reject: stop does not use it ("},
      {"gpoo", "{beta: theory, beta_scale: 2}",
       "strategy option 'beta_scale' is gpoo's with beta: code; gpoo with beta: theory does not use it ("},
      {"cmes", "{max_depth: 4}", "strategy option 'max_depth' is cmets's; cmes does not use it ("},
      {"ei",
       "{fit_hyperparameters: false, hyperparameters: {lengthscales: [0.2], outputscale: 1, noise_variance: 0.01}, "
       "output_transform: log}",
       "strategy option 'output_transform' is fit_hyperparameters: true's; ei with fit_hyperparameters: false does not "
       "use it ("},
      {"ucb",
       "{fit_hyperparameters: false, hyperparameters: {lengthscales: [0.2], outputscale: 1, noise_variance: 0.01}, "
       "fit: {noise_min: 0.001}}",
       "strategy option 'fit' is fit_hyperparameters: true's; ucb with fit_hyperparameters: false does not use it ("},
      {"cmets", "{initial_design: 4}", "strategy option 'initial_design' is cmes's (and ei's, ucb's); cmets does not use it ("},
      {"bnb", "{fit: {fit_noise: true}}",
       "strategy option 'fit.fit_noise' is the noise-fitting strategies'; bnb does not use it (bnb never fits a noise"},
      {"bnb", "{fit: {smooth_start_noise: 0.1}}", "strategy option 'fit.smooth_start_noise' is the noise-fitting"},
      {"bnb", "{fit: {trend_max: 10}}", "strategy option 'fit.trend_max' is cmets's and cmes's; bnb does not use it ("},
  };
  for (const Case& c : refused) EXPECT_EQ(refusal(c.name, c.options).rfind(c.message, 0), 0u) << c.name << " " << c.options << ": " << refusal(c.name, c.options);

  // The strategy that uses each takes it, and keeps it.
  const std::unique_ptr<Strategy> ucb = make_strategy("ucb", YAML::Load("{beta_scale: 0.5, delta: 0.2}"));
  EXPECT_EQ(dynamic_cast<const GpBandit&>(*ucb).options().beta_scale, 0.5);
  EXPECT_EQ(dynamic_cast<const GpBandit&>(*ucb).options().delta, 0.2);
  const std::unique_ptr<Strategy> literal = make_strategy("ei", YAML::Load("{on_reject: literal, max_skipped_steps: 7}"));
  EXPECT_EQ(dynamic_cast<const GpBandit&>(*literal).options().max_skipped_steps, 7u);
  const std::unique_ptr<Strategy> code = make_strategy("gpoo", YAML::Load("{beta: code, beta_scale: 2}"));
  EXPECT_EQ(dynamic_cast<const GpooStrategy&>(*code).options().beta_scale, 2.0);
  for (const char* ok : {"{fit: {discrepancy_min: 0.001, noise_pooling_log_sd: 1}}", "{max_depth: 4}"})
    EXPECT_EQ(refusal("cmets", ok), "") << ok;
  EXPECT_EQ(refusal("cmes", "{initial_design: 4}"), "");
  EXPECT_EQ(refusal("bnb", "{fit: {noise_min: 1e-8, lengthscale_max: 5}}"), "");
  EXPECT_EQ(refusal("ei", "{output_transform: log, fit: {noise_min: 0.001}}"), "");
}

// The options a strategy saves list every field, those its mode does not use among them (ei's
// beta_scale, gpoo's delta_c, cmes's max_depth): a saved study loads, and asks what the original asks.
TEST(StrategyOptions, ASavedStudyWithEveryOptionLoads) {
  const Space space({Parameter::floating("x", -1, 1), Parameter::floating("y", -1, 1)});
  for (const std::string name : {"ei", "ucb", "gpoo", "cmes", "cmets", "bnb"}) {
    SCOPED_TRACE(name);
    StudyOptions options{.seed = 3, .max_trials = 8};
    Study study(space, make_strategy(name), options);
    for (int i = 0; i < 4; ++i) {
      const std::optional<Suggestion> s = study.ask();
      ASSERT_TRUE(s.has_value());
      const double x = std::get<double>(s->config.at("x")), y = std::get<double>(s->config.at("y"));
      study.tell(s->id, (x - 0.3) * (x - 0.3) + y * y);
    }
    const YAML::Node saved = study.to_yaml();
    Study loaded = Study::from_yaml(YAML::Load(YAML::Dump(saved)));
    const std::optional<Suggestion> a = study.ask(), b = loaded.ask();
    ASSERT_EQ(a.has_value(), b.has_value());
    if (a) {
      EXPECT_EQ(a->config, b->config);
    }
  }
}

// The literal policy stops at the max_skipped_steps-th rejection in a row: 0 cannot be, and ran as 1.
TEST(StrategyOptions, ZeroSkippedStepsIsRefused) {
  EXPECT_EQ(refusal("ei", "{on_reject: literal, max_skipped_steps: 0}")
                .rfind("strategy option 'max_skipped_steps' must be >= 1 (got 0)", 0),
            0u);
  EXPECT_THROW(GpBandit(GpBanditOptions{.on_reject = RejectPolicy::literal, .max_skipped_steps = 0}),
               std::invalid_argument);
  EXPECT_EQ(refusal("ei", "{on_reject: literal, max_skipped_steps: 1}"), "");
}

TEST(StrategyOptions, AMisspeltNameSuggestsTheNearestKnownOne) {
  using option_fields::nearest_name;
  const std::set<std::string> keys{"epsilon", "horizon", "delta", "beta_scale", "trials", "wall", "cost"};
  EXPECT_EQ(nearest_name("epsilonn", keys), "epsilon");  // an insertion
  EXPECT_EQ(nearest_name("trails", keys), "trials");     // two letters swapped
  EXPECT_EQ(nearest_name("Delta", keys), "delta");       // case
  EXPECT_EQ(nearest_name("beta_sclae", keys), "beta_scale");
  EXPECT_EQ(nearest_name("zzz", keys), "");              // nothing near
  EXPECT_EQ(nearest_name("wal", keys), "wall");
  EXPECT_EQ(nearest_name("cst", {"cost", "cast"}), "");  // a tie names neither
  EXPECT_EQ(nearest_name("ie", {"ei", "ucb"}), "ei");
  EXPECT_NE(refusal("ei", "{epsilonn: 0.1}").find("did you mean 'epsilon'? known keys: "), std::string::npos)
      << refusal("ei", "{epsilonn: 0.1}");
  EXPECT_NE(refusal("ie", "{}").find("unknown strategy 'ie': did you mean 'ei'?"), std::string::npos) << refusal("ie", "{}");
  EXPECT_EQ(refusal("ei", "{zzz: 1}").find("did you mean"), std::string::npos);
}

// The known keys a refusal lists are the strategy's own: ei's listed ucb's beta_scale and delta
// (and, under fit, cmets's discrepancy priors), which ei then refused as another strategy's.
TEST(StrategyOptions, TheKnownKeysListedAreTheStrategysOwn) {
  const std::string ei = refusal("ei", "{epsilo: 0.1}");
  EXPECT_NE(ei.find("did you mean 'epsilon'? known keys: acquisition, categorical_encoding, epsilon, fit,"), std::string::npos) << ei;
  for (const char* other : {"beta_scale", "delta,"}) EXPECT_EQ(ei.find(other), std::string::npos) << ei;
  const std::string ucb = refusal("ucb", "{epsilo: 0.1}");
  for (const char* own : {"beta_scale", "delta,"}) EXPECT_NE(ucb.find(own), std::string::npos) << ucb;
  const std::string fit = refusal("ei", "{fit: {noise_mx: 1}}");
  EXPECT_NE(fit.find("did you mean 'noise_max'?"), std::string::npos) << fit;
  EXPECT_EQ(fit.find("discrepancy"), std::string::npos) << fit;
  EXPECT_NE(refusal("cmets", "{fit: {noise_mx: 1}}").find("discrepancy_min"), std::string::npos);
  // A typo nearest to a key the strategy does not use suggests nothing rather than that key.
  const std::string near_unused = refusal("ei", "{deltaa: 0.1}");
  EXPECT_EQ(near_unused.find("did you mean"), std::string::npos) << near_unused;
  EXPECT_NE(near_unused.find("known keys: "), std::string::npos) << near_unused;
}

}  // namespace
}  // namespace tune
