"""Many TsFiles read as one (tsfile_c.open of a directory, a glob or a list of paths), over the library's
dataset layer (tsf_dataset_*): the files in a fixed order with one schema checked across them, per-file
time ranges from metadata (a file outside a query's range is not opened again), and grouped aggregation
with several files decoded at once. Rows are read file by file through TsFile, so every selection option
and every type behaves as for one file."""
import collections
import ctypes
import os

import numpy as np

from . import _capi as C
from ._errors import TsfError, check, new_error
from ._reader import (Series, TsFile, _Catalog, _Closing, _pread_option, _to_time, load_tables, new_device,
                      where_text)


FileInfo = collections.namedtuple("FileInfo", "path size time_min time_max points ndevices")
FileInfo.__doc__ = "One file of a dataset: path, size (bytes), time_min, time_max, points, ndevices."
FileDevice = collections.namedtuple("FileDevice", "name index time_min time_max points nseries")
FileDevice.__doc__ = ("A device as one file of a dataset holds it (its chunk groups there): name, index (the device's "
                      "number in that file, TsFile.devices), time_min, time_max, points and nseries in that file.")

CacheStats = collections.namedtuple("CacheStats", "files_cached files_read files_racy loaded written load_error "
                                                  "save_error")
CacheStats.__doc__ = ("What the open did with the metadata cache (tsf_dataset_get_open_stats): files taken from it and "
                      "files read, files too recently modified to be cached, whether the cache file was loaded and "
                      "rewritten, and why it was ignored or not written (None when it was not).")


# The pandas dtype a value column of each TsFile type has in a dataset frame that may hold nulls (DATE and
# BLOB are Python objects, TIMESTAMP datetime64).
_NULLABLE = {"BOOLEAN": "boolean", "INT32": "Int32", "INT64": "Int64", "FLOAT": "Float32", "DOUBLE": "Float64",
             "TEXT": "string", "STRING": "string"}


def _pd_time_unit(pd, unit):
    return unit if int(pd.__version__.split(".")[0]) >= 2 else "ns"


class ReaderPool:
    """Readers kept across datasets and queries (tsf_reader_pool): at most max_readers idle ones, each checked
    against its file's identity (size, inode, times) on every use. Readers keep their file's index (memory
    grows with the files read, bounded by max_readers); the decode buffers of finished queries stay with the
    pool (a few sets) and every reader it hands out decodes into them, and aggregations (stats) leave their
    tables there for the next one. Close it (or let it be collected) after every dataset that uses it."""

    def __init__(self):
        err = new_error()
        p = ctypes.c_void_p()
        check(C.lib.tsf_reader_pool_create(ctypes.byref(p), None, ctypes.byref(err)), err, "reader pool")
        self._p = p

    def _handle(self):
        if not self._p:
            raise ValueError("reader pool is closed")
        return self._p

    def close(self):
        if getattr(self, "_p", None):
            C.lib.tsf_reader_pool_free(self._p)
            self._p = None

    def __del__(self):
        self.close()


