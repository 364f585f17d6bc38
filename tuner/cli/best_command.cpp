// `tune best DIR`: the best configuration so far, and the model's recommendation where the strategy
// has one, as YAML with a comment line for people, or as JSON.
#include <cstdio>

#include "tune/io/yaml_values.hpp"
#include "tune/space/space_yaml.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/event_log.hpp"
#include "tuner/campaign/progress.hpp"
#include "tuner/cli/command_support.hpp"
#include "tuner/cli/output_yaml.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

namespace {

// A recommended region (gpoo) for `tune best`: the box per parameter ([low, high], or the choices
// in it) and the estimate of the objective's average over it.
YAML::Node region_yaml(const StudyRegion& r) {
  YAML::Node n;
  YAML::Node box;
  box.SetStyle(YAML::EmitterStyle::Flow);
  for (const ParameterRange& p : r.box) {
    YAML::Node range(YAML::NodeType::Sequence);
    range.SetStyle(YAML::EmitterStyle::Flow);
    if (!p.choices.empty()) {
      for (const std::string& c : p.choices) range.push_back(quoted_text(c));
    } else {
      range.push_back(tune::to_string(p.low));
      range.push_back(tune::to_string(p.high));
    }
    box[p.name] = range;
  }
  n["box"] = box;
  n["mean"] = yaml_double(r.mean);
  n["sd"] = yaml_double(r.sd);
  return n;
}

std::string value_json(const Value& v) {
  if (std::holds_alternative<std::string>(v)) return "\"" + json_escape(std::get<std::string>(v)) + "\"";
  return tune::to_string(v);
}

std::string region_json(const StudyRegion& r) {
  std::string box;
  for (const ParameterRange& p : r.box) {
    std::string range;
    if (!p.choices.empty())
      for (const std::string& c : p.choices) range += (range.empty() ? "" : ", ") + value_json(Value(c));
    else
      range = value_json(p.low) + ", " + value_json(p.high);
    box += (box.empty() ? "" : ", ") + std::string("\"") + json_escape(p.name) + "\": [" + range + "]";
  }
  return "{\"box\": {" + box + "}, \"mean\": " + format_double(r.mean) + ", \"sd\": " + format_double(r.sd) + "}";
}

// `tune best`'s recommendation, in JSON and in YAML, keys in one order: the trial it is (ei, ucb),
// the configuration, the model's mean and sd there, the sd's scale (cmets, cmes, ei, ucb), the region (gpoo).
struct RecommendationFields {
  const StudyRecommendation& rec;
  const Config& config;                  // the recommended trial's, as it ran, or rec.config
  std::optional<std::uint64_t> trial;
  bool sd_scale = true;
};

std::string recommendation_json(const Space& space, const RecommendationFields& f) {
  std::string out = "{";
  if (f.trial) out += "\"trial\": " + std::to_string(*f.trial) + ", ";
  out += "\"config\": " + config_json(space, f.config) + ", \"mean\": " + format_double(f.rec.mean) +
         ", \"sd\": " + format_double(f.rec.sd);
  if (f.sd_scale) out += ", \"sd_scale\": " + format_double(f.rec.sd_scale);
  if (f.rec.region) out += ", \"region\": " + region_json(*f.rec.region);
  return out + "}";
}

YAML::Node recommendation_yaml(const Space& space, const RecommendationFields& f) {
  YAML::Node n;
  if (f.trial) n["trial"] = *f.trial;
  n["config"] = config_for_readers(space, f.config);
  n["mean"] = yaml_double(f.rec.mean);
  n["sd"] = yaml_double(f.rec.sd);
  if (f.sd_scale) n["sd_scale"] = yaml_double(f.rec.sd_scale);
  if (f.rec.region) n["region"] = region_yaml(*f.rec.region);
  return n;
}

// The comment line of `tune best` for a recommended region. What the region's estimate is depends
// on the aggregation: with one representative (the default) it is the value at the cell's centre,
// not an average over the box, and "averages" would promise what it is not.
std::string region_summary(const StudyRecommendation& rec, const std::string& objective, const Strategy& strategy) {
  const auto* gpoo = dynamic_cast<const GpooStrategy*>(&strategy);
  const bool centre_only = gpoo && gpoo->options().aggregation == GpooAggregation::representatives &&
                           gpoo->options().representatives == 1;
  return "gpoo recommends the region " + tune::to_string(rec.region->box) + ", where " + objective +
         (centre_only ? " at its centre is " : " averages ") + format_short(rec.region->mean) + " \u00b1 " +
         format_short(rec.region->sd) + "; as a point " +
         tune::to_string(rec.config) + ", " + objective + " " + format_short(rec.mean) + " \u00b1 " +
         format_short(rec.sd);
}

// Why `tune best` has no trial to report (none has completed), and where to look.
std::string why_no_best(const std::filesystem::path& dir, const CampaignState& s) {
  const std::size_t failed = s.count(RunStatus::failed);
  const std::string look = "; 'tune status " + dir.string() + "' shows why each failed, and " +
                           (dir / campaign_files::kTrials / "<id>").string() + "/stdout and stderr what each printed";
  if (s.runs.empty()) return "no trial of " + dir.string() + " has run yet ('tune resume " + dir.string() + "' runs them)";
  if (failed == s.runs.size())
    return (failed == 1 ? "the only trial of " + dir.string() + " failed"
                        : "all " + std::to_string(failed) + " trials of " + dir.string() + " failed") +
           look;
  return "no trial of " + dir.string() + " has completed yet (" + std::to_string(failed) + " failed, " +
         std::to_string(s.count(RunStatus::running)) + " running, " + std::to_string(s.count(RunStatus::queued)) +
         " queued)" + (failed > 0 ? look : "");
}

// ei's and ucb's recommendation is the completed trial whose configuration their model believes best
// (with a resolution, a full-resolution one: a cheaper run's configuration is not what the objective
// is about). A model whose errors at the trials, each left out, are several times its sds fits the
// results poorly (10 libsvm trials from 54% to 99%: a configuration that gave 98.61 "estimated" at
// 99.74 +- 0.008, or +- 4.0 scaled): its choice is no better founded than the best result, and
// there is no recommendation, only the scale (poor_fit_scale).
struct TrialRecommendation {
  std::optional<StudyRecommendation> rec;
  const Trial* trial = nullptr;
  double poor_fit_scale = 0.0;  // > 0: withheld for a poor fit
};

// `rec` is the study's recommendation, which the caller has made (it builds the model and scores the
// leave-one-out errors: not to be made twice); nothing for the other strategies.
TrialRecommendation gp_bandit_recommendation(const CampaignState& s, std::optional<StudyRecommendation> rec) {
  TrialRecommendation out;
  if (dynamic_cast<const GpBandit*>(&s.study.strategy()) == nullptr) return out;
  if (!rec || rec->region) return out;
  const std::optional<std::size_t> top = s.config.resolution ? std::optional(s.config.resolution->top()) : std::nullopt;
  for (const Trial& t : s.study.trials())
    if (t.status == TrialStatus::complete && t.unit == rec->unit && (!top || t.level.value_or(*top) == *top))
      out.trial = &t;
  if (!out.trial) return out;
  constexpr double kPoorFit = 3.0;
  if (rec->sd_scale > kPoorFit) {
    out.poor_fit_scale = rec->sd_scale;
    out.trial = nullptr;
    return out;
  }
  out.rec = std::move(rec);
  return out;
}

// `tune best` of a multi-resolution campaign: the model's recommendation (posterior mean and sd of
// the objective at the full resolution) and the best observed full-resolution trial; a trial of a
// lower level is never reported as the best (its value is not comparable). The top-level keys are
// those of a campaign without a resolution (trial, objective, config: the best full-resolution
// trial, null if none yet), plus `resolution` and `recommendation` (cmets's and cmes's model optimum;
// ei's and ucb's trial, as without a resolution; null for the other strategies).
int best_with_resolution(const std::filesystem::path& dir, const CampaignState& s, bool json) {
  const Resolution& res = *s.config.resolution;
  const Trial* b = s.study.best();
  // ei and ucb (which run every trial at the full resolution) recommend a trial, as without a
  // resolution: it lacked its id, and a poor fit was not withheld.
  const bool point_model = dynamic_cast<const GpBandit*>(&s.study.strategy()) != nullptr;
  std::optional<StudyRecommendation> model_rec = s.study.recommendation();
  const TrialRecommendation trial_rec = gp_bandit_recommendation(s, model_rec);
  const std::optional<StudyRecommendation> rec = point_model ? trial_rec.rec : std::move(model_rec);
  const std::optional<std::uint64_t> rec_trial =
      trial_rec.trial ? std::optional<std::uint64_t>(trial_rec.trial->id) : std::nullopt;
  const std::string& objective = s.config.objective.name;
  if (!b && !rec && s.count(RunStatus::complete) == 0) {
    std::fprintf(stderr, "tune best: no best configuration: %s\n", why_no_best(dir, s).c_str());
    return kExitError;
  }
  if (!b && !rec) {
    std::fprintf(stderr, "tune best: no full-resolution trial (%s = %s) of %s has completed yet, and the model has no "
                         "recommendation yet\n",
                 res.parameter.c_str(), level_value(res, res.top()).c_str(), dir.c_str());
    return kExitError;
  }
  if (json) {
    std::string out = "{\"trial\": " + (b ? std::to_string(b->id) : std::string("null"));
    out += ", \"" + json_escape(objective) + "\": " + (b ? format_double(*b->value) : std::string("null"));
    out += ", \"config\": " + (b ? config_json(s.config.space, b->config) : std::string("null"));
    if (b && b->imported()) out += ", \"imported_from\": \"" + json_escape(b->imported_from) + "\"";
    out += ", \"resolution\": {\"parameter\": \"" + json_escape(res.parameter) + "\", \"value\": " +
           level_value(res, res.top()) + ", \"level\": " + std::to_string(res.top()) + "}";
    out += ", \"recommendation\": ";
    if (rec)
      out += recommendation_json(s.config.space, {*rec, rec->config, rec_trial});
    else
      out += "null";
    std::printf("%s}\n", out.c_str());
    return kExitComplete;
  }
  // A comment line for people, then YAML for programs.
  std::string summary = "# at full resolution (" + res.parameter + " = " + level_value(res, res.top()) + "): ";
  if (rec && rec->region)
    summary += region_summary(*rec, objective, s.study.strategy()) + "; ";
  else if (trial_rec.poor_fit_scale > 0)
    summary += "the model fits these results poorly (its errors at the trials, each left out, are " +
               format_short(trial_rec.poor_fit_scale) + " times its sds): no estimate beyond the best result; ";
  else if (rec)
    summary += "the model recommends " + (rec_trial ? "trial " + std::to_string(*rec_trial) + "'s configuration " : "") +
               tune::to_string(rec->config) + ", " + objective + " " + format_short(rec->mean) +
               " \u00b1 " + format_short(rec->sd) +
               (rec->sd_scale > 1 ? " (its sd times " + format_short(rec->sd_scale) +
                                        ": the model's errors at the full runs, each left out, exceed its sds)"
                                  : std::string()) +
               "; ";
  else
    summary += "no model recommendation (strategies cmets and cmes give one); ";
  if (b)
    summary += "best observed full-resolution trial " + std::to_string(b->id) + ", " + objective + " " +
               format_double(*b->value);
  else
    summary += "no full-resolution trial has completed yet";
  YAML::Node n;
  n["trial"] = b ? YAML::Node(b->id) : YAML::Node(YAML::NodeType::Null);
  n[objective] = b ? yaml_double(*b->value) : YAML::Node(YAML::NodeType::Null);
  if (b) {
    n["config"] = config_for_readers(s.config.space, b->config);
    if (b->imported()) n["imported_from"] = b->imported_from;
  } else {
    n["config"] = YAML::Node(YAML::NodeType::Null);
  }
  YAML::Node r;
  r.SetStyle(YAML::EmitterStyle::Flow);
  r["parameter"] = res.parameter;
  r["value"] = level_value(res, res.top());
  r["level"] = res.top();
  n["resolution"] = r;
  if (rec) {
    n["recommendation"] = recommendation_yaml(s.config.space, {*rec, rec->config, rec_trial});
  } else {
    n["recommendation"] = YAML::Node(YAML::NodeType::Null);
  }
  std::printf("%s\n%s\n", summary.c_str(), emit_for_readers(n).c_str());
  return kExitComplete;
}

}  // namespace

