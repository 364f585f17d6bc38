// The model's inputs of a space (space/model_inputs.hpp): one-hot categoricals at distance 1 from
// each other, the way back to the unit cube, the gradient along the cube, and ei/ucb's use of them
// (an option, saved with the study; a study saved before the option existed keeps the coordinate).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "tune/tune.hpp"
#include "tune/space/model_inputs.hpp"

namespace {

using tune::CategoricalEncoding;
using tune::ModelInputs;
using tune::Parameter;

// The text without its `categorical_encoding:` lines: a file as written before the option existed.
// (std::regex here made GCC 12's -O1 sanitizer build fail on a maybe-uninitialized warning in <regex>.)
std::string without_encoding_lines(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line))
    if (line.find("categorical_encoding:") == std::string::npos) out += line + "\n";
  return out;
}

tune::Space mixed() {
  return tune::Space({Parameter::floating("x", 0, 1), Parameter::categorical("act", {"relu", "tanh", "gelu", "silu"}),
                      Parameter::categorical("bias", {"yes", "no"}), Parameter::ordinal("size", {"s", "m", "l"}),
                      Parameter::floating("lr", 1e-4, 1, tune::Scale::log)});
}

Eigen::VectorXd point(double x, std::size_t act, double lr_unit) {
  Eigen::VectorXd u(5);
  u << x, (static_cast<double>(act) + 0.5) / 4.0, 0.25, 0.5, lr_unit;
  return u;
}

TEST(ModelInputs, EveryTwoChoicesOfACategoricalAreAtDistanceOne) {
  const ModelInputs in(mixed(), CategoricalEncoding::one_hot);
  EXPECT_EQ(in.unit_dim(), 5u);
  EXPECT_EQ(in.dim(), 8u);  // x, four for act, bias (two choices), size (ordinal), lr
  for (std::size_t a = 0; a < 4; ++a)
    for (std::size_t b = 0; b < 4; ++b) {
      const double d2 = (in(point(0.3, a, 0.7)) - in(point(0.3, b, 0.7))).squaredNorm();
      EXPECT_DOUBLE_EQ(d2, a == b ? 0.0 : 1.0) << a << " " << b;
    }
  // The coordinate makes the first and last choices the least alike: (3/4)^2 against (1/4)^2.
  const ModelInputs ordered(mixed(), CategoricalEncoding::ordered);
  EXPECT_TRUE(ordered.identity());
  EXPECT_DOUBLE_EQ((ordered(point(0.3, 0, 0.7)) - ordered(point(0.3, 3, 0.7))).squaredNorm(), 0.5625);
  EXPECT_DOUBLE_EQ((ordered(point(0.3, 0, 0.7)) - ordered(point(0.3, 1, 0.7))).squaredNorm(), 0.0625);
}

TEST(ModelInputs, OtherParametersPassThroughUnchanged) {
  const ModelInputs in(mixed(), CategoricalEncoding::one_hot);
  const Eigen::VectorXd u = point(0.3, 2, 0.7);
  const Eigen::VectorXd v = in(u);
  EXPECT_EQ(v(0), u(0));
  EXPECT_EQ(v(5), u(2));  // a categorical of two choices keeps its coordinate
  EXPECT_EQ(v(6), u(3));
  EXPECT_EQ(v(7), u(4));
  EXPECT_EQ(v.segment(1, 4), (Eigen::Vector4d() << 0, 0, std::sqrt(0.5), 0).finished());
  // Without a categorical of three or more choices the inputs are the unit point.
  const tune::Space plain({Parameter::floating("x", 0, 1), Parameter::categorical("c", {"a", "b"}),
                           Parameter::ordinal("o", {"p", "q", "r", "s"})});
  EXPECT_TRUE(ModelInputs(plain, CategoricalEncoding::one_hot).identity());
  EXPECT_EQ(ModelInputs(plain, CategoricalEncoding::one_hot).dim(), 3u);
}