class Dataset(_Closing, _Catalog):
    """Several TsFiles as one (tsfile_c.open of a directory, a glob pattern or a list). A context manager.

    files: FileInfo per file, in the dataset's order (a directory's *.tsfile files by name, a pattern's
    matches sorted, list entries in turn); tables, devices (with their series and summed counts), schema and
    model as for one file, over every file (the schema is the union of the files').

    cache: a metadata cache file (doc/dataset.md "Metadata cache"): a reopen takes unchanged files' metadata
    from it instead of reading every file's tail and index; made when missing, refreshed for changed files,
    ignored and rebuilt when damaged. cache_stats says what the open did with it.

    pool: a ReaderPool whose readers the open and the queries use instead of opening each file anew (they
    keep the files' index and their last query's decode buffers); it must stay open while the dataset is."""

    def __init__(self, paths, checked=True, use_pread=None, cache=None, pool=None):
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        paths = list(paths)
        self.paths = paths
        self._ds = None
        self._checked, self._use_pread = checked, use_pread
        enc = [os.fsencode(p) for p in paths]
        arr = (C.c_str * max(len(enc), 1))(*enc)
        ro = C.ReaderOptions()
        C.lib.tsf_reader_options_init(ctypes.byref(ro))
        ro.checked = 1 if checked else 0
        ro.use_pread = _pread_option(use_pread)
        do = C.DatasetOptions()
        C.lib.tsf_dataset_options_init(ctypes.byref(do))
        do.reader = ctypes.pointer(ro)
        if cache is not None:
            do.cache_path = os.fsencode(cache)
        if pool is not None:
            do.reader_pool = pool._handle()
        self._pool = pool  # the pool outlives the dataset
        self._do = do  # (holds ro) the options of the datasets Arrow streams open of their own
        err = new_error()
        ds = ctypes.c_void_p()
        check(C.lib.tsf_dataset_open(ctypes.byref(ds), arr, len(enc), ctypes.byref(do), ctypes.byref(err)), err,
              "open %s" % ", ".join(os.fsdecode(p) for p in paths))
        self._ds = ds
        try:
            self._load_cache_stats()
            self._load()
        except BaseException:
            self.close()
            raise

    def _load_cache_stats(self):
        st, err = C.DatasetOpenStats(), new_error()
        st.struct_size = ctypes.sizeof(st)
        check(C.lib.tsf_dataset_get_open_stats(self._ds, ctypes.byref(st), ctypes.byref(err)), err, "open stats")

        def why(e):
            return e.message.decode("utf-8", "replace") if e.code else None
        self.cache_stats = CacheStats(st.files_cached, st.files_read, st.files_racy, bool(st.cache_loaded),
                                      bool(st.cache_written), why(st.cache_load), why(st.cache_save))

    def _load(self):
        lib, ds, err = C.lib, self._ds, new_error()
        fi = C.DatasetFileInfo()
        self.files = []
        for i in range(lib.tsf_dataset_file_count(ds)):
            check(lib.tsf_dataset_file(ds, i, ctypes.byref(fi), ctypes.byref(err)), err, "file %d" % i)
            self.files.append(FileInfo(os.fsdecode(fi.path), fi.size, fi.time_min, fi.time_max, fi.points,
                                       fi.ndevices))
        self.tables = load_tables(lib.tsf_dataset_table_count, lib.tsf_dataset_table, ds)
        self.devices = []
        di, si = C.DatasetDeviceInfo(), C.DatasetSeriesInfo()
        for i in range(lib.tsf_dataset_device_count(ds)):
            check(lib.tsf_dataset_device(ds, i, ctypes.byref(di), ctypes.byref(err)), err, "device %d" % i)
            d, table = new_device(self.tables, i, di, lib.tsf_dataset_device_segment, ds)
            d.series = []
            for j in range(di.nseries):
                check(lib.tsf_dataset_series(ds, i, j, ctypes.byref(si), ctypes.byref(err)), err,
                      "device %s series %d" % (d.name, j))
                s = Series()
                s.device, s.name = d.name, si.measurement.decode("utf-8", "surrogateescape")
                s.type = C.TYPE_NAMES.get(si.type, str(si.type))
                s.count, s.chunks = si.count, None
                s.start_time, s.end_time = si.time_min, si.time_max
                s.min = s.max = s.first = s.last = s.sum = None
                d.series.append(s)
            self.devices.append(d)
            if table:
                table.devices.append(d)
        self._index()

    def close(self):
        if self._ds is not None:
            C.lib.tsf_dataset_close(self._ds)
            self._ds = None

    def __repr__(self):
        return "<tsfile_c.Dataset: %d files, %s model, %d devices%s>" % (
            len(self.files), self.model, len(self.devices), "" if self._ds else ", closed")

    def _handle(self):
        if self._ds is None:
            raise TsfError(-8, "the dataset is closed", "Dataset")
        return self._ds

    # ---- planning ------------------------------------------------------------------------------
    def _table_of(self, table):
        if table is None and self.model == "table":
            tabs = [t.name for t in self.tables if t.columns]
            if len(tabs) > 1:
                raise TsfError(-1, "the dataset has several tables (%s): pass table=" % ", ".join(tabs), "query")
            return tabs[0] if tabs else None
        if table is not None and table not in self._table_by_name:
            t = next((x.name for x in self.tables if x.name.lower() == table.lower()), None)
            if t is None:
                raise TsfError(-7, "table %r is not in the dataset (tables: %s)"
                               % (table, ", ".join(x.name for x in self.tables)), "query")
            return t
        return table

    def plan(self, start=None, end=None, time_unit="ms"):
        """Indexes of the files whose time range meets [start, end] (inclusive); the others are not opened."""
        t0, t1 = _to_time(start, time_unit, "start"), _to_time(end, time_unit, "end")
        lo = C.INT64_MIN if t0 is None else t0
        hi = C.INT64_MAX if t1 is None else t1
        return [i for i, f in enumerate(self.files) if f.points and f.time_min <= hi and f.time_max >= lo]

    def file_devices(self, i):
        """The devices file i holds (FileDevice, in the dataset's device order), from metadata."""
        out, err, fd = [], new_error(), C.DatasetFileDeviceInfo()
        for k in range(self.files[i].ndevices):
            check(C.lib.tsf_dataset_file_device(self._handle(), i, k, ctypes.byref(fd), ctypes.byref(err)), err,
                  "file %d device %d" % (i, k))
            out.append(FileDevice(self.devices[fd.device].name, fd.local, fd.time_min, fd.time_max, fd.points,
                                  fd.nseries))
        return out

    def _planned(self, start, end, time_unit, table, devices):
        """(file index, open TsFile, its (table, devices) arguments) of each planned file holding some of
        the selection, in file order; each file is closed when the next is asked for."""
        self._handle()  # a closed dataset raises
        if devices is not None:
            devices = [devices] if isinstance(devices, str) else list(devices)
            for n in devices:
                if n not in self._device_by_name:
                    raise TsfError(-7, "device %r is not in the dataset" % (n,), "query")
        for i in self.plan(start, end, time_unit):
            # a reader for one query: pread unless the caller chose (doc/reader.md)
            with TsFile(self.files[i].path, checked=self._checked,
                        use_pread=True if self._use_pread is None else self._use_pread) as f:
                args = file_selection(f, table, devices)
                if args is not None:
                    yield i, f, args

    # ---- rows ----------------------------------------------------------------------------------
    def query(self, columns=None, start=None, end=None, where=None, table=None, devices=None, tags=None,
              batch_size=None, threads=None, time_unit="ms"):
        """Batches of every planned file in file order (each file's batches as TsFile.query gives them);
        batch.file is the file's index in self.files."""
        for i, f, args in self._planned(start, end, time_unit, self._table_of(table), devices):
            for b in f.query(columns, start, end, where, args[0], args[1], tags, batch_size, threads, time_unit):
                b.file = i
                yield b

    def frame_meta(self, columns=None, table=None, time_unit="ms", time="datetime"):
        """An empty DataFrame with the columns and dtypes of this dataset's frames (dask.read_dataset's
        meta): time, device or the tags (categoricals over every device / tag value), the value columns as
        pandas' nullable dtypes."""
        import pandas as pd
        table = self._table_of(table)
        time_dtype = np.int64 if time == "int" else np.dtype("datetime64[%s]" % _pd_time_unit(pd, time_unit))
        data = {"time": np.empty(0, time_dtype)}
        types = {}
        if table is not None and self._table_by_name[table].columns:
            t = self._table_by_name[table]
            for k, c in enumerate(x for x in t.columns if x.category == "TAG"):
                cats = sorted({d.segments[k + 1] for d in t.devices
                               if k + 1 < len(d.segments) and d.segments[k + 1] is not None})
                data[c.name] = pd.Categorical([], categories=cats)
            for c in t.columns:
                if c.category == "FIELD":
                    types[c.name] = c.type
        else:
            data["device"] = pd.Categorical([], categories=sorted(d.name for d in self.devices))
            for d in self.devices:
                for s in d.series:
                    types.setdefault(s.name, s.type)
        names = list(types) if columns is None else ([columns] if isinstance(columns, str) else list(columns))
        for n in names:
            typ = types.get(n)
            if typ == "TIMESTAMP":
                data[n] = pd.array([], dtype="Int64") if time == "int" else np.empty(0, time_dtype)
            else:
                data[n] = pd.array([], dtype=_NULLABLE.get(typ, object))
        return pd.DataFrame(data)

    def to_pandas(self, columns=None, start=None, end=None, where=None, table=None, devices=None, tags=None,
                  threads=None, time_unit="ms", time="datetime"):
        """The selected rows of every planned file, in file order, as one DataFrame with the layout of
        TsFile.to_pandas. device / tag categoricals cover every device of the dataset; a column some files
        lack (or hold with nulls) takes pandas' nullable dtype."""
        table = self._table_of(table)
        frames = [f.to_pandas(columns, start, end, where, args[0], args[1], tags, threads, time_unit, time)
                  for _, f, args in self._planned(start, end, time_unit, table, devices)]
        return concat_frames(frames, self.frame_meta(columns, table, time_unit, time))

    def _query_options(self, keep, columns, start, end, table, devices, batch_size, threads, files_at_once,
                       time_unit):
        """The tsf_dataset_query_options of a selection (keep: a list that must outlive them)."""
        qo = C.DatasetQueryOptions()
        C.lib.tsf_dataset_query_options_init(ctypes.byref(qo))
        table = self._table_of(table) if devices is None else table
        if devices is not None:
            names = [devices] if isinstance(devices, str) else list(devices)
            enc = [n.encode() for n in names]
            arr = (C.c_str * max(len(enc), 1))(*enc)
            keep += [enc, arr]
            qo.devices, qo.ndevices = arr, len(enc)
        elif table is not None:
            qo.table = table.encode()
            keep.append(qo.table)
        if columns is not None:
            enc = [c.encode() for c in ([columns] if isinstance(columns, str) else columns)]
            arr = (C.c_str * max(len(enc), 1))(*enc)
            keep += [enc, arr]
            qo.columns, qo.ncolumns = arr, len(enc)
        t0, t1 = _to_time(start, time_unit, "start"), _to_time(end, time_unit, "end")
        if t0 is not None:
            qo.time_min = t0
        if t1 is not None:
            qo.time_max = t1
        if batch_size:
            qo.batch_size = batch_size
        if threads:
            qo.threads = threads
        if files_at_once:
            qo.files_at_once = files_at_once
        return qo

    # ---- Arrow ---------------------------------------------------------------------------------
    def arrow(self, columns=None, start=None, end=None, where=None, table=None, devices=None, tags=None,
              batch_size=None, threads=None, files_at_once=None, time_unit="ms"):
        """The rows of a dataset query as an object with __arrow_c_stream__ (the library's Arrow C stream over
        the dataset, tsf_arrow_dataset_stream_open): columns of the union schema (time, then the device or
        the table's tags, then the values; a column a file lacks is null), rows in file order, then each
        file's device order, then time, whatever threads and files_at_once are. Each capsule's stream opens
        the files again and owns them, so neither it nor the returned object depends on this Dataset staying
        open."""
        kw = dict(columns=columns, start=start, end=end, where=where, table=table, devices=devices, tags=tags,
                  batch_size=batch_size, threads=threads, files_at_once=files_at_once, time_unit=time_unit)
        self._handle()
        return DatasetStream(self, kw)

    def __arrow_c_stream__(self, requested_schema=None):
        """The whole dataset as an Arrow C stream (PyCapsule "arrow_array_stream"): tree model, every device
        with a device column; table model, the dataset's one table (arrow(table=...) for one of several)."""
        return self.arrow().__arrow_c_stream__(requested_schema)

    def _arrow_capsule(self, columns, start, end, where, table, devices, tags, batch_size, threads, files_at_once,
                       time_unit):
        from ._arrow import dataset_stream_capsule
        keep = []
        qo = self._query_options(keep, columns, start, end, table, devices, batch_size, threads, files_at_once,
                                 time_unit)
        with _filter(qo, where, tags):  # the stream keeps a copy of the filter
            return dataset_stream_capsule([f.path for f in self.files], self._do, qo, time_unit)

    # ---- aggregation ---------------------------------------------------------------------------
    def stats(self, group_by="device", window=None, origin=0, columns=None, start=None, end=None, where=None,
              table=None, devices=None, tags=None, threads=None, files_at_once=None, time_unit="ms"):
        """Grouped aggregation (tsf_dataset_aggregate): one row per group (a device, or None with
        group_by=None) x window x column: count, sum, min, max, mean, first, last, first_time, last_time of
        the non-null values (numbers and booleans). Sums are added per file, then in file order, so the
        result does not depend on threads or files_at_once. window: length in file time units (None = one
        window)."""
        res, keep = self._agg_result(group_by, window, origin, columns, start, end, where, table, devices, tags,
                                     threads, files_at_once, time_unit)
        try:
            return _agg_frame(res, [d.name for d in self.devices])
        finally:
            C.lib.tsf_dataset_agg_result_free(res)

    def _stats_arrays(self, group_by="device", window=None, origin=0, columns=None, start=None, end=None,
                      where=None, table=None, devices=None, tags=None, threads=None, files_at_once=None,
                      time_unit="ms"):
        """stats() as columns (agg_arrays: integer-coded keys, NumPy arrays of the aggregates) with the
        names the codes stand for: (arrays, device names (this dataset's, by index), column names)."""
        res, keep = self._agg_result(group_by, window, origin, columns, start, end, where, table, devices, tags,
                                     threads, files_at_once, time_unit)
        try:
            arrays, names = agg_arrays(res)
            return arrays, [d.name for d in self.devices], names
        finally:
            C.lib.tsf_dataset_agg_result_free(res)

    def _agg_result(self, group_by, window, origin, columns, start, end, where, table, devices, tags, threads,
                    files_at_once, time_unit):
        """The tsf_dataset_agg_result of a stats() query (the caller frees it) and what its column names point
        into (the options' names: keep it alive while reading the rows)."""
        if group_by not in ("device", None):
            raise ValueError("group_by must be 'device' or None, got %r" % (group_by,))
        keep = []
        qo = self._query_options(keep, columns, start, end, table, devices, None, threads, files_at_once,
                                 time_unit)
        ao = C.DatasetAggOptions()
        C.lib.tsf_dataset_agg_options_init(ctypes.byref(ao))
        ao.by_device = 1 if group_by == "device" else 0
        ao.window = int(window or 0)
        ao.window_origin = int(origin)
        err = new_error()
        res = ctypes.c_void_p()
        with _filter(qo, where, tags):
            check(C.lib.tsf_dataset_aggregate(self._handle(), ctypes.byref(qo), ctypes.byref(ao), ctypes.byref(res),
                                              ctypes.byref(err)), err, "stats")
        return res, keep


