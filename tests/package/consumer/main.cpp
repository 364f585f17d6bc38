// Minimises a quadratic through the installed library; exits 0 if it got close.
#include <tune/tune.hpp>

#include <cmath>
#include <cstdio>

int run_options_snippets();  // options_snippets.cpp

int main() {
  if (run_options_snippets() <= 0) return 1;
  const tune::Space space({tune::Parameter::floating("x", -3, 3)});
  tune::MinimizeOptions options;
  options.evaluations = 15;
  const auto result = tune::minimize(
      [](const tune::Config& c) {
        const double x = std::get<double>(c.at("x"));
        return (x - 1.25) * (x - 1.25);
      },
      space, options);
  std::printf("best %.6g after %zu evaluations\n", result.best_value, result.evaluations);
  return result.best_value < 1e-3 ? 0 : 1;
}
