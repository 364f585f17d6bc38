#!/usr/bin/python3
"""The Python half of the mixed-space benchmark (bench/mixed_space.sh runs both halves).

  mixed_space.py optuna --binary build/bench/mixed_space --csv OUT [--seeds N] [--evaluations N]
                        [--functions a,b] [--methods tpe,optuna-random]
      Runs Optuna's TPE sampler (TPESampler(seed=s), default settings) and random sampler
      (RandomSampler(seed=s)) with the protocol of bench/mixed_space.cpp: minimise each function over
      its own space, `evaluations` ask/tell steps per seed s = 0 .. seeds-1. The space comes from
      `mixed_space --eval FUNCTION` (which also evaluates f, so Optuna is scored on exactly the C++
      functions): a float is a FloatDistribution (log=True where the space is log), an integer an
      IntDistribution, a categorical a CategoricalDistribution with the same choices in the same
      order; an ordinal too (Optuna has no ordinal type). Prints the same tables as the C++ half.

  mixed_space.py summarise --binary build/bench/mixed_space CSV...
      Prints the tables of every method in the CSVs (the C++ and the Optuna half together):
      per function, median and IQR (Q3 - Q1, R type 7) of the simple regret at 15, 30, 60 evaluations
      (those within the budget, and the budget), runs reaching the target regret (1% of the median
      gap between random points and the minimum, from `mixed_space --eval`), median evaluations to it
      (a run that never reaches it counts as infinite). Writes the summary with --out-csv.

A regret below -1e-9 (a value under the known minimum) is an error naming the function and the point.
Needs Debian's python3-optuna (run with /usr/bin/python3).
"""
import argparse
import csv
import math
import subprocess
import sys
import time
from collections import defaultdict

from bench_stats import checkpoints, fmt, median_with_inf, quantile, write_rows

REGRET_TOLERANCE = 1e-9
METHOD_ORDER = ("ei", "random", "tpe", "optuna-random")