# the result rows (tsf_dataset_agg_row, an array in the library) read as one NumPy record array
_AGG_ROW = np.dtype([(name, {C.c_size: np.uintp, C.c_i64: np.int64, C.c_str: np.uintp, C.c_u64: np.uint64,
                             C.c_dbl: np.float64, C.c_ptr: np.uintp}[typ]) for name, typ in C.DatasetAggRow._fields_], align=True)
assert _AGG_ROW.itemsize == ctypes.sizeof(C.DatasetAggRow)
# the aggregates of agg_arrays, after the keys dev, win, col
AGG_VALUES = ("count", "sum", "min", "max", "mean", "first", "last", "first_time", "last_time")


def agg_arrays(res):
    """The rows of a tsf_dataset_agg_result in the library's order as columns, read in one pass over the row
    array: dev (the device's index in the dataset, -1 without one), win (the window's start, INT64_MIN with
    one window), col (an index into the column names returned with them, sorted) and AGG_VALUES, each a
    contiguous NumPy array; and the column names."""
    n = C.lib.tsf_dataset_agg_result_count(res)
    if n == 0:
        return {k: np.zeros(0, t) for k, t in AGG_ARRAY_DTYPES.items()}, []
    first = C.lib.tsf_dataset_agg_result_row(res, 0)
    rows = np.frombuffer((ctypes.c_char * (n * _AGG_ROW.itemsize)).from_address(ctypes.addressof(first.contents)),
                         _AGG_ROW)
    dev = rows["device"]
    dev = np.where(dev == np.uintp(ctypes.c_size_t(-1).value), -1, dev.astype(np.int64))
    ptrs, inverse = np.unique(rows["column"], return_inverse=True)
    names = [ctypes.string_at(int(p)).decode("utf-8", "surrogateescape") for p in ptrs]
    by_name = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), np.int64)
    rank[by_name] = np.arange(len(names))
    out = {"dev": dev, "win": rows["window_start"].copy(), "col": rank[inverse]}
    for c in AGG_VALUES:
        out[c] = rows[c].copy()
    return out, [names[i] for i in by_name]


