// Tests for the search space: validation, unit-cube encoding and decoding, snapping, sizes.
#include "tune/space/space.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tune/random/rng.hpp"

namespace tune {
namespace {

// A space with every type and scale.
Space mixed_space() {
  return Space({
      Parameter::floating("lr", 1e-5, 0.3, Scale::log),
      Parameter::floating("momentum", 0.1, 0.7),
      Parameter::integer("layers", -3, 12),
      Parameter::integer("units", 1, 1000, Scale::log),
      Parameter::categorical("optimizer", {"adam", "sgd", "rmsprop"}),
      Parameter::ordinal("batch", {"16", "32", "64", "128"}),
  });
}

// Draws a configuration of mixed_space() directly in value space (independent of decode).
Config random_config(Rng& rng) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    const auto k = static_cast<double>(hi - lo + 1);
    return lo + static_cast<std::int64_t>(std::floor(uniform01(rng) * k));
  };
  const std::vector<std::string> optimizers{"adam", "sgd", "rmsprop"};
  const std::vector<std::string> batches{"16", "32", "64", "128"};
  Config c;
  c["lr"] = 1e-5 * std::pow(0.3 / 1e-5, uniform01(rng));
  c["lr"] = std::clamp(std::get<double>(c["lr"]), 1e-5, 0.3);
  c["momentum"] = 0.1 + 0.6 * uniform01(rng);
  c["layers"] = pick(-3, 12);
  c["units"] = pick(1, 1000);
  c["optimizer"] = optimizers[static_cast<std::size_t>(pick(0, 2))];
  c["batch"] = batches[static_cast<std::size_t>(pick(0, 3))];
  return c;
}

Eigen::VectorXd random_unit(std::size_t dim, Rng& rng) {
  Eigen::VectorXd u(static_cast<Eigen::Index>(dim));
  for (Eigen::Index i = 0; i < u.size(); ++i) u[i] = uniform01(rng);
  return u;
}

void expect_configs_equal(const Config& expected, const Config& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (const auto& [name, value] : expected) {
    const auto it = actual.find(name);
    ASSERT_NE(it, actual.end()) << name;
    ASSERT_EQ(value.index(), it->second.index()) << name;
    if (const auto* d = std::get_if<double>(&value)) {
      const double got = std::get<double>(it->second);
      EXPECT_NEAR(got, *d, 1e-12 * std::fabs(*d)) << name;
    } else {
      EXPECT_EQ(value, it->second) << name;
    }
  }
}

