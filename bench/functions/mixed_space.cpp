#include "functions/mixed_space.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <utility>
#include <variant>

#include "functions/test_functions.hpp"

namespace tune::testfn {
namespace {

const Value& value_of(const Config& config, const std::string& name) {
  const auto it = config.find(name);
  if (it == config.end()) throw std::invalid_argument("mixed function: no value for parameter '" + name + "'");
  return it->second;
}

double float_of(const Config& config, const std::string& name) {
  const Value& v = value_of(config, name);
  if (const double* d = std::get_if<double>(&v)) return *d;
  throw std::invalid_argument("mixed function: parameter '" + name + "' is not a float");
}

std::int64_t int_of(const Config& config, const std::string& name) {
  const Value& v = value_of(config, name);
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v)) return *i;
  throw std::invalid_argument("mixed function: parameter '" + name + "' is not an integer");
}

// The index of the chosen value in the parameter's list of choices.
std::size_t choice_of(const Config& config, const Parameter& p) {
  const Value& v = value_of(config, p.name);
  const std::string* s = std::get_if<std::string>(&v);
  if (s == nullptr) throw std::invalid_argument("mixed function: parameter '" + p.name + "' is not a choice");
  const auto it = std::find(p.choices.begin(), p.choices.end(), *s);
  if (it == p.choices.end())
    throw std::invalid_argument("mixed function: '" + *s + "' is not a choice of parameter '" + p.name + "'");
  return static_cast<std::size_t>(it - p.choices.begin());
}

double branin_value(double x1, double x2) {
  constexpr double pi = std::numbers::pi;
  constexpr double b = 5.1 / (4.0 * pi * pi), c = 5.0 / pi, r = 6.0, s = 10.0, t = 1.0 / (8.0 * pi);
  const double q = x2 - b * x1 * x1 + c * x1 - r;
  return q * q + s * (1.0 - t) * std::cos(x1) + s;
}

}  // namespace

MixedFunction with_shuffled_choices(const MixedFunction& fn, std::uint64_t seed) {
  if (seed == 0) return fn;
  std::mt19937_64 rng(0x9e3779b97f4a7c15ULL ^ seed);
  std::vector<Parameter> params = fn.space.parameters();
  for (Parameter& p : params)
    if (p.type == ParamType::categorical) std::shuffle(p.choices.begin(), p.choices.end(), rng);
  MixedFunction out = fn;
  out.space = Space(std::move(params));
  return out;
}

MixedFunction branin_cat() {
  static constexpr std::array<double, 6> kOffset{1.0, 0.0, 1.6, 0.4, 1.2, 0.8};
  MixedFunction fn;
  fn.name = "branin_cat";
  fn.space = Space({Parameter::floating("x1", -5.0, 10.0), Parameter::floating("x2", 0.0, 15.0),
                    Parameter::categorical("c", {"c0", "c1", "c2", "c3", "c4", "c5"})});
  fn.minimum = 5.0 / (4.0 * std::numbers::pi);
  fn.argmin = {{"x1", 5.0 - std::numbers::pi}, {"x2", 2.275}, {"c", std::string("c1")}};
  const Parameter c = fn.space.parameter("c");
  fn.f = [c](const Config& config) {
    const std::size_t k = choice_of(config, c);
    const double x1 = float_of(config, "x1");
    const double x1m = k % 2 == 0 ? x1 : 5.0 - x1;
    return branin_value(x1m, float_of(config, "x2")) + kOffset[k];
  };
  return fn;
}

