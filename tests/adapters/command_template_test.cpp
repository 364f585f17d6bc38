// Tests for the command template: placeholder rendering, brace escapes, validation errors and the
// trial's environment variables.
#include "tune/adapters/command/command_template.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tune::adapters {
namespace {

using Command = std::vector<std::string>;

Space test_space() {
  return Space({
      Parameter::floating("lr", 1e-5, 1.0, Scale::log),
      Parameter::integer("layers", 1, 8),
      Parameter::categorical("act", {"relu", "tanh"}),
      Parameter::ordinal("batch", {"16", "32", "64"}),
  });
}

Config test_config() {
  return Config{{"lr", 0.001}, {"layers", std::int64_t{3}}, {"act", std::string("tanh")},
                {"batch", std::string("32")}};
}

TrialContext test_trial() { return TrialContext{"17", "/camp/trials/17", "/camp/trials/17/result.json"}; }

// The message of the std::invalid_argument thrown by `f` (fails the test if none is thrown).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument";
  return {};
}

TEST(CommandTemplate, RendersEveryValueTypeAndTextAroundPlaceholders) {
  const Command command{"python3", "train.py", "--lr={lr}", "--layers", "{layers}", "--act",
                        "{act}",   "b{batch}x", "{lr}/{layers}:{act}"};
  EXPECT_NO_THROW(check_command_template(command, test_space()));
  const Command expected{"python3", "train.py", "--lr=0.001", "--layers", "3", "--act",
                         "tanh",    "b32x",     "0.001/3:tanh"};
  EXPECT_EQ(render_command(command, test_config(), test_trial()), expected);
}

TEST(CommandTemplate, FormatsDoublesShortestRoundTrip) {
  const Command command{"{x}"};
  EXPECT_EQ(render_command(command, Config{{"x", 0.1}}, test_trial()), Command{"0.1"});
  EXPECT_EQ(render_command(command, Config{{"x", 1e-5}}, test_trial()),
            Command{tune::to_string(Value{1e-5})});
  EXPECT_EQ(render_command(command, Config{{"x", 0.30000000000000004}}, test_trial()),
            Command{tune::to_string(Value{0.30000000000000004})});
  EXPECT_EQ(std::stod(render_command(command, Config{{"x", 0.30000000000000004}}, test_trial())[0]),
            0.30000000000000004);
  EXPECT_EQ(render_command(command, Config{{"x", std::int64_t{-42}}}, test_trial()),
            Command{"-42"});
}

TEST(CommandTemplate, RendersTrialPlaceholders) {
  const Command command{"run", "--out={trial_dir}/out", "{result_file}", "id-{trial_id}"};
  EXPECT_NO_THROW(check_command_template(command, test_space()));
  const Command expected{"run", "--out=/camp/trials/17/out", "/camp/trials/17/result.json", "id-17"};
  EXPECT_EQ(render_command(command, test_config(), test_trial()), expected);
}

TEST(CommandTemplate, SubstitutionKeepsOneArgumentPerElement) {
  const Command command{"echo", "{act}"};
  const Config config{{"act", std::string("a b; rm -rf $HOME")}};
  EXPECT_EQ(render_command(command, config, test_trial()),
            (Command{"echo", "a b; rm -rf $HOME"}));
}

TEST(CommandTemplate, DoubledBracesAreLiteral) {
  const Command command{"{{}}", "{{lr}}", "{{{lr}}}", "json={{\"lr\": {lr}}}", "}}{{", "plain"};
  EXPECT_NO_THROW(check_command_template(command, test_space()));
  const Command expected{"{}", "{lr}", "{0.001}", "json={\"lr\": 0.001}", "}{", "plain"};
  EXPECT_EQ(render_command(command, test_config(), test_trial()), expected);
}

TEST(CommandTemplate, UnreferencedParametersAreFine) {
  const Command command{"python3", "train.py", "--lr", "{lr}"};
  EXPECT_NO_THROW(check_command_template(command, test_space()));
  EXPECT_EQ(render_command(command, test_config(), test_trial()),
            (Command{"python3", "train.py", "--lr", "0.001"}));
}