// Runs fn, expects a SpaceError whose message contains every one of the fragments.
void expect_space_error(const std::function<void()>& fn, const std::vector<std::string>& fragments) {
  try {
    fn();
    ADD_FAILURE() << "no SpaceError thrown; expected a message with '" << fragments.front() << "'";
  } catch (const SpaceError& e) {
    const std::string message = e.what();
    for (const auto& f : fragments) {
      EXPECT_NE(message.find(f), std::string::npos) << "message: " << message << "\nmissing: " << f;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

void expect_invalid(std::vector<Parameter> params, const std::vector<std::string>& fragments) {
  expect_space_error([&] { Space s(params); }, fragments);
}

// --- validation ---------------------------------------------------------------------------------

TEST(SpaceValidation, AcceptsValidSpace) {
  const Space s = mixed_space();
  EXPECT_EQ(s.dim(), 6u);
  EXPECT_EQ(s.index_of("units"), 3u);
  EXPECT_EQ(s.parameter("optimizer").choices.size(), 3u);
  expect_space_error([&] { (void)s.index_of("nope"); }, {"nope"});
  expect_space_error([&] { (void)s.parameter("nope"); }, {"nope"});
}

TEST(SpaceValidation, RejectsEmptyName) {
  expect_invalid({Parameter::floating("a", 0, 1), Parameter::floating("", 0, 1)}, {"#1", "name"});
}

TEST(SpaceValidation, RejectsDuplicateName) {
  expect_invalid({Parameter::floating("x", 0, 1), Parameter::integer("x", 0, 5)}, {"'x'", "duplicate"});
}

TEST(SpaceValidation, RejectsNonFiniteBounds) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_invalid({Parameter::floating("f", 0, inf)}, {"'f'", "finite"});
  expect_invalid({Parameter::floating("f", -inf, 0)}, {"'f'", "finite"});
  expect_invalid({Parameter::floating("f", nan, 1)}, {"'f'", "finite"});
  Parameter p = Parameter::integer("n", 0, 3);
  p.high = inf;
  expect_invalid({p}, {"'n'", "finite"});
}

TEST(SpaceValidation, RejectsFloatingLowNotBelowHigh) {
  expect_invalid({Parameter::floating("f", 2, 1)}, {"'f'", "low"});
  expect_invalid({Parameter::floating("f", 1, 1)}, {"'f'", "low"});
  expect_invalid({Parameter::floating("f", -1, 1, Scale::log)}, {"'f'", "log", "low > 0"});
  expect_invalid({Parameter::floating("f", 0, 1, Scale::log)}, {"'f'", "log", "low > 0"});
}

TEST(SpaceValidation, RejectsBadIntegerRanges) {
  expect_invalid({Parameter::integer("n", 5, 4)}, {"'n'", "low"});
  expect_invalid({Parameter::integer("n", 4, 4)}, {"'n'", "single value", "widen the range"});
  expect_invalid({Parameter::integer("n", 0, 10, Scale::log)}, {"'n'", "log", "low > 0"});
  Parameter p = Parameter::integer("n", 0, 3);
  p.low = 0.5;
  expect_invalid({p}, {"'n'", "whole"});
  p.low = 0;
  p.high = 2.25;
  expect_invalid({p}, {"'n'", "whole"});
}

TEST(SpaceValidation, RejectsBadChoices) {
  for (auto factory : {&Parameter::categorical, &Parameter::ordinal}) {
    expect_invalid({factory("c", {})}, {"'c'", "choices"});
    expect_invalid({factory("c", {"a", "b", "a"})}, {"'c'", "duplicate", "'a'"});
    expect_invalid({factory("c", {"only"})}, {"'c'", "single value"});
  }
}

// --- encoding -----------------------------------------------------------------------------------

TEST(SpaceEncoding, KnownCoordinates) {
  const Space s({
      Parameter::floating("f", 0, 10),
      Parameter::floating("g", 1, 100, Scale::log),
      Parameter::integer("i", 0, 3),
      Parameter::integer("j", 1, 3, Scale::log),
      Parameter::categorical("c", {"x", "y", "z"}),
      Parameter::ordinal("o", {"1", "2", "4", "8"}),
  });
  const Eigen::VectorXd u = s.encode({{"f", 2.5},
                                      {"g", 10.0},
                                      {"i", std::int64_t{2}},
                                      {"j", std::int64_t{2}},
                                      {"c", std::string("y")},
                                      {"o", std::string("8")}});
  ASSERT_EQ(u.size(), 6);
  EXPECT_DOUBLE_EQ(u[0], 0.25);
  EXPECT_DOUBLE_EQ(u[1], 0.5);
  EXPECT_DOUBLE_EQ(u[2], 2.5 / 4.0);
  EXPECT_DOUBLE_EQ(u[3], std::log(4.0) / std::log(7.0));  // (log 2 - log .5)/(log 3.5 - log .5)
  EXPECT_DOUBLE_EQ(u[4], 0.5);
  EXPECT_DOUBLE_EQ(u[5], 3.5 / 4.0);
}

TEST(SpaceEncoding, AcceptsCompatibleAlternatives) {
  const Space s({Parameter::floating("f", 0, 10), Parameter::integer("i", 0, 3),
                 Parameter::ordinal("o", {"1", "2", "0.5"})});
  const Eigen::VectorXd a =
      s.encode({{"f", std::int64_t{5}}, {"i", 2.0}, {"o", std::int64_t{2}}});
  EXPECT_DOUBLE_EQ(a[0], 0.5);
  EXPECT_DOUBLE_EQ(a[1], 2.5 / 4.0);
  EXPECT_DOUBLE_EQ(a[2], 0.5);
  const Eigen::VectorXd b = s.encode({{"f", 5.0}, {"i", std::int64_t{2}}, {"o", 0.5}});
  EXPECT_DOUBLE_EQ(b[2], 2.5 / 3.0);
  EXPECT_EQ(a.head(2), b.head(2));
}

TEST(SpaceEncoding, RejectsBadValues) {
  const Space s({Parameter::floating("f", 0, 10), Parameter::integer("i", 0, 3),
                 Parameter::categorical("c", {"x", "y"}), Parameter::ordinal("o", {"1", "2"})});
  const Config good{{"f", 1.0}, {"i", std::int64_t{1}}, {"c", std::string("x")}, {"o", std::string("1")}};
  EXPECT_NO_THROW((void)s.encode(good));
  auto with = [&](const std::string& key, Value v) {
    Config c = good;
    c[key] = std::move(v);
    return c;
  };
  auto encode = [&](const Config& c) { return [&s, c] { (void)s.encode(c); }; };
  Config missing = good;
  missing.erase("i");
  expect_space_error(encode(missing), {"'i'", "missing"});
  expect_space_error(encode(with("extra", 1.0)), {"'extra'", "unknown"});
  expect_space_error(encode(with("f", std::string("1.0"))), {"'f'", "float"});
  expect_space_error(encode(with("f", 10.5)), {"'f'", "range"});
  expect_space_error(encode(with("f", std::numeric_limits<double>::quiet_NaN())), {"'f'", "range"});
  expect_space_error(encode(with("i", 1.5)), {"'i'", "integer"});
  expect_space_error(encode(with("i", std::string("1"))), {"'i'", "integer"});
  expect_space_error(encode(with("i", std::int64_t{-1})), {"'i'", "range"});
  expect_space_error(encode(with("i", 4.0)), {"'i'", "range"});
  expect_space_error(encode(with("c", std::string("w"))), {"'c'", "choices"});
  expect_space_error(encode(with("c", std::int64_t{1})), {"'c'", "string"});
  expect_space_error(encode(with("o", std::int64_t{3})), {"'o'", "choices"});
}

// --- round trips --------------------------------------------------------------------------------

TEST(SpaceRoundTrip, DecodeOfEncodeIsIdentity) {
  const Space s = mixed_space();
  Rng rng(1);
  for (int t = 0; t < 5000; ++t) {
    const Config c = random_config(rng);
    expect_configs_equal(c, s.decode(s.encode(c)));
    if (HasFailure()) return;
  }
  // Endpoints of every range.
  for (const bool high : {false, true}) {
    const Config c{{"lr", high ? 0.3 : 1e-5},
                   {"momentum", high ? 0.7 : 0.1},
                   {"layers", std::int64_t{high ? 12 : -3}},
                   {"units", std::int64_t{high ? 1000 : 1}},
                   {"optimizer", std::string(high ? "rmsprop" : "adam")},
                   {"batch", std::string(high ? "128" : "16")}};
    const Config back = s.decode(s.encode(c));
    EXPECT_EQ(c, back);  // exact, also for the floats
  }
}

TEST(SpaceRoundTrip, EveryIntegerOfLogRangeRoundTrips) {
  const Space s({Parameter::integer("n", 1, 5000, Scale::log), Parameter::integer("m", -40, 40)});
  for (std::int64_t v = 1; v <= 5000; ++v) {
    const Config c{{"n", v}, {"m", v % 81 - 40}};
    ASSERT_EQ(s.decode(s.encode(c)), c) << v;
  }
}

TEST(SpaceRoundTrip, EncodeOfDecodeIsSnap) {
  const Space s = mixed_space();
  Rng rng(2);
  for (int t = 0; t < 5000; ++t) {
    const Eigen::VectorXd u = random_unit(s.dim(), rng);
    const Eigen::VectorXd a = s.encode(s.decode(u));
    const Eigen::VectorXd b = s.snap(u);
    for (Eigen::Index i = 0; i < u.size(); ++i) {
      if (s.parameters()[static_cast<std::size_t>(i)].type == ParamType::floating) {
        ASSERT_NEAR(a[i], b[i], 1e-12) << i;
        ASSERT_EQ(b[i], u[i]) << i;  // continuous coordinates are only clamped
      } else {
        ASSERT_EQ(a[i], b[i]) << i;
      }
    }
  }
}

TEST(SpaceSnap, IsIdempotentAndKeepsDecodedConfig) {
  const Space s = mixed_space();
  Rng rng(3);
  for (int t = 0; t < 5000; ++t) {
    Eigen::VectorXd u = random_unit(s.dim(), rng) * 1.4 - Eigen::VectorXd::Constant(6, 0.2);
    const Eigen::VectorXd once = s.snap(u);
    ASSERT_EQ(s.snap(once), once);
    ASSERT_EQ(s.decode(once), s.decode(u));
    ASSERT_TRUE((once.array() >= 0.0).all() && (once.array() <= 1.0).all());
  }
}

TEST(SpaceSnap, DiscreteCoordinatesMoveToCellCentres) {
  const Space s({Parameter::integer("i", 10, 14), Parameter::categorical("c", {"a", "b", "c"})});
  Rng rng(4);
  for (int t = 0; t < 1000; ++t) {
    const Eigen::VectorXd u = random_unit(2, rng);
    const Eigen::VectorXd v = s.snap(u);
    EXPECT_DOUBLE_EQ(v[0], (std::floor(u[0] * 5) + 0.5) / 5);
    EXPECT_DOUBLE_EQ(v[1], (std::floor(u[1] * 3) + 0.5) / 3);
  }
}

TEST(SpaceDecode, EndpointsAndClamping) {
  const Space s = mixed_space();
  const Config lo = s.decode(Eigen::VectorXd::Zero(6));
  const Config hi = s.decode(Eigen::VectorXd::Ones(6));
  EXPECT_EQ(std::get<double>(lo.at("lr")), 1e-5);
  EXPECT_EQ(std::get<double>(hi.at("lr")), 0.3);
  EXPECT_EQ(std::get<double>(lo.at("momentum")), 0.1);
  EXPECT_EQ(std::get<double>(hi.at("momentum")), 0.7);
  EXPECT_EQ(std::get<std::int64_t>(lo.at("layers")), -3);
  EXPECT_EQ(std::get<std::int64_t>(hi.at("layers")), 12);
  EXPECT_EQ(std::get<std::int64_t>(lo.at("units")), 1);
  EXPECT_EQ(std::get<std::int64_t>(hi.at("units")), 1000);
  EXPECT_EQ(std::get<std::string>(lo.at("optimizer")), "adam");
  EXPECT_EQ(std::get<std::string>(hi.at("optimizer")), "rmsprop");
  EXPECT_EQ(std::get<std::string>(lo.at("batch")), "16");
  EXPECT_EQ(std::get<std::string>(hi.at("batch")), "128");
  EXPECT_EQ(s.decode(Eigen::VectorXd::Constant(6, -0.5)), lo);
  EXPECT_EQ(s.decode(Eigen::VectorXd::Constant(6, 1.5)), hi);
  // Nearly-1 coordinates still decode inside the range.
  const Config almost = s.decode(Eigen::VectorXd::Constant(6, std::nextafter(1.0, 0.0)));
  EXPECT_LE(std::get<double>(almost.at("lr")), 0.3);
  EXPECT_EQ(std::get<std::int64_t>(almost.at("layers")), 12);
  expect_space_error([&] { (void)s.decode(Eigen::VectorXd::Zero(5)); }, {"coordinates"});
}

TEST(SpaceDecode, IntegerCellsHaveEqualWidth) {
  const Space s({Parameter::integer("n", 3, 12)});
  Rng rng(5);
  const int draws = 100000;
  std::vector<int> counts(10, 0);
  Eigen::VectorXd u(1);
  for (int t = 0; t < draws; ++t) {
    u[0] = uniform01(rng);
    const std::int64_t v = std::get<std::int64_t>(s.decode(u).at("n"));
    ASSERT_GE(v, 3);
    ASSERT_LE(v, 12);
    ++counts[static_cast<std::size_t>(v - 3)];
  }
  const double expected = draws / 10.0;
  double chi2 = 0;
  for (const int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 30.0);  // 9 degrees of freedom: P(chi2 > 30) ~ 4e-4
}

TEST(SpaceDecode, IntegerLogCellsFollowLogWidths) {
  const Space s({Parameter::integer("n", 1, 100, Scale::log)});
  Rng rng(6);
  const int draws = 100000;
  std::vector<int> counts(101, 0);
  Eigen::VectorXd u(1);
  for (int t = 0; t < draws; ++t) {
    u[0] = uniform01(rng);
    ++counts[static_cast<std::size_t>(std::get<std::int64_t>(s.decode(u).at("n")))];
  }
  // P(v) = log((v+0.5)/(v-0.5)) / log(100.5/0.5).
  for (const int v : {1, 2, 10}) {
    const double p = std::log((v + 0.5) / (v - 0.5)) / std::log(100.5 / 0.5);
    EXPECT_NEAR(counts[static_cast<std::size_t>(v)] / double(draws), p,
                5 * std::sqrt(p * (1 - p) / draws))
        << v;
  }
}

TEST(SpaceDecode, LogFloatMedianIsGeometricMean) {
  const Space s({Parameter::floating("f", 1e-4, 1.0, Scale::log)});
  Rng rng(7);
  std::vector<double> values;
  Eigen::VectorXd u(1);
  for (int t = 0; t < 20001; ++t) {
    u[0] = uniform01(rng);
    values.push_back(std::get<double>(s.decode(u).at("f")));
  }
  std::nth_element(values.begin(), values.begin() + 10000, values.end());
  // Geometric mean of the bounds is 1e-2; sd of the median in log space is about 0.03.
  EXPECT_NEAR(std::log(values[10000]), std::log(1e-2), 0.15);
}

// --- sizes and formatting -----------------------------------------------------------------------

TEST(SpaceSize, CardinalityAndGridSize) {
  EXPECT_EQ(Parameter::floating("f", 0, 1).cardinality(), 0u);
  EXPECT_EQ(Parameter::integer("i", -2, 2).cardinality(), 5u);
  EXPECT_EQ(Parameter::categorical("c", {"a", "b", "c"}).cardinality(), 3u);
  EXPECT_EQ(Parameter::ordinal("o", {"a", "b"}).cardinality(), 2u);

  const Space finite({Parameter::integer("i", -2, 2), Parameter::categorical("c", {"a", "b", "c"}),
                      Parameter::ordinal("o", {"a", "b"})});
  EXPECT_TRUE(finite.is_finite());
  EXPECT_EQ(finite.grid_size(), 30u);

  const Space mixed = mixed_space();
  EXPECT_FALSE(mixed.is_finite());
  EXPECT_EQ(mixed.grid_size(), 0u);

  const std::int64_t big = std::int64_t{1} << 40;
  const Space huge({Parameter::integer("a", 0, big), Parameter::integer("b", 0, big)});
  EXPECT_EQ(huge.grid_size(), std::numeric_limits<std::size_t>::max());
}

TEST(SpaceToString, ShortestRoundTripForms) {
  EXPECT_EQ(to_string(Value{0.1}), "0.1");
  EXPECT_EQ(to_string(Value{1.0}), "1");
  EXPECT_EQ(to_string(Value{-2.5e-7}), "-2.5e-07");
  EXPECT_EQ(to_string(Value{std::int64_t{-42}}), "-42");
  EXPECT_EQ(to_string(Value{std::string("adam")}), "adam");
  Rng rng(8);
  for (int t = 0; t < 1000; ++t) {
    const double x = std::ldexp(uniform01(rng), static_cast<int>(uniform01(rng) * 80) - 40);
    const std::string text = to_string(Value{x});
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), x) << text;
  }
  EXPECT_STREQ(to_string(ParamType::ordinal), "ordinal");
  EXPECT_STREQ(to_string(Scale::log), "log");
}

}  // namespace
}  // namespace tune

