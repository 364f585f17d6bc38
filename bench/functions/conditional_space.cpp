#include "functions/conditional_space.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <variant>

namespace tune::testfn {
namespace {

const Value& value_of(const Config& config, const std::string& name) {
  const auto it = config.find(name);
  if (it == config.end()) throw std::invalid_argument("conditional function: no value for parameter '" + name + "'");
  return it->second;
}

double float_of(const Config& config, const std::string& name) {
  const Value& v = value_of(config, name);
  if (const double* d = std::get_if<double>(&v)) return *d;
  throw std::invalid_argument("conditional function: parameter '" + name + "' is not a float");
}

std::int64_t int_of(const Config& config, const std::string& name) {
  const Value& v = value_of(config, name);
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v)) return *i;
  throw std::invalid_argument("conditional function: parameter '" + name + "' is not an integer");
}

// The index of the chosen value in the parameter's list of choices.
std::size_t choice_of(const Config& config, const Parameter& p) {
  const Value& v = value_of(config, p.name);
  const std::string* s = std::get_if<std::string>(&v);
  if (s == nullptr) throw std::invalid_argument("conditional function: parameter '" + p.name + "' is not a choice");
  const auto it = std::find(p.choices.begin(), p.choices.end(), *s);
  if (it == p.choices.end())
    throw std::invalid_argument("conditional function: '" + *s + "' is not a choice of parameter '" + p.name + "'");
  return static_cast<std::size_t>(it - p.choices.begin());
}

ConditionalFunction make(std::string name, std::vector<Parameter> params) {
  ConditionalFunction fn;
  fn.name = std::move(name);
  fn.space = Space(std::move(params));
  fn.flat_space = without_conditions(fn.space);
  return fn;
}

}  // namespace

ConditionalFunction jenatton() {
  const std::vector<std::string> bit{"0", "1"};
  ConditionalFunction fn = make(
      "jenatton",
      {Parameter::categorical("x1", bit), Parameter::categorical("x2", bit).when("x1", {"0"}),
       Parameter::categorical("x3", bit).when("x1", {"1"}), Parameter::floating("x4", -1.0, 1.0).when("x2", {"0"}),
       Parameter::floating("x5", -1.0, 1.0).when("x2", {"1"}), Parameter::floating("x6", -1.0, 1.0).when("x3", {"0"}),
       Parameter::floating("x7", -1.0, 1.0).when("x3", {"1"}), Parameter::floating("r8", 0.0, 1.0).when("x1", {"0"}),
       Parameter::floating("r9", 0.0, 1.0).when("x1", {"1"})});
  fn.minimum = 0.1;
  fn.argmin = {{"x1", std::string("0")}, {"x2", std::string("0")}, {"x4", 0.0}, {"r8", 0.0}};
  const Parameter x1 = fn.space.parameter("x1"), x2 = fn.space.parameter("x2"), x3 = fn.space.parameter("x3");
  fn.f = [x1, x2, x3](const Config& config) {
    if (choice_of(config, x1) == 0) {
      const double r8 = float_of(config, "r8");
      if (choice_of(config, x2) == 0) {
        const double x4 = float_of(config, "x4");
        return x4 * x4 + 0.1 + r8;
      }
      const double x5 = float_of(config, "x5");
      return x5 * x5 + 0.2 + r8;
    }
    const double r9 = float_of(config, "r9");
    if (choice_of(config, x3) == 0) {
      const double x6 = float_of(config, "x6");
      return x6 * x6 + 0.3 + r9;
    }
    const double x7 = float_of(config, "x7");
    return x7 * x7 + 0.4 + r9;
  };
  return fn;
}