TEST(ModelInputs, TheWayBackIsTheSnappedPoint) {
  const tune::Space space = mixed();
  const ModelInputs in(space, CategoricalEncoding::one_hot);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Eigen::MatrixXd units(5, 200);
  for (Eigen::Index j = 0; j < units.cols(); ++j) {
    for (Eigen::Index i = 0; i < 5; ++i) units(i, j) = uniform(rng);
    if (j < 4) units(1, j) = static_cast<double>(j) / 4.0;  // cell edges belong to the cell above
    if (j == 4) units(1, j) = 1.0;
    const Eigen::VectorXd snapped = space.snap(units.col(j));
    const Eigen::VectorXd back = in.unit_of(in(units.col(j)));
    EXPECT_EQ(back(1), snapped(1)) << "column " << j;  // the choice, at its cell's centre
    EXPECT_EQ(back(0), units(0, j));
    EXPECT_EQ(back(4), units(4, j));
    EXPECT_EQ(space.decode(back).at("act"), space.decode(units.col(j)).at("act"));
  }
  const Eigen::MatrixXd inputs = in.columns(units);
  ASSERT_EQ(inputs.rows(), 8);
  for (Eigen::Index j = 0; j < units.cols(); ++j) {
    EXPECT_EQ(inputs.col(j), in(units.col(j)));
    EXPECT_EQ(in.units_of(inputs).col(j), in.unit_of(inputs.col(j)));
  }
}

TEST(ModelInputs, TheGradientAlongTheCubeIsTheModelsAlongTheInputs) {
  const tune::Space space = mixed();
  const ModelInputs in(space, CategoricalEncoding::one_hot);
  tune::GpHyperparameters hp;
  hp.lengthscales = Eigen::VectorXd::Constant(8, 0.4);
  hp.outputscale = 1.0;
  hp.noise_variances = {1e-4};
  tune::GaussianProcess gp(in.dim(), hp);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<tune::Observation> data;
  for (int i = 0; i < 12; ++i) {
    Eigen::VectorXd u(5);
    for (Eigen::Index k = 0; k < 5; ++k) u(k) = uniform(rng);
    u = space.snap(u);
    data.push_back(tune::Observation{tune::PointQuery{in(u)}, std::sin(6 * u(0)) + u(1) - u(4), 0});
  }
  gp.add(std::move(data));
  const Eigen::VectorXd u = point(0.37, 1, 0.61);
  const Eigen::VectorXd g = in.unit_gradient(u, gp.predict_with_gradient(in(u)).mean_gradient);
  ASSERT_EQ(g.size(), 5);
  const double h = 1e-6;
  for (Eigen::Index k = 0; k < 5; ++k) {
    Eigen::VectorXd up = u, down = u;
    up(k) += h;
    down(k) -= h;
    const double numeric = (gp.predict(in(up)).mean - gp.predict(in(down)).mean) / (2 * h);
    EXPECT_NEAR(g(k), numeric, 1e-6 + 1e-5 * std::abs(numeric)) << "coordinate " << k;
  }
  EXPECT_EQ(g(1), 0.0);  // within its cell a choice moves no input
  EXPECT_NE(g(0), 0.0);
}

