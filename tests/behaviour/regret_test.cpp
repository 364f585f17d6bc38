// Behaviour of the whole loop: on Branin and Hartmann-6, GP-EI and GP-UCB reach a median simple
// regret over 10 seeds at least 10x lower than random search with 60 evaluations. This is a
// statement about sample efficiency, not speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "functions/test_functions.hpp"
#include "tune/tune.hpp"
#include "unit_cube.hpp"

namespace {

using tune::behaviour::median;

double median_regret(const tune::testfn::TestFunction& f, const std::string& strategy) {
  const tune::Space space = tune::behaviour::unit_cube(f.dim());
  std::vector<double> regrets;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    tune::MinimizeOptions o;
    o.evaluations = 60;
    o.strategy = strategy;
    o.seed = seed;
    const auto result = tune::minimize(
        [&](const tune::Config& c) {
          Eigen::VectorXd u(static_cast<Eigen::Index>(f.dim()));
          for (std::size_t i = 0; i < f.dim(); ++i) u(static_cast<Eigen::Index>(i)) = std::get<double>(c.at("x" + std::to_string(i)));
          return f.at_unit(u);
        },
        space, o);
    EXPECT_EQ(result.evaluations, 60u) << strategy << " stopped early: " << result.stop_reason;
    regrets.push_back(result.best_value - f.minimum);
  }
  return median(regrets);
}

class RegretAgainstRandom : public ::testing::TestWithParam<std::string> {};

TEST_P(RegretAgainstRandom, GpBanditsBeatRandomTenfold) {
  const tune::testfn::TestFunction f = tune::testfn::by_name(GetParam());
  const double random = median_regret(f, "random");
  for (const std::string strategy : {"ei", "ucb"}) {
    const double regret = median_regret(f, strategy);
    EXPECT_LE(regret, random / 10) << f.name << ": " << strategy << " median regret " << regret << ", random " << random;
  }
}

INSTANTIATE_TEST_SUITE_P(Functions, RegretAgainstRandom, ::testing::Values("branin", "hartmann6"));

}  // namespace
