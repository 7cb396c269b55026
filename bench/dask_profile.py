#!/usr/bin/env python3
"""Where the time of tsfile_c.dask.aggregate(...).compute() goes (the dask benchmark's Q1 by default).

usage: python3 bench/dask_profile.py [--build build] [--dir DIR] [--workers 1,2] [--reps 3] [--window 3600000]
                                    [--split file] [--python DIR] [--malloc dask|glibc]

DIR holds the dask benchmark's data (bench/dask_bench.py makes it). Prints, per number of worker processes,
the median over --reps runs (one untimed run first) of:
  wall          compute() as the client sees it (graph built before)
  graph         building the graph (tdd.aggregate(...): the client's metadata read + dask.dataframe)
  first_start   from compute() to the first task's start on a worker (submission, scheduling)
  partial       the partial tasks' compute time, summed, and the largest one
  merge         the merging tasks' compute time (summed; the last one's)
  tail          from the last partial's end to the result in the client (merge, transfers, gather)
  transfer      time the task stream lists as transfers between workers (summed)
  busy          partial + merge compute time / (wall x workers): how busy the workers were
then, in one worker of the cluster (one task running it all, so no scheduling is in it): one Dataset.stats
over every file (threads=1), the partials one after another and their merge (as below: compare the two
to see what the worker process itself costs, e.g. its malloc settings: --malloc glibc starts the workers
inside tsfile_c.dask.plain_malloc(), without distributed's MALLOC_TRIM_THRESHOLD_, which fixes glibc's
mmap threshold at 128 KiB);
and, in this process: one Dataset.stats over every file (threads=1), the per-file partial computations
summed, the partials' pickled size and pickle / unpickle time, and the merge of all partials.
"""
import argparse
import os
import pickle
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def med(xs):
    return float(np.median(np.asarray(xs, dtype=float)))


def clock(fn, reps=3):
    fn()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        r = fn()
        out.append((time.perf_counter() - t) * 1e3)
    return med(out), r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--dir", default=None)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--window", type=int, default=3_600_000)
    ap.add_argument("--split", default=None)
    ap.add_argument("--local", action="store_true", help="only the in-process figures")
    ap.add_argument("--malloc", default="dask", choices=("dask", "glibc"),
                    help="dask: the workers start with distributed's MALLOC_TRIM_THRESHOLD_; glibc: without it")
    ap.add_argument("--python", default=os.path.join(REPO, "python"), help="the tsfile_c package's folder")
    a = ap.parse_args()
    sys.path.insert(0, a.python)
    os.environ["PYTHONPATH"] = a.python  # the workers' too
    os.environ.setdefault("TSFILE_C_LIB", os.path.join(a.build, "libtsf.so"))
    import distributed
    import tsfile_c.dask as tdd
    if a.malloc == "glibc":
        tdd.plain_malloc().__enter__()  # for every cluster of this run
    print("workers' malloc:", a.malloc)
    folder = a.dir or os.path.join(a.build, "dask_bench_data")
    cols = ["f%d" % j for j in range(8)]
    q = dict(group_by="device", window=a.window, columns=cols)
    kw = dict(q, split=a.split) if a.split else q
    print("uptime:", os.popen("uptime").read().strip())

    # ---- in this process
    want = local_figures(folder, a.window, a.reps, "local")
    if a.local:
        return

    # ---- on a LocalCluster
    for w in [int(x) for x in a.workers.split(",")]:
        cluster = distributed.LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        try:
            for line in client.submit(local_figures, folder, a.window, a.reps, "worker", True, pure=False).result():
                print(line)
            rows = []
            for rep in range(a.reps + 1):
                t0 = time.perf_counter()
                job = tdd.aggregate(folder, **kw)
                t1 = time.perf_counter()
                with distributed.get_task_stream(client) as ts:
                    got = job.compute()
                t2 = time.perf_counter()
                if not got.equals(want):
                    raise SystemExit("differs from Dataset.stats")
                if rep == 0:
                    if os.environ.get("PROFILE_KEYS"):
                        for d in ts.data:
                            print(d["key"], d["worker"], [(x["action"], round((x["stop"] - x["start"]) * 1e3, 1))
                                                          for x in d["startstops"]])
                    continue
                # task stream times are epoch seconds on the workers (same machine: same clock)
                wall0 = time.time() - (time.perf_counter() - t1)
                part = [d for d in ts.data if "partial" in str(d["key"]) or "chunk" in str(d["key"])]
                merge = [d for d in ts.data if d not in part]

                def span(d, what):
                    return sum(s["stop"] - s["start"] for s in d["startstops"] if s["action"] == what)
                starts = [min(s["start"] for s in d["startstops"]) for d in ts.data]
                part_end = max(s["stop"] for d in part for s in d["startstops"] if s["action"] == "compute")
                pc = [span(d, "compute") for d in part]
                mc = [span(d, "compute") for d in merge]
                tr = sum(span(d, "transfer") for d in ts.data)
                wall = (t2 - t1) * 1e3
                rows.append(dict(wall=wall, graph=(t1 - t0) * 1e3, first_start=(min(starts) - wall0) * 1e3,
                                 partial=sum(pc) * 1e3, partial_max=max(pc) * 1e3, merge=sum(mc) * 1e3,
                                 merge_tasks=len(merge), tail=(wall0 + (t2 - t1) - part_end) * 1e3,
                                 transfer=tr * 1e3, busy=(sum(pc) + sum(mc)) * 1e3 / (wall * w),
                                 per_worker=sorted(collections_count(d["worker"] for d in part).values())))
            out = {k: (med([r[k] for r in rows]) if k != "per_worker" else rows[-1][k]) for k in rows[0]}
            print("dask %d worker(s): " % w + ", ".join("%s %s" % (k, ("%.0f" % v) if isinstance(v, float) and
                                                                       k != "busy" else
                                                                       ("%.2f" % v if k == "busy" else v))
                                                        for k, v in out.items()), flush=True)
        finally:
            client.close()
            cluster.close()
    print("uptime:", os.popen("uptime").read().strip())