ConditionalFunction optimizer_choice() {
  // sgd adam rmsprop adagrad
  static constexpr std::array<double, 4> kWidth{0.6, 1.0, 0.7, 0.8};
  static constexpr std::array<double, 4> kBase{0.06, 0.03, 0.05, 0.10};
  static constexpr std::array<double, 4> kBestLogDecay{-4.0, -5.0, -4.5, -3.0};
  ConditionalFunction fn = make(
      "optimizer_choice",
      {Parameter::categorical("opt", {"sgd", "adam", "rmsprop", "adagrad"}),
       Parameter::floating("lr", 1e-5, 1.0, Scale::log), Parameter::floating("momentum", 0.0, 0.99).when("opt", {"sgd"}),
       Parameter::categorical("nesterov", {"no", "yes"}).when("opt", {"sgd"}),
       Parameter::floating("beta1", 0.5, 0.999).when("opt", {"adam"}),
       Parameter::floating("beta2", 0.9, 0.9999).when("opt", {"adam"}),
       Parameter::floating("rho", 0.5, 0.99).when("opt", {"rmsprop"}),
       Parameter::floating("weight_decay", 1e-6, 0.1, Scale::log)});
  fn.minimum = 0.2 + 0.03;
  fn.argmin = {{"opt", std::string("adam")}, {"lr", 1e-3},           {"beta1", 0.9},
               {"beta2", 0.999},             {"weight_decay", 1e-5}};
  const Parameter opt = fn.space.parameter("opt"), nesterov = fn.space.parameter("nesterov");
  fn.f = [opt, nesterov](const Config& config) {
    const std::size_t o = choice_of(config, opt);
    double best_log_lr = 0.0, own = 0.0;
    switch (o) {
      case 0: {  // sgd
        const double mu = float_of(config, "momentum");
        best_log_lr = -1.2 + std::log10(1.0 - mu);
        own = 0.3 * (mu - 0.9) * (mu - 0.9) + (choice_of(config, nesterov) == 0 ? 0.02 : 0.0);
        break;
      }
      case 1: {  // adam
        const double b1 = float_of(config, "beta1");
        const double v = -std::log10(1.0 - float_of(config, "beta2"));
        best_log_lr = -3.0;
        own = (b1 - 0.9) * (b1 - 0.9) + 0.02 * (v - 3.0) * (v - 3.0);
        break;
      }
      case 2: {  // rmsprop
        const double rho = float_of(config, "rho");
        best_log_lr = -3.3;
        own = (rho - 0.9) * (rho - 0.9);
        break;
      }
      default:  // adagrad
        best_log_lr = -1.8;
        break;
    }
    const double z = (std::log10(float_of(config, "lr")) - best_log_lr) / kWidth[o];
    const double s = z * z * (1.0 + 0.5 * std::tanh(z));
    const double dd = std::log10(float_of(config, "weight_decay")) - kBestLogDecay[o];
    return 0.2 + kBase[o] + 1.5 * (1.0 - std::exp(-0.5 * s)) + own + 0.01 * dd * dd;
  };
  return fn;
}

ConditionalFunction layers_units() {
  static constexpr std::array<double, 4> kBase{0.25, 0.10, 0.00, 0.05};
  static constexpr std::array<std::array<double, 4>, 4> kUnits{
      {{64, 0, 0, 0}, {128, 32, 0, 0}, {128, 64, 16, 0}, {160, 80, 40, 20}}};
  static constexpr std::array<double, 4> kDropout{0.0, 0.1, 0.2, 0.3};
  ConditionalFunction fn = make(
      "layers_units",
      {Parameter::integer("n_layers", 1, 4), Parameter::integer("units_l1", 4, 256, Scale::log),
       Parameter::integer("units_l2", 4, 256, Scale::log).when("n_layers", {"2", "3", "4"}),
       Parameter::integer("units_l3", 4, 256, Scale::log).when("n_layers", {"3", "4"}),
       Parameter::integer("units_l4", 4, 256, Scale::log).when("n_layers", {"4"}),
       Parameter::floating("dropout", 0.0, 0.5)});
  fn.minimum = 0.1;
  fn.argmin = {{"n_layers", std::int64_t{3}}, {"units_l1", std::int64_t{128}}, {"units_l2", std::int64_t{64}},
               {"units_l3", std::int64_t{16}}, {"dropout", 0.2}};
  fn.f = [](const Config& config) {
    const std::int64_t n = int_of(config, "n_layers");
    if (n < 1 || n > 4) throw std::invalid_argument("conditional function: n_layers " + std::to_string(n) + " is not 1..4");
    const auto k = static_cast<std::size_t>(n - 1);
    double f = 0.1 + kBase[k];
    for (std::size_t i = 0; i <= k; ++i) {
      const auto units = static_cast<double>(int_of(config, "units_l" + std::to_string(i + 1)));
      const double d = std::log2(units) - std::log2(kUnits[k][i]);
      f += 0.02 * d * d;
    }
    const double dp = float_of(config, "dropout") - kDropout[k];
    return f + 0.8 * dp * dp;
  };
  return fn;
}

