#pragma once
// Strategy options as YAML: each options struct lists its plain fields once in a visitor function,
// and FieldWriter / FieldReader walk that list to write or read them, so the two directions cannot
// drift apart. Unknown keys are refused with the list of known ones.
#include <yaml-cpp/yaml.h>

#include <set>
#include <stdexcept>
#include <string>

#include "tune/io/yaml_values.hpp"

namespace tune::option_fields {

// Fields of a RefitSchedule `refit` and HyperparameterFitOptions `fit` member, shared by the GP strategies.
template <class Options, class Visit>
void refit_fields(Options& o, Visit&& visit) {
  visit("every", o.refit.every);
  visit("growth", o.refit.growth);
}

template <class Options, class Visit>
void fit_fields(Options& o, Visit&& visit) {
  auto& f = o.fit;
  visit("lengthscale_min", f.lengthscale_min);
  visit("lengthscale_max", f.lengthscale_max);
  visit("outputscale_min", f.outputscale_min);
  visit("outputscale_max", f.outputscale_max);
  visit("noise_min", f.noise_min);
  visit("noise_max", f.noise_max);
  visit("lengthscale_prior_median_1d", f.lengthscale_prior_median_1d);
  visit("lengthscale_prior_log_sd", f.lengthscale_prior_log_sd);
  visit("outputscale_prior_log_median", f.outputscale_prior.log_median);
  visit("outputscale_prior_log_sd", f.outputscale_prior.log_sd);
  visit("noise_prior_log_median", f.noise_prior.log_median);
  visit("noise_prior_log_sd", f.noise_prior.log_sd);
  visit("noise_pooling_log_sd", f.noise_pooling_log_sd);
  visit("fit_noise", f.fit_noise);
  visit("discrepancy_min", f.discrepancy_min);
  visit("discrepancy_max", f.discrepancy_max);
  visit("discrepancy_prior_log_median", f.discrepancy_prior.log_median);
  visit("discrepancy_prior_log_sd", f.discrepancy_prior.log_sd);
  visit("scale_min", f.scale_min);
  visit("scale_max", f.scale_max);
  visit("scale_prior_log_median", f.scale_prior.log_median);
  visit("scale_prior_log_sd", f.scale_prior.log_sd);
  visit("trend_min", f.trend_min);
  visit("trend_max", f.trend_max);
  visit("trend_prior_log_median", f.trend_prior.log_median);
  visit("trend_prior_log_sd", f.trend_prior.log_sd);
  visit("discrepancy_lengthscale_factor_min", f.discrepancy_lengthscale_factor_min);
  visit("discrepancy_lengthscale_factor_max", f.discrepancy_lengthscale_factor_max);
  visit("discrepancy_lengthscale_factor_prior_log_median", f.discrepancy_lengthscale_factor_prior.log_median);
  visit("discrepancy_lengthscale_factor_prior_log_sd", f.discrepancy_lengthscale_factor_prior.log_sd);
  visit("random_restarts", f.random_restarts);
  visit("smooth_start_noise", f.smooth_start_noise);
  visit("max_evaluations", f.max_evaluations);
  visit("max_points", f.max_points);
}

// Writes each visited field into `node`.
struct FieldWriter {
  YAML::Node node;
  void operator()(const char* key, double v) { node[key] = yaml_double(v); }
  void operator()(const char* key, std::size_t v) { node[key] = v; }
  void operator()(const char* key, bool v) { node[key] = v; }
};

// Reads each visited field from `node` when present, and remembers the keys it knows.
struct FieldReader {
  const YAML::Node& node;
  std::set<std::string> known;
  void operator()(const char* key, double& v) {
    known.insert(key);
    if (node[key]) v = read_double(node[key], key);
  }
  void operator()(const char* key, std::size_t& v) {
    known.insert(key);
    if (node[key]) v = read_uint(node[key], key);
  }
  void operator()(const char* key, bool& v) {
    known.insert(key);
    if (node[key]) v = read_bool(node[key], key);
  }
};

inline void reject_unknown(const YAML::Node& node, const std::set<std::string>& known, const std::string& where) {
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (!known.count(key)) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw StateError("unknown key '" + key + "' in " + where + " at " + position_of(kv.first) + "; known keys: " + list);
    }
  }
}

template <class F>
auto parse_enum(const YAML::Node& node, const char* key, F parse) {
  try {
    return parse(read_string(node, key));
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("field '") + key + "' at " + position_of(node) + ": " + e.what());
  }
}

// Reads one group of fields from `parent[key]` if present, refusing unknown keys.
template <class Options, class Fields>
void read_group(const YAML::Node& parent, const char* key, Options& o, Fields fields) {
  const YAML::Node node = parent[key];
  if (!node) return;
  if (!node.IsMap()) throw StateError(std::string("'") + key + "' at " + position_of(node) + ": expected a map");
  FieldReader reader{node, {}};
  fields(o, reader);
  reject_unknown(node, reader.known, key);
}

// The `refit` and `fit` groups of a GP strategy's options, written under / read from `top`.
template <class Options>
void write_model_groups(YAML::Node& top, const Options& o) {
  FieldWriter refit{YAML::Node(YAML::NodeType::Map)}, fit{YAML::Node(YAML::NodeType::Map)};
  refit_fields(o, refit);
  fit_fields(o, fit);
  top["refit"] = refit.node;
  top["fit"] = fit.node;
}

template <class Options>
void read_model_groups(const YAML::Node& top, Options& o) {
  read_group(top, "refit", o, [](Options& x, FieldReader& r) { refit_fields(x, r); });
  read_group(top, "fit", o, [](Options& x, FieldReader& r) { fit_fields(x, r); });
}

}  // namespace tune::option_fields