def local_figures(folder, window, reps, where, lines=False):
    """Dataset.stats over folder, the partials one by one, their pickles and their merge, timed in this process
    (where: the label of the lines); returns the Dataset.stats frame, or with lines=True the printed lines."""
    import tsfile_c
    import tsfile_c.dask as tdd
    out = []

    def say(text):
        out.append("%s: %s" % (where, text))
        if not lines:
            print(out[-1], flush=True)
    cols = ["f%d" % j for j in range(8)]
    with tsfile_c.open(folder) as ds:
        paths = [f.path for f in ds.files]
        names = tuple(d.name for d in ds.devices)
        c1, want = clock(lambda: ds.stats(threads=1, group_by="device", window=window, columns=cols), reps)
    say("Dataset.stats threads=1 %.0f ms (%d rows)" % (c1, len(want)))
    q = dict(group_by="device", window=window, origin=0, columns=cols, where=None, table=None, devices=None,
             tags=None, time_unit="ms", checked=True, statistics=False)
    parts, t_parts = [], []
    for i, p in enumerate(paths):
        t = time.perf_counter()
        parts.append(tdd._agg_task([(p, None, None, None)], i == 0, names, q))
        t_parts.append((time.perf_counter() - t) * 1e3)
    say("partials one by one %.0f ms (each %.0f..%.0f ms), %d rows" %
        (sum(t_parts), min(t_parts), max(t_parts), sum(len(x.arrays["dev"]) for x in parts)))
    blobs = [pickle.dumps(x, protocol=5) for x in parts]
    t_dump, _ = clock(lambda: [pickle.dumps(x, protocol=5) for x in parts], reps)
    t_load, _ = clock(lambda: [pickle.loads(b) for b in blobs], reps)
    say("partials pickled %d bytes in all, dumps %.1f ms, loads %.1f ms (all of them)" %
        (sum(map(len, blobs)), t_dump, t_load))
    t_merge, got = clock(lambda: tdd._finish(parts, names), reps)
    say("merge of all partials into the frame %.1f ms, equal to Dataset.stats: %s" % (t_merge, got.equals(want)))
    blob = pickle.dumps(got, protocol=5)
    t_dump, _ = clock(lambda: pickle.dumps(got, protocol=5), reps)
    t_load, _ = clock(lambda: pickle.loads(blob), reps)
    say("result frame pickled %d bytes, dumps %.1f ms, loads %.1f ms" % (len(blob), t_dump, t_load))
    return out if lines else want


def collections_count(it):
    import collections
    return collections.Counter(it)


if __name__ == "__main__":
    main()
