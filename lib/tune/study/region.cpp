#include "tune/study/region.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace tune {

std::vector<ParameterRange> decode_box(const Space& space, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper) {
  const auto d = static_cast<Eigen::Index>(space.dim());
  if (lower.size() != d || upper.size() != d) throw std::invalid_argument("decode_box: a box of the wrong dimension");
  const Eigen::VectorXd lo = lower.cwiseMax(0.0).cwiseMin(1.0);
  const Eigen::VectorXd hi = upper.cwiseMax(lo).cwiseMin(1.0);
  const Eigen::VectorXd centre = 0.5 * (lo + hi);
  // A conditional parameter's range is read as if it always applied, and given where it applies at
  // the box's centre (the region's configuration); elsewhere it is left out, as it is of a trial's.
  std::optional<Space> unconditional;
  if (space.has_conditions()) unconditional.emplace(without_conditions(space));
  const Space& plain = unconditional ? *unconditional : space;
  const std::vector<bool> applying = space.active(centre);
  std::vector<ParameterRange> out;
  for (Eigen::Index j = 0; j < d; ++j) {
    if (!applying[static_cast<std::size_t>(j)]) continue;
    const Parameter& p = space.parameters()[static_cast<std::size_t>(j)];
    ParameterRange r;
    r.name = p.name;
    const auto value_at = [&](double u) {
      Eigen::VectorXd x = centre;
      x(j) = u;
      return plain.decode(x).at(p.name);
    };
    if (p.type == ParamType::floating) {
      r.low = value_at(lo(j));
      r.high = value_at(hi(j));
      out.push_back(std::move(r));
      continue;
    }
    // Discrete: the values whose cell's centre (the value's canonical point) lies in [lo, hi]; the
    // one whose cell holds the box's centre when no centre does.
    const auto snapped = [&](double u) {
      Eigen::VectorXd x = centre;
      x(j) = u;
      return plain.snap(x)(j);
    };
    if (p.type == ParamType::integer) {
      auto vlow = std::get<std::int64_t>(value_at(lo(j)));
      auto vhigh = std::get<std::int64_t>(value_at(hi(j)));
      if (snapped(lo(j)) < lo(j)) ++vlow;  // the next value's cell starts where this one ends
      if (snapped(hi(j)) > hi(j)) --vhigh;
      if (vlow > vhigh) vlow = vhigh = std::get<std::int64_t>(value_at(centre(j)));
      r.low = vlow;
      r.high = vhigh;
    } else {
      const std::size_t n = p.choices.size();
      for (std::size_t k = 0; k < n; ++k) {
        const double c = (static_cast<double>(k) + 0.5) / static_cast<double>(n);
        if (c >= lo(j) && c <= hi(j)) r.choices.push_back(p.choices[k]);
      }
      if (r.choices.empty()) r.choices.push_back(std::get<std::string>(value_at(centre(j))));
      r.low = r.choices.front();
      r.high = r.choices.back();
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string to_string(const std::vector<ParameterRange>& box) {
  std::string s;
  for (const ParameterRange& r : box) {
    s += (s.empty() ? "" : ", ") + r.name + ": [";
    if (!r.choices.empty()) {
      for (std::size_t i = 0; i < r.choices.size(); ++i) s += (i ? ", " : "") + r.choices[i];
    } else {
      s += tune::to_string(r.low) + ", " + tune::to_string(r.high);
    }
    s += "]";
  }
  return "{" + s + "}";
}

}  // namespace tune
