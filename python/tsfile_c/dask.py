"""A TsFile dataset as a Dask DataFrame, aggregations across Dask workers, and writing a Dask DataFrame as
a dataset (one TsFile per partition).

    import tsfile_c.dask as tdd
    ddf = tdd.read_dataset("data/", columns=["f0"], start=0, end=10**12, split="file")
    agg = tdd.aggregate("data/", group_by="device", window=3_600_000).compute()
    daily = tdd.aggregate("data/", window=86_400_000, statistics=True).compute()  # chunks from statistics
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

import numpy as np

from ._dataset import STATS_COLUMNS, STATS_DTYPES, Dataset, concat_frames, file_selection, stats_frame
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

def _partial(path, group_by, window, origin, columns, start, end, where, table, devices, tags, time_unit, checked):
    """One file's aggregate rows (Dataset.stats of that file alone), tagged with nothing else: rows come in
    the library's order and the partitions in file order, which fixes the order of every addition."""
    with _naming(path), Dataset([path], checked=checked) as ds:
        args = file_selection(ds, table, devices)
        if args is None:
            return stats_frame([])
        return ds.stats(group_by, window, origin, columns, start, end, where, args[0], args[1], tags,
                        time_unit=time_unit)


# The library's counters of the statistics path (tsf_agg_info), carried as extra columns of the partial
# frames (a file's totals on its first row) and summed into the result's attrs["tsfile_agg_info"].
AGG_INFO = ("chunks_from_stats", "pages_from_stats", "pages_decoded", "points_from_stats", "points_decoded")
_NUMERIC = ("BOOLEAN", "INT32", "DATE", "INT64", "TIMESTAMP", "FLOAT", "DOUBLE")


def _with_info(frame, info):
    for k in AGG_INFO:
        col = np.zeros(len(frame), dtype=np.uint64)
        if len(col):
            col[0] = info.get(k, 0)
        frame[k] = col
    return frame


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


def _stats_partial(path, group_by, window, origin, columns, start, end, table, devices, tags, time_unit, checked):
    """One file's aggregate rows answered by the one-file aggregation (tsf_aggregate: whole chunks and pages
    inside a window from their statistics, the other pages decoded), one row per device (or per device
    then merged, group_by=None) x window x column, with the library's counters (AGG_INFO columns)."""
    with _naming(path), TsFile(path, checked=checked) as f:
        args = file_selection(f, table, devices)
        if args is None:
            return _with_info(stats_frame([]), {})
        devs, _ = f._select_devices(args[0], args[1], None)
        if tags:
            devs = [d for d in devs if _tag_match(f, d, tags)]
        rows = []
        for d, ser, w, typ in f._aggregate(devs, columns, start, end, window, origin, time_unit):
            st = w.stats
            vals = [float(v) for v in _stats_values(st, typ)] if ser.type in _NUMERIC else [0.0] * 5
            mn, mx, fi, la, sm = vals
            rows.append((d.name if group_by == "device" else None, w.start if window else None, ser.name, st.count,
                         sm, mn, mx, sm / st.count, fi, la, st.start_time, st.end_time))
        return _with_info(stats_frame(rows), f.last_stats_info or {})


def combine(partials, device_order=None):
    """Merges per-file aggregate rows in order, exactly as the library merges per-file accumulators
    (count and sum added in file order, min/max, first from the earliest time (the earlier file on a tie),
    last from the latest (the later file on a tie)): the result equals Dataset.stats bit for bit, its rows
    ordered as the library orders them (device_order: the dataset's device index by name). Vectorized over
    the keys: the k-th partial of every key is merged in one step, k = 1, 2, ... (each key's partials in
    file order), so every key's additions are the sequential ones. Partials with the AGG_INFO columns (the
    statistics path) give a result whose attrs["tsfile_agg_info"] sums them."""
    info = None
    if AGG_INFO[0] in partials.columns:
        info = {k: int(partials[k].sum()) for k in AGG_INFO}
        partials = partials.drop(columns=list(AGG_INFO))
    if len(partials) == 0:
        out = stats_frame([])
    else:
        out = _merge_partials(partials, device_order)
    if info is not None:
        out.attrs["tsfile_agg_info"] = info
    return out


