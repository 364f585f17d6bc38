#!/usr/bin/python3
"""The Optuna half of the pruning benchmark (bench/pruning.sh runs both halves).

  pruning.py --binary build/bench/pruning --csv OUT [--seeds N] [--budget-steps N]
             [--functions a,b] [--shapes a,b] [--methods tpe,tpe+p50,tpe+p50w10]

Optuna's TPESampler(seed=s) (default settings) with the protocol of bench/pruning.cpp: one trial at
a time through ask/tell; a trial at point u reports y(u, t) for t = 1, 2, ... (trial.report(y, t),
one step of the budget each); after every step t < T a method with a pruner asks
trial.should_prune() and, if told to, ends the trial with study.tell(trial, state=PRUNED) (Optuna
then records its last intermediate value, and its TPE ranks every pruned trial below every
completed one, later steps first). A trial not stopped runs all T steps and is told y(u, T). The run
ends when the budget of steps is spent.

Methods: tpe (NopPruner), tpe+p50 (MedianPruner(), Optuna's defaults: 5 startup trials, no warmup),
tpe+p50w10 (MedianPruner(n_warmup_steps=10)), tpe+p25 / tpe+p25w10 (PercentilePruner(25, ...)).

The curves are the C++ model's: `pruning --curve FUNCTION SHAPE` gives f(u) and the noise-free curve
y(u, 1..T); the Gaussian noise (sd from the same service) is drawn here, from numpy's generator seeded
with (seed, trial index): the same distribution as the C++ half, not the same draws. Regret, targets,
false prunes and the table are as in bench/pruning.cpp. Needs Debian's python3-optuna (run with
/usr/bin/python3).
"""
import argparse
import csv
import math
import subprocess
import sys
import time

import numpy as np
import optuna

from bench_stats import fmt, quantile

TARGET_FRACTIONS = (0.10, 0.01)


class Curves:
    """f(u) and the noise-free curve of FUNCTION under SHAPE, from `pruning --curve`."""

    def __init__(self, binary, function, shape):
        self.function, self.shape = function, shape
        self.proc = subprocess.Popen([binary, "--curve", function, shape], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        header = self.proc.stdout.readline().split()
        if len(header) != 5:
            sys.exit(f"pruning.py: no header from {binary} --curve {function} {shape}")
        self.dim, self.minimum, self.gap = int(header[0]), float(header[1]), float(header[2])
        self.steps, self.noise_sd = int(header[3]), float(header[4])

    def at(self, u):
        self.proc.stdin.write(" ".join(repr(float(x)) for x in u) + "\n")
        self.proc.stdin.flush()
        values = [float(v) for v in self.proc.stdout.readline().split()]
        return values[0], values[1:]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def pruner_for(method):
    if "+" not in method:
        return optuna.pruners.NopPruner()
    rule = method.split("+", 1)[1]
    if not rule.startswith("p"):
        sys.exit(f"pruning.py: rule '{rule}' must start with p<percentile>")
    body, _, warmup = rule[1:].partition("w")
    percentile, warmup = float(body), int(warmup or 0)
    if percentile == 50:
        return optuna.pruners.MedianPruner(n_warmup_steps=warmup)
    return optuna.pruners.PercentilePruner(percentile, n_warmup_steps=warmup)


def run_study(curves, method, seed, budget):
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed),
                                pruner=pruner_for(method))
    regret, completed_f, pruned_f, prune_steps = [], [], [], []
    best_f = math.inf
    trials = 0
    while len(regret) < budget:
        trial = study.ask()
        u = [trial.suggest_float(f"x{j}", 0.0, 1.0) for j in range(curves.dim)]
        f, mean = curves.at(u)
        rng = np.random.default_rng([seed, trials, 0x5EED])
        trials += 1
        pruned = False
        t = 0
        y = math.nan
        for t in range(1, curves.steps + 1):
            if len(regret) >= budget:
                t -= 1
                break
            y = mean[t - 1] + rng.normal(0.0, curves.noise_sd)
            trial.report(y, t)
            regret.append(best_f - curves.minimum)
            if t < curves.steps and trial.should_prune():
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                pruned = True
                pruned_f.append(f)
                prune_steps.append(t)
                break
        if pruned:
            continue
        if t < curves.steps:
            break  # cut off by the budget
        study.tell(trial, y)
        completed_f.append(f)
        best_f = min(best_f, f)
        regret[-1] = best_f - curves.minimum
    regret += [regret[-1] if regret else math.inf] * (budget - len(regret))
    false_prunes = beat_best = 0
    if completed_f:
        med = float(np.median(completed_f))
        false_prunes = sum(1 for f in pruned_f if f < med)
        beat_best = sum(1 for f in pruned_f if f < best_f)
    return dict(regret=regret, trials=trials, completed=len(completed_f), pruned=len(pruned_f),
                prune_steps=prune_steps, false_prunes=false_prunes, beat_best=beat_best)