AGG_ARRAY_DTYPES = {"dev": np.int64, "win": np.int64, "col": np.int64, "count": np.uint64, "sum": np.float64,
                    "min": np.float64, "max": np.float64, "mean": np.float64, "first": np.float64,
                    "last": np.float64, "first_time": np.int64, "last_time": np.int64}


_FRAME_FLOATS = ("sum", "min", "max", "mean", "first", "last")  # the stats frame's float64 columns


def agg_frame_of(arrays, device_names, column_names, blocks=True):
    """The stats DataFrame of agg_arrays-shaped columns (device_names / column_names: what dev / col index),
    which it takes over. The float columns become one block of the frame, arrays["floats"] when given (a
    (6, n) array whose rows are _FRAME_FLOATS, filled), else a copy of them; the other columns are used as
    they are. The frame is put together from its blocks through pandas' make_block (the entry pandas keeps
    for pyarrow), so no column is copied; a pandas that refuses it (or blocks=False) gets the frame column by
    column, which copies the columns other than the floats once."""
    import pandas as pd
    n = len(arrays["dev"])
    if n == 0:
        return stats_frame([])
    block = arrays.get("floats")
    if block is None:
        block = np.empty((len(_FRAME_FLOATS), n))
        for i, c in enumerate(_FRAME_FLOATS):
            block[i] = arrays[c]
    names = np.array(list(device_names) + [None], dtype=object)  # dev -1 (no device) takes the last, None
    labels = np.empty((2, n), dtype=object)  # device, column
    np.take(names, arrays["dev"], out=labels[0])
    np.take(np.array(column_names, dtype=object), arrays["col"], out=labels[1])
    win = arrays["win"].astype(np.int64, copy=False)
    window = pd.arrays.IntegerArray(win, win == C.INT64_MIN)
    ints = [arrays[c].astype(t, copy=False) for c, t in (("count", np.uint64), ("first_time", np.int64),
                                                          ("last_time", np.int64))]
    if blocks:
        out = _frame_of_blocks([(labels, [0, 2]), (window, [1]), (ints[0][None, :], [3]), (block, range(4, 10)),
                                (ints[1][None, :], [10]), (ints[2][None, :], [11])], n)
        if out is not None:
            return out
    out = pd.DataFrame(block.T, columns=list(_FRAME_FLOATS), copy=False)
    out.insert(0, "device", labels[0])
    out.insert(1, "window_start", window)
    out.insert(2, "column", labels[1])
    out.insert(3, "count", ints[0])
    out["first_time"], out["last_time"] = ints[1], ints[2]
    return out


