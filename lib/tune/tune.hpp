#pragma once
// Everything a program embedding tune needs: spaces, studies, strategies, minimize(), and
// tune::StateError, which Study::load throws (it was not declared here, so catching it did not compile).
#include "tune/io/yaml_values.hpp"
#include "tune/space/sampling.hpp"
#include "tune/space/space.hpp"
#include "tune/strategy/bnb_strategy.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/strategy/multi_resolution_search.hpp"
#include "tune/strategy/strategy_factory.hpp"
#include "tune/study/minimize.hpp"
#include "tune/study/pruning_rule.hpp"
#include "tune/study/study.hpp"
