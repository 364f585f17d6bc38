// ei on a space whose categorical's order of choices means nothing (bench/functions/mixed_space.hpp's
// branin_cat: six choices, each shifting Branin by an offset and mirroring it or not, neighbours in
// the list unrelated). With one-hot inputs (the default) the GP sees every two choices as equally
// far apart and finds the best one; with the one coordinate (`categorical_encoding: ordered`) it
// took neighbouring choices for alike and most runs stayed on a wrong one (on this listed order, 50
// seeds: 29 against 15 reached the benchmark's target; over 50 orders, 31 against 18,
// bench/results/mixed_space.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "functions/mixed_space.hpp"
#include "tune/tune.hpp"

namespace {

// Simple regret after `evaluations` of ei with the given encoding, one per seed.
std::vector<double> final_regrets(tune::CategoricalEncoding encoding, int seeds, int evaluations) {
  const tune::testfn::MixedFunction fn = tune::testfn::branin_cat();
  std::vector<double> regrets;
  for (int seed = 0; seed < seeds; ++seed) {
    tune::GpBanditOptions o;
    o.categorical_encoding = encoding;
    tune::Study study(fn.space, tune::make_gp_bandit(tune::AcquisitionType::ei, o),
                      {tune::Direction::minimize, static_cast<std::uint64_t>(seed)});
    double best = 1e300;
    for (int i = 0; i < evaluations; ++i) {
      const auto s = study.ask();
      if (!s) break;
      const double v = fn.f(s->config);
      best = std::min(best, v);
      study.tell(s->id, v);
    }
    regrets.push_back(best - fn.minimum);
  }
  return regrets;
}

std::size_t within(const std::vector<double>& regrets, double bound) {
  return static_cast<std::size_t>(std::count_if(regrets.begin(), regrets.end(), [&](double r) { return r <= bound; }));
}

TEST(CategoricalOrder, EiWithOneHotInputsFindsTheBestChoiceWhateverTheirOrder) {
  // 0.1 is below the gap between the best choice and the next (0.4): within it, a run is on the best.
  // Seeds 0-29: 19 runs against 2 when this was written; per ten seeds one-hot's count ranged 5-8
  // and the coordinate's 0-3, so the test asks for the contrast over all thirty, with a margin.
  const std::vector<double> one_hot = final_regrets(tune::CategoricalEncoding::one_hot, 30, 60);
  const std::vector<double> ordered = final_regrets(tune::CategoricalEncoding::ordered, 30, 60);
  const std::size_t found = within(one_hot, 0.1), found_ordered = within(ordered, 0.1);
  EXPECT_GE(found, 12u) << "one-hot runs on the best choice after 60 evaluations, of 30";
  EXPECT_GE(found, found_ordered + 8) << "one-hot " << found << " against the coordinate's " << found_ordered
                                      << ": the benchmark's contrast is gone, and README's figures with it";
}

}  // namespace
