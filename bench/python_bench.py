#!/usr/bin/env python3
"""The Python package (python/) against the C library on the same files, in one run.

usage: python3 bench/python_bench.py [--build build] [--rows N] [--reps R] [--e2 FILE] [--case-a-rows N]
                                    [--only read|write]

Rows printed (JSON, one per line; p50/p90 over the reps, ms; ratio = Python p50 / C p50):
  e2_to_pandas_100   to_pandas of the E2 file's 8 INT64 fields (time, dev categorical, f0..f7) vs the C
                     `simd` query of the same columns (tsf-bench read --paths simd, same file, same run;
                     the C figure is the mean of the p50s of a run before and one after the Python reps)
  e2_to_pandas_1     the same for the centred 1% time range (tsf-bench read's window); also the gap in ms
  ..._reuse          the same with malloc told to keep freed memory (MALLOC_MMAP_MAX_=0,
                     MALLOC_TRIM_THRESHOLD_ large) so that reps after the first reuse pages already
                     touched: what remains once the cost of faulting in fresh pages is taken out
  write_case_a       write_dataframe of case A's shape (1 device x 100 DOUBLE, non-aligned, GORILLA + LZ4,
                     1000 ms steps, random walks) vs `tsf-bench write --case A --path column --pregen`, in
                     M points/s (ratio = Python / C speed)
                     Every read row also has minor_faults_p50 (page faults of the process per to_pandas
                     call: new pages), fill_p50 (in the same process, before the to_pandas reps: the time
                     to allocate the DataFrame's bytes as one NumPy array, write one byte per 4 KiB and free
                     it, i.e. to fault in that much memory as any NumPy program would), and net_ratio = (p50 - fill_p50) /
                     the C p50: what is left once the cost of new pages, which the C query (it reuses its
                     buffers) never pays, is taken out
  e2_peak_memory     peak RSS growth of a fresh process running the full to_pandas, against the
                     DataFrame's own size (DataFrame.memory_usage)
The E2 file is made by `tsf-bench read --keep FILE` (20M rows: 10 devices x 8 INT64 fields, TS_2DIFF +
SNAPPY); timings are wall clock with a warm page cache, after one untimed warm-up rep.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
T0 = 1600000000000


def pct(xs, p):
    return float(np.percentile(np.asarray(xs, dtype=float), p))


def c_read(bench, path, rows, select, reps):
    out = subprocess.run([bench, "read", "--rows", str(rows), "--keep", path, "--paths", "simd", "--select",
                          str(select), "--reps", str(reps), "--json", "--clock", "wall"],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        row = json.loads(line)
        if row.get("path") == "simd":
            return row["p50_ms"], row
    raise SystemExit("tsf-bench read printed no simd row:\n" + out)


def py_read_worker(path, rows, select, reps):
    """Runs in a subprocess (its own malloc settings): prints the to_pandas times (ms) and the row count."""
    import tsfile_c
    print(json.dumps(py_read(tsfile_c, path, rows, select, reps)))


def py_read_sub(path, rows, select, reps, reuse):
    env = dict(os.environ)
    if reuse:
        env.update(MALLOC_MMAP_MAX_="0", MALLOC_TRIM_THRESHOLD_=str(1 << 40))
    out = subprocess.run([sys.executable, __file__, "--worker", path, str(rows), str(select), str(reps + 1)],
                         check=True, capture_output=True, text=True, env=env).stdout
    ms, n, fill, faults = json.loads(out)
    return ms[1:], n, fill[1:], faults[1:]  # the first rep warms up (lazy imports; with reuse, the pages malloc keeps)


def py_read(tsfile_c, path, rows, select, reps):
    per = rows // 10
    kw = {}
    if select < 1:
        k = int(select * per + 0.5)
        lo = (per - k) // 2
        kw = {"start": T0 + lo * 1000 - 500, "end": T0 + (lo + k - 1) * 1000 + 500}
    cols = ["f%d" % i for i in range(8)]
    import resource
    ms, n, fill, faults = [], 0, [], []
    with tsfile_c.open(path) as f:
        df = f.to_pandas(table="e2", columns=cols, **kw)
        nbytes = len(df) * 8 * (1 + len(cols)) + len(df)  # time, fields, tag codes
        del df
        for _ in range(reps):  # first: one NumPy allocation of as many bytes, one byte per page written, freed
            t = time.perf_counter()
            m = np.empty(nbytes, np.uint8)
            m[::4096] = 1
            fill.append((time.perf_counter() - t) * 1e3)
            del m
        for _ in range(reps):
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t = time.perf_counter()
            df = f.to_pandas(table="e2", columns=cols, **kw)
            ms.append((time.perf_counter() - t) * 1e3)
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
            n = len(df)
            del df
    return ms, n, fill, faults


def peak_memory(path):
    """(peak RSS growth, DataFrame bytes) of to_pandas in a fresh process."""
    code = ("import sys; sys.path.insert(0, %r); import tsfile_c, pandas\n"
            "def kb(k): return int(open('/proc/self/status').read().split(k + ':')[1].split()[0])\n"
            "f = tsfile_c.open(%r); open('/proc/self/clear_refs', 'w').write('5'); base = kb('VmRSS')\n"
            "df = f.to_pandas(table='e2', columns=['f%%d' %% i for i in range(8)])\n"
            "print((kb('VmHWM') - base) * 1024, int(df.memory_usage(index=False).sum()))\n"
            % (os.path.join(REPO, "python"), path))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]), int(out[1])


def case_a_frame(rows, ncols=100):
    import pandas as pd
    rng = np.random.default_rng(42)
    data = {"time": np.arange(rows, dtype=np.int64) * 1000}
    for k in range(ncols):
        data["s%d" % k] = np.cumsum(rng.uniform(-0.5, 0.5, rows))
    return pd.DataFrame(data)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return py_read_worker(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--rows", type=int, default=20000000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--e2", default="/tmp/tsf-python-bench-e2.tsfile")
    ap.add_argument("--case-a-rows", type=int, default=1000000)
    ap.add_argument("--only", choices=["read", "write"], help="run only the read or only the write rows")
    a = ap.parse_args()
    os.environ.setdefault("TSFILE_C_LIB", os.path.join(a.build, "libtsf.so"))
    import tsfile_c
    bench = os.path.join(a.build, "tsf-bench")
    runs = [(1.0, "e2_to_pandas_100", 0), (0.01, "e2_to_pandas_1", 0), (1.0, "e2_to_pandas_100_reuse", 1),
            (0.01, "e2_to_pandas_1_reuse", 1)]
    for sel, name, reuse in runs if a.only != "write" else []:
        c_ms, _ = c_read(bench, a.e2, a.rows, sel, a.reps)
        py_ms, n, fill, faults = py_read_sub(a.e2, a.rows, sel, a.reps, reuse)
        c2_ms, _ = c_read(bench, a.e2, a.rows, sel, a.reps)  # before and after: the load moves
        c_p50 = (c_ms + c2_ms) / 2
        print(json.dumps({"bench": "python", "query": name, "rows": n, "p50": round(pct(py_ms, 50), 3),
                          "p90": round(pct(py_ms, 90), 3), "unit": "ms", "c_simd_p50": round(c_p50, 3),
                          "ratio": round(pct(py_ms, 50) / c_p50, 3),
                          "gap_ms": round(pct(py_ms, 50) - c_p50, 3), "fill_p50": round(pct(fill, 50), 3),
                          "minor_faults_p50": int(pct(faults, 50)),
                          "net_ratio": round((pct(py_ms, 50) - pct(fill, 50)) / c_p50, 3)}), flush=True)
    if a.only != "write":
        grow, size = peak_memory(a.e2)
        print(json.dumps({"bench": "python", "query": "e2_peak_memory", "p50": grow, "p90": grow, "unit": "bytes",
                          "dataframe_bytes": size, "ratio": round(grow / size, 3)}), flush=True)
    if a.only == "read":
        return
    out = subprocess.run([bench, "write", "--case", "A", "--rows", str(a.case_a_rows), "--path", "column",
                          "--pregen", "--reps", str(a.reps), "--json", "--out", "/tmp/tsf-python-bench-c.tsfile"],
                         check=True, capture_output=True, text=True).stdout
    c_rate = json.loads(out.splitlines()[-1])["p50"]
    df = case_a_frame(a.case_a_rows)
    rates = []
    points = a.case_a_rows * 100
    for _ in range(a.reps):
        if os.path.exists("/tmp/tsf-python-bench-py.tsfile"):  # freeing the last file is not part of this write
            os.remove("/tmp/tsf-python-bench-py.tsfile")
        t = time.perf_counter()
        tsfile_c.write_dataframe(df, "/tmp/tsf-python-bench-py.tsfile", device="root.bench.d0", aligned=False,
                                 encoding="GORILLA", compression="LZ4")
        rates.append(points / (time.perf_counter() - t) / 1e6)
    print(json.dumps({"bench": "python", "query": "write_case_a", "rows": a.case_a_rows,
                      "p50": round(pct(rates, 50), 3), "p90": round(pct(rates, 10), 3), "unit": "M points/s",
                      "c_p50": c_rate, "ratio": round(pct(rates, 50) / c_rate, 3),
                      "file_bytes": os.path.getsize("/tmp/tsf-python-bench-py.tsfile")}), flush=True)
    for p in ("/tmp/tsf-python-bench-py.tsfile", "/tmp/tsf-python-bench-c.tsfile"):
        if os.path.exists(p):
            os.remove(p)


if __name__ == "__main__":
    main()