int best(const std::filesystem::path& dir, bool json) {
  if (!holds_campaign(dir, "best")) return kExitUsage;
  const CampaignState s = load_state(dir);
  if (s.config.resolution) return best_with_resolution(dir, s, json);
  const Trial* b = s.study.best();
  if (!b) {
    std::fprintf(stderr, "tune best: no best configuration: %s\n", why_no_best(dir, s).c_str());
    return kExitError;
  }
  // gpoo recommends a region: `recommendation` adds it, with the point the model prefers in it. ei
  // and ucb recommend the trial whose configuration their model believes best: on a noisy objective
  // the best single result is an optimistic draw, and the model's mean there is the honest estimate.
  std::optional<StudyRecommendation> rec = s.study.recommendation();
  // bnb takes its best result at face value: say so when its re-run of a configuration disagreed.
  const std::optional<std::string> warning = s.study.warning();
  const TrialRecommendation trial_rec = gp_bandit_recommendation(s, rec);
  if (rec && !rec->region) rec = trial_rec.rec;
  const Trial* recommended = trial_rec.trial;  // the trial a point recommendation is (its config as it ran)
  const bool poor_fit = trial_rec.poor_fit_scale > 0;
  const double poor_fit_scale = trial_rec.poor_fit_scale;
  const std::string& objective = s.config.objective.name;
  // gpoo's region carries no trial and no sd scale; ei's and ucb's point is a trial's, as it ran.
  const auto fields = [&]() -> RecommendationFields {
    if (rec->region) return {*rec, rec->config, std::nullopt, false};
    return {*rec, recommended->config, recommended->id};
  };
  if (json) {
    const std::string recommendation = rec ? ", \"recommendation\": " + recommendation_json(s.config.space, fields()) : "";
    const std::string warning_field = warning ? ", \"warning\": \"" + json_escape(*warning) + "\"" : "";
    const std::string imported_field =
        b->imported() ? ", \"imported_from\": \"" + json_escape(b->imported_from) + "\"" : std::string();
    std::printf("{\"trial\": %llu, \"%s\": %s, \"config\": %s%s%s%s}\n", static_cast<unsigned long long>(b->id),
                json_escape(s.config.objective.name).c_str(), format_double(*b->value).c_str(),
                config_json(s.config.space, b->config).c_str(), imported_field.c_str(), recommendation.c_str(),
                warning_field.c_str());
  } else {
    YAML::Node n;
    n["trial"] = b->id;
    n[s.config.objective.name] = yaml_double(*b->value);
    n["config"] = config_for_readers(s.config.space, b->config);
    if (b->imported()) n["imported_from"] = b->imported_from;  // a warm start's result, run elsewhere
    if (rec) n["recommendation"] = recommendation_yaml(s.config.space, fields());
    const std::string text = emit_for_readers(n);
    if (warning) std::printf("# warning: %s\n", warning->c_str());
    if (rec && rec->region) {
      std::printf("# %s\n", region_summary(*rec, objective, s.study.strategy()).c_str());
    } else if (poor_fit) {
      std::printf("# the model fits these results poorly (its errors at the trials, each left out, are %s times its "
                  "sds): no estimate beyond the best result\n",
                  format_short(poor_fit_scale).c_str());
    } else if (rec) {
      const std::string estimate =
          objective + " " + format_short(rec->mean) + " \u00b1 " + format_short(rec->sd) +
          (rec->sd_scale > 1 ? " (its sd times " + format_short(rec->sd_scale) +
                                   ": the model's errors at the trials, each left out, exceed its sds)"
                             : std::string());
      // The same configuration run twice (an enqueued repeat) is the best trial's, whichever id.
      if (recommended == b || recommended->config == b->config)
        std::printf("# the model's estimate of trial %llu's configuration: %s (its result: %s)\n",
                    static_cast<unsigned long long>(b->id), estimate.c_str(), format_double(*b->value).c_str());
      else
        std::printf("# the model believes trial %llu's configuration best: %s; trial %llu's %s is the best single "
                    "result%s\n",
                    static_cast<unsigned long long>(recommended->id), estimate.c_str(),
                    static_cast<unsigned long long>(b->id), format_double(*b->value).c_str(),
                    s.config.objective.deterministic ? ""
                                                     : ", and on a noisy objective the best of many results is optimistic");
    }
    std::printf("%s\n", text.c_str());
  }
  return kExitComplete;
}

}  // namespace tune::tuner