def _frame_of_blocks(blocks, n):
    """The stats frame made of blocks ((values, the STATS_COLUMNS positions they hold)) without copying them,
    or None when this pandas does not take make_block and a BlockManager."""
    import pandas as pd
    try:
        from pandas.core.internals import BlockManager
        from pandas.core.internals.api import make_block
        mgr = BlockManager([make_block(v, placement=list(p), ndim=2) for v, p in blocks],
                           [pd.Index(STATS_COLUMNS), pd.RangeIndex(n)])
        if hasattr(pd.DataFrame, "_from_mgr"):
            return pd.DataFrame._from_mgr(mgr, axes=mgr.axes)
        return pd.DataFrame(mgr)
    except (ImportError, TypeError, ValueError, AttributeError, AssertionError):
        return None


def _agg_frame(res, device_names):
    """The stats DataFrame of a tsf_dataset_agg_result, its rows in the library's order."""
    arrays, names = agg_arrays(res)
    return agg_frame_of(arrays, device_names, names)


class DatasetStream:
    """A dataset query to export (Dataset.arrow): each __arrow_c_stream__ call makes a fresh stream."""

    def __init__(self, ds, kw):
        self._ds, self._kw = ds, kw

    def __arrow_c_stream__(self, requested_schema=None):
        """The query's rows as an Arrow C stream (PyCapsule "arrow_array_stream"; requested_schema is
        ignored)."""
        return self._ds._arrow_capsule(**self._kw)


