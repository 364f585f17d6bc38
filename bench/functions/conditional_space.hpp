#pragma once
// Test functions on CONDITIONAL search spaces, to be MINIMISED, for bench/conditional_space.cpp (and
// its Python half, bench/conditional_space.py). Each has two spaces with the same parameters in the
// same order: `space`, where a parameter applies only for some values of an earlier one
// (Parameter::when; README "Search space", Conditional parameters), and `flat_space`, the same
// parameters without the conditions (every one always present: the form users had to write before).
// f reads only the parameters that apply, so it takes a configuration of either space: on the flat
// form it ignores the others (the objective of a flat study cannot tell them apart, as a trainer that
// ignores `momentum` under adam cannot).
//
// 1. jenatton: the tree-structured function of Jenatton et al. 2017 ("Bayesian Optimization with
//    Tree-structured Dependencies", ICML), section 5.1:
//      x1 categorical {0, 1}
//      x2 categorical {0, 1}   when x1 = 0          x3 categorical {0, 1}   when x1 = 1
//      x4 float [-1, 1]        when x2 = 0          x5 float [-1, 1]        when x2 = 1
//      x6 float [-1, 1]        when x3 = 0          x7 float [-1, 1]        when x3 = 1
//      r8 float [0, 1]         when x1 = 0          r9 float [0, 1]         when x1 = 1
//    (x4 .. x7 are chained: x4 applies only where x2 does, i.e. x1 = 0 and x2 = 0.)
//      x1 = 0, x2 = 0: f = x4^2 + 0.1 + r8        x1 = 1, x3 = 0: f = x6^2 + 0.3 + r9
//      x1 = 0, x2 = 1: f = x5^2 + 0.2 + r8        x1 = 1, x3 = 1: f = x7^2 + 0.4 + r9
//    x1, x2, x3 are CATEGORICALS of two choices "0" and "1", not 2-value integers: the paper's
//    branches are labels (nothing lies "between" the left and the right subtree), and Optuna's
//    define-by-run form of the paper's benchmark uses suggest_categorical. For tune the two are the
//    same model input (a categorical of two choices keeps its one coordinate, README "Search space"),
//    so the choice changes nothing for ei; the condition values are the text "0" / "1" either way.
//    Minimum (closed form): each leaf is a square (>= 0, 0 at 0, inside [-1, 1]) plus a constant plus
//    r >= 0 (0 at r = 0, its lower bound): the leaves' minima are 0.1, 0.2, 0.3, 0.4, so f* = 0.1 at
//    x1 = 0, x2 = 0, x4 = 0, r8 = 0. The runner-up leaf (x2 = 1) is 0.1 worse.
//
// 2. optimizer_choice: a made-up training-loss surface in the spirit of mixed_space.hpp's
//    nn_surrogate, in which each optimizer has parameters of its own:
//      opt           categorical {sgd, adam, rmsprop, adagrad}          o
//      lr            float, log scale, [1e-5, 1]                         u = log10(lr)
//      momentum      float [0, 0.99]              when opt = sgd         mu
//      nesterov      categorical {no, yes}        when opt = sgd
//      beta1         float [0.5, 0.999]           when opt = adam        b1
//      beta2         float [0.9, 0.9999] (linear) when opt = adam        v = -log10(1 - beta2), in [1, 4]
//      rho           float [0.5, 0.99]            when opt = rmsprop
//      weight_decay  float, log scale, [1e-6, 0.1] (always)              d = log10(weight_decay)
//    f = 0.2 + base[o] + 1.5 (1 - exp(-s(z) / 2)) + own_o + 0.01 (d - D[o])^2
//      z    = (u - m_o) / w[o],   s(z) = z^2 (1 + 0.5 tanh z)   (as nn_surrogate: a valley steeper on
//                                                              the high-lr side, increasing in |z|)
//      m_o  = sgd: -1.2 + log10(1 - mu) (the best lr falls with the momentum, as lr / (1 - mu) is the
//             effective step: -1.2 at mu = 0, -2.2 at 0.9, -3.2 at 0.99); adam -3.0; rmsprop -3.3;
//             adagrad -1.8
//      w    = {sgd 0.6, adam 1.0, rmsprop 0.7, adagrad 0.8}      valley width in decades
//      base = {sgd 0.06, adam 0.03, rmsprop 0.05, adagrad 0.10}
//      own  = sgd: 0.3 (mu - 0.9)^2 + (0.02 if nesterov = no); adam: (b1 - 0.9)^2 + 0.02 (v - 3)^2;
//             rmsprop: (rho - 0.9)^2; adagrad: 0
//      D    = {sgd -4, adam -5, rmsprop -4.5, adagrad -3}        best log10 weight decay
//    beta2 is a plain float range (its best, 0.999, lies at 99% of it: a hard corner, as a user's plain
//    range would make it); the penalty is quadratic in the log of 1 - beta2.
//    Minimum (closed form): for each optimizer every term is >= 0 and they can be zeroed together:
//    the lr term at u = m_o (inside [-5, 0] for every mu in [0, 0.99], m_sgd in [-3.2, -1.2]), own_o
//    at mu = 0.9 and nesterov = yes, b1 = 0.9 and beta2 = 0.999, rho = 0.9 (all inside their ranges),
//    the weight-decay term at d = D[o] (inside [-6, -1]). The optimizers' minima are then
//    0.2 + base: sgd 0.26, adam 0.23, rmsprop 0.25, adagrad 0.30; f* = 0.23 at adam, lr = 1e-3,
//    beta1 = 0.9, beta2 = 0.999, weight_decay = 1e-5. A poor value of an optimizer's own parameters
//    costs up to 0.24 (sgd's momentum at 0), 0.16 + 0.08 (adam's beta1 at 0.5, beta2 at 0.9), 0.16
//    (rho at 0.5): more than the gaps between the optimizers.
//
// 3. layers_units: Optuna's classic example (a network of n_layers layers, one width each):
//      n_layers  integer 1..4                                           n
//      units_l1  integer, log scale, 4..256 (always)
//      units_l2  integer, log scale, 4..256   when n_layers in {2, 3, 4}
//      units_l3  integer, log scale, 4..256   when n_layers in {3, 4}
//      units_l4  integer, log scale, 4..256   when n_layers = 4
//      dropout   float [0, 0.5] (always)                                p
//    f = 0.1 + B[n] + sum_{i=1..n} 0.02 (log2 units_li - log2 U[n][i])^2 + 0.8 (p - P[n])^2
//      B = {0.25, 0.10, 0.00, 0.05}                  n = 1, 2, 3, 4
//      U = {{64}, {128, 32}, {128, 64, 16}, {160, 80, 40, 20}}   each depth's best widths
//      P = {0.0, 0.1, 0.2, 0.3}                      each depth's best dropout
//    Minimum (closed form): for each n every term is >= 0 and 0 at units = U[n] (integers inside
//    4..256) and p = P[n] (inside [0, 0.5]); the depths' minima are 0.1 + B[n]: 0.35, 0.2, 0.1, 0.15;
//    f* = 0.1 at n_layers = 3, units (128, 64, 16), dropout 0.2.
//
// Each closed-form minimum is checked numerically by search_minimum (`conditional_space
// --check-minima`): exhaustive over every combination of the discrete parameters that apply
// (categoricals, ordinals, integers of at most 16 values; a parameter's values are tried only where it
// applies), and for each, a grid over the other parameters that apply (floats, and the 253-value
// units, as mixed_space's floats: a grid in unit coordinates, ~10^4 points per combination, an integer
// rounded to its nearest value) and compass search (step halving to 1e-12) from the 3 best grid points.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tune/space/space.hpp"

