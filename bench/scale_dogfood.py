#!/usr/bin/env python3
"""Reads what bench/scale_dogfood.sh left in OUT and prints, per campaign and per bucket of trials,
the idle time of a worker slot between a trial's end and the next start, the tuner's CPU time per
trial and its RSS; writes the same rows as CSV.

  bench/scale_dogfood.py OUT NAME[:WORKERS] ... [--bucket 1000] [--csv scale_dogfood.csv]

Slot gap: the k-th launch after the first W minus the k-th trial end (W workers; for one worker,
start[i+1] - end[i]). A trial's end is finished_at in its run record (state.yaml: the supervisor's
instant the command was reaped), its start the 'launch' event (events.jsonl: the supervisor has
been exec'd). It splits into 'detect' (end -> the outcome event: poll, read, tell, checkpoint) and
'launch' (outcome event -> next launch event: ask, checkpoint, fork/exec). CPU per trial and RSS come
from the samples taken every second (tune's own utime + stime)."""
import json, os, re, statistics as st, sys

def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")

def campaign(out, name, workers, bucket):
    d = os.path.join(out, name)
    launch, outcome = {}, {}
    for line in open(os.path.join(d, "events.jsonl")):
        e = json.loads(line)
        if e["event"] == "launch": launch.setdefault(e["trial"], e["time"])
        elif e["event"] in ("complete", "fail"): outcome.setdefault(e["trial"], e["time"])
    finished, in_runs = {}, False
    for line in open(os.path.join(d, "state.yaml")):
        if line.startswith("runs:"): in_runs = True; continue
        if in_runs and not line.startswith("  - "): break
        if in_runs:
            m = re.search(r"\{id: (\d+),.*?finished_at: ([0-9.e+]+)", line)
            if m and float(m.group(2)) > 0: finished[int(m.group(1))] = float(m.group(2))
    starts, ends, outs = sorted(launch.values()), sorted(finished.values()), sorted(outcome.values())
    W = workers
    gap = [starts[W + k] - ends[k] for k in range(min(len(starts) - W, len(ends)))]
    detect = [outs[k] - ends[k] for k in range(min(len(outs), len(ends)))]
    nxt = [starts[W + k] - outs[k] for k in range(min(len(starts) - W, len(outs)))]
    samples = []
    path = os.path.join(out, name + ".samples")
    if os.path.exists(path):
        samples = [tuple(float(x) for x in l.split()) for l in open(path) if len(l.split()) == 4]
    tick = os.sysconf("SC_CLK_TCK")
    rows = []
    for b in range(0, len(gap), bucket):
        lo, hi = b + W, min(b + bucket, len(gap)) + W - 1
        g, dd, nn = gap[b:b + bucket], detect[b:b + bucket], nxt[b:b + bucket]
        cpu, rss = float("nan"), float("nan")
        inside = [s for s in samples if lo <= s[3] <= hi + 1]
        if len(inside) >= 2 and inside[-1][3] > inside[0][3]:
            cpu = 1000 * (inside[-1][2] - inside[0][2]) / tick / (inside[-1][3] - inside[0][3])
            rss = max(s[1] for s in inside) / 1024
        rows.append(dict(campaign=name, workers=W, first=lo, last=hi, gap_median_ms=1e3 * st.median(g),
                         gap_p90_ms=1e3 * quantile(g, 0.9), gap_max_ms=1e3 * max(g),
                         detect_median_ms=1e3 * st.median(dd) if dd else float("nan"),
                         launch_median_ms=1e3 * st.median(nn) if nn else float("nan"),
                         cpu_ms_per_trial=cpu, rss_max_mb=rss))
    return rows

def main():
    args, bucket, csv = [], 1000, "scale_dogfood.csv"
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--bucket": bucket = int(argv.pop(0))
        elif a == "--csv": csv = argv.pop(0)
        else: args.append(a)
    if len(args) < 2: sys.exit(__doc__)
    out, rows = args[0], []
    for spec in args[1:]:
        name, _, w = spec.partition(":")
        rows += campaign(out, name, int(w or 1), bucket)
    cols = list(rows[0].keys())
    print("| campaign | W | trials | slot gap median ms | p90 | max | detect | launch | tuner CPU ms/trial | RSS max MB |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['campaign']} | {r['workers']} | {r['first']}-{r['last']} | {r['gap_median_ms']:.1f} | {r['gap_p90_ms']:.1f} | "
              f"{r['gap_max_ms']:.0f} | {r['detect_median_ms']:.1f} | {r['launch_median_ms']:.1f} | {r['cpu_ms_per_trial']:.1f} | {r['rss_max_mb']:.0f} |")
    with open(csv, "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows: f.write(",".join(str(r[c]) for c in cols) + "\n")
    print(f"\nCSV: {csv}")

main()