def checkpoints(budget):
    ks = []
    for div in (6, 3, 2):
        if budget // div > 0 and (not ks or ks[-1] != budget // div):
            ks.append(budget // div)
    if not ks or ks[-1] != budget:
        ks.append(budget)
    return ks


def steps_to(run, target):
    for k, r in enumerate(run["regret"]):
        if r <= target:
            return float(k + 1)
    return math.inf


def quantile_inf(values, q):
    v = sorted(values)
    if not v:
        return math.nan
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    frac = pos - lo
    if math.isinf(v[lo]) or (frac > 0 and math.isinf(v[hi])):
        return math.inf
    return quantile(v, q)


def cell(x, budget):
    return f">{budget}" if math.isinf(x) else fmt(x)


def median_quartiles(values, budget):
    return (f"{cell(quantile_inf(values, 0.5), budget)} [{cell(quantile_inf(values, 0.25), budget)}, "
            f"{cell(quantile_inf(values, 0.75), budget)}]")


def print_table(curves, methods, runs, seeds, budget):
    ks = checkpoints(budget)
    print(f"\n## {curves.function}, {curves.shape} curves (minimum {curves.minimum:.6g}, G = {curves.gap:.4g}, "
          f"T = {curves.steps} steps, noise sd {curves.noise_sd:.3g}; budget {budget} steps = "
          f"{budget / curves.steps:.3g} full runs; {seeds} seeds; median [Q1, Q3])\n")
    head = "| method |" + "".join(f" regret @{k} |" for k in ks)
    head += "".join(f" steps to {100 * f:g}% G | reached |" for f in TARGET_FRACTIONS)
    head += " trials | pruned | prune step | false prunes | beat best |"
    print(head)
    print("|---|" + "---|" * (len(ks) + 2 * len(TARGET_FRACTIONS) + 5))
    for m in methods:
        row = f"| optuna-{m} |"
        for k in ks:
            row += f" {median_quartiles([r['regret'][k - 1] for r in runs[m]], budget)} |"
        for frac in TARGET_FRACTIONS:
            v = [steps_to(r, frac * curves.gap) for r in runs[m]]
            row += f" {median_quartiles(v, budget)} | {sum(1 for x in v if not math.isinf(x))}/{len(v)} |"
        all_trials = sum(r["trials"] for r in runs[m])
        pruned = sum(r["pruned"] for r in runs[m])
        steps = [s for r in runs[m] for s in r["prune_steps"]]
        share = 100.0 * pruned / all_trials if all_trials else 0.0
        row += (f" {fmt(float(np.median([r['trials'] for r in runs[m]])))} | {share:.0f}% |"
                f" {fmt(float(np.median(steps))) if steps else '-'} |"
                f" {sum(r['false_prunes'] for r in runs[m])}/{pruned} | {sum(r['beat_best'] for r in runs[m])} |")
        print(row)
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budget-steps", type=int, default=3000)
    ap.add_argument("--functions", default="branin,hartmann3")
    ap.add_argument("--shapes", default="independent,slow_good")
    ap.add_argument("--methods", default="tpe,tpe+p50,tpe+p50w10")
    a = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    methods = [m for m in a.methods.split(",") if m]
    for m in methods:
        if m.split("+", 1)[0] != "tpe":
            sys.exit(f"pruning.py: unknown method '{m}' (tpe, tpe+p50, tpe+p50w10, tpe+p25, ...)")
        pruner_for(m)
    ks = checkpoints(a.budget_steps)
    start = time.monotonic()
    with open(a.csv, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["function", "shape", "method", "seed", "budget_steps", "trials", "completed", "pruned",
                    "false_prunes", "pruned_beat_best"]
                   + [f"steps_to_{100 * f:g}pct_gap" for f in TARGET_FRACTIONS] + [f"regret_at_{k}" for k in ks])
        for function in a.functions.split(","):
            for shape in a.shapes.split(","):
                curves = Curves(a.binary, function, shape)
                runs = {}
                for m in methods:
                    t0 = time.monotonic()
                    runs[m] = []
                    for seed in range(a.seeds):
                        r = run_study(curves, m, seed, a.budget_steps)
                        runs[m].append(r)
                        to = [steps_to(r, f * curves.gap) for f in TARGET_FRACTIONS]
                        w.writerow([function, shape, "optuna-" + m, seed, a.budget_steps, r["trials"], r["completed"],
                                    r["pruned"], r["false_prunes"], r["beat_best"]]
                                   + ["" if math.isinf(x) else repr(x) for x in to]
                                   + [repr(r["regret"][k - 1]) for k in ks])
                    print(f"[{time.monotonic() - start:7.1f} s] {function} / {shape} / optuna-{m}: {a.seeds} seeds "
                          f"in {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
                curves.close()
                print_table(curves, methods, {m: runs[m] for m in methods}, a.seeds, a.budget_steps)


if __name__ == "__main__":
    main()
