#!/usr/bin/env python3
"""Dataset aggregations through Dask (tsfile_c.dask) against the C dataset layer, in one run.

usage: python3 bench/dask_bench.py [--build build] [--dir DIR] [--files 16] [--devices 10] [--rows 200000]
                                  [--reps 5] [--workers 1,2] [--queries Q1,Q2] [--malloc dask,glibc]

Data (made once into DIR, default build/dask_bench_data; seeded): --files table-model files, each --devices
devices (TAG `device`) x --rows rows at 1 s steps x 8 FIELDs (f0..f3 INT64 random walks, f4..f7 DOUBLE),
consecutive time ranges, the writer's default encodings + LZ4 (the dataset benchmark's shape).
Q1: group by device x 1 h window, count / sum / min / max / mean of the 8 fields over every file.
Q2: the same with 1-day windows (whole pages and chunks fit in a window: the statistics path applies).

Rows printed (JSON, one per line; p50/p90 over the reps, ms; rows/s from p50):
  c_dataset     Dataset.stats (tsf_dataset_aggregate) in this process, threads 1 and 2
  dask          tsfile_c.dask.aggregate(...).compute() on a distributed.LocalCluster of W worker processes
                (1 thread each), for each W of --workers; ratio = this W's p50 / the C p50 at threads=W
  dask_stats    the same with statistics=True (Q2; for Q1 one run, its page counters: with windows shorter
                than a page every page is cut and decoded, so the statistics path does not apply)
  dask_scaling  p50 at 1 worker / p50 at the largest W (target >= 1.6 for 2 workers)
  c_dataset_scaling  the C layer's p50 at 1 thread / at 2 threads in the same run: what the machine gave
                two threads then (on a loaded machine it bounds dask_scaling too)
  dask_overhead (Dask p50 at 1 worker - C p50 at 1 thread) / files: what Dask adds per partition
Each Dask row names its workers' malloc setting (--malloc, one cluster per setting, in this run):
  dask          as distributed starts workers: with MALLOC_TRIM_THRESHOLD_=65536 (its default
                distributed.nanny.pre-spawn-environ), which fixes glibc's mmap threshold at 128 KiB
  glibc         the same cluster started inside tsfile_c.dask.plain_malloc(): without that variable
                (glibc's defaults)
Every Dask result is checked against the C result before timing: equal bit for bit (dask), equal but for
sums within the documented tolerance (dask_stats). Warm page cache: one untimed run first. The reps
interleave: each rep runs the C layer at 1 and 2 threads, then starts each cluster in turn, runs it once
untimed, times it and closes it (only the cluster being timed runs: an idle LocalCluster's processes take
40-85 ms of CPU a second), so that a change of the (shared) machine's load during the run reaches every row
alike and the ratios compare runs made side by side. cpu_ms: the CPU time of the benchmark's process and
its children (the cluster's scheduler runs in it, workers and nannies are children) during a run, p50.
"""
import argparse
import contextlib
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
HOUR_MS = 3_600_000
WINDOWS = {"Q1": HOUR_MS, "Q2": 24 * HOUR_MS}


def pct(xs, p):
    return float(np.percentile(np.asarray(xs, dtype=float), p))


def make_data(tsfile_c, folder, nfiles, ndev, rows):
    import pandas as pd
    os.makedirs(folder, exist_ok=True)
    stamp = os.path.join(folder, "shape.json")
    shape = {"files": nfiles, "devices": ndev, "rows": rows}
    if os.path.exists(stamp) and json.load(open(stamp)) == shape:
        return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".tsfile"))
    for f in os.listdir(folder):
        if f.endswith(".tsfile"):
            os.remove(os.path.join(folder, f))
    rng = np.random.default_rng(42)
    paths = []
    for k in range(nfiles):
        n = ndev * rows
        t = np.repeat(np.arange(rows, dtype=np.int64) * 1000 + k * rows * 1000, ndev)
        data = {"time": t, "device": np.tile(np.array(["dev%02d" % d for d in range(ndev)], dtype=object), rows)}
        for j in range(4):
            data["f%d" % j] = np.cumsum(rng.integers(-5, 6, n)).astype(np.int64)
        for j in range(4, 8):
            data["f%d" % j] = np.cumsum(rng.normal(size=n))
        df = pd.DataFrame(data)
        p = os.path.join(folder, "part-%02d.tsfile" % k)
        tsfile_c.write_dataframe(df, p, table="t", tags=["device"], compression="LZ4")
        paths.append(p)
    json.dump(shape, open(stamp, "w"))
    return paths