namespace tune::testfn {

struct ConditionalFunction {
  std::string name;
  tune::Space space;       // with the conditions
  tune::Space flat_space;  // the same parameters, none conditional
  double minimum = 0.0;    // exact global minimum (closed form, see above)
  tune::Config argmin;     // one global minimiser: the parameters that apply there, a configuration of `space`
  // f at a configuration of `space` or of `flat_space` (it reads only the parameters that apply);
  // throws std::invalid_argument naming the parameter for a missing or ill-typed value that applies.
  std::function<double(const tune::Config&)> f;
};

ConditionalFunction jenatton();
ConditionalFunction optimizer_choice();
ConditionalFunction layers_units();

ConditionalFunction conditional_by_name(const std::string& name);  // throws std::invalid_argument
std::vector<std::string> conditional_names();


// The numerical check of `minimum` described above: the lowest value found and where.
struct ConditionalMinimumSearch {
  double value = 0.0;
  tune::Config argmin;
  std::size_t combinations = 0;  // discrete combinations searched
  std::size_t evaluations = 0;
};
ConditionalMinimumSearch search_minimum(const ConditionalFunction& fn, std::size_t points_per_combination = 10000);

// The median of f - minimum over `samples` uniform random points of the unit cube decoded by the
// conditional space (the distribution of the `random` strategy; the flat space's is the same), with a
// fixed seed: the typical gap.
double typical_gap(const ConditionalFunction& fn, std::size_t samples = 4096);

}  // namespace tune::testfn