MixedFunction hartmann3_cat2() {
  using Perm = std::array<Eigen::Index, 3>;
  static constexpr std::array<Perm, 12> kPerm{{{1, 2, 0}, {0, 1, 2}, {2, 1, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2},
                                              {0, 1, 2}, {2, 1, 0}, {2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {1, 0, 2}}};
  static constexpr std::array<double, 12> kOffset{0.30, 0.70, 0.10, 0.50, 0.90, 0.00,
                                                  0.40, 0.60, 0.05, 1.00, 0.25, 0.80};
  MixedFunction fn;
  fn.name = "hartmann3_cat2";
  fn.space = Space({Parameter::floating("x0", 0.0, 1.0), Parameter::floating("x1", 0.0, 1.0),
                    Parameter::floating("x2", 0.0, 1.0), Parameter::categorical("a", {"a0", "a1", "a2"}),
                    Parameter::categorical("b", {"b0", "b1", "b2", "b3"})});
  const TestFunction h3 = hartmann3();
  fn.minimum = h3.minimum;
  fn.argmin = {{"x0", h3.argmin(1)}, {"x1", h3.argmin(0)}, {"x2", h3.argmin(2)},
               {"a", std::string("a1")}, {"b", std::string("b1")}};
  const Parameter a = fn.space.parameter("a"), b = fn.space.parameter("b");
  fn.f = [a, b, h3](const Config& config) {
    const std::size_t k = 4 * choice_of(config, a) + choice_of(config, b);
    const Eigen::Vector3d x(float_of(config, "x0"), float_of(config, "x1"), float_of(config, "x2"));
    Eigen::VectorXd y(3);
    for (Eigen::Index j = 0; j < 3; ++j) y(j) = x(kPerm[k][static_cast<std::size_t>(j)]);
    return h3.f(y) + kOffset[k];
  };
  return fn;
}

MixedFunction nn_surrogate() {
  static constexpr std::array<double, 4> kBestLogLr{-1.5, -3.2, -3.5, -2.0};  // sgd adam rmsprop adagrad
  static constexpr std::array<double, 4> kWidth{0.6, 1.0, 0.7, 0.8};
  static constexpr std::array<double, 4> kOptimizerBase{0.10, 0.02, 0.06, 0.14};
  static constexpr std::array<double, 3> kActivationBase{0.03, 0.08, 0.00};  // relu tanh elu
  static constexpr std::array<double, 3> kBestLayers{4.0, 2.0, 5.0};
  MixedFunction fn;
  fn.name = "nn_surrogate";
  fn.space = Space({Parameter::floating("lr", 1e-5, 1.0, Scale::log), Parameter::integer("layers", 1, 8),
                    Parameter::ordinal("batch", {"16", "32", "64", "128", "256"}),
                    Parameter::categorical("optimizer", {"sgd", "adam", "rmsprop", "adagrad"}),
                    Parameter::categorical("activation", {"relu", "tanh", "elu"})});
  fn.minimum = 0.2 + 0.02 + 0.01 * 0.3 * 0.3;
  fn.argmin = {{"lr", std::pow(10.0, -3.35)},        {"layers", std::int64_t{5}},
               {"batch", std::string("32")},         {"optimizer", std::string("adam")},
               {"activation", std::string("elu")}};
  const Parameter batch = fn.space.parameter("batch"), optimizer = fn.space.parameter("optimizer"),
                  activation = fn.space.parameter("activation");
  fn.f = [batch, optimizer, activation](const Config& config) {
    const std::size_t o = choice_of(config, optimizer), a = choice_of(config, activation);
    const double j = static_cast<double>(choice_of(config, batch));
    const double u = std::log10(float_of(config, "lr"));
    const double l = static_cast<double>(int_of(config, "layers"));
    const double z = (u - kBestLogLr[o] - 0.15 * (j - 2.0)) / kWidth[o];
    const double s = z * z * (1.0 + 0.5 * std::tanh(z));
    const double dl = l - kBestLayers[a], dj = j - 1.3;
    return 0.2 + kOptimizerBase[o] + kActivationBase[a] + 1.5 * (1.0 - std::exp(-0.5 * s)) + 0.015 * dl * dl +
           0.01 * dj * dj;
  };
  return fn;
}

MixedFunction mixed_by_name(const std::string& name) {
  if (name == "branin_cat") return branin_cat();
  if (name == "hartmann3_cat2") return hartmann3_cat2();
  if (name == "nn_surrogate") return nn_surrogate();
  throw std::invalid_argument("unknown mixed-space function '" + name + "' (branin_cat, hartmann3_cat2, nn_surrogate)");
}

std::vector<std::string> mixed_names() { return {"branin_cat", "hartmann3_cat2", "nn_surrogate"}; }

namespace {

// The value of continuous parameter p at unit coordinate t (linear or log, as Space::decode).
double continuous_at(const Parameter& p, double t) {
  if (p.scale == Scale::log) return std::exp(std::log(p.low) + t * (std::log(p.high) - std::log(p.low)));
  return p.low + t * (p.high - p.low);
}

Value discrete_at(const Parameter& p, std::size_t index) {
  if (p.type == ParamType::integer) return static_cast<std::int64_t>(p.low) + static_cast<std::int64_t>(index);
  return p.choices[index];
}

}  // namespace

MinimumSearch search_minimum(const MixedFunction& fn, std::size_t points_per_combination) {
  std::vector<const Parameter*> cont, disc;
  for (const Parameter& p : fn.space.parameters()) (p.type == ParamType::floating ? cont : disc).push_back(&p);
  const std::size_t c = cont.size();
  std::size_t n = 1;  // grid points per continuous dimension, endpoints included
  if (c > 0)
    n = std::max<std::size_t>(
        3, static_cast<std::size_t>(std::floor(std::pow(static_cast<double>(points_per_combination), 1.0 / static_cast<double>(c)))));
  MinimumSearch result;
  result.value = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> index(disc.size(), 0);
  Config config;
  auto eval = [&](const std::vector<double>& t) {
    for (std::size_t i = 0; i < c; ++i) config[cont[i]->name] = continuous_at(*cont[i], std::clamp(t[i], 0.0, 1.0));
    ++result.evaluations;
    return fn.f(config);
  };
  while (true) {
    for (std::size_t i = 0; i < disc.size(); ++i) config[disc[i]->name] = discrete_at(*disc[i], index[i]);
    ++result.combinations;
    // Grid over the continuous parameters; keep the 3 best points.
    std::vector<std::pair<double, std::vector<double>>> best;
    std::vector<std::size_t> g(c, 0);
    std::vector<double> t(c, 0.0);
    while (true) {
      for (std::size_t i = 0; i < c; ++i) t[i] = n == 1 ? 0.5 : static_cast<double>(g[i]) / static_cast<double>(n - 1);
      const double v = eval(t);
      if (best.size() < 3 || v < best.back().first) {
        best.emplace_back(v, t);
        std::sort(best.begin(), best.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        if (best.size() > 3) best.pop_back();
      }
      std::size_t i = 0;
      while (i < c && ++g[i] == n) g[i++] = 0;
      if (i == c) break;
    }
    // Compass search from each: try +-h along every coordinate, halve h when none improves.
    for (auto& [value, point] : best) {
      double h = 1.0 / static_cast<double>(std::max<std::size_t>(n - 1, 1));
      while (c > 0 && h > 1e-12) {
        bool improved = false;
        for (std::size_t i = 0; i < c; ++i)
          for (const double step : {h, -h}) {
            std::vector<double> trial = point;
            trial[i] = std::clamp(trial[i] + step, 0.0, 1.0);
            const double v = eval(trial);
            if (v < value) {
              value = v;
              point = trial;
              improved = true;
            }
          }
        if (!improved) h *= 0.5;
      }
      if (value < result.value) {
        result.value = value;
        eval(point);
        result.argmin = config;
      }
    }
    std::size_t i = 0;
    while (i < disc.size() && ++index[i] == disc[i]->cardinality()) index[i++] = 0;
    if (i == disc.size()) break;
  }
  return result;
}

double typical_gap(const MixedFunction& fn, std::size_t samples) {
  std::mt19937_64 rng(20261125);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  std::vector<double> gaps;
  Eigen::VectorXd u(static_cast<Eigen::Index>(fn.space.dim()));
  for (std::size_t s = 0; s < samples; ++s) {
    for (Eigen::Index j = 0; j < u.size(); ++j) u(j) = unif(rng);
    gaps.push_back(fn.f(fn.space.decode(u)) - fn.minimum);
  }
  std::sort(gaps.begin(), gaps.end());
  const std::size_t m = gaps.size();
  return m % 2 ? gaps[m / 2] : 0.5 * (gaps[m / 2 - 1] + gaps[m / 2]);
}

}  // namespace tune::testfn