def close_enough(got, want):
    """Every column equal but sum / mean, which may differ within 1e-9 * count * max(|min|, |max|)."""
    exact = [c for c in want.columns if c not in ("sum", "mean")]
    if not got[exact].equals(want[exact]):
        return False
    bound = 1e-9 * want["count"].to_numpy() * np.maximum(want["min"].abs(), want["max"].abs()).to_numpy()
    return bool((np.abs(got["sum"].to_numpy() - want["sum"].to_numpy()) <= bound).all())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--dir", default=None)
    ap.add_argument("--files", type=int, default=16)
    ap.add_argument("--devices", type=int, default=10)
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--queries", default="Q1,Q2")
    ap.add_argument("--malloc", default="dask,glibc")
    a = ap.parse_args()
    os.environ.setdefault("TSFILE_C_LIB", os.path.join(a.build, "libtsf.so"))
    import distributed
    import tsfile_c
    import tsfile_c.dask as tdd
    folder = a.dir or os.path.join(a.build, "dask_bench_data")
    make_data(tsfile_c, folder, a.files, a.devices, a.rows)
    total_rows = a.files * a.devices * a.rows
    cols = ["f%d" % j for j in range(8)]
    queries = a.queries.split(",")
    common = {"bench": "dask", "files": a.files, "rows": total_rows, "unit": "ms"}

    def emit(row, ms=None):
        if ms is not None:
            row.update(p50=pct(ms, 50), p90=pct(ms, 90), rows_per_s=total_rows / (pct(ms, 50) / 1e3))
        print(json.dumps(dict(common, **row, load=os.getloadavg()[0])), flush=True)

    modes = a.malloc.split(",")
    for mode in modes:
        if mode not in ("dask", "glibc"):
            raise SystemExit("--malloc takes dask and / or glibc, got %r" % (mode,))
    configs = [(mode, int(w)) for mode in modes for w in a.workers.split(",")]
    with tsfile_c.open(folder) as ds:
        for q in queries:
            run_query(a, q, ds, folder, cols, configs, emit, tdd, distributed)


def cpu_tree():
    """CPU seconds (user + system) of this process and its children (the cluster's processes)."""
    import psutil
    me = psutil.Process()
    total = 0.0
    for p in [me] + me.children(recursive=True):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def start_cluster(distributed, tdd, mode, w):
    """A LocalCluster of w worker processes (1 thread each) for --malloc mode, and its client."""
    with tdd.plain_malloc() if mode == "glibc" else contextlib.nullcontext():
        cluster = distributed.LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster, set_as_default=False)
    trim = set(client.run(worker_trim).values())
    if (mode == "glibc") != (trim == {None}):
        client.close()
        cluster.close()
        raise SystemExit("--malloc %s: the workers have MALLOC_TRIM_THRESHOLD_=%s" % (mode, trim))
    return cluster, client