// A configuration's text is a YAML flow map that reads back as the configuration: a choice with a
// comma printed {act: ta,nh}, which reads as something else.
TEST(ConfigText, ReadsBackAsTheConfigurationWhateverTheChoices) {
  // Control bytes too: a line break was written as it is, which reads back as a space (and broke
  // tune status's table).
  for (const std::string choice : {"relu", "ta,nh", "a: b", "{x}", "q\"t", "back\\slash", " edge ", "yes", "#c", "",
                                   "line\nbreak", "tab\tcr\r", "bell\x07", "\x7f"}) {
    const tune::Config c{{"act", choice}, {"lr", 0.001}, {"n,m", std::int64_t{3}}};
    const std::string text = tune::to_string(c);
    const YAML::Node n = YAML::Load(text);
    ASSERT_TRUE(n.IsMap()) << text;
    EXPECT_EQ(n.size(), 3u) << text;
    EXPECT_EQ(n["act"].as<std::string>(), choice) << text;
    EXPECT_EQ(n["n,m"].as<int>(), 3) << text;
    EXPECT_EQ(n["lr"].as<double>(), 0.001) << text;
  }
  EXPECT_EQ(tune::to_string(tune::Config{{"act", std::string("relu")}, {"lr", 0.001}}), "{act: relu, lr: 0.001}");
  EXPECT_EQ(tune::to_string(tune::Config{{"act", std::string("a\nb")}}), "{act: \"a\\nb\"}");
}
