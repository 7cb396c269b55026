"""A TsFile dataset as a Dask DataFrame, aggregations across Dask workers, and writing a Dask DataFrame as
a dataset (one TsFile per partition).

    import tsfile_c.dask as tdd
    ddf = tdd.read_dataset("data/", columns=["f0"], start=0, end=10**12, split="file")
    agg = tdd.aggregate("data/", group_by="device", window=3_600_000).compute()
    daily = tdd.aggregate("data/", window=86_400_000, statistics=True).compute()  # chunks from statistics
    few = tdd.aggregate("big/", window=3_600_000, split="chunk-groups:4").compute()  # 4 devices of a file a task
    per_device = tdd.read_dataset("big.tsfile", split="chunk-group")  # a partition per device of a file
    tdd.to_tsfile(ddf, "copy/", table="t", tags=["device"])

Work is described by small picklable fragments (file paths + a time range + optionally some of a file's
devices, + the query's options), so the client reads only metadata and each worker opens its files itself;
a worker process loads libtsf.so once, when it first imports tsfile_c, and keeps it. Errors in a worker
reach the client as tsfile_c.TsfError with the library's status and message (which names the file). Runs
on any Dask scheduler: the local one, a distributed.LocalCluster, or a cluster of machines
(distributed.Client("tcp://scheduler:8786")) whose workers see the files at the same paths.
"""
import collections
import os
import re
import threading

import numpy as np

from ._dataset import (_FRAME_FLOATS, AGG_ARRAY_DTYPES, Dataset, ReaderPool, agg_frame_of, concat_frames,
                       file_selection, stats_frame)
from ._errors import TsfError
from ._reader import TsFile, _stats_values, _to_time

_DURATION = re.compile(r"^(\d+)(ns|us|ms|s|m|h|d)?$")
_SCALE = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
_UNITS = {"s": 1, "ms": 1000, "us": 1000000, "ns": 1000000000}


def _interval(text, time_unit):
    """'1h', '15m', '500ms' or an integer (file units) -> file time units."""
    m = _DURATION.match(text.strip())
    if not m:
        raise ValueError("split='time:%s': the interval is a number with an optional unit (ns us ms s m h d)" % text)
    n, unit = int(m.group(1)), m.group(2)
    v = n if unit is None else int(round(n * _SCALE[unit] * _UNITS[time_unit]))
    if v <= 0:
        raise ValueError("split='time:%s': the interval must be at least one time unit" % text)
    return v


Fragment = collections.namedtuple("Fragment", "paths start end devices", defaults=(None,))
Fragment.__doc__ = ("The files (a tuple of paths) a partition reads, its inclusive time range (file units) and, for "
                    "split='chunk-group', the devices it reads of its one file (a tuple of the device numbers in "
                    "that file, TsFile.devices; None = every selected device).")


class _naming:
    """Adds the file's path to a TsfError raised inside (the library's messages name offsets, not files)."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if isinstance(e, TsfError) and self.path not in e.message:
            raise TsfError(e.status, "%s: %s" % (self.path, e.message), e.call) from e
        return False


def _read_fragment(fr, columns, where, tags, table, devices, time_unit, time, checked, frame_meta, by_time):
    """One partition: the fragment's files read as Dataset.to_pandas would, in meta's dtypes."""
    import pandas as pd
    paths, start, end, part = fr
    frames = []
    counters = {}
    for p in paths:
        with _naming(p), TsFile(p, checked=checked) as f:
            args = file_selection(f, table, devices)
            if args is not None and part is not None:
                args = _devices_of_part(f, part, *args)
            if args is None:
                continue
            frames.append(f.to_pandas(columns, start, end, where, args[0], args[1], tags, None, time_unit, time))
            for k, v in f.last_query_stats.items():
                counters[k] = counters.get(k, 0) + v
    df = concat_frames(frames, frame_meta)
    df = df[list(frame_meta.columns)].astype(dict(frame_meta.dtypes))
    if by_time:
        df = df.sort_values("time", kind="stable").set_index("time")
    else:
        df.index = pd.RangeIndex(len(df))
    df.attrs["tsfile_query_stats"] = counters  # the library's counters of this partition's queries
    return df


def _devices_of_part(f, part, table, names):
    """The (table, device numbers) of f a chunk-group fragment reads: its devices that the selection (a table,
    or device names) keeps, or None when none is left."""
    mine = []
    for i in part:
        if not 0 <= i < len(f.devices):
            raise TsfError(-1, "device %d: the file has %d devices (it changed since the fragments were made)"
                           % (i, len(f.devices)), "read_dataset")
        d = f.devices[i]
        if (names is None or d.name in names) and (table is None or d.table == table):
            mine.append(i)
    return (table, mine) if mine else None


def _chunk_groups(ds, i, n, lo, hi, table, devices):
    """Fragments of file i for split="chunk-group[s:n]": its devices with a point in [lo, hi] that the
    selection keeps, in the file's device order, n to a fragment."""
    keep = None if devices is None else set(devices)
    devs = sorted((fd for fd in ds.file_devices(i)
                   if fd.time_min <= fd.time_max and fd.time_min <= hi and fd.time_max >= lo
                   and (keep is None or fd.name in keep)
                   and (keep is not None or table is None or ds._device_by_name[fd.name].table == table)),
                  key=lambda fd: fd.index)
    return [tuple(fd.index for fd in devs[k:k + n]) for k in range(0, len(devs), n)]