TEST(ModelInputs, AnUnknownEncodingIsRefusedWithTheKnownOnes) {
  try {
    tune::categorical_encoding_from_string("onehot");
    FAIL() << "accepted 'onehot'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'one_hot'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'ordered'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tune::make_strategy("ei", YAML::Load("{categorical_encoding: onehot}")), std::exception);
}

// ei on a space with a categorical of four choices; each step told at once.
std::vector<std::string> run(tune::Study& study, int steps) {
  std::vector<std::string> log;
  for (int i = 0; i < steps; ++i) {
    const auto s = study.ask();
    if (!s) return log;
    const tune::Config& c = s->config;
    const double x = std::get<double>(c.at("x")), lr = std::log10(std::get<double>(c.at("lr")));
    const std::string act = std::get<std::string>(c.at("act"));
    const double offset = act == "gelu" ? 0.0 : act == "relu" ? 0.8 : act == "silu" ? 0.3 : 1.1;
    study.tell(s->id, std::pow(x - 0.3, 2) + 0.1 * std::pow(lr + 2, 2) + offset);
    log.push_back(tune::to_string(c));
  }
  return log;
}

CategoricalEncoding encoding_of(const tune::Study& study) {
  return dynamic_cast<const tune::GpBandit&>(study.strategy()).options().categorical_encoding;
}

TEST(GpBanditCategoricalEncoding, IsSavedAndAStudySavedWithoutItKeepsTheOrderedCoordinate) {
  for (const CategoricalEncoding encoding : {CategoricalEncoding::one_hot, CategoricalEncoding::ordered}) {
    tune::GpBanditOptions o;
    o.categorical_encoding = encoding;
    tune::Study original(mixed(), tune::make_gp_bandit(tune::AcquisitionType::ei, o), {tune::Direction::minimize, 5});
    run(original, 16);
    const std::string text = original.to_yaml_string();
    EXPECT_NE(text.find(std::string("categorical_encoding: ") + tune::to_string(encoding)), std::string::npos);
    tune::Study loaded = tune::Study::from_yaml_string(text, "saved.yaml");
    EXPECT_EQ(encoding_of(loaded), encoding);
    const auto model = dynamic_cast<const tune::GpBandit&>(loaded.strategy()).model();
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(model->dim(), encoding == CategoricalEncoding::one_hot ? 8u : 5u);

    // A file written before the option existed: the same study without the key. An ordered study
    // resumes to the suggestions it made on; a one-hot study's file so edited has a lengthscale per
    // input, and is refused rather than read with the coordinate.
    const std::string older = without_encoding_lines(text);
    ASSERT_NE(older, text);
    if (encoding == CategoricalEncoding::ordered) {
      tune::Study restored = tune::Study::from_yaml_string(older, "older.yaml");
      EXPECT_EQ(encoding_of(restored), CategoricalEncoding::ordered);
      EXPECT_EQ(run(restored, 6), run(original, 6));
    } else {
      try {
        tune::Study::from_yaml_string(older, "older.yaml");
        ADD_FAILURE() << "a one-hot study read without its encoding";
      } catch (const tune::StateError& e) {
        EXPECT_NE(std::string(e.what()).find("8 lengthscales for a 5-dimensional input"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(GpBanditCategoricalEncoding, TheEncodingChangesTheModelNotTheSuggestionsSpace) {
  // The same seed and objective: the initial design is the same, the model's suggestions are not,
  // and every suggestion is a configuration of the space.
  std::vector<std::vector<std::string>> logs;
  for (const CategoricalEncoding encoding : {CategoricalEncoding::one_hot, CategoricalEncoding::ordered}) {
    tune::GpBanditOptions o;
    o.categorical_encoding = encoding;
    tune::Study study(mixed(), tune::make_gp_bandit(tune::AcquisitionType::ei, o), {tune::Direction::minimize, 11});
    logs.push_back(run(study, 20));
    ASSERT_EQ(logs.back().size(), 20u);
    for (const tune::Trial& t : study.trials()) EXPECT_EQ(t.unit, study.space().snap(t.unit));
  }
  const std::size_t design = tune::GpBanditOptions{}.initial_design_size(5);
  for (std::size_t i = 0; i < design; ++i) EXPECT_EQ(logs[0][i], logs[1][i]) << i;
  bool differ = false;
  for (std::size_t i = design; i < 20; ++i) differ = differ || logs[0][i] != logs[1][i];
  EXPECT_TRUE(differ);
}

TEST(GpBanditCategoricalEncoding, GivenHyperparametersKeepTheCoordinate) {
  // One lengthscale per parameter: the coordinate, and the saved options say so.
  tune::GpBanditOptions o;
  tune::GpHyperparameters h;
  h.lengthscales = Eigen::VectorXd::Constant(5, 0.5);
  h.outputscale = 1.0;
  h.noise_variances = {1e-4};
  o.hyperparameters = h;
  o.fit_hyperparameters = false;
  tune::Study study(mixed(), tune::make_gp_bandit(tune::AcquisitionType::ei, o), {tune::Direction::minimize, 5});
  run(study, 14);
  EXPECT_EQ(encoding_of(study), CategoricalEncoding::ordered);
  EXPECT_NE(study.to_yaml_string().find("categorical_encoding: ordered"), std::string::npos);
  const auto& bandit = dynamic_cast<const tune::GpBandit&>(study.strategy());
  ASSERT_NE(bandit.model_inputs(), nullptr);
  EXPECT_TRUE(bandit.model_inputs()->identity());
  // Asked for both, the user is told.
  try {
    tune::make_strategy("ei", YAML::Load("{categorical_encoding: one_hot, fit_hyperparameters: false, "
                                         "hyperparameters: {lengthscales: [1, 1, 1, 1, 1], outputscale: 1, "
                                         "noise_variance: 0.01}}"));
    ADD_FAILURE() << "one_hot beside hyperparameters was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("one lengthscale per parameter"), std::string::npos) << e.what();
  }
}

TEST(GpBanditCategoricalEncoding, TheModelRefusesAUnitPointWhereItsInputsAreOneHot) {
  tune::Study study(mixed(), tune::make_strategy("ei"), {tune::Direction::minimize, 5});
  run(study, 14);
  const auto& bandit = dynamic_cast<const tune::GpBandit&>(study.strategy());
  const tune::GaussianProcess* gp = bandit.model();
  ASSERT_NE(gp, nullptr);
  ASSERT_NE(bandit.model_inputs(), nullptr);
  const Eigen::VectorXd u = study.trials().front().unit;
  EXPECT_THROW(gp->predict(u), std::invalid_argument);
  EXPECT_THROW(gp->predict_with_gradient(u), std::invalid_argument);
  EXPECT_THROW(gp->predict_mean(Eigen::MatrixXd(u)), std::invalid_argument);
  // Mapped, it predicts the told value closely (a noise-free objective).
  const tune::Prediction p = gp->predict((*bandit.model_inputs())(u));
  EXPECT_NEAR(p.mean, -*study.trials().front().value, 1e-3);
}

// cmets and cmes with a resolution (3 levels) on the space with a 4-choice categorical: with pending
// and failed trials crossing a save, the loaded study suggests what the unsaved one does, point and
// level, for both encodings; the one-hot study's model has an input per choice.
TEST(MultiResolutionCategoricalEncoding, ResumesToTheSameSuggestions) {
  const auto value = [](const tune::Config& c, std::size_t level) {
    const double x = std::get<double>(c.at("x")), lr = std::log10(std::get<double>(c.at("lr")));
    const std::string act = std::get<std::string>(c.at("act"));
    const double offset = act == "gelu" ? 0.0 : act == "relu" ? 0.8 : act == "silu" ? 0.3 : 1.1;
    return std::pow(x - 0.3, 2) + 0.1 * std::pow(lr + 2, 2) + offset + 0.2 * static_cast<double>(2 - level);
  };
  for (const char* name : {"cmets", "cmes"})
    for (const char* encoding : {"one_hot", "ordered"}) {
      tune::StudyOptions so;
      so.direction = tune::Direction::minimize;
      so.seed = 7;
      so.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
      so.cost_budget = 400;
      const std::string options = std::string("{candidates: 256, categorical_encoding: ") + encoding + "}";
      tune::Study a(mixed(), tune::make_strategy(name, YAML::Load(options)), so);
      for (int i = 0; i < 16; ++i) {
        const auto s = a.ask();
        ASSERT_TRUE(s) << a.stop_reason();
        if (i % 7 == 3) a.fail(s->id, "simulated crash");
        else a.tell(s->id, value(s->config, s->level.value_or(2)));
      }
      std::vector<tune::Suggestion> pending{*a.ask(), *a.ask()};
      const std::string text = a.to_yaml_string();
      tune::Study b = tune::Study::from_yaml_string(text, "test");
      const auto& strategy = dynamic_cast<const tune::MultiResolutionSearch&>(b.strategy());
      EXPECT_EQ(strategy.options().categorical_encoding, tune::categorical_encoding_from_string(encoding));
      // An ordered study's file as written before the option existed loads as ordered, and resumes so.
      std::vector<tune::Study> loaded;
      loaded.push_back(std::move(b));
      if (std::string(encoding) == "ordered") {
        const std::string older = without_encoding_lines(text);
        ASSERT_NE(older, text);
        loaded.push_back(tune::Study::from_yaml_string(older, "older"));
      }
      for (const tune::Suggestion& p : pending) {
        a.tell(p.id, value(p.config, p.level.value_or(2)));
        for (tune::Study& b2 : loaded) b2.tell(p.id, value(p.config, p.level.value_or(2)));
      }
      for (int i = 0; i < 8; ++i) {
        const auto sa = a.ask();
        ASSERT_TRUE(sa) << name << " " << encoding;
        a.tell(sa->id, value(sa->config, sa->level.value_or(2)));
        for (tune::Study& b2 : loaded) {
          const auto sb = b2.ask();
          ASSERT_TRUE(sb) << name << " " << encoding;
          EXPECT_EQ(a.trial(sa->id).unit, b2.trial(sb->id).unit) << name << " " << encoding << " step " << i;
          EXPECT_EQ(sa->level, sb->level) << name << " " << encoding << " step " << i;
          b2.tell(sb->id, value(sb->config, sb->level.value_or(2)));
        }
      }
      for (const tune::Study& b2 : loaded) {
        EXPECT_EQ(a.recommendation()->unit, b2.recommendation()->unit) << name << " " << encoding;
        EXPECT_EQ(dynamic_cast<const tune::MultiResolutionSearch&>(b2.strategy()).options().categorical_encoding,
                  tune::categorical_encoding_from_string(encoding));
      }
      EXPECT_EQ(a.to_yaml_string(), loaded.front().to_yaml_string()) << name << " " << encoding;
      const auto* model = dynamic_cast<const tune::MultiResolutionSearch&>(loaded.front().strategy()).model();
      ASSERT_NE(model, nullptr);
      EXPECT_EQ(model->dim(), std::string(encoding) == "one_hot" ? 8u : 5u) << name;
    }
}

TEST(ModelInputs, TheTrendFeaturesMeanSquareIsTheMonteCarloOne) {
  // E|inputs(x) - 1/2|^2 over uniform unit points, the factor of a level's trend variance in tune
  // status: 200,000 draws against the closed form, for one-hot and for the coordinate.
  const tune::Space space = mixed();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (const CategoricalEncoding encoding : {CategoricalEncoding::one_hot, CategoricalEncoding::ordered}) {
    const ModelInputs in(space, encoding);
    double sum = 0.0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
      Eigen::VectorXd u(5);
      for (Eigen::Index k = 0; k < 5; ++k) u(k) = uniform(rng);
      sum += (in(u).array() - 0.5).square().sum();
    }
    EXPECT_NEAR(sum / n, in.trend_feature_mean_square(), 2e-3 * in.trend_feature_mean_square()) << tune::to_string(encoding);
  }
  EXPECT_DOUBLE_EQ(ModelInputs(space, CategoricalEncoding::ordered).trend_feature_mean_square(), 5.0 / 12.0);
}

TEST(MultiResolutionCategoricalEncoding, WindowCellKeepsTheCoordinateAndRefusesOneHot) {
  const auto made = tune::make_strategy("cmets", YAML::Load("{window: cell}"));
  EXPECT_EQ(dynamic_cast<const tune::MultiResolutionSearch&>(*made).options().categorical_encoding,
            CategoricalEncoding::ordered);
  try {
    tune::make_strategy("cmets", YAML::Load("{window: cell, categorical_encoding: one_hot}"));
    ADD_FAILURE() << "one_hot beside window: cell was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("window: cell"), std::string::npos) << e.what();
  }
}

TEST(MultiResolutionCategoricalEncoding, TheModelsInputsMapUnitPoints) {
  tune::StudyOptions so;
  so.direction = tune::Direction::minimize;
  so.seed = 3;
  so.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
  so.cost_budget = 200;
  tune::Study study(mixed(), tune::make_strategy("cmets", YAML::Load("{candidates: 256}")), so);
  for (int i = 0; i < 20; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s);
    const double x = std::get<double>(s->config.at("x"));
    study.tell(s->id, std::pow(x - 0.3, 2) + (std::get<std::string>(s->config.at("act")) == "gelu" ? 0.0 : 0.5));
  }
  const auto& strategy = dynamic_cast<const tune::MultiResolutionSearch&>(study.strategy());
  const tune::GaussianProcess* gp = strategy.model();
  ASSERT_NE(gp, nullptr);
  ASSERT_NE(strategy.model_inputs(), nullptr);
  const Eigen::VectorXd u = study.trials().back().unit;
  EXPECT_THROW(gp->predict(u), std::invalid_argument);
  EXPECT_NO_THROW(gp->predict((*strategy.model_inputs())(u)));
}

}  // namespace
