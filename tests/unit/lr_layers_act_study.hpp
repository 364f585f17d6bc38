#pragma once
// The three-parameter study of the enqueue and import tests: a learning rate on a log scale, an
// integer and a categorical, with a quadratic objective; cmets and cmes get three levels and a cost
// budget.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "tune/tune.hpp"

namespace lr_layers_act {

inline tune::Space space() {
  return tune::Space({tune::Parameter::floating("lr", 1e-5, 1, tune::Scale::log), tune::Parameter::integer("layers", 1, 8),
                      tune::Parameter::categorical("act", {"relu", "tanh"})});
}

inline double objective(const tune::Config& c) {
  const double lr = std::log10(std::get<double>(c.at("lr")));
  const double layers = static_cast<double>(std::get<std::int64_t>(c.at("layers")));
  return std::pow(lr + 2.5, 2) + std::pow(layers - 4, 2) / 8 + (std::get<std::string>(c.at("act")) == "tanh" ? 0 : 0.5);
}

inline tune::StudyOptions options_for(const std::string& strategy) {
  tune::StudyOptions o{tune::Direction::minimize, 5};
  if (strategy == "cmets" || strategy == "cmes") {
    o.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
    o.cost_budget = 200;
  }
  return o;
}

// A trial's unit point at full precision, to compare two studies' proposals.
inline std::string unit_text(const tune::Study& s, std::uint64_t id) {
  std::ostringstream u;
  u.precision(17);
  u << s.trial(id).unit.transpose();
  return u.str();
}

// A study and its saved-and-loaded copy propose the same points for `steps` asks, each told
// objective(), and end with the same saved text.
inline void expect_the_same_continuation(tune::Study& original, tune::Study& loaded, int steps) {
  for (int i = 0; i < steps; ++i) {
    const auto x = original.ask();
    const auto y = loaded.ask();
    ASSERT_TRUE(x && y);
    EXPECT_EQ(unit_text(original, x->id), unit_text(loaded, y->id)) << "step " << i;
    original.tell(x->id, objective(x->config));
    loaded.tell(y->id, objective(y->config));
  }
  EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());
}

}  // namespace lr_layers_act