def _split_count(split, name):
    """n of '<name>:<n>' (a positive integer), else None."""
    if split.startswith(name + ":") and split[len(name) + 1:].isdigit() and int(split[len(name) + 1:]) > 0:
        return int(split[len(name) + 1:])
    return None


def fragments(ds, start=None, end=None, split="file", time_unit="ms", table=None, devices=None):
    """The fragments read_dataset makes: one per planned file (split="file"), one per n consecutive files
    (split="files:<n>"), one per device of each planned file (split="chunk-group": the device's chunk
    groups in that file) or per n devices of a file ("chunk-groups:<n>"), or one per time interval that
    holds data (split="time:<interval>", intervals from the epoch), each with the files meeting it. table /
    devices (names): the selection, which chunk-group fragments follow (files hold devices the others
    skip at read time)."""
    t0, t1 = _to_time(start, time_unit, "start"), _to_time(end, time_unit, "end")
    lo = -(1 << 63) if t0 is None else t0
    hi = (1 << 63) - 1 if t1 is None else t1
    planned = ds.plan(start, end, time_unit)
    files = [ds.files[i] for i in planned]
    if split == "file":
        return [Fragment((f.path,), t0, t1) for f in files]
    n = _split_count(split, "files")
    if n:
        return [Fragment(tuple(f.path for f in files[k:k + n]), t0, t1) for k in range(0, len(files), n)]
    n = 1 if split == "chunk-group" else _split_count(split, "chunk-groups")
    if n:
        if isinstance(devices, str):
            devices = [devices]
        return [Fragment((ds.files[i].path,), t0, t1, part) for i in planned
                for part in _chunk_groups(ds, i, n, lo, hi, table, devices)]
    if not split.startswith("time:"):
        raise ValueError("split must be 'file', 'files:<n>', 'chunk-group', 'chunk-groups:<n>' or 'time:<interval>' "
                         "(e.g. 'time:1h'), got %r" % (split,))
    step = _interval(split[5:], time_unit)
    starts = {}
    for f in files:
        a, b = max(f.time_min, lo), min(f.time_max, hi)
        k0, k1 = a // step, b // step
        if k1 - k0 > 1000000:
            raise ValueError("split=%r makes more than a million partitions" % (split,))
        for k in range(k0, k1 + 1):
            starts.setdefault(k, []).append(f.path)
    out = []
    for k in sorted(starts):
        out.append(Fragment(tuple(starts[k]), max(k * step, lo), min(k * step + step - 1, hi)))
    return out


