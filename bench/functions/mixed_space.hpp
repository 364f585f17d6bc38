#pragma once
// Test functions on MIXED search spaces (floats, integers, categoricals, ordinals), to be MINIMISED,
// for bench/mixed_space.cpp (and its Python half). They measure how well a strategy handles
// categorical parameters, so every categorical's listed order of choices carries NO information: a
// choice's effect is not monotone or smooth in the order given (a GP that sees the choices as one
// coordinate in that order, ei's `categorical_encoding: ordered`, is misled by it). The ordinal `batch` of
// nn_surrogate is the only discrete parameter whose order means something, as an ordinal's should.
//
// 1. branin_cat: x1 float [-5, 10], x2 float [0, 15], c categorical {c0, c1, c2, c3, c4, c5}.
//      f = branin(x1', x2) + offset[c]
//      offset = {1.0, 0.0, 1.6, 0.4, 1.2, 0.8} (scale 1.0; index i of choice ci)
//      x1' = x1 for c0, c2, c4;  x1' = 5 - x1 (the mirror of [-5, 10] onto itself) for c1, c3, c5
//    branin(x1, x2) = (x2 - b x1^2 + c x1 - 6)^2 + 10 (1 - t) cos x1 + 10, b = 5.1 / (4 pi^2),
//    c = 5 / pi, t = 1 / (8 pi). Choices next to each other in the list differ in offset by 0.4-1.6
//    and (mirror) in where their optimum lies.
//    Minimum (closed form): branin's 5 / (4 pi) = 0.39788735772973816 plus offset 0, i.e. c = c1 at
//    x1' in {-pi, pi, 3 pi}: x1 = 5 + pi, x2 = 12.275; x1 = 5 - pi, x2 = 2.275; x1 = 5 - 3 pi, x2 = 2.475
//    (all inside the box). The runner-up c3 (mirrored too) is 0.4 worse; the best unmirrored, c0, 1.0.
//
// 2. hartmann3_cat2: x0, x1, x2 floats [0, 1], a categorical {a0, a1, a2}, b categorical {b0, b1, b2, b3}.
//    The combination k = 4 i_a + i_b (0..11) selects a permutation P_k of the coordinates and an offset:
//      f = hartmann3(y) + offset[k],  y_j = x_{P_k[j]}
//      P_k    = k0 (1,2,0)  k1 (0,1,2)  k2 (2,1,0)  k3 (0,2,1)  k4 (2,0,1)  k5  (1,0,2)
//               k6 (0,1,2)  k7 (2,1,0)  k8 (2,0,1)  k9 (1,2,0)  k10 (0,2,1) k11 (1,0,2)
//      offset = {0.30, 0.70, 0.10, 0.50, 0.90, 0.00, 0.40, 0.60, 0.05, 1.00, 0.25, 0.80}
//    hartmann3 as tune::testfn::hartmann3 (Surjanovic & Bingham's constants).
//    Minimum (closed form): hartmann3's -3.8627797873326625 (its refined minimum, see
//    test_functions.cpp) at offset 0, k = 5 = (a1, b1), x_{P_5[j]} = argmin_j, i.e.
//    x = (0.55564889461693004, 0.11458887665506897, 0.85254698468667744). The runner-up
//    (a2, b0) = k8 is 0.05 worse with its optimum elsewhere (another permutation).
//
// 3. nn_surrogate: a made-up, deterministic training-loss surface.
//      lr          float, log scale, [1e-5, 1]        u = log10(lr)
//      layers      integer 1..8                        l
//      batch       ordinal {16, 32, 64, 128, 256}      j = index 0..4 (batch = 16 * 2^j)
//      optimizer   categorical {sgd, adam, rmsprop, adagrad}  o
//      activation  categorical {relu, tanh, elu}              a
//    f = 0.2 + base_o[o] + base_a[a] + 1.5 (1 - exp(-s(z) / 2)) + 0.015 (l - L[a])^2 + 0.01 (j - 1.3)^2
//      z    = (u - m[o] - 0.15 (j - 2)) / w[o]       (a larger batch wants a larger lr)
//      s(z) = z^2 (1 + 0.5 tanh z)                    (a valley steeper on the high-lr side; s is
//                                                      increasing in |z| on both sides)
//      m      = {sgd -1.5, adam -3.2, rmsprop -3.5, adagrad -2.0}   best log10 lr at batch 64
//      w      = {sgd 0.6, adam 1.0, rmsprop 0.7, adagrad 0.8}       valley width in decades
//      base_o = {sgd 0.10, adam 0.02, rmsprop 0.06, adagrad 0.14}
//      base_a = {relu 0.03, tanh 0.08, elu 0.00}
//      L      = {relu 4, tanh 2, elu 5}                             best number of layers
//    Minimum (closed form): the lr term is 0 at z = 0, reachable for every (o, j) since
//    m[o] + 0.15 (j - 2) lies in [-3.8, -1.2], inside [-5, 0]; every other term is minimised
//    independently: adam, elu, 5 layers, batch 32 (j = 1: 0.01 * 0.09), lr = 10^(-3.2 - 0.15)
//    = 10^-3.35: f = 0.2 + 0.02 + 0 + 0 + 0 + 0.0009 = 0.2209.
//
// Each closed-form minimum is checked numerically by search_minimum (`mixed_space --check-minima`):
// exhaustive over every combination of the discrete parameters, a grid over the continuous ones
// (in unit coordinates, ~10^4 points per combination), then compass search (step halving to 1e-12)
// from the 3 best grid points of every combination.
#include <functional>
#include <string>
#include <vector>

#include "tune/space/space.hpp"

namespace tune::testfn {

struct MixedFunction {
  std::string name;
  tune::Space space;
  double minimum = 0.0;  // exact global minimum (closed form, see above)
  tune::Config argmin;   // one global minimiser
  // f at a configuration of `space` (as tune::Study::ask returns it); throws std::invalid_argument
  // naming the parameter for a missing, ill-typed or unknown value.
  std::function<double(const tune::Config&)> f;
};

MixedFunction branin_cat();
MixedFunction hartmann3_cat2();
MixedFunction nn_surrogate();

MixedFunction mixed_by_name(const std::string& name);  // throws std::invalid_argument

// The same function with every categorical's choices listed in an order drawn from `seed` (f reads
// the chosen name, so its values are unchanged). The functions' claim is that the order means
// nothing; a strategy whose result depends on it is measured fairly over many orders, not the one
// the header lists (a tree that splits the coordinate at its midpoints lands on particular places
// of the list). Seed 0 keeps the listed order.
MixedFunction with_shuffled_choices(const MixedFunction& fn, std::uint64_t seed);
std::vector<std::string> mixed_names();

// The numerical check of `minimum` described above: the lowest value found and where.
struct MinimumSearch {
  double value = 0.0;
  tune::Config argmin;
  std::size_t combinations = 0;  // discrete combinations searched
  std::size_t evaluations = 0;
};
MinimumSearch search_minimum(const MixedFunction& fn, std::size_t points_per_combination = 10000);

// The median of f - minimum over `samples` uniform random points of the unit cube decoded by the
// space (the distribution of the `random` strategy), with a fixed seed: the typical gap.
double typical_gap(const MixedFunction& fn, std::size_t samples = 4096);

}  // namespace tune::testfn
