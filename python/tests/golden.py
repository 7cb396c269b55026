"""The golden-file rules of tests/format/golden_csv.h, for DataFrames read through tsfile_c.to_pandas.

Expected CSVs (tests/data/README.md): `device,measurement,time,type,value` (tsfile-java) or
`device,measurement,time,value` (tsfile-cpp), one row per non-null value, RFC 4180 quoting, compared
after sorting by device, measurement, time. FLOAT/DOUBLE compare by their raw bits (Java layout: the
"0x..." part after '|'; C++ layout: %.9g / %.17g), TEXT/STRING with backslash doubled and control
characters as \\uXXXX, DATE as yyyy-MM-dd, BLOB as base64.
"""
import base64
import csv
import gzip
import io
import os

import numpy as np
import pandas as pd


def load_csv(path, java):
    """Sorted (device, measurement, time, type, value) tuples of an expected CSV (.csv or .csv.gz)."""
    if not os.path.exists(path):
        path += ".gz"
    raw = gzip.open(path, "rb").read() if path.endswith(".gz") else open(path, "rb").read()
    text = raw.decode("utf-8", "surrogateescape")
    rows = []
    it = csv.reader(io.StringIO(text, newline=""))
    next(it)
    for rec in it:
        if java:
            dev, meas, t, typ, val = rec
            if typ in ("FLOAT", "DOUBLE") and "|" in val:
                val = val.split("|", 1)[1]
        else:
            dev, meas, t, val = rec
            typ = ""
        rows.append((dev, meas, int(t), typ, val))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return rows


def _escape(s):
    out = []
    for c in s.encode("utf-8", "surrogateescape"):
        if c == 0x5C:
            out.append(b"\\\\")
        elif c < 0x20 or c == 0x7F:
            out.append(b"\\u%04x" % c)
        else:
            out.append(bytes((c,)))
    return b"".join(out).decode("utf-8", "surrogateescape")


def _fmt_value(typ, v, java):
    if typ == "BOOLEAN":
        return "true" if v else "false"
    if typ in ("INT32", "INT64"):
        return str(int(v))
    if typ == "TIMESTAMP":
        return str(_ms(v))
    if typ == "DATE":
        return v.isoformat()
    if typ == "FLOAT":  # v: the raw bits (a float32 through a Python float would quiet a signalling NaN)
        return "0x%08x" % v if java else "%.9g" % float(np.uint32(v).view(np.float32))
    if typ == "DOUBLE":
        return "0x%016x" % v if java else "%.17g" % float(np.uint64(v).view(np.float64))
    if typ in ("TEXT", "STRING"):
        return _escape(v)
    if typ == "BLOB":
        return base64.b64encode(v).decode()
    raise AssertionError("unexpected type %s" % typ)


def _ms(v):
    if isinstance(v, (pd.Timestamp, np.datetime64)):
        return int(pd.Timestamp(v).value // 1000000)
    return int(v)


def present(col):
    """Bool array of the non-null cells of a to_pandas column (NaN in a float column is a value)."""
    if isinstance(col.dtype, np.dtype) and col.dtype.kind in "fiub":
        return np.ones(len(col), np.bool_)
    if isinstance(col.dtype, np.dtype) and col.dtype.kind == "O":
        return np.array([v is not None for v in col.tolist()], np.bool_)
    return ~np.asarray(col.isna(), dtype=np.bool_)


def rows_from_frame(f, df, table, java):
    """Golden rows of a DataFrame that to_pandas made from file f (table: the Table for table-model
    frames, else None)."""
    types = {(d.name, s.name): s.type for d in f.devices for s in d.series}
    times = [_ms(t) for t in df["time"].tolist()] if df["time"].dtype.kind == "M" else df["time"].tolist()
    if table is not None:
        tags = [c.name for c in table.columns if c.category == "TAG"]
        tagvals = list(zip(*[[None if pd.isna(v) else v for v in df[t].tolist()] for t in tags])) or [()] * len(df)
        devices = []
        for tv in tagvals:
            tv = list(tv)
            while tv and tv[-1] is None:
                tv.pop()
            devices.append(".".join([table.name] + ["null" if v is None else v for v in tv]))
        skip = {"time"} | set(tags)
    else:
        devices = [str(d) for d in df["device"].tolist()]
        skip = {"time", "device"}
    rows = []
    for name in df.columns:
        if name in skip:
            continue
        col = df[name]
        keep = np.flatnonzero(present(col))
        vals = col.tolist()
        if col.dtype in (np.float32, np.float64, pd.Float32Dtype(), pd.Float64Dtype()):
            raw = col.array._data if hasattr(col.array, "_data") else col.to_numpy()
            vals = raw.view(np.uint32 if raw.dtype == np.float32 else np.uint64).tolist()
        for i in keep.tolist():
            typ = types.get((devices[i], name), "<absent>")
            rows.append((devices[i], name, times[i], typ if java else "", _fmt_value(typ, vals[i], java)))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return rows


def first_difference(got, want):
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return "row %d: expected %r, got %r" % (i, b, a)
    if len(got) != len(want):
        return "%d rows read, %d expected" % (len(got), len(want))
    return None
