// Minimises a quadratic through the installed library; exits 0 if it got close.
#include <tune/tune.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

int run_options_snippets();  // options_snippets.cpp

// Study::load's error type is reachable from tune/tune.hpp alone (it was not: catching it did not
// compile without tune/io/yaml_values.hpp).
bool damaged_file_is_a_state_error() {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "tune-consumer-damaged.yaml";
  std::ofstream(path) << "schema: [1\n";
  try {
    (void)tune::Study::load(path);
  } catch (const tune::StateError& e) {
    std::printf("damaged study refused: %s\n", e.what());
    return true;
  }
  return false;
}

int main() {
  if (run_options_snippets() <= 0) return 1;
  if (!damaged_file_is_a_state_error()) return 1;
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
