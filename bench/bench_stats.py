"""Summary statistics of the Python halves of the benchmarks, as bench/bench_stats.hpp and
bench/regret_tables.hpp compute them, so that the two halves' tables agree digit for digit."""
import csv
import math


def checkpoints(budget):
    """The evaluations at which the tables show the regret: 15, 30, 60 within the budget, and the budget."""
    ks = [k for k in (15, 30, 60) if k <= budget]
    if not ks or ks[-1] != budget:
        ks.append(budget)
    return ks


def quantile(values, q):
    """R type 7 (linear interpolation)."""
    v = sorted(values)
    if not v:
        return math.nan
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def median_with_inf(values):
    """The median of values that may be infinite (a run that never reached the target)."""
    v = sorted(values)
    if not v:
        return math.nan
    n = len(v)
    if n % 2:
        return v[n // 2]
    a, b = v[n // 2 - 1], v[n // 2]
    return math.inf if math.isinf(a) or math.isinf(b) else 0.5 * (a + b)


def fmt(x):
    """%.3g as the C++ tables; '-' for NaN."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3g}"


def write_rows(path, rows, columns=None):
    """The summary rows (dicts) as CSV: floats in their shortest round-trip form, the columns in order
    of first appearance unless given."""
    if columns is None:
        columns = []
        for r in rows:
            columns += [c for c in r if c not in columns]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({c: (repr(r[c]) if isinstance(r.get(c), float) else r.get(c, "")) for c in columns})