class _filter:
    """Context: qo.where set to the filter of where / tags (parsed on entry, freed on exit)."""

    def __init__(self, qo, where, tags):
        self.qo, self.text, self.flt = qo, where_text(where, tags), ctypes.c_void_p()

    def __enter__(self):
        if self.text:
            err = new_error()
            check(C.lib.tsf_filter_parse(ctypes.byref(self.flt), self.text.encode(), ctypes.byref(err)), err,
                  "where %r" % self.text)
            self.qo.where = self.flt

    def __exit__(self, *exc):
        if self.text:
            self.qo.where = None
            C.lib.tsf_filter_free(self.flt)


def file_selection(f, table, devices):
    """The (table, devices) arguments of a query of f (a TsFile, or a Dataset of one file) for a dataset
    selection (a table name, or device names), or None when f holds none of it."""
    if devices is not None:
        mine = [n for n in devices if n in f._device_by_name]
        return (table, mine) if mine else None
    if table is not None and table not in f._table_by_name:
        return None
    return table, None


STATS_COLUMNS = ["device", "window_start", "column", "count", "sum", "min", "max", "mean", "first", "last",
                 "first_time", "last_time"]
# window_start is NA with one window; device None with group_by=None
STATS_DTYPES = [object, "Int64", object, np.uint64, np.float64, np.float64, np.float64, np.float64, np.float64,
                np.float64, np.int64, np.int64]