def run_query(a, q, ds, folder, cols, configs, emit, tdd, distributed):
    """One query's rows. Rep after rep: the C layer at 1 and 2 threads, then each cluster in turn, started
    for that rep (one untimed run after its start, the check in the first rep), timed, and closed, so only
    the cluster being timed runs (an idle cluster's processes still take CPU) and a change of the machine's
    load during the run reaches every row alike. cpu_ms: the CPU time of this process and its children (the
    cluster) during a run."""
    def c_run(threads):
        return lambda: ds.stats(group_by="device", window=WINDOWS[q], columns=cols, threads=threads)

    def dask_run(client, stats):
        return tdd.aggregate(folder, group_by="device", window=WINDOWS[q], columns=cols,
                             statistics=stats).compute(scheduler=client.get)

    def clock(key, fn):
        c, t = cpu_tree(), time.perf_counter()
        got = fn()
        ms.setdefault(key, []).append((time.perf_counter() - t) * 1e3)
        cpu.setdefault(key, []).append((cpu_tree() - c) * 1e3)
        return got
    want = ds.stats(group_by="device", window=WINDOWS[q], columns=cols, threads=1)
    for t in (1, 2):
        c_run(t)()  # warm-up
    ms, cpu, extra = {}, {}, {}
    for rep in range(a.reps):
        for t in (1, 2):
            clock(("c", t), c_run(t))
        for mode, w in configs:
            cluster, client = start_cluster(distributed, tdd, mode, w)
            try:
                for stats in (False, True):
                    path = "dask_stats" if stats else "dask"
                    got = dask_run(client, stats)  # untimed: the workers import tsfile_c and load the library
                    if rep == 0:
                        if not (close_enough(got, want) if stats else got.equals(want)):
                            raise SystemExit("dask result (statistics=%s) differs from the C dataset layer's at %d "
                                             "workers (%s malloc), %s" % (stats, w, mode, q))
                        extra[path, w, mode] = got.attrs.get("tsfile_agg_info", {}) if stats else {}
                    if stats and q == "Q1":  # not timed: every page is cut by a window (see the docstring)
                        if rep == 0:
                            t = time.perf_counter()
                            dask_run(client, stats)
                            emit(dict({"query": q, "path": path, "workers": w, "malloc": mode,
                                       "one_run_ms": (time.perf_counter() - t) * 1e3}, **extra[path, w, mode]))
                        continue
                    clock((path, w, mode), lambda: dask_run(client, stats))
            finally:
                client.close()
                cluster.close()
    p50 = {k: pct(v, 50) for k, v in ms.items()}
    for t in (1, 2):
        emit({"query": q, "path": "c_dataset", "threads": t, "cpu_ms": pct(cpu["c", t], 50)}, ms["c", t])
    emit({"query": q, "path": "c_dataset_scaling", "threads": 2, "ratio": p50["c", 1] / p50["c", 2], "unit": "x"})
    dask_keys = [k for k in ms if k[0] != "c"]
    for k in dask_keys:
        path, w, mode = k
        emit(dict({"query": q, "path": path, "workers": w, "malloc": mode, "threads": w,
                   "ratio": p50[k] / p50["c", min(w, 2)], "ratio_to": "c_dataset threads=%d" % min(w, 2),
                   "cpu_ms": pct(cpu[k], 50)}, **extra[k]), ms[k])
    for path, w, mode in dask_keys:
        top = max(x for (pp, x, m) in dask_keys if pp == path and m == mode)
        if w == 1 and top > 1:
            emit({"query": q, "path": path + "_scaling", "workers": top, "malloc": mode,
                  "ratio": p50[path, 1, mode] / p50[path, top, mode], "unit": "x"})
        if w == 1 and path == "dask":
            emit({"query": q, "path": "dask_overhead", "workers": 1, "malloc": mode,
                  "p50": (p50[path, 1, mode] - p50["c", 1]) / a.files, "unit": "ms per partition"})

def worker_trim():
    """The worker's MALLOC_TRIM_THRESHOLD_ (run in the worker: client.run(os.environ.get, ...) would pickle
    the client's os.environ along with the bound method)."""
    return __import__("os").environ.get("MALLOC_TRIM_THRESHOLD_")

if __name__ == "__main__":
    main()
