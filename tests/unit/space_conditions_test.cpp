// Conditional parameters (space.hpp, Condition): a parameter that applies only for some values of an
// earlier one is left out of the configuration elsewhere, sits at 1/2 in the unit cube, and counts
// once in the space's size. References: brute-force enumeration, Monte Carlo, the YAML text.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tune/space/model_inputs.hpp"
#include "tune/space/space.hpp"
#include "tune/space/space_yaml.hpp"

namespace tune {
namespace {

// opt decides momentum and nesterov; layers decides units2, which decides drop2 (a chain).
Space optimiser_space() {
  return Space({
      Parameter::categorical("opt", {"sgd", "adam", "rmsprop"}),
      Parameter::floating("momentum", 0.0, 0.99).when("opt", {"sgd", "rmsprop"}),
      Parameter::categorical("nesterov", {"yes", "no"}).when("opt", {"sgd"}),
      Parameter::integer("layers", 1, 3),
      Parameter::integer("units2", 1, 64, Scale::log).when("layers", {"2", "3"}),
      Parameter::ordinal("drop2", {"0", "0.1", "0.5"}).when("units2", {"1", "2", "64"}),
      Parameter::floating("lr", 1e-4, 1.0, Scale::log),
  });
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

void expect_contains(const std::string& text, const std::vector<std::string>& fragments) {
  for (const auto& f : fragments) EXPECT_NE(text.find(f), std::string::npos) << text << "\nmissing: " << f;
}

Eigen::VectorXd random_unit(std::mt19937_64& rng, std::size_t d) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::VectorXd x(static_cast<Eigen::Index>(d));
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = u(rng);
  return x;
}

TEST(SpaceConditions, ADecodedConfigurationHoldsExactlyTheParametersThatApply) {
  const Space s = optimiser_space();
  std::mt19937_64 rng(3);
  std::size_t with_momentum = 0, without = 0;
  for (int n = 0; n < 2000; ++n) {
    const Eigen::VectorXd u = random_unit(rng, s.dim());
    const Config c = s.decode(u);
    const std::string opt = std::get<std::string>(c.at("opt"));
    EXPECT_EQ(c.contains("momentum"), opt != "adam");
    EXPECT_EQ(c.contains("nesterov"), opt == "sgd");
    const auto layers = std::get<std::int64_t>(c.at("layers"));
    EXPECT_EQ(c.contains("units2"), layers >= 2);
    const bool drop = c.contains("units2") && std::set<std::int64_t>{1, 2, 64}.count(std::get<std::int64_t>(c.at("units2")));
    EXPECT_EQ(c.contains("drop2"), drop) << to_string(c);
    (c.contains("momentum") ? with_momentum : without)++;
    // snap puts every parameter that does not apply at 1/2 and keeps the configuration.
    const Eigen::VectorXd x = s.snap(u);
    const std::vector<bool> applying = s.active(u);
    for (std::size_t i = 0; i < s.dim(); ++i)
      if (!applying[i]) {
        EXPECT_EQ(x(static_cast<Eigen::Index>(i)), Space::inactive_coordinate);
      }
    EXPECT_EQ(s.decode(x), c);
    EXPECT_TRUE(s.encode(c).isApprox(x, 1e-12)) << s.encode(c).transpose() << " / " << x.transpose();
    EXPECT_EQ(s.active(c), applying);
  }
  EXPECT_GT(with_momentum, 1000u);
  EXPECT_GT(without, 400u);
}

TEST(SpaceConditions, EncodeRefusesAParameterThatDoesNotApplyAndNamesTheFix) {
  const Space s = optimiser_space();
  const Config adam{{"opt", std::string("adam")}, {"momentum", 0.9}, {"layers", std::int64_t{1}}, {"lr", 0.01}};
  expect_contains(message_of([&] { (void)s.encode(adam); }),
                  {"'momentum'", "applies only when opt is sgd or rmsprop", "here opt is adam", "remove it"});
  Config sgd{{"opt", std::string("sgd")}, {"layers", std::int64_t{1}}, {"lr", 0.01}, {"nesterov", std::string("no")}};
  expect_contains(message_of([&] { (void)s.encode(sgd); }), {"'momentum'", "missing"});
  sgd["momentum"] = 0.5;
  EXPECT_NO_THROW((void)s.encode(sgd));
  // An integer parent given as a whole double decides as the integer would.
  Config two_layers = sgd;
  two_layers["layers"] = 2.0;
  expect_contains(message_of([&] { (void)s.encode(two_layers); }), {"'units2'", "missing"});
}

TEST(SpaceConditions, InvalidConditionsAreRefusedWithTheFix) {
  const auto opt = Parameter::categorical("opt", {"sgd", "adam"});
  const auto x = Parameter::floating("x", 0, 1);
  const auto refused = [](std::vector<Parameter> ps) { return message_of([&] { Space s(std::move(ps)); }); };
  expect_contains(refused({opt, x.when("nope", {"a"})}), {"'x'", "'nope'", "not a parameter of the space"});
  expect_contains(refused({x.when("opt", {"sgd"}), opt}), {"'x'", "declared after it", "declare 'opt' first"});
  expect_contains(refused({Parameter::floating("f", 0, 1), x.when("f", {"0.5"})}),
                  {"float 'f'", "categorical, ordinal or integer"});
  expect_contains(refused({opt, x.when("opt", {})}), {"lists no value"});
  expect_contains(refused({opt, x.when("opt", {"sdg"})}), {"'sdg' is not one of its choices", "'sgd', 'adam'"});
  expect_contains(refused({opt, x.when("opt", {"sgd", "sgd"})}), {"'sgd' twice"});
  expect_contains(refused({x.when("x", {"1"})}), {"names the parameter itself"});
  const auto layers = Parameter::integer("layers", 1, 4);
  expect_contains(refused({layers, x.when("layers", {"5"})}), {"5 is outside its range [1, 4]"});
  expect_contains(refused({layers, x.when("layers", {"two"})}), {"'two' is not a whole number"});
}

// Every distinct configuration, by brute force over the grid of all parameters' values.
std::size_t distinct_configurations(const Space& s) {
  std::set<std::vector<double>> seen;
  std::vector<std::size_t> index(s.dim(), 0);
  while (true) {
    Eigen::VectorXd u(static_cast<Eigen::Index>(s.dim()));
    for (std::size_t i = 0; i < s.dim(); ++i) {
      const Parameter& p = s.parameters()[i];
      // A value's unit point (log integers' cells are not equal).
      const Value v = p.type == ParamType::integer ? Value{static_cast<std::int64_t>(p.low) + static_cast<std::int64_t>(index[i])}
                                                   : Value{p.choices[index[i]]};
      Parameter alone = p;
      alone.condition.reset();
      u(static_cast<Eigen::Index>(i)) = Space({alone}).encode({{p.name, v}})(0);
    }
    const Eigen::VectorXd x = s.snap(u);
    seen.insert(std::vector<double>(x.data(), x.data() + x.size()));
    std::size_t i = 0;
    while (i < s.dim() && ++index[i] == s.parameters()[i].cardinality()) index[i++] = 0;
    if (i == s.dim()) break;
  }
  return seen.size();
}

TEST(SpaceConditions, GridSizeCountsEachConfigurationOnce) {
  const Space s({
      Parameter::categorical("opt", {"sgd", "adam", "rmsprop"}),
      Parameter::ordinal("momentum", {"0", "0.9"}).when("opt", {"sgd", "rmsprop"}),
      Parameter::categorical("nesterov", {"yes", "no"}).when("momentum", {"0.9"}),
      Parameter::integer("layers", 1, 6, Scale::log),
      Parameter::integer("units2", 1, 4).when("layers", {"2", "3", "6"}),
      Parameter::categorical("act", {"relu", "tanh"}),
  });
  // By hand: opt (sgd, rmsprop: momentum 0 or 0.9 with nesterov 2 -> 3 each; adam 1) = 7;
  // layers (1, 4, 5: 1 each; 2, 3, 6: 4 units each) = 15; act 2.
  EXPECT_EQ(s.grid_size(), 7u * 15u * 2u);
  EXPECT_EQ(distinct_configurations(s), s.grid_size());
  // grid_points lists each once, canonical, and nothing past its limit.
  const std::vector<Eigen::VectorXd> points = s.grid_points(1000);
  std::set<std::vector<double>> keys;
  for (const Eigen::VectorXd& x : points) {
    EXPECT_EQ(s.snap(x), x);
    keys.insert(std::vector<double>(x.data(), x.data() + x.size()));
  }
  EXPECT_EQ(points.size(), s.grid_size());
  EXPECT_EQ(keys.size(), s.grid_size());
  EXPECT_TRUE(s.grid_points(s.grid_size() - 1).empty());
}

TEST(SpaceConditions, AConditionalSpaceIsCountedAndListedWhereItsProductIsNot) {
  // 3 x 260 x 260 = 202800 grid points (past a 2^16 listing), 521 configurations.
  const Space s({
      Parameter::categorical("p", {"a", "b", "c"}),
      Parameter::integer("x", 1, 260).when("p", {"a"}),
      Parameter::integer("y", 1, 260).when("p", {"b"}),
  });
  EXPECT_EQ(s.grid_size(), 521u);
  EXPECT_EQ(s.grid_points(std::size_t{1} << 16).size(), 521u);
  // A product that overflows (3 x 2^52 x 2^52) still counts its configurations: 1 + 2 x 2^52.
  const auto huge = static_cast<std::int64_t>(std::int64_t{1} << 52);
  const Space wide({Parameter::categorical("p", {"a", "b", "c"}), Parameter::integer("x", 1, huge).when("p", {"a"}),
                    Parameter::integer("y", 1, huge).when("p", {"b"})});
  EXPECT_EQ(wide.grid_size(), 1u + 2u * static_cast<std::size_t>(huge));
}

TEST(SpaceConditions, ActiveFractionIsTheShareOfTheCubeWhereTheParameterApplies) {
  const Space s = optimiser_space();
  std::mt19937_64 rng(11);
  const int n = 200000;
  std::vector<double> hits(s.dim(), 0.0);
  for (int k = 0; k < n; ++k) {
    const std::vector<bool> a = s.active(random_unit(rng, s.dim()));
    for (std::size_t i = 0; i < s.dim(); ++i) hits[i] += a[i] ? 1.0 : 0.0;
  }
  for (std::size_t i = 0; i < s.dim(); ++i) {
    const double p = s.active_fraction(i);
    const double sd = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(hits[i] / n, p, 4 * sd + 1e-12) << s.parameters()[i].name;
  }
  EXPECT_DOUBLE_EQ(s.active_fraction(1), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.active_fraction(2), 1.0 / 3.0);
  // units2 applies at layers 2 and 3 of 3; drop2 at units2 in {1, 2, 64} of the log cells of 1..64.
  EXPECT_DOUBLE_EQ(s.active_fraction(4), 2.0 / 3.0);
  const double log_cells = (std::log(2.5) - std::log(0.5) + std::log(64.5) - std::log(63.5)) / (std::log(64.5) - std::log(0.5));
  EXPECT_NEAR(s.active_fraction(5), 2.0 / 3.0 * log_cells, 1e-15);
}

TEST(SpaceConditions, YamlReadsWritesAndRefusesConditions) {
  const Space s = optimiser_space();
  const Space back = space_from_yaml(YAML::Load(YAML::Dump(space_to_yaml(s))));
  ASSERT_EQ(back.dim(), s.dim());
  for (std::size_t i = 0; i < s.dim(); ++i) {
    const auto& a = s.parameters()[i].condition;
    const auto& b = back.parameters()[i].condition;
    ASSERT_EQ(a.has_value(), b.has_value()) << i;
    if (a) {
      EXPECT_EQ(a->parent, b->parent);
      EXPECT_EQ(a->values, b->values);
    }
  }
  const Space scalar = space_from_yaml(YAML::Load(
      "opt: {type: categorical, choices: [sgd, adam]}\nm: {type: float, low: 0, high: 1, when: {opt: sgd}}\n"));
  EXPECT_EQ(scalar.parameters()[1].condition->values, std::vector<std::string>{"sgd"});
  expect_contains(message_of([] {
                    (void)space_from_yaml(YAML::Load(
                        "opt: {type: categorical, choices: [sgd, adam]}\nm: {type: float, low: 0, high: 1, when: [opt]}\n"));
                  }),
                  {"parameter 'm'", "line 2", "'when' must map one parent parameter", "when: {opt: [sgd, rmsprop]}"});
  expect_contains(message_of([] {
                    (void)space_from_yaml(YAML::Load(
                        "opt: {type: categorical, choices: [sgd, adam]}\nm: {type: float, low: 0, high: 1, when: {opt: sdg}}\n"));
                  }),
                  {"parameter 'm'", "'sdg' is not one of its choices"});
}

TEST(SpaceConditions, ModelInputsAreTheSameWhereverAParameterThatDoesNotApplySits) {
  const Space s = optimiser_space();
  for (const auto encoding : {CategoricalEncoding::one_hot, CategoricalEncoding::ordered}) {
    const ModelInputs in(s, encoding);
    EXPECT_FALSE(in.identity());
    std::mt19937_64 rng(5);
    for (int n = 0; n < 500; ++n) {
      const Eigen::VectorXd u = random_unit(rng, s.dim());
      const Eigen::VectorXd base = in(u);
      const std::vector<bool> applying = s.active(u);
      const Eigen::VectorXd g = in.unit_gradient(u, Eigen::VectorXd::Ones(static_cast<Eigen::Index>(in.dim())));
      for (std::size_t i = 0; i < s.dim(); ++i) {
        if (applying[i]) continue;
        Eigen::VectorXd moved = u;
        moved(static_cast<Eigen::Index>(i)) = std::fmod(u(static_cast<Eigen::Index>(i)) + 0.37, 1.0);
        EXPECT_EQ(in(moved), base) << "moving " << s.parameters()[i].name << " changed the inputs";
        EXPECT_EQ(g(static_cast<Eigen::Index>(i)), 0.0);
      }
      const Eigen::VectorXd back = in.unit_of(base);
      for (std::size_t i = 0; i < s.dim(); ++i) {
        if (!applying[i]) {
          EXPECT_EQ(back(static_cast<Eigen::Index>(i)), Space::inactive_coordinate);
        }
      }
      EXPECT_EQ(s.decode(in.unit_of(base)), s.decode(u)) << "unit_of lost the configuration";
    }
  }
}

TEST(SpaceConditions, TrendFeatureMeanSquareMatchesMonteCarlo) {
  const Space s = optimiser_space();
  for (const auto encoding : {CategoricalEncoding::one_hot, CategoricalEncoding::ordered}) {
    const ModelInputs in(s, encoding);
    std::mt19937_64 rng(17);
    const int n = 200000;
    double sum = 0.0, sum2 = 0.0;
    for (int k = 0; k < n; ++k) {
      const double v = (in(random_unit(rng, s.dim())).array() - 0.5).matrix().squaredNorm();
      sum += v;
      sum2 += v * v;
    }
    const double mean = sum / n;
    const double sd = std::sqrt((sum2 / n - mean * mean) / n);
    EXPECT_NEAR(in.trend_feature_mean_square(), mean, 4 * sd) << to_string(encoding);
  }
}

}  // namespace
}  // namespace tune