def _merge_partials(partials, device_order):
    """combine() of a non-empty frame of partials without counters."""
    import pandas as pd
    df = partials.reset_index(drop=True)
    g = df.groupby(["device", "window_start", "column"], sort=False, dropna=False).ngroup().to_numpy()
    rank = pd.Series(g).groupby(g).cumcount().to_numpy()
    ng = int(g.max()) + 1
    first_row = np.empty(ng, np.int64)
    r0 = np.flatnonzero(rank == 0)
    first_row[g[r0]] = r0
    cols = {c: df[c].to_numpy() for c in ("count", "sum", "min", "max", "first", "last", "first_time", "last_time")}
    acc = {c: v[first_row].copy() for c, v in cols.items()}
    for k in range(1, int(rank.max()) + 1):
        idx = np.flatnonzero(rank == k)
        gg = g[idx]
        new = {c: v[idx] for c, v in cols.items()}
        empty = acc["count"][gg] == 0  # an accumulator without values takes the partial whole
        if empty.any():
            for c in acc:
                acc[c][gg[empty]] = new[c][empty]
            gg, new = gg[~empty], {c: v[~empty] for c, v in new.items()}
        acc["count"][gg] += new["count"]
        acc["sum"][gg] += new["sum"]
        cur = acc["min"][gg]
        acc["min"][gg] = np.where(new["min"] < cur, new["min"], cur)
        cur = acc["max"][gg]
        acc["max"][gg] = np.where(new["max"] > cur, new["max"], cur)
        earlier = new["first_time"] < acc["first_time"][gg]
        acc["first_time"][gg[earlier]] = new["first_time"][earlier]
        acc["first"][gg[earlier]] = new["first"][earlier]
        later = new["last_time"] >= acc["last_time"][gg]
        acc["last_time"][gg[later]] = new["last_time"][later]
        acc["last"][gg[later]] = new["last"][later]
    dev = df["device"].to_numpy(object)[first_row]
    win = df["window_start"].array[first_row]  # Int64, NA with one window
    col = df["column"].to_numpy(object)[first_row]
    # the library's row order: device (its index in the dataset, then the name), window (one window first),
    # column name
    rank_of = device_order or {}
    dev_rank = np.fromiter((rank_of.get(d, -1) for d in dev), np.int64, ng)
    dev_name = pd.factorize(pd.Series([d or "" for d in dev], dtype=object), sort=True)[0]
    win_na = np.asarray(win.isna())
    win_val = np.asarray(win.fillna(0).to_numpy(np.int64))
    col_code = pd.factorize(pd.Series(col, dtype=object), sort=True)[0]
    order = np.lexsort((col_code, win_val, ~win_na, dev_name, dev_rank))
    cnt = acc["count"]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(cnt != 0, acc["sum"] / cnt.astype(np.float64), np.nan)
    data = {"device": dev[order], "window_start": win[order], "column": col[order], "count": cnt[order],
            "sum": acc["sum"][order], "min": acc["min"][order], "max": acc["max"][order], "mean": mean[order],
            "first": acc["first"][order], "last": acc["last"][order], "first_time": acc["first_time"][order],
            "last_time": acc["last_time"][order]}
    return pd.DataFrame(data).astype(dict(zip(STATS_COLUMNS, STATS_DTYPES)))


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


def aggregate(paths, group_by="device", window=None, origin=0, columns=None, start=None, end=None, where=None,
              table=None, devices=None, tags=None, time_unit="ms", checked=True, statistics=False):
    """Grouped aggregation on Dask: each file is aggregated by the library in a worker, giving a small
    partial frame; Dask concatenates the partials in file order and combine() merges them. Returns a
    one-partition dask DataFrame (compute() it): device, window_start, column, count, sum, min, max, mean,
    first, last, first_time, last_time.

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
    import dask.dataframe as dd
    with Dataset(paths, checked=checked) as ds:
        files = [ds.files[i].path for i in ds.plan(start, end, time_unit)]
        order = {d.name: i for i, d in enumerate(ds.devices)}
        if statistics:
            table = ds._table_of(table) if devices is None else table
            _check_statistics_query(ds, table, columns, where, tags)
    if group_by not in ("device", None):
        raise ValueError("group_by must be 'device' or None, got %r" % (group_by,))
    if isinstance(devices, str):
        devices = [devices]
    if isinstance(columns, str):
        columns = [columns]
    if not files:
        return dd.from_pandas(stats_frame([]), npartitions=1)
    kw = dict(group_by=group_by, window=window, origin=origin, columns=columns, start=start, end=end, table=table,
              devices=devices, tags=tags, time_unit=time_unit, checked=checked)
    if statistics:
        parts = dd.from_map(_stats_partial, files, meta=_with_info(stats_frame([]), {}),
                            label="tsfile-stats-partial-agg", enforce_metadata=False, **kw)
    else:
        parts = dd.from_map(_partial, files, meta=stats_frame([]), label="tsfile-partial-agg", enforce_metadata=False,
                            where=where, **kw)
    return parts.reduction(chunk=_same, aggregate=combine, meta=stats_frame([]), split_every=False,
                           token="tsfile-combine", aggregate_kwargs={"device_order": order})


def _same(x):
    return x


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
