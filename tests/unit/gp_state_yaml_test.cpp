// The GP strategies' saved model (strategy/gp_state_yaml.hpp): every hyperparameter block and the
// output transform survive a write and a read through YAML text exactly, absent blocks read as
// none, and a transform that could not invert is refused with its line.
#include "tune/strategy/gp_state_yaml.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tune/io/yaml_values.hpp"

namespace {

using tune::GpHyperparameters;
using tune::OutputTransform;
using tune::Standardization;

// Written, emitted as text and parsed again, as a saved study is.
YAML::Node through_text(const YAML::Node& node) { return YAML::Load(YAML::Dump(node)); }

TEST(GpStateYaml, EveryBlockAndTheOutputTransformRoundTripExactly) {
  GpHyperparameters h;
  h.kernel = tune::KernelType::squared_exponential;
  h.lengthscales = Eigen::Vector2d(0.1 / 3.0, 1.7);
  h.outputscale = 2.0 / 7.0;
  h.noise_variances = {1e-6, 0.0123, 0.5};
  h.offset_variance = 1234.5;
  h.discrepancy_ratios = {0.1, 3.0 / 11.0};
  h.group_scales = {0.55, 1.9};
  h.trend_variances = {0.3, 4.0};
  h.discrepancy_lengthscale_factors = {7.125, 0.3};
  const Standardization s{-3.25, 0.7};
  const OutputTransform t{.active = true, .reference = -1.5, .scale = 2.5, .shift = 0.125, .lambda = 0.5};
  YAML::Node state;
  tune::write_gp_state(state, h, s);
  tune::write_output_transform(state, t);

  const YAML::Node read = through_text(state);
  GpHyperparameters back;
  Standardization s_back;
  tune::read_gp_state(read, back, s_back);
  EXPECT_EQ(back.kernel, h.kernel);
  EXPECT_EQ(back.lengthscales, h.lengthscales);
  EXPECT_EQ(back.outputscale, h.outputscale);
  EXPECT_EQ(back.noise_variances, h.noise_variances);
  EXPECT_EQ(back.offset_variance, h.offset_variance);
  EXPECT_EQ(back.discrepancy_ratios, h.discrepancy_ratios);
  EXPECT_EQ(back.group_scales, h.group_scales);
  EXPECT_EQ(back.trend_variances, h.trend_variances);
  EXPECT_EQ(back.discrepancy_lengthscale_factors, h.discrepancy_lengthscale_factors);
  EXPECT_EQ(s_back.mean, s.mean);
  EXPECT_EQ(s_back.scale, s.scale);
  const OutputTransform t_back = tune::read_output_transform(read);
  EXPECT_TRUE(t_back.active);
  EXPECT_EQ(t_back.reference, t.reference);
  EXPECT_EQ(t_back.scale, t.scale);
  EXPECT_EQ(t_back.shift, t.shift);
  EXPECT_EQ(t_back.lambda, t.lambda);
}

TEST(GpStateYaml, AbsentBlocksReadAsNoneAndAnInactiveTransformIsNotWritten) {
  GpHyperparameters h;
  h.lengthscales = Eigen::VectorXd::Constant(1, 0.4);
  YAML::Node state;
  tune::write_gp_state(state, h, {});
  tune::write_output_transform(state, OutputTransform{});
  EXPECT_FALSE(state["output_transform"]);
  EXPECT_FALSE(state["hyperparameters"]["discrepancy_lengthscale_factors"]);
  // A reader starting from a model that had every block keeps none of them.
  GpHyperparameters back;
  back.discrepancy_ratios = {1.0};
  back.discrepancy_lengthscale_factors = {2.0};
  back.trend_variances = {1.0};
  Standardization s;
  tune::read_gp_state(through_text(state), back, s);
  EXPECT_TRUE(back.discrepancy_ratios.empty());
  EXPECT_TRUE(back.discrepancy_lengthscale_factors.empty());
  EXPECT_TRUE(back.trend_variances.empty());
  EXPECT_FALSE(tune::read_output_transform(through_text(state)).active);
}

TEST(GpStateYaml, ATransformThatCannotInvertIsRefusedWithItsLine) {
  const YAML::Node state = YAML::Load("refresh_count: 2\noutput_transform: {reference: 0, scale: 0, shift: 1, lambda: 1}\n");
  try {
    tune::read_output_transform(state);
    FAIL() << "a zero scale was accepted";
  } catch (const tune::StateError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("output_transform"), std::string::npos) << what;
    EXPECT_NE(what.find("line 2"), std::string::npos) << what;
    EXPECT_NE(what.find("scale and shift must be > 0"), std::string::npos) << what;
  }
  EXPECT_THROW(tune::read_output_transform(YAML::Load("output_transform: {reference: 0, scale: 1, lambda: 1}")),
               tune::StateError);  // shift missing
  // The fit's lambdas lie in [0, 1]; one outside was never written.
  const auto with_lambda = [](const std::string& lambda) {
    return YAML::Load("output_transform: {reference: 0, scale: 1, shift: 1, lambda: " + lambda + "}");
  };
  for (const std::string lambda : {"7", "-0.5", "1.01", ".nan"}) {
    try {
      tune::read_output_transform(with_lambda(lambda));
      ADD_FAILURE() << "lambda " << lambda << " was accepted";
    } catch (const tune::StateError& e) {
      EXPECT_NE(std::string(e.what()).find("lambda between 0 and 1"), std::string::npos) << e.what();
    }
  }
  for (const std::string lambda : {"0", "0.25", "1"})
    EXPECT_EQ(tune::read_output_transform(with_lambda(lambda)).lambda, std::stod(lambda));
}

}  // namespace
