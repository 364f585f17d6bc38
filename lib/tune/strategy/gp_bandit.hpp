#pragma once
// GP-UCB and GP-EI with the information-threshold compression of Bedi et al. (strategies `ucb` and
// `ei`; epsilon = 0 is the exact, uncompressed GP).
//
// One ask: (1) while the initial design lasts, the next point of a shifted Sobol sequence;
// (2) otherwise refresh the model if the refit schedule says so (choose the output transform,
// standardise the transformed values, refit the hyperparameters, rebuild the factor); (3) add
// fantasies at pending and failed trials (value = posterior mean, which leaves the mean unchanged
// and shrinks the variance there, so parallel workers get different points and a crashing
// configuration is not proposed again); (4) rank the acquisition over the cube; (5) apply the
// information test to the best point and the rejection policy; (6) drop the fantasies.
#include <optional>

#include "tune/bandit/acquisition.hpp"
#include "tune/bandit/acquisition_optimizer.hpp"
#include "tune/bandit/compression.hpp"
#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/gp/output_transform.hpp"
#include "tune/space/model_inputs.hpp"
#include "tune/strategy/strategy.hpp"

namespace tune {

struct RefitSchedule {
  // Refresh (restandardise, refit, rebuild) once the dictionary has grown by
  // max(every, growth * size) observations since the last refresh. every = 0 with growth = 0 means
  // fit once, at the end of the initial design, and never again.
  std::size_t every = 5;
  double growth = 0.1;
};

// The bounds and priors of a GP strategy's hyperparameter fit and its refit growth, checked by each
// GP strategy's constructor (ei/ucb, cmets/cmes, gpoo, bnb): std::invalid_argument naming the option.
void check_fit_options(const HyperparameterFitOptions& fit, const RefitSchedule& refit);

struct GpBanditOptions {
  AcquisitionType acquisition = AcquisitionType::ei;
  // Compression budget in nats (0 = exact GP). With horizon > 0 and schedule_alpha > 0 the paper's
  // schedule eps = 1/2 log(1 + horizon^-alpha) is used instead.
  double epsilon = 0.0;
  double horizon = 0.0;
  double schedule_alpha = 0.0;
  RejectPolicy on_reject = RejectPolicy::next_informative;
  std::size_t max_skipped_steps = 1000;  // literal policy: consecutive rejections before giving up
  // false for a deterministic objective: a configuration that ran, runs or failed is never proposed
  // again (in a space with discrete parameters the snapped optimum of the acquisition is often the
  // incumbent's configuration, and a noise-free run there only repeats a known value). When every
  // candidate repeats one, the untried configuration of a finite space with the best acquisition
  // runs; once every configuration has run, the study stops.
  bool repeat_configurations = true;

  double beta_scale = 0.2;  // UCB: beta_t times this (the paper's beta_t explores far too much in practice)
  double delta = 0.1;       // UCB: confidence parameter of beta_t

  std::size_t initial_design = 0;  // 0: min(2d + 1, 20)
  KernelType kernel = KernelType::matern52;
  // How the GP sees a categorical parameter of three or more choices (space/model_inputs.hpp): one
  // input per choice, or the one coordinate whose cells are the choices in the order given. Given
  // `hyperparameters` (one lengthscale per parameter) keep the coordinate. A study saved before this
  // option existed is restored with `ordered`, the encoding it was made with.
  CategoricalEncoding categorical_encoding = CategoricalEncoding::one_hot;
  bool fit_hyperparameters = true;
  // Used as given when fit_hyperparameters is false, else as the first warm start.
  std::optional<GpHyperparameters> hyperparameters{};
  bool standardize = true;
  // Warping of the rewards before the GP sees them (gp/output_transform.hpp), re-chosen at every
  // refresh by marginal likelihood. `automatic` keeps the plain GP when the data do not ask for more;
  // it matters for objectives with a heavy tail of bad values (Rosenbrock, accuracies with failing
  // corners). Only with fit_hyperparameters: fixed hyperparameters are for the values as told.
  OutputTransformKind output_transform = OutputTransformKind::automatic;
  RefitSchedule refit{};
  // The noise floor is lower than the library default (1e-6 of the standardised variance): with
  // 1e-6 the GP cannot resolve a noise-free objective below about 1e-3 of its spread, and EI stalls
  // there (Hartmann-3, ei at 50 evaluations: 1.4e-5 with 1e-6, 8.7e-7 with 1e-9). An objective
  // with noise (or coarse steps, as a cross-validated accuracy) fits a noise far above either floor
  // and is unaffected (the libsvm example: the same trainings with both).
  HyperparameterFitOptions fit{.noise_min = 1e-9};
  AcquisitionOptimizerOptions optimizer{};

