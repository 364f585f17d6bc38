#!/usr/bin/python3
"""The helper of bench/resolution_examples.sh: cmets against top-level ei on the real trainers of the
examples that declare a resolution, at the same budget of measured trial run time (issue 4).

  resolution_examples.py run --tune BIN --example NAME --strategy S --seed K --work DIR --csv OUT
      Runs the example's campaign file with `strategy: {name: S}` and `seed: K` (nothing else
      changed: its resolution, measured costs, budget and two workers), and appends one row per
      finished trial (from the campaign's events.jsonl) to OUT. `ei` with a resolution runs every
      trial at the top level.
  resolution_examples.py summarise --csv CSV [--md-table FILE]
      Prints, per example and strategy: the median over seeds of the best full-resolution value after
      25/50/75/100% of the budget, and the median cost at which the best full-resolution value first
      reaches ei's median final best (the value top-level ei ends with), as a fraction of the budget.

Examples: xgboost (examples/xgboost/campaign.yaml: boosting rounds 10/30/90, log-loss, minimise,
120 s) and libsvm-subsets (examples/libsvm/campaign-subsets.yaml: 1/8 .. all of the digits,
cross-validation accuracy, maximise, 40 s).

CSV rows: example, strategy, seed, trial (in order of completion), level (0 = cheapest), levels,
cost (s), spent (s, cumulative over finished trials), value (empty for a failed trial), wall_s
(seconds from the session's start to the trial's end).
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLES = {
    # name: (campaign file, trial script, direction, budget)
    "xgboost": ("examples/xgboost/campaign.yaml", "examples/xgboost/xgb-train.sh", "minimize", 120.0),
    "libsvm-subsets": ("examples/libsvm/campaign-subsets.yaml", "examples/libsvm/svm-cv.sh", "maximize", 40.0),
}
FIELDS = ["example", "strategy", "seed", "trial", "level", "levels", "cost", "spent", "value", "wall_s"]
FRACTIONS = (0.25, 0.5, 0.75, 1.0)


def campaign_text(example, strategy, seed):
    path, script, _, _ = EXAMPLES[example]
    text = open(os.path.join(ROOT, path)).read()
    rel = "./" + os.path.basename(script)
    text = text.replace("command: [%s," % rel, "command: [%s," % os.path.join(ROOT, script))
    text = re.sub(r"^strategy: .*$", "strategy: {name: %s}" % strategy, text, flags=re.M)
    text = re.sub(r"^seed: .*$", "seed: %d" % seed, text, flags=re.M)
    # The campaign file must still say what it said, but for these three substitutions.
    assert os.path.join(ROOT, script) in text, "the campaign's command no longer starts with " + rel
    assert ("strategy: {name: %s}" % strategy) in text and ("seed: %d" % seed) in text
    levels = re.search(r"^resolution: \{param: \w+, levels: \[([^\]]*)\]", text, flags=re.M)
    assert levels, "the example no longer declares a resolution"
    return text, len(levels.group(1).split(","))


def run(a):
    text, levels = campaign_text(a.example, a.strategy, a.seed)
    os.makedirs(a.work, exist_ok=True)
    stem = "%s-%s-seed%d" % (a.example, a.strategy, a.seed)
    yaml = os.path.join(a.work, stem + ".yaml")
    with open(yaml, "w") as f:
        f.write(text)
    cdir = os.path.join(a.work, stem)
    subprocess.run(["rm", "-rf", cdir], check=True)
    t0 = time.time()
    subprocess.run([a.tune, "run", yaml, "--dir", cdir, "-q"], check=True)
    events = [json.loads(l) for l in open(os.path.join(cdir, "events.jsonl")) if l.strip()]
    start = next(e["time"] for e in events if e["event"] == "session_start")
    level_of, rows, spent = {}, [], 0.0
    for e in events:
        if e["event"] == "launch":
            level_of[e["trial"]] = int(e.get("level", levels - 1))
        elif e["event"] in ("complete", "fail"):
            cost = float(e.get("cost", 0.0))
            spent += cost
            value = e.get("value", "") if e["event"] == "complete" else ""
            rows.append([a.example, a.strategy, a.seed, len(rows) + 1, level_of[e["trial"]], levels,
                         cost, spent, value, e["time"] - start])
    new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
    with open(a.csv, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(FIELDS)
        w.writerows(rows)
    top = [r for r in rows if r[4] == levels - 1 and r[8] != ""]
    best = best_of([float(r[8]) for r in top], EXAMPLES[a.example][2])
    print("%s %s seed %d: %d trials (%d at full resolution), %.1f s spent, best full-resolution %s, %.0f s"
          % (a.example, a.strategy, a.seed, len(rows), len(top), spent, best, time.time() - t0), file=sys.stderr)


def best_of(values, direction):
    if not values:
        return None
    return min(values) if direction == "minimize" else max(values)


def better_or_equal(x, y, direction):
    return x <= y if direction == "minimize" else x >= y


def median(xs):
    finite = [x for x in xs if x is not None]
    if len(finite) * 2 <= len(xs):  # at least half the seeds have no value: the median has none
        return None
    inf = float("inf")
    return statistics.median([inf if x is None else x for x in xs])


def fmt(x, digits=4):
    if x is None:
        return "-"
    if x == float("inf"):
        return "not reached"
    return "%.*g" % (digits, x)


def summarise(a):
    runs = {}
    for r in csv.DictReader(open(a.csv)):
        runs.setdefault((r["example"], r["strategy"], int(r["seed"])), []).append(r)
    examples = [e for e in EXAMPLES if any(k[0] == e for k in runs)]
    lines = ["| example | strategy | seeds | trials per run (share at full resolution) | "
             + " | ".join("best full-resolution value at %d%% of the budget" % (100 * f) for f in FRACTIONS)
             + " | cost to reach ei's median final best (share of the budget; seeds reaching it) |",
             "|---|---|---|---|" + "---|" * len(FRACTIONS) + "---|"]
    for ex in examples:
        direction, budget = EXAMPLES[ex][2], EXAMPLES[ex][3]
        strategies = sorted({k[1] for k in runs if k[0] == ex}, key=lambda s: (s != "cmets", s))

        def best_until(rows, cost):
            return best_of([float(r["value"]) for r in rows if float(r["spent"]) <= cost + 1e-9 and r["value"] != ""
                            and int(r["level"]) == int(r["levels"]) - 1], direction)

        ei_final = [best_until(rows, float("inf")) for k, rows in runs.items() if k[0] == ex and k[1] == "ei"]
        target = median(ei_final) if ei_final else None
        for s in strategies:
            seeds = sorted(k[2] for k in runs if k[0] == ex and k[1] == s)
            per = [runs[(ex, s, k)] for k in seeds]
            trials = statistics.median(len(rows) for rows in per)
            top_share = statistics.median(
                sum(1 for r in rows if int(r["level"]) == int(r["levels"]) - 1) / len(rows) for rows in per)
            at = [median([best_until(rows, f * budget) for rows in per]) for f in FRACTIONS]
            reach = []
            for rows in per:
                hit = None
                if target is not None:
                    for r in rows:
                        if (r["value"] != "" and int(r["level"]) == int(r["levels"]) - 1
                                and better_or_equal(float(r["value"]), target, direction)):
                            hit = float(r["spent"]) / budget
                            break
                reach.append(float("inf") if hit is None else hit)
            reached = sum(1 for x in reach if x != float("inf"))
            lines.append("| %s | %s | %d | %g (%.0f%%) | %s | %s (%d/%d) |" % (
                ex, s, len(seeds), trials, 100 * top_share, " | ".join(fmt(x, 6) for x in at),
                fmt(statistics.median(reach), 2) if reach else "-", reached, len(reach)))
        lines.append("")
        lines.append("%s: %s, budget %g s of measured trial time; ei's median final best %s"
                     % (ex, direction, budget, fmt(target, 6)))
        lines.append("")
    table = "\n".join(lines)
    print(table)
    if a.md_table:
        with open(a.md_table, "w") as f:
            f.write(table + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--tune", required=True)
    r.add_argument("--example", required=True, choices=sorted(EXAMPLES))
    r.add_argument("--strategy", required=True)
    r.add_argument("--seed", type=int, required=True)
    r.add_argument("--work", required=True)
    r.add_argument("--csv", required=True)
    s = sub.add_parser("summarise")
    s.add_argument("--csv", required=True)
    s.add_argument("--md-table")
    a = p.parse_args()
    run(a) if a.cmd == "run" else summarise(a)


if __name__ == "__main__":
    main()
