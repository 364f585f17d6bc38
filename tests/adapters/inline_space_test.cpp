// Tests for the inline (Orion-style) campaign form: NAME~PRIOR arguments become parameters of the
// space and placeholders of the command.
#include "tune/adapters/command/inline_space.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/adapters/command/command_template.hpp"

namespace tune::adapters {
namespace {

using Args = std::vector<std::string>;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SpaceError& e) {
    ADD_FAILURE() << "expected a plain std::invalid_argument, got SpaceError: " << e.what();
    return e.what();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument";
  return {};
}

// Parses a command with one declaration and returns its only parameter.
Parameter single(const std::string& declaration) {
  const InlineCampaign c = parse_inline_command({"train", declaration});
  EXPECT_EQ(c.space.dim(), 1u);
  return c.space.parameters().at(0);
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' missing from: " << message;
}

TEST(InlineSpace, ParsesUniform) {
  const Parameter p = single("--lr~uniform(0.5, 2)");
  EXPECT_EQ(p.name, "lr");
  EXPECT_EQ(p.type, ParamType::floating);
  EXPECT_EQ(p.scale, Scale::linear);
  EXPECT_EQ(p.low, 0.5);
  EXPECT_EQ(p.high, 2.0);
}

TEST(InlineSpace, ParsesLogUniform) {
  const Parameter p = single("--lr~loguniform(1e-5,1)");
  EXPECT_EQ(p.type, ParamType::floating);
  EXPECT_EQ(p.scale, Scale::log);
  EXPECT_EQ(p.low, 1e-5);
  EXPECT_EQ(p.high, 1.0);
}

TEST(InlineSpace, ParsesInt) {
  const Parameter p = single("--layers~int(-2, 8)");
  EXPECT_EQ(p.name, "layers");
  EXPECT_EQ(p.type, ParamType::integer);
  EXPECT_EQ(p.scale, Scale::linear);
  EXPECT_EQ(p.low, -2.0);
  EXPECT_EQ(p.high, 8.0);
  // Whole numbers in any notation are accepted.
  const Parameter q = single("--units~int(1e1, 2.0E2)");
  EXPECT_EQ(q.low, 10.0);
  EXPECT_EQ(q.high, 200.0);
}

TEST(InlineSpace, ParsesLogInt) {
  const Parameter p = single("--units~logint(1,1024)");
  EXPECT_EQ(p.type, ParamType::integer);
  EXPECT_EQ(p.scale, Scale::log);
  EXPECT_EQ(p.low, 1.0);
  EXPECT_EQ(p.high, 1024.0);
}

TEST(InlineSpace, ParsesChoiceAndAlias) {
  const Parameter p = single("--act~choice(relu, tanh,sigmoid)");
  EXPECT_EQ(p.type, ParamType::categorical);
  EXPECT_EQ(p.choices, (std::vector<std::string>{"relu", "tanh", "sigmoid"}));
  const Parameter q = single("--act~choices(relu,tanh)");
  EXPECT_EQ(q.type, ParamType::categorical);
  EXPECT_EQ(q.choices, (std::vector<std::string>{"relu", "tanh"}));
}

TEST(InlineSpace, ParsesOrdinal) {
  const Parameter p = single("--batch~ordinal(16, 32, 64)");
  EXPECT_EQ(p.type, ParamType::ordinal);
  EXPECT_EQ(p.choices, (std::vector<std::string>{"16", "32", "64"}));
}

TEST(InlineSpace, StripsQuotesAroundChoicesAndPrior) {
  const Parameter p = single("--opt~choice('adam', \"sgd\" , 'a, (b)')");
  EXPECT_EQ(p.choices, (std::vector<std::string>{"adam", "sgd", "a, (b)"}));
  // A prior still quoted (no shell removed the quotes) is accepted too.
  const Parameter q = single("--lr~'loguniform(1e-5,1)'");
  EXPECT_EQ(q.scale, Scale::log);
  EXPECT_EQ(q.low, 1e-5);
}

TEST(InlineSpace, AllowsWhitespaceAroundArguments) {
  const Parameter p = single("--lr~uniform (  0 ,\t1  )");
  EXPECT_EQ(p.low, 0.0);
  EXPECT_EQ(p.high, 1.0);
}

TEST(InlineSpace, DashedFlagBecomesTwoElements) {
  const InlineCampaign c =
      parse_inline_command({"python3", "train.py", "--lr~loguniform(1e-5,1)", "--epochs", "3"});
  EXPECT_EQ(c.command, (Args{"python3", "train.py", "--lr", "{lr}", "--epochs", "3"}));
}

TEST(InlineSpace, EqualsOrBareNameBecomesOneElement) {
  EXPECT_EQ(parse_inline_command({"run", "lr=~uniform(0,1)"}).command, (Args{"run", "lr={lr}"}));
  EXPECT_EQ(parse_inline_command({"run", "lr~uniform(0,1)"}).command, (Args{"run", "lr={lr}"}));
  EXPECT_EQ(parse_inline_command({"run", "--lr=~uniform(0,1)"}).command,
            (Args{"run", "--lr={lr}"}));
}

TEST(InlineSpace, NamesAreManglesOfTheFlag) {
  const InlineCampaign c = parse_inline_command(
      {"run", "--learning-rate~uniform(0,1)", "-n-layers~int(1,4)", "model.drop-out=~uniform(0,0.5)"});
  ASSERT_EQ(c.space.dim(), 3u);
  EXPECT_EQ(c.space.parameters()[0].name, "learning_rate");
  EXPECT_EQ(c.space.parameters()[1].name, "n_layers");
  EXPECT_EQ(c.space.parameters()[2].name, "model.drop_out");
  EXPECT_EQ(c.command, (Args{"run", "--learning-rate", "{learning_rate}", "-n-layers", "{n_layers}",
                             "model.drop-out={model.drop_out}"}));
}

TEST(InlineSpace, OtherArgumentsPassThroughUnchanged) {
  const Args args{"python3", "-u",   "train.py", "--data", "~/data", "HEAD~1", "numpy~=1.2",
                  "--out",   "{trial_dir}", "--lr~uniform(0,1)", "--tag=x{{y}}"};
  const InlineCampaign c = parse_inline_command(args);
  EXPECT_EQ(c.command, (Args{"python3", "-u", "train.py", "--data", "~/data", "HEAD~1", "numpy~=1.2",
                             "--out", "{trial_dir}", "--lr", "{lr}", "--tag=x{{y}}"}));
  EXPECT_EQ(c.space.dim(), 1u);
}

TEST(InlineSpace, DuplicateNameNamesBothArguments) {
  const std::string m =
      error_of([] { parse_inline_command({"run", "--lr~uniform(0,1)", "lr=~loguniform(1e-3,1)"}); });
  expect_contains(m, "'--lr~uniform(0,1)'");
  expect_contains(m, "'lr=~loguniform(1e-3,1)'");
  expect_contains(m, "'lr'");
  // Collisions after mangling too.
  const std::string n =
      error_of([] { parse_inline_command({"run", "--n-layers~int(1,4)", "--n_layers~int(1,4)"}); });
  expect_contains(n, "'--n-layers~int(1,4)'");
  expect_contains(n, "'--n_layers~int(1,4)'");
}

TEST(InlineSpace, EnvironmentCollisionIsRejected) {
  const std::string m =
      error_of([] { parse_inline_command({"run", "--a.b~uniform(0,1)", "--a_b~uniform(0,1)"}); });
  expect_contains(m, "TUNE_PARAM_A_B");
}

TEST(InlineSpace, EmptyNameIsRejected) {
  const std::string m = error_of([] { parse_inline_command({"run", "--~uniform(0,1)"}); });
  expect_contains(m, "argument '--~uniform(0,1)'");
  expect_contains(m, "no parameter name");
  expect_contains(m, "--lr~'loguniform(1e-5, 1)'");
  EXPECT_THROW(parse_inline_command({"run", "=~uniform(0,1)"}), std::invalid_argument);
}

TEST(InlineSpace, NameWithBracesIsRejected) {
  const std::string m = error_of([] { parse_inline_command({"run", "--a{b~uniform(0,1)"}); });
  expect_contains(m, "argument '--a{b~uniform(0,1)'");
  expect_contains(m, "may not contain '{'");
}

TEST(InlineSpace, BuiltinPlaceholderNameIsRejected) {
  const std::string m = error_of([] { parse_inline_command({"run", "--trial-dir~uniform(0,1)"}); });
  expect_contains(m, "argument '--trial-dir~uniform(0,1)'");
  expect_contains(m, "'trial_dir' is reserved");
}

TEST(InlineSpace, MissingBoundIsAnError) {
  const std::string m = error_of([] { parse_inline_command({"run", "--lr~loguniform(1e-5)"}); });
  EXPECT_EQ(m.find("argument '--lr~loguniform(1e-5)': loguniform needs two bounds, as in "
                   "loguniform(1e-5, 1)"),
            0u)
      << m;
  expect_contains(error_of([] { parse_inline_command({"run", "--n~int()"}); }),
                  "int needs two bounds, as in int(1, 8)");
  expect_contains(error_of([] { parse_inline_command({"run", "--n~uniform(0,1,2)"}); }),
                  "uniform needs two bounds, as in uniform(0, 1)");
  expect_contains(error_of([] { parse_inline_command({"run", "--n~uniform(0,)"}); }),
                  "empty item");
}

TEST(InlineSpace, NonNumericBoundIsAnError) {
  const std::string m = error_of([] { parse_inline_command({"run", "--lr~uniform(0, one)"}); });
  expect_contains(m, "argument '--lr~uniform(0, one)'");
  expect_contains(m, "'one'");
  expect_contains(m, "not a finite number");
  expect_contains(m, "uniform(0, 1)");
  for (const std::string bad : {"1x", "0x10", "1e", "--1", "nan", "inf", ".", "1 2"}) {
    const std::string arg = "--lr~uniform(" + bad + ", 5)";
    expect_contains(error_of([&] { parse_inline_command({"run", arg}); }), "not a finite number");
  }
}

TEST(InlineSpace, FractionalIntBoundIsAnError) {
  const std::string m = error_of([] { parse_inline_command({"run", "--layers~int(1.5, 8)"}); });
  expect_contains(m, "argument '--layers~int(1.5, 8)'");
  expect_contains(m, "whole numbers");
  expect_contains(m, "int(1, 8)");
  expect_contains(error_of([] { parse_inline_command({"run", "--u~logint(1, 1e30)"}); }),
                  "whole numbers");
}

TEST(InlineSpace, UnknownPriorIsAnError) {
  const std::string m = error_of([] { parse_inline_command({"run", "--lr~unifrom(0,1)"}); });
  expect_contains(m, "argument '--lr~unifrom(0,1)'");
  expect_contains(m, "unknown prior 'unifrom'");
  expect_contains(m, "loguniform");
  expect_contains(m, "ordinal");
  expect_contains(m, "--lr~'loguniform(1e-5, 1)'");
}

TEST(InlineSpace, MissingParenthesesIsAnError) {
  const std::string m = error_of([] { parse_inline_command({"run", "--lr~uniform"}); });
  expect_contains(m, "argument '--lr~uniform'");
  expect_contains(m, "parentheses");
  expect_contains(m, "uniform(0, 1)");
  expect_contains(error_of([] { parse_inline_command({"run", "--lr~uniform[0,1]"}); }),
                  "parentheses");
}

TEST(InlineSpace, UnbalancedParenthesesIsAnError) {
  for (const std::string arg : {"--lr~uniform(0,1", "--lr~uniform(0,1))", "--lr~uniform((0,1)",
                                "--act~choice(a,(b)", "--lr~uniform(0,1) x"}) {
    const std::string m = error_of([&] { parse_inline_command({"run", arg}); });
    expect_contains(m, "argument '" + arg + "'");
    expect_contains(m, "unbalanced parentheses");
  }
}

TEST(InlineSpace, UnterminatedQuoteIsAnError) {
  const std::string m = error_of([] { parse_inline_command({"run", "--act~choice('relu, tanh)"}); });
  expect_contains(m, "unterminated quote");
}

TEST(InlineSpace, TooFewChoicesIsAnError) {
  const std::string m = error_of([] { parse_inline_command({"run", "--act~choice(relu)"}); });
  expect_contains(m, "argument '--act~choice(relu)'");
  expect_contains(m, "at least two");
  expect_contains(m, "choice(relu, tanh)");
}

// The space's own checks, with the argument that declared the parameter (the user wrote no space).
TEST(InlineSpace, SpaceErrorsNameTheArgument) {
  const std::string inverted = error_of([] { parse_inline_command({"run", "--lr~uniform(1, 0)"}); });
  expect_contains(inverted, "argument '--lr~uniform(1, 0)': parameter 'lr'");
  expect_contains(inverted, "swap the bounds");
  const std::string log = error_of([] { parse_inline_command({"run", "--lr~loguniform(0, 1)"}); });
  expect_contains(log, "argument '--lr~loguniform(0, 1)': parameter 'lr'");
  expect_contains(log, "log scale needs low > 0");
  expect_contains(error_of([] { parse_inline_command({"run", "--act~choice(a, a)"}); }),
                  "argument '--act~choice(a, a)': parameter 'act'");
}

TEST(InlineSpace, NoDeclarationIsAnError) {
  const std::string expected =
      "no parameter to tune: mark one with NAME~PRIOR, e.g. --lr~'loguniform(1e-5,1)'";
  EXPECT_EQ(error_of([] { parse_inline_command({"python3", "train.py"}); }), expected);
  EXPECT_EQ(error_of([] { parse_inline_command({}); }), expected);
}

TEST(InlineSpace, BadBracesInOtherArgumentsAreReported) {
  const std::string m =
      error_of([] { parse_inline_command({"python3", "-c", "d = {}", "--lr~uniform(0,1)"}); });
  expect_contains(m, "'d = {}'");
  expect_contains(m, "{{");
}

// The user typed the arguments, not the rewritten command (where --lr~... became two elements): an
// unknown placeholder is cited as its argument and its place after --.
TEST(InlineSpace, PlaceholderErrorsCiteTheArgumentAsTyped) {
  const std::string m = error_of(
      [] { parse_inline_command({"python3", "train.py", "--lr~loguniform(1e-5,1)", "--bad", "{nope}"}); });
  EXPECT_EQ(m,
            "argument '{nope}' (the 5th after --): unknown placeholder '{nope}'; known placeholders: lr, trial_id, "
            "trial_dir, result_file (write {{ and }} for literal braces)");
  // After two declarations, the 11th, 12th and 22nd arguments: ordinals beyond "th".
  Args many{"run", "--a~uniform(0,1)", "--b~uniform(0,1)"};
  while (many.size() < 10) many.push_back("x");
  many.push_back("{bad}");
  expect_contains(error_of([&] { parse_inline_command(many); }), "argument '{bad}' (the 11th after --)");
  many.back() = "y";
  many.push_back("x{");
  expect_contains(error_of([&] { parse_inline_command(many); }),
                  "argument 'x{' (the 12th after --): unclosed '{' at position 1");
  many.back() = "y";
  while (many.size() < 21) many.push_back("x");
  many.push_back("}");
  expect_contains(error_of([&] { parse_inline_command(many); }), "argument '}' (the 22nd after --): stray '}'");
}

TEST(InlineSpace, RoundTripRendersTheExpectedArgv) {
  const InlineCampaign c = parse_inline_command(
      {"python3", "train.py", "--lr~loguniform(1e-4, 1e-2)", "--layers~int(2,3)", "--layers2~int(3,4)",
       "act=~choice(relu,'tanh')", "--batch~ordinal(16,32)", "--out={trial_dir}/model"});
  ASSERT_EQ(c.space.dim(), 5u);
  Eigen::VectorXd unit(5);
  unit << 0.5, 0.1, 0.9, 0.9, 0.1;  // lr at the geometric midpoint, 2, 4, tanh, 16
  Config config = c.space.decode(unit);
  const TrialContext trial{"7", "/c/trials/7", "/c/trials/7/result.json"};
  const Args argv = render_command(c.command, config, trial);
  const Args expected{"python3", "train.py", "--lr", tune::to_string(config.at("lr")), "--layers",
                      "2", "--layers2", "4", "act=tanh", "--batch", "16",
                      "--out=/c/trials/7/model"};
  EXPECT_EQ(argv, expected);
  EXPECT_NEAR(std::stod(argv[3]), 1e-3, 1e-12);
}

// `data~val` would declare a parameter `data` with the prior `val`; `~~` is the escape, as `{{` is for
// a brace, and a single `~` that declares nothing is still passed as typed.
TEST(InlineSpace, DoubledTildeIsALiteralTilde) {
  const InlineCampaign c = parse_inline_command(
      {"train", "data~~val", "--split=a~~b~~c", "~~/x", "HEAD~1", "--lr~uniform(0,1)", "--tag={{x}}~~y"});
  EXPECT_EQ(c.command, (Args{"train", "data~val", "--split=a~b~c", "~/x", "HEAD~1", "--lr", "{lr}", "--tag={{x}}~y"}));
  ASSERT_EQ(c.space.dim(), 1u);
  EXPECT_EQ(c.space.parameters().at(0).name, "lr");
  const Args argv = render_command(c.command, {{"lr", 0.5}}, {"0", "/c/trials/0", "/c/trials/0/result.json"});
  EXPECT_EQ(argv[1], "data~val");
  EXPECT_EQ(argv.back(), "--tag={x}~y");
  // Without the escape, the argument is a declaration, and the error says how to write a literal '~'.
  const std::string m = error_of([] { parse_inline_command({"train", "data~val", "--lr~uniform(0,1)"}); });
  expect_contains(m, "argument 'data~val': unknown prior 'val'");
  expect_contains(m, "for a literal '~' in an argument, write '~~'");
}

}  // namespace
}  // namespace tune::adapters
