#pragma once
// Strategy options as YAML: each options struct lists its plain fields once in a visitor function,
// and FieldWriter / FieldReader walk that list to write or read them, so the two directions cannot
// drift apart. Unknown keys are refused with the list of known ones, and the one a typo meant.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

// The node at a dotted path of maps ("fit.noise_min"), or an undefined node. Read only: the const
// operator[] (the other adds the key it looks up), and no reset to a missing key's zombie node
// (which throws "invalid node").
inline YAML::Node node_at(const YAML::Node& map, const std::string& dotted) {
  YAML::Node node;
  node.reset(map);  // reset, not =: assigning to a node that refers to a document rewrites it
  for (std::size_t from = 0;;) {
    const std::size_t dot = dotted.find('.', from);
    if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node child = std::as_const(node)[dotted.substr(from, dot == std::string::npos ? dot : dot - from)];
    if (!child) return YAML::Node(YAML::NodeType::Undefined);
    node.reset(child);
    if (dot == std::string::npos) return node;
    from = dot + 1;
  }
}

// The known name a misspelt `name` most likely meant (`epsilonn`, `trails`, `ie`): the nearest by
// edits (insert, delete, substitute, swap two neighbours; case ignored), if it is 1 edit away (2 for
// names of 5 letters or more) and no other is as near; else empty.
inline std::string nearest_name(const std::string& name, const std::set<std::string>& known) {
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string a = lower(name);
  const std::size_t limit = a.size() >= 5 ? 2 : 1;
  std::string best;
  std::size_t best_distance = limit + 1;
  bool tie = false;
  for (const std::string& k : known) {
    const std::string b = lower(k);
    // Optimal string alignment distance, row by row.
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (std::size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    const std::size_t distance = d[a.size()][b.size()];
    if (distance < best_distance) {
      best = k;
      best_distance = distance;
      tie = false;
    } else if (distance == best_distance) {
      tie = true;
    }
  }
  return best_distance <= limit && !tie ? best : std::string();
}

// "did you mean 'epsilon'? " for a misspelt key, or nothing.
inline std::string did_you_mean(const std::string& name, const std::set<std::string>& known) {
  const std::string nearest = nearest_name(name, known);
  return nearest.empty() ? std::string() : "did you mean '" + nearest + "'? ";
}

inline void reject_unknown(const YAML::Node& node, const std::set<std::string>& known, const std::string& where) {
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (!known.count(key)) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw StateError("unknown key '" + key + "' in " + where + " at " + position_of(kv.first) + "; " +
                       did_you_mean(key, known) + "known keys: " + list);
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