def stats_frame(rows):
    """The DataFrame of Dataset.stats rows (tuples in STATS_COLUMNS order)."""
    import pandas as pd
    if not rows:
        return pd.DataFrame({c: pd.Series([], dtype=t) for c, t in zip(STATS_COLUMNS, STATS_DTYPES)})
    return pd.DataFrame(rows, columns=STATS_COLUMNS).astype(dict(zip(STATS_COLUMNS, STATS_DTYPES)))


def concat_frames(frames, meta):
    """frames (each TsFile.to_pandas of one file) as one DataFrame in order: device / tag categoricals take
    meta's categories; a column a frame lacks is null there (in meta's nullable dtype)."""
    import pandas as pd
    if not frames:
        return meta.copy()
    names = list(meta.columns) + [c for f in frames for c in f.columns if c not in meta.columns]
    mixed = set()  # columns some frame lacks or holds in another dtype: all parts take meta's dtype
    for c in names:
        dts = {str(f[c].dtype) if c in f.columns else None for f in frames}
        if len(dts) > 1 and c in meta.columns:
            mixed.add(c)
    out = []
    for f in frames:
        cols = {}
        for c in names:
            if c in f.columns:
                v = f[c]
                if c in mixed or isinstance(meta[c].dtype if c in meta.columns else None, pd.CategoricalDtype):
                    v = v.astype(meta[c].dtype)
                cols[c] = v
            else:
                dt = meta[c].dtype if c in meta.columns else object
                cols[c] = pd.Series(pd.array([None] * len(f), dtype=dt), index=f.index)
        out.append(pd.DataFrame(cols, index=f.index))
    if len(out) == 1:
        return out[0]
    return pd.concat(out, ignore_index=True)