class Evaluator:
    """The space of FUNCTION and f on it, from `mixed_space --eval FUNCTION`."""

    def __init__(self, binary, function):
        self.name = function
        self.proc = subprocess.Popen([binary, "--eval", function], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        header = self.proc.stdout.readline().split()
        if len(header) != 3:
            sys.exit(f"mixed_space.py: no header from {binary} --eval {function}")
        n, self.minimum, self.target = int(header[0]), float(header[1]), float(header[2])
        self.params = []  # (kind, name, spec)
        for _ in range(n):
            kind, name, *rest = self.proc.stdout.readline().split()
            if kind in ("float", "int"):
                low, high, scale = rest
                conv = float if kind == "float" else lambda t: int(float(t))
                self.params.append((kind, name, (conv(low), conv(high), scale == "log")))
            else:
                self.params.append((kind, name, tuple(rest)))

    def distributions(self):
        from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
        d = {}
        for kind, name, spec in self.params:
            if kind == "float":
                d[name] = FloatDistribution(spec[0], spec[1], log=spec[2])
            elif kind == "int":
                d[name] = IntDistribution(spec[0], spec[1], log=spec[2])
            else:
                d[name] = CategoricalDistribution(list(spec))
        return d

    def __call__(self, params):
        fields = []
        for kind, name, _ in self.params:
            v = params[name]
            fields.append(repr(float(v)) if kind == "float" else str(v))
        self.proc.stdin.write(" ".join(fields) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"mixed_space.py: {self.name}: the evaluator stopped at {params}")
        value = float(line)
        if value - self.minimum < -REGRET_TOLERANCE:
            sys.exit(f"mixed_space.py: {self.name}: f = {value!r} at {params} is below the known minimum "
                     f"{self.minimum!r}: the minimum is wrong")
        return value

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()










def print_tables(regret, info, out_rows=None):
    """regret[(function, method)][seed] = [regret after evaluation 1, 2, ...];
    info[function] = (minimum, target, gap)."""
    functions = []
    for fn, _ in regret:
        if fn not in functions:
            functions.append(fn)
    for fn in functions:
        methods = sorted((m for f, m in regret if f == fn),
                         key=lambda m: (METHOD_ORDER.index(m) if m in METHOD_ORDER else len(METHOD_ORDER), m))
        minimum, target, gap = info[fn]
        budget = max(len(r) for m in methods for r in regret[(fn, m)].values())
        nseeds = max(len(regret[(fn, m)]) for m in methods)
        ks = checkpoints(budget)
        print(f"\n## {fn} (minimum {minimum:.6g}; target regret {fmt(target)} = 1% of the median random gap "
              f"{fmt(gap)}; median and IQR of simple regret over {nseeds} seeds)\n")
        print("| method |" + "".join(f" @{k} | IQR @{k} |" for k in ks) + " reached target | median evals to target |")
        print("|---|" + "---|---|" * len(ks) + "---|---|")
        for m in methods:
            runs = regret[(fn, m)]
            cells = []
            row = {"function": fn, "method": m, "seeds": len(runs)}
            for k in ks:
                vals = [max(0.0, r[min(k, len(r)) - 1]) for r in runs.values() if r]
                med, iqr = quantile(vals, 0.5), quantile(vals, 0.75) - quantile(vals, 0.25)
                cells += [fmt(med), fmt(iqr)]
                row[f"median_{k}"], row[f"iqr_{k}"] = med, iqr
            firsts = []
            for r in runs.values():
                first = next((k + 1 for k, v in enumerate(r) if v <= target), math.inf)
                firsts.append(first)
            reached = sum(1 for f in firsts if not math.isinf(f))
            med = median_with_inf(firsts)
            row["reached"], row["median_evals_to_target"] = reached, med
            cell = f">{budget}" if math.isinf(med) else fmt(float(med))
            print(f"| {m} | " + " | ".join(cells) + f" | {reached}/{len(runs)} | {cell} |")
            if out_rows is not None:
                out_rows.append(row)
        sys.stdout.flush()


def function_info(binary, fn):
    ev = Evaluator(binary, fn)
    ev.close()
    return ev.minimum, ev.target, ev.target / 0.01


def run_optuna(args):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    regret = defaultdict(dict)
    info = {}
    with open(args.csv, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["function", "method", "seed", "evaluation", "best_so_far", "regret"])
        start = time.perf_counter()
        for fname in args.functions.split(","):
            ev = Evaluator(args.binary, fname)
            info[fname] = (ev.minimum, ev.target, ev.target / 0.01)
            dists = ev.distributions()
            for method in args.methods.split(","):
                t_method = time.perf_counter()
                for seed in range(args.seeds):
                    if method == "tpe":
                        sampler = optuna.samplers.TPESampler(seed=seed)
                    elif method == "optuna-random":
                        sampler = optuna.samplers.RandomSampler(seed=seed)
                    else:
                        sys.exit(f"mixed_space.py: unknown method {method!r} (tpe, optuna-random)")
                    study = optuna.create_study(direction="minimize", sampler=sampler)
                    best = math.inf
                    trace = []
                    for k in range(1, args.evaluations + 1):
                        trial = study.ask(dists)
                        value = ev(trial.params)
                        study.tell(trial, value)
                        best = min(best, value)
                        trace.append(best - ev.minimum)
                        w.writerow([fname, method, seed, k, repr(best), repr(best - ev.minimum)])
                    regret[(fname, method)][seed] = trace
                print(f"[{time.perf_counter() - start:7.1f} s] {fname} / {method}: {args.seeds} seeds in "
                      f"{time.perf_counter() - t_method:.1f} s", file=sys.stderr, flush=True)
            ev.close()
    print_tables(regret, info)


def summarise(args):
    regret = defaultdict(lambda: defaultdict(list))
    for path in args.csvs:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                r = regret[(row["function"], row["method"])][int(row["seed"])]
                if int(row["evaluation"]) != len(r) + 1:
                    sys.exit(f"mixed_space.py: {path}: evaluations out of order at {row}")
                v = float(row["regret"])
                if v < -REGRET_TOLERANCE:
                    sys.exit(f"mixed_space.py: {path}: regret {v!r} below 0 at {row}")
                r.append(v)
    info = {fn: function_info(args.binary, fn) for fn in {fn for fn, _ in regret}}
    rows = []
    print_tables(regret, info, rows)
    if args.out_csv:
        write_rows(args.out_csv, rows)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    o = sub.add_parser("optuna")
    o.add_argument("--binary", required=True, help="the built mixed_space (for --eval)")
    o.add_argument("--csv", required=True)
    o.add_argument("--seeds", type=int, default=20)
    o.add_argument("--evaluations", type=int, default=60)
    o.add_argument("--functions", default="branin_cat,hartmann3_cat2,nn_surrogate")
    o.add_argument("--methods", default="tpe,optuna-random")
    s = sub.add_parser("summarise")
    s.add_argument("--binary", required=True, help="the built mixed_space (for the minima and targets)")
    s.add_argument("csvs", nargs="+")
    s.add_argument("--out-csv")
    args = p.parse_args()
    if args.command == "optuna":
        run_optuna(args)
    else:
        summarise(args)


if __name__ == "__main__":
    main()