def read_dataset(paths, columns=None, start=None, end=None, where=None, tags=None, table=None, devices=None,
                 split="file", time_unit="ms", time="datetime", checked=True):
    """A dask.dataframe.DataFrame of the dataset's selected rows (the layout of Dataset.to_pandas, value
    columns in pandas' nullable dtypes, device / tags categorical over every device of the dataset).
    columns, start/end, where and tags go into every partition's query, so a worker reads only what it
    needs. split="file": a partition per file; "files:8": per 8 consecutive files; "chunk-group": a
    partition per device of each file, i.e. the device's chunk groups in that file (a TsFile chunk group
    is one device's chunks of one flush; the file's index lists a device's chunks across all of its chunk
    groups, so one device of one file is the smallest piece planned from metadata alone), which splits a
    file of many devices into many partitions; "chunk-groups:16": per 16 devices of a file; split="time:1h"
    (any interval): a partition per interval, indexed and sorted by time with known divisions, so a later
    time selection (ddf.loc[a:b]) skips partitions. Partitions of the other splits come in file order, then
    device order, and concatenate to Dataset.to_pandas. The client reads metadata only."""
    import dask.dataframe as dd
    import pandas as pd
    with Dataset(paths, checked=checked) as ds:
        table = ds._table_of(table) if devices is None else table
        meta = ds.frame_meta(columns, table, time_unit, time)
        if isinstance(devices, str):
            devices = [devices]
        frs = fragments(ds, start, end, split, time_unit, table, devices)
    by_time = split.startswith("time:")
    part_meta = meta.set_index("time") if by_time else meta
    divisions = None
    if by_time and frs:
        def stamp(t):
            return t if time == "int" else pd.Timestamp(t, unit=time_unit)
        divisions = [stamp(fr[1]) for fr in frs] + [stamp(frs[-1][2])]
    if not frs:  # nothing planned: one empty partition
        return dd.from_pandas(part_meta, npartitions=1)
    return dd.from_map(_read_fragment, frs, meta=part_meta, divisions=divisions, label="read-tsfile",
                       enforce_metadata=False, columns=columns, where=where, tags=tags, table=table, devices=devices,
                       time_unit=time_unit, time=time, checked=checked, frame_meta=meta, by_time=by_time)


# ---- aggregation ---------------------------------------------------------------------------------------
#
# A task aggregates each file of its fragment alone (the library's aggregation of that file, which is what the
# dataset aggregation makes of each file before merging) into a Part: the rows as columns (NumPy arrays:
# integer-coded keys, then the aggregates) and the names the codes stand for. Parts are merged in the
# workers along a tree of consecutive parts (split_every at a time), and only the root's frame travels to
# the client. The library merges its per-file accumulators in file order, and a floating-point sum depends on
# the order of its additions, so a merge folds a key's rows into one only where that fold is the library's:
# in the parts that begin with the first file (a prefix of the file order). Every other merge sorts the rows
# by key and keeps each file's row of a key, in file order, for the prefix merge above it to fold.

# The library's counters of the statistics path (tsf_agg_info), summed over the files into the result's
# attrs["tsfile_agg_info"].
AGG_INFO = ("chunks_from_stats", "pages_from_stats", "pages_decoded", "points_from_stats", "points_decoded")
_NUMERIC = ("BOOLEAN", "INT32", "DATE", "INT64", "TIMESTAMP", "FLOAT", "DOUBLE")
_PART_DTYPES = {k: t for k, t in AGG_ARRAY_DTYPES.items() if k != "mean"}
_NO_WINDOW = -(1 << 63)  # win of the rows of an aggregation with one window (the library's INT64_MIN)

Part = collections.namedtuple("Part", "arrays devices columns info")
Part.__doc__ = ("A partial aggregate: arrays (dev, win, col, count, sum, min, max, first, last, first_time, "
                "last_time: NumPy arrays of one length, rows sorted by key with a key's rows in file order), "
                "devices (the names dev indexes, -1 = no device; None: dev is the device's index in the "
                "dataset), columns (the names col indexes, sorted) and info (the statistics path's counters, "
                "else None).")


def _empty_part(info=None):
    return Part({k: np.zeros(0, t) for k, t in _PART_DTYPES.items()}, None, [], info)


_POOL = None  # this process's ReaderPool (_worker_pool)
_POOL_LOCK = threading.Lock()