TEST(CommandTemplate, UnknownPlaceholderNamesElementAndKnownNames) {
  const Command command{"python3", "--lr={lrr}"};
  const std::string m = error_of([&] { check_command_template(command, test_space()); });
  EXPECT_NE(m.find("command[1]"), std::string::npos) << m;
  EXPECT_NE(m.find("'--lr={lrr}'"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown placeholder '{lrr}'"), std::string::npos) << m;
  for (const char* name : {"lr", "layers", "act", "batch", "trial_id", "trial_dir", "result_file"}) {
    EXPECT_NE(m.find(name), std::string::npos) << name << " missing from: " << m;
  }
  const std::string r = error_of([&] { render_command(command, test_config(), test_trial()); });
  EXPECT_NE(r.find("command[1] '--lr={lrr}'"), std::string::npos) << r;
  EXPECT_NE(r.find("unknown placeholder '{lrr}'"), std::string::npos) << r;
  EXPECT_NE(r.find("layers"), std::string::npos) << r;
  EXPECT_NE(r.find("trial_dir"), std::string::npos) << r;
}

TEST(CommandTemplate, RenderRejectsParameterMissingFromConfig) {
  const Command command{"{lr}", "{momentum}"};
  const std::string m = error_of([&] { render_command(command, test_config(), test_trial()); });
  EXPECT_NE(m.find("command[1] '{momentum}'"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown placeholder '{momentum}'"), std::string::npos) << m;
}

TEST(CommandTemplate, EmptyPlaceholderIsAnError) {
  const std::string m = error_of([&] { check_command_template({"a", "x{}y"}, test_space()); });
  EXPECT_NE(m.find("command[1] 'x{}y'"), std::string::npos) << m;
  EXPECT_NE(m.find("empty placeholder"), std::string::npos) << m;
  EXPECT_NE(m.find("known placeholders: lr, layers, act, batch, trial_id, trial_dir, result_file"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("{{"), std::string::npos) << m;  // the escape is explained
}

TEST(CommandTemplate, UnclosedBraceIsAnError) {
  for (const std::string element : {"--lr={lr", "{", "{lr{layers}", "a{{b{"}) {
    const std::string m = error_of([&] { check_command_template({element}, test_space()); });
    EXPECT_NE(m.find("command[0] '" + element + "'"), std::string::npos) << m;
    EXPECT_NE(m.find("unclosed '{'"), std::string::npos) << m;
    EXPECT_NE(m.find("trial_id"), std::string::npos) << m;
    EXPECT_THROW(render_command({element}, test_config(), test_trial()), std::invalid_argument)
        << element;
  }
}

TEST(CommandTemplate, StrayClosingBraceIsAnError) {
  for (const std::string element : {"}", "lr}", "{lr}}", "a}}}"}) {
    const std::string m = error_of([&] { check_command_template({"x", "y", element}, test_space()); });
    EXPECT_NE(m.find("command[2] '" + element + "'"), std::string::npos) << m;
    EXPECT_NE(m.find("stray '}'"), std::string::npos) << m;
    EXPECT_NE(m.find("layers"), std::string::npos) << m;
    EXPECT_THROW(render_command({element}, test_config(), test_trial()), std::invalid_argument)
        << element;
  }
}

TEST(CommandTemplate, ParameterNamedLikeBuiltinIsRejected) {
  const Space space({Parameter::floating("trial_dir", 0.0, 1.0)});
  const std::string m = error_of([&] { check_command_template({"run"}, space); });
  EXPECT_NE(m.find("'trial_dir'"), std::string::npos) << m;
  EXPECT_NE(m.find("built-in"), std::string::npos) << m;
}

TEST(CommandTemplate, CheckRejectsEnvironmentNameCollision) {
  const Space space({Parameter::floating("a-b", 0.0, 1.0), Parameter::floating("a_b", 0.0, 1.0)});
  const std::string m = error_of([&] { check_command_template({"run"}, space); });
  EXPECT_NE(m.find("'a-b'"), std::string::npos) << m;
  EXPECT_NE(m.find("'a_b'"), std::string::npos) << m;
  EXPECT_NE(m.find("TUNE_PARAM_A_B"), std::string::npos) << m;
}

TEST(CommandTemplate, EnvironmentHasTrialAndParameterVariables) {
  const auto env = trial_environment(test_config(), test_trial());
  const std::map<std::string, std::string> expected{
      {"TUNE_TRIAL_ID", "17"},
      {"TUNE_TRIAL_DIR", "/camp/trials/17"},
      {"TUNE_RESULT_FILE", "/camp/trials/17/result.json"},
      {"TUNE_PARAM_LR", "0.001"},
      {"TUNE_PARAM_LAYERS", "3"},
      {"TUNE_PARAM_ACT", "tanh"},
      {"TUNE_PARAM_BATCH", "32"},
  };
  EXPECT_EQ(env, expected);
}

TEST(CommandTemplate, EnvironmentNamesAreUpperCasedAndMangled) {
  const Config config{{"model.lr", 0.5},
                      {"n-layers", std::int64_t{2}},
                      {"Drop_Out2", 0.25},
                      {"\xc3\xa9t\xc3\xa9", std::string("x")}};  // "été" in UTF-8
  const auto env = trial_environment(config, test_trial());
  EXPECT_EQ(env.at("TUNE_PARAM_MODEL_LR"), "0.5");
  EXPECT_EQ(env.at("TUNE_PARAM_N_LAYERS"), "2");
  EXPECT_EQ(env.at("TUNE_PARAM_DROP_OUT2"), "0.25");
  EXPECT_EQ(env.at("TUNE_PARAM___T__"), "x");
  EXPECT_EQ(env.size(), 3u + 4u);
}

TEST(CommandTemplate, EnvironmentRejectsCollidingNames) {
  const Config config{{"a-b", 0.5}, {"a_b", 0.25}};
  const std::string m = error_of([&] { trial_environment(config, test_trial()); });
  EXPECT_NE(m.find("'a-b'"), std::string::npos) << m;
  EXPECT_NE(m.find("'a_b'"), std::string::npos) << m;
  EXPECT_NE(m.find("TUNE_PARAM_A_B"), std::string::npos) << m;
  const Config case_only{{"lr", 0.5}, {"LR", 0.25}};
  EXPECT_THROW(trial_environment(case_only, test_trial()), std::invalid_argument);
}

TEST(CommandTemplate, ResolutionParameterIsAPlaceholderWithIntegerLevelsAsIntegers) {
  const Command command{"train", "--epochs", "{epochs}", "--lr={lr}", "e{epochs}"};
  EXPECT_NO_THROW(check_command_template(command, test_space(), "epochs"));
  // Without the resolution, {epochs} is unknown.
  EXPECT_NE(error_of([&] { check_command_template(command, test_space()); }).find("'{epochs}'"), std::string::npos);
  const TrialResolution three{"epochs", 3.0, 1};
  EXPECT_EQ(render_command(command, test_config(), test_trial(), three),
            (Command{"train", "--epochs", "3", "--lr=0.001", "e3"}));
  // Large integer levels print in plain digits (never 1e+05), fractional ones shortest round-trip.
  EXPECT_EQ(render_command({"{epochs}"}, test_config(), test_trial(), TrialResolution{"epochs", 100000.0, 2}),
            Command{"100000"});
  EXPECT_EQ(render_command({"{epochs}"}, test_config(), test_trial(), TrialResolution{"epochs", 0.25, 0}),
            Command{"0.25"});
  EXPECT_THROW(render_command(command, test_config(), test_trial()), std::invalid_argument);
  EXPECT_EQ(resolution_value_text(27.0), "27");
  EXPECT_EQ(resolution_value_text(1e15), "1000000000000000");
  EXPECT_EQ(resolution_value_text(0.1), "0.1");
}

TEST(CommandTemplate, ResolutionParameterMustNotBeASpaceParameterOrABuiltin) {
  const std::string both = error_of([&] { check_command_template({"run"}, test_space(), "layers"); });
  EXPECT_NE(both.find("'layers'"), std::string::npos) << both;
  EXPECT_NE(both.find("remove it from the space"), std::string::npos) << both;
  const std::string builtin = error_of([&] { check_command_template({"run"}, test_space(), "trial_id"); });
  EXPECT_NE(builtin.find("built-in"), std::string::npos) << builtin;
  const std::string env = error_of([&] { check_command_template({"run"}, test_space(), "LR"); });
  EXPECT_NE(env.find("TUNE_PARAM_LR"), std::string::npos) << env;
}

TEST(CommandTemplate, EnvironmentCarriesTheResolutionValueAndLevel) {
  const auto env = trial_environment(test_config(), test_trial(), TrialResolution{"epochs", 9.0, 2});
  EXPECT_EQ(env.at("TUNE_RESOLUTION"), "9");
  EXPECT_EQ(env.at("TUNE_RESOLUTION_LEVEL"), "2");
  EXPECT_EQ(env.at("TUNE_PARAM_EPOCHS"), "9");
  EXPECT_EQ(env.size(), 3u + 4u + 3u);
  const auto fraction = trial_environment(test_config(), test_trial(), TrialResolution{"subset", 0.125, 0});
  EXPECT_EQ(fraction.at("TUNE_RESOLUTION"), "0.125");
  EXPECT_EQ(fraction.at("TUNE_RESOLUTION_LEVEL"), "0");
  EXPECT_EQ(trial_environment(test_config(), test_trial()).count("TUNE_RESOLUTION"), 0u);
}

}  // namespace
}  // namespace tune::adapters

namespace tune::adapters {
namespace {

Space conditional_space() {
  return Space({
      Parameter::categorical("opt", {"sgd", "adam"}),
      Parameter::floating("momentum", 0.0, 0.99).when("opt", {"sgd"}),
      Parameter::floating("lr", 1e-5, 1.0, Scale::log),
  });
}

TEST(CommandTemplateConditions, AnArgumentOfAParameterThatDoesNotApplyIsLeftOut) {
  const Command command{"train", "--opt={opt}", "--momentum={momentum}", "--lr", "{lr}", "m{momentum}/{lr}"};
  EXPECT_NO_THROW(check_command_template(command, conditional_space()));
  const Config sgd{{"opt", std::string("sgd")}, {"momentum", 0.9}, {"lr", 0.01}};
  EXPECT_EQ(render_command(command, sgd, test_trial()),
            (Command{"train", "--opt=sgd", "--momentum=0.9", "--lr", "0.01", "m0.9/0.01"}));
  const Config adam{{"opt", std::string("adam")}, {"lr", 0.01}};
  EXPECT_EQ(render_command(command, adam, test_trial(), std::nullopt, {"momentum"}),
            (Command{"train", "--opt=adam", "--lr", "0.01"}));
  // Only the parameters named as not applying may be missing: another is the error it always was.
  const std::string m = error_of([&] { render_command(command, adam, test_trial()); });
  EXPECT_NE(m.find("unknown placeholder '{momentum}'"), std::string::npos) << m;
  const auto env = trial_environment(adam, test_trial());
  EXPECT_FALSE(env.contains("TUNE_PARAM_MOMENTUM"));
  EXPECT_EQ(env.at("TUNE_PARAM_OPT"), "adam");
}

TEST(CommandTemplateConditions, AConditionalPlaceholderAloneIsRefusedWithTheFix) {
  const std::string after_flag =
      error_of([] { check_command_template({"train", "--momentum", "{momentum}"}, conditional_space()); });
  for (const char* part : {"command[2] '{momentum}'", "applies only when opt is sgd", "leave '--momentum' behind",
                           "'--momentum={momentum}'"})
    EXPECT_NE(after_flag.find(part), std::string::npos) << after_flag << "\nmissing: " << part;
  const std::string positional = error_of([] { check_command_template({"train", "{momentum}"}, conditional_space()); });
  EXPECT_NE(positional.find("shift the arguments after it"), std::string::npos) << positional;
  // Text around the placeholder does not help after a bare flag, nor another placeholder beside it.
  const std::string around = error_of([] { check_command_template({"train", "--m", "x{momentum}"}, conditional_space()); });
  EXPECT_NE(around.find("leave '--m' behind"), std::string::npos) << around;
  const std::string two = error_of([] { check_command_template({"train", "{momentum}{opt}"}, conditional_space()); });
  EXPECT_NE(two.find("shift the arguments after it"), std::string::npos) << two;
  // key=value arguments (Hydra's overrides) go whole, after a flag or not.
  EXPECT_NO_THROW(check_command_template({"train", "--verbose", "optim.momentum={momentum}"}, conditional_space()));
  EXPECT_NO_THROW(check_command_template({"train", "-m{momentum}"}, conditional_space()));
  // An unconditional parameter alone is as welcome as ever.
  EXPECT_NO_THROW(check_command_template({"train", "--lr", "{lr}", "{opt}"}, conditional_space()));
}

}  // namespace
}  // namespace tune::adapters
