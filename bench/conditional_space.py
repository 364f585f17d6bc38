#!/usr/bin/python3
"""The Python half of the conditional-space benchmark (bench/conditional_space.sh runs both halves).

  conditional_space.py optuna --binary build/bench/conditional_space --csv OUT [--seeds N]
                              [--evaluations N] [--functions a,b] [--methods tpe,tpe-flat,optuna-random]
      Runs Optuna's TPE sampler (TPESampler(seed=s), default settings) and random sampler
      (RandomSampler(seed=s)) with the protocol of bench/conditional_space.cpp: minimise each function,
      `evaluations` ask/tell steps per seed s = 0 .. seeds-1. The space comes from
      `conditional_space --eval FUNCTION` (which also evaluates f, so Optuna is scored on exactly the
      C++ functions). Define-by-run: the objective suggests the parameters in the space's order and a
      conditional one only where it applies (its parent was suggested and took one of the listed
      values), as an Optuna user writes `if opt == "sgd": trial.suggest_float("momentum", ...)`.
      `tpe-flat` suggests every parameter always (the flat form; f ignores what does not apply).
      A float is suggest_float (log=True where the space is log), an integer suggest_int (log too), a
      categorical suggest_categorical with the same choices in the same order; an ordinal too (Optuna
      has no ordinal type). Prints the same tables as the C++ half.

  conditional_space.py summarise --binary build/bench/conditional_space CSV... [--out-csv PATH]
      Prints the tables of every method in the CSVs (the C++ and the Optuna half together):
      per function, median and IQR (Q3 - Q1, R type 7) of the simple regret at 15, 30, 60 evaluations
      (those within the budget, and the budget), runs reaching the target regret (1% of the median
      gap between random points and the minimum, from `conditional_space --eval`), median evaluations
      to it (a run that never reaches it counts as infinite), and repeats: evaluations whose values of
      the parameters that apply equal an earlier evaluation's in the same run. Writes the summary with
      --out-csv.

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
METHOD_ORDER = ("ei", "ei-flat", "ucb", "ucb-flat", "cmes", "cmes-flat", "tpe", "tpe-flat", "random", "optuna-random")


class Evaluator:
    """The space of FUNCTION, its conditions and f on it, from `conditional_space --eval FUNCTION`."""

    def __init__(self, binary, function):
        self.name = function
        self.proc = subprocess.Popen([binary, "--eval", function], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        header = self.proc.stdout.readline().split()
        if len(header) != 3:
            sys.exit(f"conditional_space.py: no header from {binary} --eval {function}")
        n, self.minimum, self.target = int(header[0]), float(header[1]), float(header[2])
        self.params = []  # (kind, name, spec, condition): condition None or (parent, {values as text})
        for _ in range(n):
            kind, name, *rest = self.proc.stdout.readline().split()
            condition = None
            if rest and rest[0] == "when":
                condition = (rest[1], frozenset(rest[2].split(",")))
                rest = rest[3:]
            if kind in ("float", "int"):
                low, high, scale = rest
                conv = float if kind == "float" else lambda t: int(float(t))
                spec = (conv(low), conv(high), scale == "log")
            else:
                spec = tuple(rest)
            self.params.append((kind, name, spec, condition))

    def applies(self, name_condition, values):
        """Whether a parameter with this condition applies, given the values so far (text)."""
        if name_condition is None:
            return True
        parent, allowed = name_condition
        return parent in values and values[parent] in allowed

    def suggest(self, trial, flat):
        """Define-by-run: suggest the parameters in order, a conditional one only where it applies
        (every one with flat). Returns {name: value} of the suggested ones."""
        params, text = {}, {}
        for kind, name, spec, condition in self.params:
            if not flat and not self.applies(condition, text):
                continue
            if kind == "float":
                v = trial.suggest_float(name, spec[0], spec[1], log=spec[2])
            elif kind == "int":
                v = trial.suggest_int(name, spec[0], spec[1], log=spec[2])
            else:
                v = trial.suggest_categorical(name, list(spec))
            params[name] = v
            text[name] = str(v)
        return params

    def effective_key(self, params):
        """The values of the parameters that apply (by the conditions), for counting repeats."""
        text, key = {}, []
        for kind, name, _, condition in self.params:
            if name in params and self.applies(condition, text):
                text[name] = str(params[name])
                key.append((name, float(params[name]).hex() if kind == "float" else str(params[name])))
        return tuple(key)

    def __call__(self, params):
        fields = []
        for kind, name, _, _ in self.params:
            if name not in params:
                fields.append("-")
            else:
                v = params[name]
                fields.append(repr(float(v)) if kind == "float" else str(v))
        self.proc.stdin.write(" ".join(fields) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"conditional_space.py: {self.name}: the evaluator stopped at {params}")
        value = float(line)
        if value - self.minimum < -REGRET_TOLERANCE:
            sys.exit(f"conditional_space.py: {self.name}: f = {value!r} at {params} is below the known minimum "
                     f"{self.minimum!r}: the minimum is wrong")
        return value

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()










def method_key(m):
    return (METHOD_ORDER.index(m) if m in METHOD_ORDER else len(METHOD_ORDER), m)


def print_tables(regret, repeats, info, out_rows=None):
    """regret[(function, method)][seed] = [regret after evaluation 1, 2, ...];
    repeats[(function, method)] = repeated evaluations over all seeds; info[function] = (minimum, target, gap)."""
    functions = []
    for fn, _ in regret:
        if fn not in functions:
            functions.append(fn)
    for fn in functions:
        methods = sorted((m for f, m in regret if f == fn), key=method_key)
        minimum, target, gap = info[fn]
        budget = max(len(r) for m in methods for r in regret[(fn, m)].values())
        nseeds = max(len(regret[(fn, m)]) for m in methods)
        ks = checkpoints(budget)
        print(f"\n## {fn} (minimum {minimum:.6g}; target regret {fmt(target)} = 1% of the median random gap "
              f"{fmt(gap)}; median and IQR of simple regret over {nseeds} seeds)\n")
        print("| method |" + "".join(f" @{k} | IQR @{k} |" for k in ks)
              + " reached target | median evals to target | repeats |")
        print("|---|" + "---|---|" * len(ks) + "---|---|---|")
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
            row["repeats"] = repeats[(fn, m)]
            cell = f">{budget}" if math.isinf(med) else fmt(float(med))
            print(f"| {m} | " + " | ".join(cells) + f" | {reached}/{len(runs)} | {cell} | {repeats[(fn, m)]} |")
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
    repeats = defaultdict(int)
    info = {}
    with open(args.csv, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["function", "method", "seed", "evaluation", "best_so_far", "regret", "repeat"])
        start = time.perf_counter()
        for fname in args.functions.split(","):
            ev = Evaluator(args.binary, fname)
            info[fname] = (ev.minimum, ev.target, ev.target / 0.01)
            for method in args.methods.split(","):
                t_method = time.perf_counter()
                flat = method == "tpe-flat"
                for seed in range(args.seeds):
                    if method in ("tpe", "tpe-flat"):
                        sampler = optuna.samplers.TPESampler(seed=seed)
                    elif method == "optuna-random":
                        sampler = optuna.samplers.RandomSampler(seed=seed)
                    else:
                        sys.exit(f"conditional_space.py: unknown method {method!r} (tpe, tpe-flat, optuna-random)")
                    study = optuna.create_study(direction="minimize", sampler=sampler)
                    best = math.inf
                    trace = []
                    seen = set()
                    for k in range(1, args.evaluations + 1):
                        trial = study.ask()
                        params = ev.suggest(trial, flat)
                        value = ev(params)
                        study.tell(trial, value)
                        best = min(best, value)
                        trace.append(best - ev.minimum)
                        key = ev.effective_key(params)
                        repeat = key in seen
                        seen.add(key)
                        repeats[(fname, method)] += repeat
                        w.writerow([fname, method, seed, k, repr(best), repr(best - ev.minimum), int(repeat)])
                    regret[(fname, method)][seed] = trace
                print(f"[{time.perf_counter() - start:7.1f} s] {fname} / {method}: {args.seeds} seeds in "
                      f"{time.perf_counter() - t_method:.1f} s", file=sys.stderr, flush=True)
            ev.close()
    print_tables(regret, repeats, info)


def summarise(args):
    regret = defaultdict(lambda: defaultdict(list))
    repeats = defaultdict(int)
    for path in args.csvs:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["function"], row["method"])
                r = regret[key][int(row["seed"])]
                if int(row["evaluation"]) != len(r) + 1:
                    sys.exit(f"conditional_space.py: {path}: evaluations out of order at {row}")
                v = float(row["regret"])
                if v < -REGRET_TOLERANCE:
                    sys.exit(f"conditional_space.py: {path}: regret {v!r} below 0 at {row}")
                r.append(v)
                repeats[key] += int(row["repeat"])
    info = {fn: function_info(args.binary, fn) for fn in {fn for fn, _ in regret}}
    rows = []
    print_tables(regret, repeats, info, rows)
    if args.out_csv:
        write_rows(args.out_csv, rows)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    o = sub.add_parser("optuna")
    o.add_argument("--binary", required=True, help="the built conditional_space (for --eval)")
    o.add_argument("--csv", required=True)
    o.add_argument("--seeds", type=int, default=20)
    o.add_argument("--evaluations", type=int, default=60)
    o.add_argument("--functions", default="jenatton,optimizer_choice,layers_units")
    o.add_argument("--methods", default="tpe,tpe-flat,optuna-random")
    s = sub.add_parser("summarise")
    s.add_argument("--binary", required=True, help="the built conditional_space (for the minima and targets)")
    s.add_argument("csvs", nargs="+")
    s.add_argument("--out-csv")
    args = p.parse_args()
    if args.command == "optuna":
        run_optuna(args)
    else:
        summarise(args)


if __name__ == "__main__":
    main()