ConditionalFunction conditional_by_name(const std::string& name) {
  if (name == "jenatton") return jenatton();
  if (name == "optimizer_choice") return optimizer_choice();
  if (name == "layers_units") return layers_units();
  throw std::invalid_argument("unknown conditional-space function '" + name +
                              "' (jenatton, optimizer_choice, layers_units)");
}

std::vector<std::string> conditional_names() { return {"jenatton", "optimizer_choice", "layers_units"}; }

namespace {

constexpr std::size_t kMaxEnumerated = 16;  // discrete parameters of at most this many values are enumerated

bool enumerated(const Parameter& p) {
  return p.type == ParamType::categorical || p.type == ParamType::ordinal ||
         (p.type == ParamType::integer && p.cardinality() <= kMaxEnumerated);
}

// The value of a gridded parameter (a float, or an integer of many values) at unit coordinate t in
// [0, 1]: linear or log in [low, high]; an integer rounds to the nearest value.
Value gridded_at(const Parameter& p, double t) {
  const double x = p.scale == Scale::log ? std::exp(std::log(p.low) + t * (std::log(p.high) - std::log(p.low)))
                                         : p.low + t * (p.high - p.low);
  if (p.type == ParamType::floating) return std::clamp(x, p.low, p.high);
  return static_cast<std::int64_t>(std::llround(std::clamp(x, p.low, p.high)));
}

Value enumerated_at(const Parameter& p, std::size_t index) {
  if (p.type == ParamType::integer) return static_cast<std::int64_t>(p.low) + static_cast<std::int64_t>(index);
  return p.choices[index];
}

struct Searcher {
  const ConditionalFunction& fn;
  std::size_t points;
  ConditionalMinimumSearch result;
  Config config;

  // Enumerates parameter i onwards (config holds the values of those before i that apply).
  void enumerate(std::size_t i) {
    const std::vector<Parameter>& params = fn.space.parameters();
    if (i == params.size()) {
      search_gridded();
      return;
    }
    const Parameter& p = params[i];
    config.erase(p.name);
    if (!fn.space.active(config)[i] || !enumerated(p)) {
      enumerate(i + 1);
      return;
    }
    for (std::size_t k = 0; k < p.cardinality(); ++k) {
      config[p.name] = enumerated_at(p, k);
      enumerate(i + 1);
    }
    config.erase(p.name);
  }

  // The grid and compass search over the gridded parameters that apply, the enumerated ones fixed.
  void search_gridded() {
    ++result.combinations;
    std::vector<const Parameter*> grid;
    const std::vector<bool> applying = fn.space.active(config);
    for (std::size_t i = 0; i < fn.space.dim(); ++i) {
      const Parameter& p = fn.space.parameters()[i];
      if (!enumerated(p) && applying[i]) grid.push_back(&p);
    }
    const std::size_t c = grid.size();
    std::size_t n = 1;  // grid points per dimension, endpoints included
    if (c > 0)
      n = std::max<std::size_t>(
          3, static_cast<std::size_t>(std::floor(std::pow(static_cast<double>(points), 1.0 / static_cast<double>(c)))));
    auto eval = [&](const std::vector<double>& t) {
      for (std::size_t i = 0; i < c; ++i) config[grid[i]->name] = gridded_at(*grid[i], std::clamp(t[i], 0.0, 1.0));
      ++result.evaluations;
      return fn.f(config);
    };
    std::vector<std::pair<double, std::vector<double>>> best;
    std::vector<std::size_t> g(c, 0);
    std::vector<double> t(c, 0.0);
    while (true) {
      for (std::size_t i = 0; i < c; ++i) t[i] = static_cast<double>(g[i]) / static_cast<double>(n - 1);
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
    for (const Parameter* p : grid) config.erase(p->name);
  }
};

}  // namespace

ConditionalMinimumSearch search_minimum(const ConditionalFunction& fn, std::size_t points_per_combination) {
  Searcher s{fn, points_per_combination, {}, {}};
  s.result.value = std::numeric_limits<double>::infinity();
  s.enumerate(0);
  return s.result;
}

double typical_gap(const ConditionalFunction& fn, std::size_t samples) {
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