  double effective_epsilon() const;
  std::size_t initial_design_size(std::size_t dim) const;
};

// A literal-policy step that was counted but not evaluated.
struct SkippedStep {
  std::uint64_t ask_index = 0;
  Eigen::VectorXd unit;
  double test_statistic = 0.0;
};

class GpBandit final : public Strategy {
 public:
  explicit GpBandit(GpBanditOptions options);

  std::string name() const override { return to_string(options_.acquisition); }
  // Given hyperparameters need one lengthscale per parameter of the space.
  void check_space(const Space& space) const override;
  const GpBanditOptions& options() const { return options_; }

  ProposalResult propose(const StrategyContext& context) override;
  void on_complete(const StrategyContext& context, const Trial& trial) override;
  // The completed trial whose configuration the model believes best (the highest posterior mean of
  // f, not the luckiest noisy result), with the model's mean and sd of f there. With a warping of
  // the rewards, the mean is the median of that belief in the objective's units and the sd half the
  // width of its one-sd band; the sd is scaled by the model's leave-one-out errors at the trials
  // when they exceed its sds (sd_scale). Nothing before the model exists (the initial design).
  std::optional<Recommendation> recommend(const StrategyContext& context) const override;
  YAML::Node save() const override;
  void restore(const YAML::Node& node, const StrategyContext& context) override;

  // Observability: the model, the dictionary (trial ids in insertion order), refreshes, skipped
  // steps. The model's inputs are model_inputs()(unit) of the unit points (null before the strategy
  // has seen its space).
  const ModelInputs* model_inputs() const { return inputs_ ? &*inputs_ : nullptr; }
  const GaussianProcess* model() const {
    build_deferred_model();
    return model_ ? &*model_ : nullptr;
  }
  const std::vector<std::uint64_t>& dictionary() const { return dictionary_; }
  std::size_t refresh_count() const { return refresh_count_; }
  const std::vector<SkippedStep>& skipped_steps() const { return skipped_; }
  const OutputTransform& output_transform() const { return transform_; }

 private:
  void refresh_if_due(const StrategyContext& context);
  // The trial's reward, and that reward through the current output transform (what the GP holds).
  Observation raw_observation_of(const Trial& trial, Direction direction) const;
  Observation observation_of(const Trial& trial, Direction direction) const;
  ProposalResult propose_from_model(const StrategyContext& context);
  Eigen::MatrixXd candidate_set(const Space& space, std::uint64_t seed, std::size_t refresh) const;
  // The model's inputs of the space's unit points (the identity without one-hot categoricals).
  const ModelInputs& inputs(const Space& space) const;

  // After a load the model's observations are added at its first use (an ask, model()), not in
  // restore(): `tune tell` and `tune status` load a study only to record a result or to print, and
  // adding n observations is O(n^3) (0.4 s of the 1.5 s `tune tell` took at 2000 trials). The
  // observations told meanwhile join the list, so the model has the same observations in the same
  // order, and GaussianProcess::add makes it bit for bit the one built at once or one at a time.
  struct DeferredModel {
    std::vector<Observation> observations;
    Eigen::MatrixXd candidates;  // the tracked candidate points
  };
  void build_deferred_model() const;

  GpBanditOptions options_;
  mutable std::optional<ModelInputs> inputs_;
  mutable std::optional<GaussianProcess> model_;
  mutable std::optional<DeferredModel> deferred_;  // set only while model_ holds no observation yet
  std::vector<std::uint64_t> dictionary_;
  GpHyperparameters hyperparameters_;
  Standardization standardization_;
  OutputTransform transform_;  // fixed between refreshes, so incremental adds and a restore agree
  std::size_t refresh_count_ = 0;
  std::size_t size_at_refresh_ = 0;
  std::uint64_t design_index_ = 0;
  std::vector<SkippedStep> skipped_;
};

// The options as YAML and back (for saved studies and, later, campaign files).
YAML::Node to_yaml(const GpBanditOptions& options);
GpBanditOptions gp_bandit_options_from_yaml(const YAML::Node& node);

}  // namespace tune
