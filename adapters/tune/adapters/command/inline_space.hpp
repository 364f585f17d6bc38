#pragma once
// The inline form of a campaign, in the style of Orion:
//   tune run --trials 30 -- python3 train.py --lr~'loguniform(1e-5,1)' --layers~'int(1,8)' --act~'choice(relu,tanh)'
// An argument NAME~PRIOR declares a parameter and is replaced by two arguments, NAME and `{param}`,
// where param is NAME without leading dashes and with '-' replaced by '_'. An argument NAME=~PRIOR
// (or NAME~PRIOR where NAME does not start with '-') is replaced by one argument `NAME={param}`.
// Priors: uniform(a,b), loguniform(a,b), int(a,b), logint(a,b), choice(x,y,...), ordinal(x,y,...).
// NAME~levels(1,3,9,27) declares the resolution instead (its levels, costs measured): `{param}` is
// the level's value, which the strategy chooses (cmets); at most one argument does.
// A `~` followed by anything but a letter (`~/data`, `HEAD~1`, `numpy~=1.2`) is passed as typed; `~~`
// is a literal `~` in an argument that declares nothing (`data~~val` passes `data~val`), as `{{` and
// `}}` are literal braces in the command.
#include <optional>
#include <string>
#include <vector>

#include "tune/space/space.hpp"
#include "tune/study/resolution.hpp"

namespace tune::adapters {

struct InlineCampaign {
  std::vector<std::string> command;  // with {param} placeholders
  Space space;
  std::optional<Resolution> resolution;  // from a NAME~levels(...) argument
};

// Throws std::invalid_argument naming the argument and what is expected, e.g.
// "argument '--lr~loguniform(1e-5)': loguniform needs two bounds, as in loguniform(1e-5, 1)".
InlineCampaign parse_inline_command(const std::vector<std::string>& arguments);

}  // namespace tune::adapters