def _worker_pool():
    """The ReaderPool of this process, made by its first task: a worker's tasks take the readers of files it
    read before (their index) instead of opening each file anew, and every task decodes into the pool's
    buffers (already faulted in), whichever file it reads."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ReaderPool()
        return _POOL


def _file_part(path, t0, t1, names, q):
    """One file's aggregate (Dataset.stats of that file alone, its rows in the library's order) as a Part;
    names: the devices of a chunk-group fragment (None: the query's selection)."""
    with _naming(path), Dataset([path], checked=q["checked"], pool=_worker_pool()) as ds:
        args = file_selection(ds, q["table"], q["devices"] if names is None else names)
        if args is None:
            return _empty_part()
        arrays, devs, cols = ds._stats_arrays(q["group_by"], q["window"], q["origin"], q["columns"], t0, t1,
                                              q["where"], args[0], args[1], q["tags"], time_unit=q["time_unit"])
        del arrays["mean"]
        return Part(arrays, devs, cols, None)


def _tag_match(f, d, tags):
    """Whether device d of f has every {tag: value} of tags (a device without such a TAG does not)."""
    t = f._table_by_name.get(d.table)
    names = [c.name for c in t.columns if c.category == "TAG"] if t is not None else []
    for k, v in tags.items():
        if k not in names:
            return False
        i = names.index(k) + 1
        if i >= len(d.segments) or d.segments[i] is None or d.segments[i] != v:
            return False
    return True


def _file_stats_part(path, t0, t1, names, q):
    """One file's aggregate answered by the one-file aggregation (tsf_aggregate: whole chunks and pages inside
    a window from their statistics, the other pages decoded): a row per device x window x column (with
    group_by=None, a device's rows after the previous device's, merged later in that order), with the
    library's counters."""
    with _naming(path), TsFile(path, checked=q["checked"]) as f:
        args = file_selection(f, q["table"], q["devices"] if names is None else names)
        if args is None:
            return _empty_part(dict.fromkeys(AGG_INFO, 0))
        devs, _ = f._select_devices(args[0], args[1], None)
        if q["tags"]:
            devs = [d for d in devs if _tag_match(f, d, q["tags"])]
        by_dev, window = q["group_by"] == "device", q["window"]
        rows = []
        for d, ser, w, typ in f._aggregate(devs, q["columns"], t0, t1, window, q["origin"], q["time_unit"]):
            st = w.stats
            mn, mx, fi, la, sm = [float(v) for v in _stats_values(st, typ)] if ser.type in _NUMERIC else [0.0] * 5
            rows.append((d.index if by_dev else -1, w.start if window else _NO_WINDOW, ser.name, st.count, sm, mn,
                         mx, fi, la, st.start_time, st.end_time))
        info = {k: (f.last_stats_info or {}).get(k, 0) for k in AGG_INFO}
        if not rows:
            return _empty_part(info)
        cols = sorted({r[2] for r in rows})
        code = {c: i for i, c in enumerate(cols)}
        fields = list(zip(*rows))
        fields[2] = [code[c] for c in fields[2]]
        arrays = {k: np.array(v, dtype=t) for (k, t), v in zip(_PART_DTYPES.items(), fields)}
        return Part(arrays, [d.name for d in f.devices], cols, info)


class _Rows:
    """The rows of several parts' arrays one after another, as if concatenated, without copying the value
    columns: the key columns (dev, win, col) are concatenated for sorting, values are read from the parts."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.off = np.cumsum([0] + [len(c["dev"]) for c in chunks])
        self.n = int(self.off[-1])
        self.keys = {k: chunks[0][k] if len(chunks) == 1 else np.concatenate([c[k] for c in chunks])
                     for k in ("dev", "win", "col")}

    def sorted_keys(self, order):
        """dev, win, col permuted by order (None: as they are), as new arrays."""
        if order is None:
            return tuple(self.keys[c] if len(self.chunks) > 1 else self.keys[c].copy() for c in ("dev", "win", "col"))
        return tuple(self.keys[c][order] for c in ("dev", "win", "col"))

    def gather(self, dest, m, floats, keys):
        """The m output rows: row i's values of each value column go to output row dest[i] (rows with dest
        -1 to none), keys (dev, win, col) given; with floats, the float columns are rows of one agg_frame_of
        block (out["floats"], its mean row left to fill)."""
        out = dict(keys)
        if floats:
            out["floats"] = np.empty((len(_FRAME_FLOATS), m))
        spans = [dest[self.off[p]:self.off[p + 1]] for p in range(len(self.chunks))]
        sel = [None if (d >= 0).all() else d >= 0 for d in spans]
        for c, t in _PART_DTYPES.items():
            if c in out:
                continue
            dst = out["floats"][_FRAME_FLOATS.index(c)] if floats and c in _FRAME_FLOATS else np.empty(m, t)
            for ch, d, s in zip(self.chunks, spans, sel):
                if s is None:
                    dst[d] = ch[c]
                else:
                    dst[d[s]] = ch[c][s]
            out[c] = dst
        return out

    def take(self, c, rows):
        """Column c at rows (a few)."""
        if len(self.chunks) == 1:
            return self.chunks[0][c][rows]
        which = np.searchsorted(self.off, rows, side="right") - 1
        out = np.empty(len(rows), _PART_DTYPES[c])
        for p in np.unique(which):
            m = which == p
            out[m] = self.chunks[p][c][rows[m] - self.off[p]]
        return out


def _inverse(order, n):
    """The output row of each input row for the permutation order (None: the identity)."""
    if order is None:
        return np.arange(n)
    dest = np.empty(n, np.int64)
    dest[order] = np.arange(n)
    return dest


def _fold(rows, order, floats):
    """rows (a _Rows) sorted by key (order: the permutation that sorts them, None when they are), a key's
    rows in file order, folded into one row per key exactly as the library merges per-file accumulators in
    file order: count and sum added, min / max (a smaller / larger value replaces), first from the earliest
    time (the earlier file on a tie), last from the latest (the later file on a tie); an accumulator without
    values (count 0) takes the next row whole, and a row without values adds nothing to one with values.
    Vectorized over the keys: the k-th row of every key is merged in one step, k = 1, 2, ..., so each key's
    additions are the sequential ones. Each output column is written once from the parts (_Rows.gather)."""
    n = rows.n
    kd, kw, kc = rows.sorted_keys(order)
    same = (kd[1:] == kd[:-1]) & (kw[1:] == kw[:-1]) & (kc[1:] == kc[:-1])
    if not same.any():
        return rows.gather(_inverse(order, n), n, floats, dict(dev=kd, win=kw, col=kc))
    head = np.concatenate(([True], ~same))
    starts = np.flatnonzero(head)
    key = np.cumsum(head) - 1  # each sorted row's key (its number in the output)
    rank = np.arange(n) - starts[key]  # each sorted row's place among its key's rows
    dest = np.full(n, -1, np.int64)  # the output row of each input row that opens its key
    dest[starts if order is None else order[starts]] = np.arange(len(starts))
    acc = rows.gather(dest, len(starts), floats, dict(dev=kd[starts], win=kw[starts], col=kc[starts]))
    later = np.flatnonzero(rank)
    later = later[np.argsort(rank[later], kind="stable")]
    bounds = np.searchsorted(rank[later], np.arange(1, int(rank.max()) + 2))
    for k in range(len(bounds) - 1):
        idx = later[bounds[k]:bounds[k + 1]]
        gg = key[idx]
        src = idx if order is None else order[idx]
        new = {c: rows.take(c, src) for c in _PART_DTYPES if c not in ("dev", "win", "col")}
        empty = acc["count"][gg] == 0  # an accumulator without values takes the row whole
        if empty.any():
            for c in new:
                acc[c][gg[empty]] = new[c][empty]
            gg, new = gg[~empty], {c: v[~empty] for c, v in new.items()}
        has = new["count"] != 0  # a row without values adds nothing
        if not has.all():
            gg, new = gg[has], {c: v[has] for c, v in new.items()}
        acc["count"][gg] += new["count"]
        acc["sum"][gg] += new["sum"]
        cur = acc["min"][gg]
        acc["min"][gg] = np.where(new["min"] < cur, new["min"], cur)
        cur = acc["max"][gg]
        acc["max"][gg] = np.where(new["max"] > cur, new["max"], cur)
        earlier = new["first_time"] < acc["first_time"][gg]
        acc["first_time"][gg[earlier]] = new["first_time"][earlier]
        acc["first"][gg[earlier]] = new["first"][earlier]
        later_t = new["last_time"] >= acc["last_time"][gg]
        acc["last_time"][gg[later_t]] = new["last_time"][later_t]
        acc["last"][gg[later_t]] = new["last"][later_t]
    return acc


def _merge(parts, names, fold, floats=False):
    """parts (consecutive, in file order) as one Part whose dev is the device's index in the dataset (names:
    the dataset's device names in order), rows in the library's order (device index, window, column name)
    with a key's rows in file order; fold (only for parts that begin with the first file): each key's rows
    folded into one (_fold). floats (with fold): the float columns are rows of one agg_frame_of block
    (arrays["floats"]). The arrays are new (none is a part's)."""
    cols = sorted(set().union(*(p.columns for p in parts)))
    code = {c: i for i, c in enumerate(cols)}
    infos = [p.info for p in parts if p.info is not None]
    info = {k: sum(i.get(k, 0) for i in infos) for k in AGG_INFO} if infos else None
    rank, chunks = None, []
    for p in parts:
        a = p.arrays
        if len(a["dev"]) == 0:
            continue
        dev = a["dev"]
        if p.devices is not None:
            if rank is None:
                rank = {n: i for i, n in enumerate(names)}
            dev = np.array([rank.get(n, -1) for n in p.devices] + [-1], np.int64)[dev]  # -1: the last entry
        col = a["col"] if p.columns == cols else np.array([code[c] for c in p.columns], np.int64)[a["col"]]
        chunks.append(dict(a, dev=dev, col=col))
    if not chunks:
        return Part(_empty_part().arrays, None, cols, info)
    rows = _Rows(chunks)
    k = rows.keys
    order = np.lexsort((k["col"], k["win"], k["dev"]))  # stable: a key's rows stay in file order
    if not (np.diff(order) != 1).any():
        order = None
    if fold:
        return Part(_fold(rows, order, floats), None, cols, info)
    keys = dict(zip(("dev", "win", "col"), rows.sorted_keys(order)))
    return Part(rows.gather(_inverse(order, rows.n), rows.n, False, keys), None, cols, info)


def _agg_task(leaves, first, names, q):
    """A task: the files of its fragment (leaves: (path, start, end, device names or None)) aggregated one by
    one and merged (folded when the fragment begins with the first file)."""
    leaf = _file_stats_part if q["statistics"] else _file_part
    return _merge([leaf(p, t0, t1, devs, q) for p, t0, t1, devs in leaves], names, first)


def _finish(parts, names):
    """The root of the merge tree: the result frame (Dataset.stats' layout and order), with the counters of the
    statistics path in attrs["tsfile_agg_info"]."""
    p = _merge(parts, names, True, floats=True)
    a = dict(p.arrays)
    cnt = a["count"]
    mean = a["floats"][_FRAME_FLOATS.index("mean")] if "floats" in a else np.empty(len(cnt))
    has = cnt != 0
    np.divide(a["sum"], cnt, out=mean, where=has)  # the library's mean (0 without values)
    mean[~has] = 0.0
    a["mean"] = mean
    out = agg_frame_of(a, names, p.columns)
    if p.info is not None:
        out.attrs["tsfile_agg_info"] = p.info
    return out


def _check_statistics_query(ds, table, columns, where, tags):
    """Refuses what the statistics path cannot answer from statistics (where=), and names unknown columns and
    tags as the decoding path would."""
    if where is not None:
        raise ValueError("aggregate(statistics=True) answers from chunk and page statistics and cannot apply "
                         "where=; use statistics=False")
    known = {s.name for s in ds.series}
    for c in ([columns] if isinstance(columns, str) else columns or []):
        if c not in known:
            raise TsfError(-7, "column %r is not in the dataset" % (c,), "aggregate")
    t = ds._table_by_name.get(table) if table is not None else None
    tag_names = {c.name for c in t.columns if c.category == "TAG"} if t is not None else set()
    for k, v in (tags or {}).items():
        if k not in tag_names or not isinstance(v, str):
            raise ValueError("aggregate(statistics=True): tags= takes {TAG column of the table: string}, got %r: %r"
                             % (k, v))


def _agg_fragments(ds, start, end, split, time_unit, table, devices, group_by, window, origin):
    """The tasks' leaves for aggregate(split=...): per task, a list of (path, start, end, device names or None),
    from fragments(). Only splits under which every key's additions stay the library's are taken: a file's
    rows of one key must come whole from one leaf."""
    if split.startswith("chunk-group") and group_by is None:
        raise ValueError("aggregate(split=%r) needs group_by='device': with group_by=None a file's devices add "
                         "into one sum, which a split by device would add in another order" % (split,))
    if split.startswith("time:"):
        step = _interval(split[5:], time_unit)
        if not window or step % int(window) or int(origin) % int(window):
            raise ValueError("aggregate(split=%r) needs windows that the intervals do not cut: window= dividing "
                             "the interval (%d) and origin= a multiple of the window" % (split, step))
    frs = fragments(ds, start, end, split, time_unit, table, devices)
    if not split.startswith("chunk-group"):
        return [[(p, fr.start, fr.end, None) for p in fr.paths] for fr in frs]
    index = {f.path: i for i, f in enumerate(ds.files)}
    names = {}
    out = []
    for fr in frs:
        i = index[fr.paths[0]]
        if i not in names:
            names[i] = {fd.index: fd.name for fd in ds.file_devices(i)}
        out.append([(fr.paths[0], fr.start, fr.end, tuple(names[i][k] for k in fr.devices))])
    return out


def aggregate(paths, group_by="device", window=None, origin=0, columns=None, start=None, end=None, where=None,
              table=None, devices=None, tags=None, time_unit="ms", checked=True, statistics=False, split="file",
              split_every=16):
    """Grouped aggregation on Dask: the library aggregates each file in a worker (a partial: a few NumPy
    arrays), the partials are merged in the workers along a tree, split_every at a time, and the client
    receives the merged frame. Returns a one-partition dask DataFrame (compute() it): device, window_start,
    column, count, sum, min, max, mean, first, last, first_time, last_time, as Dataset.stats.

    split: the tasks, as read_dataset's: "file" (a task per file), "files:<n>" (n consecutive files per
    task), "chunk-group" / "chunk-groups:<n>" (a task per device / n devices of each file: a few large files
    still use every worker; group_by="device" only), "time:<interval>" (a task per interval, with the files
    meeting it; window must divide the interval and origin be a multiple of window, so no window is cut).
    Each file is aggregated alone, and merges fold a key's partials only in file order, so whatever the split
    and split_every the result is the same. split_every (default 16): up to that many partials go straight
    to the root merge; more make levels of merges.

    statistics=False (default): every selected value is decoded (the dataset aggregation of each file), so
    the result equals Dataset.stats bit for bit.
    statistics=True: each file goes through the one-file aggregation (TsFile.stats, tsf_aggregate), which
    answers every chunk and page lying inside one window from its statistics without reading or decoding
    it, and decodes only the pages a window boundary or the time range cuts (and pages whose statistics
    are untrusted: FLOAT / DOUBLE under a lossy encoding). count, min, max, first, last, first_time and
    last_time equal Dataset.stats exactly; sum (and mean) add the chunks' and pages' stored sums instead of
    the values one by one, a different order of additions: exact for integer columns while every partial
    sum stays below 2^53, else (FLOAT / DOUBLE) within 1e-9 * count * max(|min|, |max|) of Dataset.stats
    for groups under 4.5 million values (twice the textbook bound (n - 1) * 2^-53 * sum |x| of either
    order). where= is refused (a filter needs the values); tags= selects devices by their TAG values. The
    computed frame's attrs["tsfile_agg_info"] holds the library's counters summed over the files:
    chunks_from_stats, pages_from_stats, pages_decoded, points_from_stats, points_decoded."""
    import dask
    import dask.dataframe as dd
    if group_by not in ("device", None):
        raise ValueError("group_by must be 'device' or None, got %r" % (group_by,))
    if int(split_every) < 2:
        raise ValueError("split_every must be at least 2, got %r" % (split_every,))
    if isinstance(devices, str):
        devices = [devices]
    if isinstance(columns, str):
        columns = [columns]
    with Dataset(paths, checked=checked) as ds:
        names = tuple(d.name for d in ds.devices)
        if statistics:
            table = ds._table_of(table) if devices is None else table
            _check_statistics_query(ds, table, columns, where, tags)
        leaves = _agg_fragments(ds, start, end, split, time_unit, table, devices, group_by, window, origin)
    meta = stats_frame([])
    if not leaves:
        return dd.from_pandas(meta, npartitions=1)
    q = dict(group_by=group_by, window=window, origin=origin, columns=columns, where=where, table=table,
             devices=devices, tags=tags, time_unit=time_unit, checked=checked, statistics=statistics)
    tok = dask.base.tokenize(names, leaves, q, split_every)
    level = [dask.delayed(_agg_task, pure=True)(lv, i == 0, names, q, dask_key_name="tsfile-partial-agg-%d-%s"
                                                % (i, tok)) for i, lv in enumerate(leaves)]
    depth = 0
    while len(level) > split_every:
        depth += 1
        level = [dask.delayed(_merge, pure=True)(level[k:k + split_every], names, k == 0,
                                                 dask_key_name="tsfile-merge-agg-%d-%d-%s" % (depth, k, tok))
                 for k in range(0, len(level), split_every)]
    root = dask.delayed(_finish, pure=True)(level, names, dask_key_name="tsfile-combine-" + tok)
    return dd.from_delayed([root], meta=meta, verify_meta=False)



# ---- workers ---------------------------------------------------------------------------------------------

def plain_malloc():
    """A context in which the workers distributed starts (distributed.LocalCluster(...), Nanny) keep glibc's
    default malloc: distributed.nanny.pre-spawn-environ without its MALLOC_TRIM_THRESHOLD_, which turns off
    glibc's sliding mmap threshold and makes the library's per-file buffers and NumPy's temporaries fault
    their pages in again at every use (doc/dask.md, "Worker processes and malloc"). The variable is also
    removed from this process's environment, where an earlier cluster's nanny may have put it (it changes
    nothing here: glibc reads it when a process starts).

        with tsfile_c.dask.plain_malloc():
            cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1)
    """
    import dask
    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    env.pop("MALLOC_TRIM_THRESHOLD_", None)
    os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    return dask.config.set({"distributed.nanny.pre-spawn-environ": env})

# ---- writing --------------------------------------------------------------------------------------------

def _write_partition(df, i, directory, table, tags, device, time, partition_on, kwargs):
    from ._writer import write_dataframe
    paths = []
    if df is None or len(df) == 0:
        return paths
    df = df.reset_index() if df.index.name == time else df
    groups = [((), df)] if not partition_on else df.groupby(partition_on, sort=True, observed=True)
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        suffix = "".join("-%s" % re.sub(r"[^A-Za-z0-9_.]", "_", str(k)) for k in key)
        path = os.path.join(directory, "part-%05d%s.tsfile" % (i, suffix))
        write_dataframe(part.reset_index(drop=True), path, table=table, tags=tags, device=device, time=time,
                        **kwargs)
        paths.append(path)
    return paths


def to_tsfile(ddf, directory, table=None, tags=None, device=None, time="time", partition_on=None, compute=True,
              **kwargs):
    """Writes each partition of ddf as a TsFile in directory (part-00000.tsfile, ...; with partition_on, one
    file per partition and value: part-00000-<value>.tsfile), in parallel on Dask's workers, through
    write_dataframe (table=/tags= for the table model, device= for the tree model; further keywords are
    write_dataframe's). The directory is a dataset Dataset / read_dataset read back. Returns the paths
    written (or the delayed object with compute=False)."""
    import dask
    os.makedirs(directory, exist_ok=True)
    if isinstance(partition_on, str):
        partition_on = [partition_on]
    parts = ddf.to_delayed()
    tasks = [dask.delayed(_write_partition)(p, i, directory, table, tags, device, time, partition_on, kwargs)
             for i, p in enumerate(parts)]
    job = dask.delayed(lambda lists: [x for lst in lists for x in lst])(tasks)
    return job.compute() if compute else job
