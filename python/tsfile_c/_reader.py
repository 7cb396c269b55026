"""Reading: TsFile (metadata), Query (batches), to_numpy / to_pandas / stats.

Memory: a C batch is valid only until the next tsf_query_next, so no array handed out may point into
it. Each column of a batch is viewed in place (np.frombuffer over the C buffer, no copy) and copied
once: into a new array owned by NumPy for Query batches, or straight into its slot of the final
preallocated column for to_numpy / to_pandas (those grow by realloc when the statistics' row estimate
was short and shrink to the rows read at the end). Nothing returned refers to the reader, so every
array stays valid after the file is closed. Numeric columns never become per-row Python objects;
TEXT/STRING/BLOB and DATE values are Python objects (str, bytes, datetime.date).
"""
import ctypes
import datetime
import os
import weakref

import numpy as np

from . import _capi as C
from ._errors import TsfError, check, new_error

_FIXED = {C.BOOLEAN: np.uint8, C.INT32: np.int32, C.INT64: np.int64, C.FLOAT: np.float32, C.DOUBLE: np.float64,
          C.TIMESTAMP: np.int64, C.DATE: np.int32}
_BINARY = (C.TEXT, C.STRING, C.BLOB)
_UNITS = {"s": 1, "ms": 1000, "us": 1000000, "ns": 1000000000}


def _view(addr, n, dtype):
    """n values of dtype at C address addr, without a copy (valid while the C memory is)."""
    dtype = np.dtype(dtype)
    if n == 0:
        return np.empty(0, dtype)
    return np.frombuffer((ctypes.c_char * (n * dtype.itemsize)).from_address(addr), dtype)


def _present(addr, n):
    """None when all n validity bits at addr are set, else the bool array of present cells."""
    if n == 0:
        return None
    v = _view(addr, (n + 7) >> 3, np.uint8)
    full, rest = n >> 3, n & 7
    if (full == 0 or v[:full].min() == 255) and (rest == 0 or (int(v[full]) & ((1 << rest) - 1)) == (1 << rest) - 1):
        return None
    return np.unpackbits(v, count=n, bitorder="little").view(np.bool_)


def _binary_values(addr, n, present, typ):
    """Python objects for n tsf_bytes at addr: str for TEXT/STRING (UTF-8; undecodable bytes kept as
    surrogate escapes), bytes for BLOB, None for null cells."""
    pairs = _view(addr, 2 * n, np.uint64).reshape(n, 2).tolist() if n else []
    sat = ctypes.string_at
    if typ == C.BLOB:
        out = [sat(p, ln) if ln else b"" for p, ln in pairs]
    else:
        out = [sat(p, ln).decode("utf-8", "surrogateescape") if ln else "" for p, ln in pairs]
    if present is not None:
        for i in np.flatnonzero(~present).tolist():
            out[i] = None
    return out


def _date(v):
    if v is None:
        return None
    try:
        return datetime.date(v // 10000, v // 100 % 100, v % 100)
    except ValueError:
        raise ValueError("DATE value %d is not a date Python can hold (years 1-9999, yyyyMMdd)" % v) from None


def _to_time(t, unit, what):
    """A start/end argument as an integer in the file's time unit."""
    if t is None:
        return None
    if isinstance(t, (int, np.integer)):
        return int(t)
    if isinstance(t, str):
        t = np.datetime64(t)
    if isinstance(t, datetime.datetime):
        t = np.datetime64(t.replace(tzinfo=None) - (t.utcoffset() or datetime.timedelta(0)))
    if isinstance(t, np.datetime64) or hasattr(t, "to_datetime64"):
        if hasattr(t, "to_datetime64"):
            t = t.to_datetime64()
        return int(t.astype("datetime64[%s]" % unit).astype(np.int64))
    raise TypeError("%s: expected an int (file time units), a datetime, numpy.datetime64 or ISO string, got %r"
                    % (what, type(t).__name__))


def _quote_ident(name):
    return '"' + name.replace('"', '""') + '"'


def _literal(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return repr(v.item() if hasattr(v, "item") else v)
    return "'" + str(v).replace("'", "''") + "'"


def where_text(where, tags):
    """The filter text of a query's where and tags ({tag: value}, equality): None when neither is given."""
    if not tags:
        return where
    conds = ["%s = %s" % (_quote_ident(k), _literal(v)) for k, v in tags.items()]
    return " and ".join(conds + (["(%s)" % where] if where else []))


class _Closing:
    """A context manager whose exit (and garbage collection) calls close()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Column(tuple):
    """A column of a table schema or a measurement of a tree device: name, type, category, encoding,
    compression (names as strings)."""
    __slots__ = ()
    _fields = ("name", "type", "category", "encoding", "compression")

    def __new__(cls, *a):
        return tuple.__new__(cls, a)

    name = property(lambda s: s[0])
    type = property(lambda s: s[1])
    category = property(lambda s: s[2])
    encoding = property(lambda s: s[3])
    compression = property(lambda s: s[4])

    def __repr__(self):
        return "Column(%r, %s, %s)" % (self[0], self[1], self[2])


class Series:
    """A series (a measurement of a device) with its statistics from the file's index: count (non-null
    values), start_time, end_time, and min, max, first, last, sum where the file keeps them (None
    otherwise)."""
    __slots__ = ("device", "name", "type", "count", "start_time", "end_time", "min", "max", "first", "last", "sum",
                 "chunks")

    def __repr__(self):
        return "Series(%r, %r, %s, count=%d)" % (self.device, self.name, self.type, self.count)


def _stats_values(s, typ):
    """(min, max, first, last, sum) of a tsf_stats as Python values."""
    if s.count == 0:
        return None, None, None, None, None
    if typ in (C.INT32, C.INT64, C.TIMESTAMP, C.DATE):
        return s.min_i, s.max_i, s.first_i, s.last_i, s.sum
    if typ == C.BOOLEAN:
        return bool(s.min_i), bool(s.max_i), bool(s.first_i), bool(s.last_i), s.sum
    if typ in (C.FLOAT, C.DOUBLE):
        return s.min, s.max, s.first, s.last, s.sum

    def b(x):
        if not x.data:
            return None
        v = ctypes.string_at(x.data, x.len)
        return v if typ == C.BLOB else v.decode("utf-8", "surrogateescape")
    return (b(s.min_b), b(s.max_b), b(s.first_b), b(s.last_b), None)


class Device:
    """A device: index (the library's device number), name, table (its table's name), segments (the parts
    of its id; None for a null segment), aligned, series (list of Series, in measurement-name order)."""
    __slots__ = ("index", "name", "table", "segments", "aligned", "series")

    def __repr__(self):
        return "Device(%d, %r, %d series)" % (self.index, self.name, len(self.series))


class Table:
    """A table: name, columns (list of Column; empty for the path-prefix tables of tree-model files),
    devices (list of Device)."""
    __slots__ = ("name", "columns", "devices")

    def __repr__(self):
        return "Table(%r, %d columns, %d devices)" % (self.name, len(self.columns), len(self.devices))


def load_tables(count, get, handle):
    """Table objects (devices still empty) of a reader's or a dataset's tables: count(handle) and
    get(handle, i, &TableInfo, &err) are the library's *_table_count and *_table."""
    lib, err, ti, out = C.lib, new_error(), C.TableInfo(), []
    for i in range(count(handle)):
        check(get(handle, i, ctypes.byref(ti), ctypes.byref(err)), err, "table %d" % i)
        t = Table()
        t.name = ti.name.decode("utf-8", "surrogateescape")
        t.columns = [Column(c.name.decode("utf-8", "surrogateescape"), C.TYPE_NAMES.get(c.type, str(c.type)),
                            C.CATEGORY_NAMES.get(c.category, str(c.category)),
                            (lib.tsf_encoding_name(c.encoding) or b"?").decode(),
                            (lib.tsf_compression_name(c.compression) or b"?").decode())
                     for c in ti.columns[:ti.ncolumns]]
        t.devices = []
        out.append(t)
    return out


def new_device(tables, i, di, get_segment, handle):
    """(Device i from its info di, with its segments read through get_segment, and its Table or None);
    series still to fill."""
    err, seg = new_error(), C.Bytes()
    d = Device()
    d.index, d.aligned = i, bool(di.aligned)
    d.name = di.name.decode("utf-8", "surrogateescape")
    table = tables[di.table] if di.table < len(tables) else None
    d.table = table.name if table else ""
    segs = []
    for s in range(di.nsegments):
        check(get_segment(handle, i, s, ctypes.byref(seg), ctypes.byref(err)), err, "device %d segment %d" % (i, s))
        segs.append(None if not seg.data else ctypes.string_at(seg.data, seg.len).decode("utf-8", "surrogateescape"))
    d.segments = tuple(segs)
    return d, table


class _Catalog:
    """What a TsFile and a Dataset both describe from their tables and devices (set by their _load)."""

    def _index(self):
        self._device_by_name = {d.name: d for d in self.devices}
        self._table_by_name = {t.name: t for t in self.tables}

    @property
    def model(self):
        """"table" when the file holds table schemas, else "tree"."""
        return "table" if any(t.columns for t in self.tables) else "tree"

    @property
    def series(self):
        """Every series with its statistics (list of Series)."""
        return [s for d in self.devices for s in d.series]

    @property
    def schema(self):
        """Table model: {table: [Column, ...]} in schema order. Tree model: {device: [Column, ...]} of its
        measurements (category FIELD)."""
        if self.model == "table":
            return {t.name: list(t.columns) for t in self.tables if t.columns}
        return {d.name: [Column(s.name, s.type, "FIELD", None, None) for s in d.series] for d in self.devices}


class TsFile(_Closing, _Catalog):
    """An open TsFile (tsfile_c.open). A context manager; close() ends every query still open."""

    def __init__(self, path, checked=True, use_pread=None, page_index=True):
        self.path = path
        self._r = None
        self.last_query_stats = None
        self.last_stats_info = None
        self._queries = weakref.WeakSet()
        ro = C.ReaderOptions()
        C.lib.tsf_reader_options_init(ctypes.byref(ro))
        ro.checked = 1 if checked else 0
        ro.use_pread = _pread_option(use_pread)
        ro.page_index = 1 if page_index else 0
        self._ro = ro
        err = new_error()
        r = ctypes.c_void_p()
        check(C.lib.tsf_reader_open(ctypes.byref(r), os.fsencode(path), ctypes.byref(ro), ctypes.byref(err)), err,
              "open %s" % (path,))
        self._r = r
        try:
            check(C.lib.tsf_reader_load_index(r, ctypes.byref(err)), err, "open %s" % (path,))
            self._load()
        except BaseException:
            self.close()
            raise

    # ---- metadata ------------------------------------------------------------------------------
    def _load(self):
        r, err = self._r, new_error()
        lib = C.lib
        self.version = lib.tsf_reader_version(r)
        self.tables = load_tables(lib.tsf_reader_table_count, lib.tsf_reader_table, r)
        self.devices = []
        di, si = C.DeviceInfo(), C.SeriesInfo()
        for i in range(lib.tsf_reader_device_count(r)):
            check(lib.tsf_reader_device(r, i, ctypes.byref(di), ctypes.byref(err)), err, "device %d" % i)
            d, table = new_device(self.tables, i, di, lib.tsf_reader_device_segment, r)
            d.series = []
            for j in range(di.nseries):
                check(lib.tsf_reader_series(r, i, j, ctypes.byref(si), ctypes.byref(err)), err,
                      "device %s series %d" % (d.name, j))
                s = Series()
                s.device, s.name = d.name, si.measurement.decode("utf-8", "surrogateescape")
                s.type = C.TYPE_NAMES.get(si.type, str(si.type))
                s.count, s.chunks = si.stats.count, si.nchunks
                s.start_time, s.end_time = si.stats.start_time, si.stats.end_time
                s.min, s.max, s.first, s.last, s.sum = _stats_values(si.stats, si.type)
                d.series.append(s)
            self.devices.append(d)
            if table:
                table.devices.append(d)
        self._index()

    def _handle(self):
        if self._r is None:
            raise TsfError(-8, "the file is closed", "TsFile")
        return self._r

    def __arrow_c_stream__(self, requested_schema=None):
        """The whole file as an Arrow C stream (PyCapsule "arrow_array_stream"): tree model, every device
        with a device column; table model, the file's one table (query(table=...) for one of several)."""
        tabs = [t.name for t in self.tables if t.columns]
        if self.model == "table" and len(tabs) != 1:
            raise TsfError(-1, "the file has %d tables (%s): export query(table=...)" % (len(tabs), ", ".join(tabs)),
                           "__arrow_c_stream__")
        with self.query(table=tabs[0] if self.model == "table" else None) as q:
            return q.__arrow_c_stream__(requested_schema)

    def close(self):
        for q in list(self._queries):
            q.close()
        if self._r is not None:
            C.lib.tsf_reader_close(self._r)
            self._r = None

    def __repr__(self):
        return "<tsfile_c.TsFile %r: %s model, %d tables, %d devices%s>" % (
            self.path, self.model, len(self.tables), len(self.devices), "" if self._r else ", closed")

    # ---- selection -----------------------------------------------------------------------------
    def _select_devices(self, table, devices, tags):
        """The Device list a query covers."""
        if devices is not None:
            if isinstance(devices, (str, int, np.integer)):
                devices = [devices]
            out = []
            for d in devices:
                if isinstance(d, (int, np.integer)):
                    if not 0 <= d < len(self.devices):
                        raise TsfError(-1, "device %d: the file has %d devices" % (d, len(self.devices)), "query")
                    out.append(self.devices[d])
                elif d in self._device_by_name:
                    out.append(self._device_by_name[d])
                else:
                    raise TsfError(-7, "device %r is not in the file" % (d,), "query")
            return out, table
        if table is None and self.model == "table":  # a file of one table: that table
            tabs = [t for t in self.tables if t.columns]
            if len(tabs) == 1:
                table = tabs[0].name
        if table is not None:
            t = self._table_by_name.get(table) or self._table_by_name.get(table.lower())
            if t is None:
                raise TsfError(-7, "table %r is not in the file (tables: %s)"
                               % (table, ", ".join(x.name for x in self.tables)), "query")
            return list(t.devices), t.name
        return list(self.devices), None

    def query(self, columns=None, start=None, end=None, where=None, table=None, devices=None, tags=None,
              batch_size=None, threads=None, time_unit="ms"):
        """Iterator of Batch over the rows selected: `columns` (measurement / field names; None = all),
        times in [start, end] (inclusive; ints in the file's time unit, or datetimes / ISO strings read
        in `time_unit`), `where` (a filter expression, e.g. "temp > 3.5 and status = 'ok'"), `table`,
        `devices` (names or indexes), `tags` ({tag: value}, equality, table model)."""
        devs, table = self._select_devices(table, devices, tags)
        return Query(self, devs, table, columns, _to_time(start, time_unit, "start"),
                     _to_time(end, time_unit, "end"), where, tags, batch_size, threads)

    # ---- whole results -------------------------------------------------------------------------
    def _collect(self, columns, start, end, where, table, devices, tags, threads, time_unit):
        devs, table = self._select_devices(table, devices, tags)
        if table is None and self.model == "table":
            tabs = {d.table for d in devs}
            if len(tabs) > 1:
                raise TsfError(-1, "the file has several tables (%s): pass table=" % ", ".join(sorted(tabs)),
                               "to_pandas")
            table = next(iter(tabs)) if tabs else None
        t0, t1 = _to_time(start, time_unit, "start"), _to_time(end, time_unit, "end")
        est = 0
        wanted = None if columns is None else set(columns)
        for d in devs:
            counts = [_rows_in(s, t0, t1) for s in d.series if wanted is None or s.name in wanted]
            est += (max(counts) if d.aligned else sum(counts)) if counts else 0
        plan = self._fixed_plan(devs, columns, table)
        q = Query(self, devs, table, columns if plan is None else plan[0], t0, t1, where, tags, 1 << 16, threads)
        try:
            if plan is None:
                res = _Collector(max(est, 1), columns, len(self.devices)).run(q)
            else:  # one TAG column: the library writes each row's categorical code of it
                maps = _tag_maps(self._table_by_name[table], len(self.devices)) if table is not None else []
                res = _Collector(max(est, 1), plan[0], len(self.devices)).collect(q, plan[1],
                                                                                  maps[0][1] if len(maps) == 1 else None)
                res.tag_maps = maps
        finally:
            q.close()
            self.last_query_stats = q.stats
        if plan is not None and q.stats is not None:  # cells decoded straight into the arrays, cells copied
            self.last_query_stats = dict(q.stats, cells_in_place=res.in_place, cells_copied=res.copied)
        res.table = self._table_by_name.get(table) if table else None
        res.devices = self.devices
        return res

    def _fixed_plan(self, devs, columns, table):
        """(names, type codes) when every selected column has one fixed-width type in the selected devices, so
        that the query can fill the result's arrays itself (tsf_query_collect, pages decoded in place); None
        otherwise. Without columns: a table's FIELD columns that some selected device has."""
        if columns is None:
            if table is None or self.model != "table":
                return None
            have = {s.name for d in devs for s in d.series}
            names = [c.name for c in self._table_by_name[table].columns if c.category == "FIELD" and c.name in have]
        else:
            names = list(columns)
        if not names or len(set(names)) != len(names):
            return None
        types, wanted = {}, set(names)
        for d in devs:
            for sr in d.series:
                if sr.name in wanted:
                    types.setdefault(sr.name, set()).add(C.TYPE_CODES.get(sr.type))
        codes = []
        for name in names:
            ts = types.get(name, ())
            if len(ts) != 1 or next(iter(ts)) not in _FIXED:
                return None
            codes.append(next(iter(ts)))
        return names, codes

    def to_numpy(self, columns=None, start=None, end=None, where=None, table=None, devices=None, tags=None,
                 threads=None, time_unit="ms"):
        """{"time": int64 (file units), "device": device names (object array; tree model) or one array per
        tag (table model), column: values} for the selected rows. Columns with nulls are
        numpy.ma.MaskedArray (masked = null); TEXT/STRING are str, BLOB bytes, DATE int32 yyyyMMdd."""
        res = self._collect(columns, start, end, where, table, devices, tags, threads, time_unit)
        out = {"time": res.time}
        names = np.array([d.name for d in self.devices] + [None], dtype=object)
        if res.table is not None and res.table.columns:
            for tname, codes, cats in _tag_codes(res):
                out[tname] = np.asarray(cats + [None], dtype=object)[codes]
        else:
            out["device"] = names[res.dev]
        for name, col in res.cols.items():
            vals, present = col.finish(res.n)
            if present is not None and col.kind != "obj":
                vals = np.ma.MaskedArray(vals, mask=~present)
            out[name] = vals
        return out

    def to_pandas(self, columns=None, start=None, end=None, where=None, table=None, devices=None, tags=None,
                  threads=None, time_unit="ms", time="datetime"):
        """A pandas DataFrame of the selected rows. Tree model: time, device (categorical), one column per
        measurement; table model: time, the tags (categorical), the fields. time="datetime" gives the time
        column (and TIMESTAMP columns) as datetime64 in `time_unit` (pandas < 2: nanoseconds; a value that
        does not fit raises OverflowError), time="int" keeps the file's integers. Columns with nulls take
        the pandas nullable dtypes (Int32, Int64, Float32, Float64, boolean, string); DATE is datetime.date
        objects, BLOB bytes."""
        import pandas as pd
        if time not in ("datetime", "int"):
            raise ValueError("time must be 'datetime' or 'int', got %r" % (time,))
        if time_unit not in _UNITS:
            raise ValueError("time_unit must be one of %s, got %r" % (", ".join(_UNITS), time_unit))
        res = self._collect(columns, start, end, where, table, devices, tags, threads, time_unit)
        data = {"time": _pd_time(res.time, None, time, time_unit, "time", getattr(res, "time_bounds", None))}
        if res.table is not None and res.table.columns:
            for tname, codes, cats in _tag_codes(res):
                data[tname] = pd.Categorical.from_codes(codes, categories=cats)
        else:
            codes, cats = _used_codes(res.dev, [d.name for d in self.devices])
            data["device"] = pd.Categorical.from_codes(codes, categories=cats)
        names = list(res.cols)
        if res.table is not None and res.table.columns and columns is None:  # fields in schema order
            order = {c.name: k for k, c in enumerate(res.table.columns)}
            names.sort(key=lambda c: order.get(c, len(order)))
        for name in names:
            col = res.cols[name]
            vals, present = col.finish(res.n)
            data[name] = _pd_column(pd, vals, present, col, time, time_unit, name)
        return pd.DataFrame(data, copy=False)

    def stats(self, series=None, devices=None, table=None, start=None, end=None, window=None, origin=0,
              time_unit="ms", force_decode=False):
        """Aggregates over the file's statistics (decoding only the pages they cannot answer): a DataFrame
        with one row per (device, series, window): count, first_time, last_time, min, max, first, last, sum
        (as in the file's statistics; sum is a float). `series`: names (None = all), `window`: window
        length in file time units (None = one window over [start, end]). force_decode=True decodes every
        page instead (the same answers; cross-checks the statistics). Afterwards last_stats_info holds the
        library's counters: chunks_from_stats, pages_from_stats, pages_decoded, points_from_stats,
        points_decoded."""
        import pandas as pd
        devs, _ = self._select_devices(table, devices, None)
        rows = []
        for d, ser, w, typ in self._aggregate(devs, series, start, end, window, origin, time_unit, force_decode):
            mn, mx, fi, la, sm = _stats_values(w.stats, typ)
            rows.append((d.name, ser.name, w.start, w.end, w.stats.count, w.stats.start_time, w.stats.end_time, mn,
                         mx, fi, la, sm))
        return pd.DataFrame(rows, columns=["device", "series", "window_start", "window_end", "count", "first_time",
                                           "last_time", "min", "max", "first", "last", "sum"])

    def _aggregate(self, devs, series, start, end, window, origin, time_unit, force_decode=False):
        """(Device, Series, tsf_agg_window, type code) of every window of tsf_aggregate over the series of devs
        (`series`: names, None = all), in device then series order; the window struct is valid until the next
        item. Sums the library's counters into self.last_stats_info."""
        wanted = None if series is None else ({series} if isinstance(series, str) else set(series))
        ao = C.AggOptions()
        C.lib.tsf_agg_options_init(ctypes.byref(ao))
        s, e = _to_time(start, time_unit, "start"), _to_time(end, time_unit, "end")
        if s is not None:
            ao.time_min = s
        if e is not None:
            ao.time_max = e
        ao.window = int(window or 0)
        ao.window_origin = int(origin)
        ao.force_decode = 1 if force_decode else 0
        info = C.AggInfo()
        total = dict.fromkeys((f for f, _ in C.AggInfo._fields_), 0)
        self.last_stats_info = total
        err = new_error()
        r = self._handle()
        for d in devs:
            for j, ser in enumerate(d.series):
                if wanted is not None and ser.name not in wanted:
                    continue
                res = ctypes.c_void_p()
                check(C.lib.tsf_aggregate(r, d.index, j, ctypes.byref(ao), ctypes.byref(res), ctypes.byref(err)),
                      err, "stats %s.%s" % (d.name, ser.name))
                try:
                    C.lib.tsf_agg_result_info(res, ctypes.byref(info))
                    for k in total:
                        total[k] += getattr(info, k)
                    typ = C.TYPE_CODES.get(ser.type, -1)
                    for k in range(C.lib.tsf_agg_result_count(res)):
                        yield d, ser, C.lib.tsf_agg_result_window(res, k).contents, typ
                finally:
                    C.lib.tsf_agg_result_free(res)


def _rows_in(s, t0, t1):
    """Rows of series s expected in [t0, t1] from its statistics (points spread evenly over its span): the
    capacity to_numpy/to_pandas preallocate (they grow if it is short)."""
    lo, hi = max(s.start_time, C.INT64_MIN if t0 is None else t0), min(s.end_time, C.INT64_MAX if t1 is None else t1)
    if hi < lo or s.count == 0:
        return 0
    span = s.end_time - s.start_time
    if span <= 0 or (lo == s.start_time and hi == s.end_time):
        return s.count
    return min(s.count, int(s.count * (hi - lo + 1) / (span + 1) * 1.02) + 64)


def _used_codes(codes, names):
    """Categorical codes and categories restricted to the categories that occur."""
    if len(codes) == 0:
        return codes.astype(np.int32), []
    used = np.bincount(codes, minlength=len(names)) > 0
    remap = (np.cumsum(used, dtype=np.int64) - 1).astype(_code_dtype(int(used.sum())))
    return remap[codes], [n for n, u in zip(names, used) if u]


def _tag_maps(table, ndevices):
    """(tag name, code per device index (-1 = null tag; the type pandas keeps the codes in), categories)
    for each TAG column of the table."""
    tags = [c.name for c in table.columns if c.category == "TAG"]
    out = []
    for k, tname in enumerate(tags):
        cats, index, per_dev = [], {}, np.full(ndevices + 1, -1, dtype=np.int32)
        for d in table.devices:
            v = d.segments[k + 1] if k + 1 < len(d.segments) else None
            if v is not None:
                per_dev[d.index] = index.setdefault(v, len(cats))
                if per_dev[d.index] == len(cats):
                    cats.append(v)
        out.append((tname, per_dev.astype(_code_dtype(len(cats))), cats))
    return out


def _tag_codes(res):
    """(tag name, codes per row, categories) for each TAG column of the result's table (-1 = null tag)."""
    maps = getattr(res, "tag_maps", None) or _tag_maps(res.table, len(res.devices))
    if getattr(res, "codes", None) is not None:  # collected as the codes of the only tag
        return [(maps[0][0], res.codes, maps[0][2])]
    return [(tname, per_dev[res.dev], cats) for tname, per_dev, cats in maps]


def _code_dtype(n):
    """The integer type pandas keeps categorical codes of n categories in (so from_codes copies nothing)."""
    return np.int8 if n < 127 else np.int16 if n < 32767 else np.int32


def _pd_time(vals, present, mode, unit, what, bounds=None):
    """datetime64 of integer times (present: None or the bool mask of present cells; bounds: their least and
    greatest value when known)."""
    import pandas as pd
    if mode == "int":
        return vals if present is None else pd.arrays.IntegerArray(vals, ~present)
    target = unit if int(pd.__version__.split(".")[0]) >= 2 else "ns"
    live = vals if present is None else vals[present]
    if len(live):
        lo, hi = (int(live.min()), int(live.max())) if bounds is None else bounds
        limit = C.INT64_MAX // (_UNITS[target] // _UNITS[unit])
        if lo < -limit or hi > limit or lo == C.INT64_MIN:
            raise OverflowError("%s: values %d..%d (%s) do not fit datetime64[%s]; pass time='int'"
                                % (what, lo, hi, unit, target))
    if target != unit:  # the array is the caller's own (collected) copy: scaled in place, no new memory
        np.multiply(vals, _UNITS[target] // _UNITS[unit], out=vals)
    out = vals.view("datetime64[%s]" % target)
    if present is not None:
        out[~present] = np.datetime64("NaT")
    return out


def _pd_column(pd, vals, present, col, mode, unit, name):
    """A pandas column of collected values: nullable dtypes where there are nulls."""
    typ = col.type
    if col.kind == "none":
        return vals
    if col.kind == "obj":
        if typ in (C.TEXT, C.STRING) and present is not None:
            return pd.array(vals, dtype="string")
        return vals
    if typ == C.TIMESTAMP:
        return _pd_time(vals, present, mode, unit, name)
    if typ == C.DATE:
        lst = vals.tolist()
        if present is not None:
            for i in np.flatnonzero(~present).tolist():
                lst[i] = None
        out = np.empty(len(lst), dtype=object)
        out[:] = [_date(v) for v in lst]
        return out
    if present is None:
        return vals.view(np.bool_) if typ == C.BOOLEAN else vals
    mask = ~present
    if typ == C.BOOLEAN:
        return pd.arrays.BooleanArray(vals.view(np.bool_), mask)
    if typ in (C.INT32, C.INT64):
        return pd.arrays.IntegerArray(vals, mask)
    return pd.arrays.FloatingArray(vals, mask)


class _Col:
    """One output column of to_numpy/to_pandas. Until its first value it is "none" (only nulls); then a
    preallocated NumPy array ("fixed": numeric, BOOLEAN, TIMESTAMP, DATE; grown by realloc) or a list of
    Python objects ("obj": TEXT/STRING/BLOB, or a name whose type differs between devices). `present`
    (bool array) exists once a null has been seen; rows [0, filled) are set."""

    def __init__(self, cap):
        self.type, self.kind, self.vals, self.present = None, "none", None, None
        self.filled, self.cap = 0, cap

    def _start(self, typ):
        self.type = typ
        if typ in _FIXED:
            self.kind, self.vals = "fixed", np.empty(self.cap, _FIXED[typ])
            if self.filled:
                self.vals[:self.filled] = 0
                self.present = np.ones(self.cap, np.bool_)
                self.present[:self.filled] = False
        else:
            self.kind, self.vals = "obj", [None] * self.filled

    def _nulls(self, off, n):
        if self.kind == "fixed":
            self.vals[off:off + n] = 0
            if self.present is None:
                self.present = np.ones(self.cap, np.bool_)
            self.present[off:off + n] = False
        elif self.kind == "obj":
            self.vals.extend([None] * n)
        self.filled = off + n

    def grow(self, cap):
        self.cap = cap
        if self.kind == "fixed":
            self.vals.resize(cap, refcheck=False)
            if self.present is not None:
                self.present.resize(cap, refcheck=False)

    def _to_objects(self):
        v = self.vals[:self.filled]
        lst = (v.view(np.bool_) if self.type == C.BOOLEAN else v).tolist()
        if self.present is not None:
            for i in np.flatnonzero(~self.present[:self.filled]).tolist():
                lst[i] = None
        self.kind, self.type, self.vals, self.present = "obj", -1, lst, None

    def put(self, off, n, typ, addr, validity):
        if self.filled < off:
            self._nulls(self.filled, off - self.filled)
        if typ == C.VECTOR:  # the device lacks this column
            self._nulls(off, n)
            return
        if self.kind == "none":
            self._start(typ)
        elif typ != self.type and self.kind == "fixed":
            self._to_objects()
        present = _present(validity, n)
        if self.kind == "fixed":
            self.vals[off:off + n] = _view(addr, n, self.vals.dtype)
            if present is not None:
                if self.present is None:
                    self.present = np.ones(self.cap, np.bool_)
                self.present[off:off + n] = present
            elif self.present is not None:
                self.present[off:off + n] = True
        elif typ in _BINARY:
            self.vals.extend(_binary_values(addr, n, present, typ))
        else:
            v = _view(addr, n, _FIXED[typ])
            vals = (v.view(np.bool_) if typ == C.BOOLEAN else v).tolist()
            if present is not None:
                for i in np.flatnonzero(~present).tolist():
                    vals[i] = None
            self.vals.extend(vals)
        self.filled = off + n

    def finish(self, n):
        """(values, present mask or None) of rows [0, n)."""
        if self.filled < n:
            self._nulls(self.filled, n - self.filled)
        if self.kind == "none":
            return np.full(n, None, dtype=object), np.zeros(n, np.bool_)
        if self.kind == "fixed":
            self.vals.resize(n, refcheck=False)
            if self.present is not None:
                self.present.resize(n, refcheck=False)
            return self.vals, self.present
        arr = np.empty(n, dtype=object)
        arr[:] = self.vals
        present = np.fromiter((v is not None for v in self.vals), np.bool_, n)
        return arr, (None if present.all() else present)


def _block(cap, dtypes):
    """Arrays of cap elements of each dtype, carved out of one allocation (each 64-byte aligned): a result
    past a few MB is then one allocation, which NumPy advises the kernel to back with huge pages. New
    memory is the dominant cost of a result that does not reuse freed pages (bench/RESULTS.md: on the
    benchmark VM a new 4 KiB page costs about 25 us, a 2 MiB huge page far less per byte). The columns share
    that memory: it is freed when the last of them is."""
    sizes = [(cap * dt.itemsize + 63) & ~63 for dt in dtypes]
    raw = np.empty(sum(sizes) + 64, np.uint8)
    off, out = (-raw.ctypes.data) % 64, []
    for dt, size in zip(dtypes, sizes):
        out.append(raw[off:off + cap * dt.itemsize].view(dt))
        off += size
    return out


class _Collector:
    """Runs a query and gathers its batches into whole columns."""

    def __init__(self, cap, columns, ndevices):
        self.cap = cap
        self.n = 0
        self.time = np.empty(cap, np.int64)
        self.dev = np.empty(cap, np.int16 if ndevices < 32767 else np.int32)
        self.cols = {}
        if columns is not None:
            for c in columns:
                self.cols[c] = None  # keeps the caller's order

    def run(self, q):
        cols = self.cols
        for bp in q._raw():
            b = bp.contents
            n = b.nrows
            off = self.n
            if off + n > self.cap:
                self._grow(max(2 * self.cap, off + n))
            self.time[off:off + n] = _view(b.times, n, np.int64)
            self.dev[off:off + n] = b.device
            cb = b.columns
            for i in range(b.ncolumns):
                c = cb[i]
                name = c.name.decode("utf-8", "surrogateescape")
                col = cols.get(name)
                if col is None:
                    col = cols[name] = _Col(self.cap)
                col.put(off, n, c.type, c.values, c.validity)
            self.n = off + n
        for name, col in list(cols.items()):
            if col is None:
                cols[name] = _Col(self.cap)
        self.time.resize(self.n, refcheck=False)
        self.dev.resize(self.n, refcheck=False)
        return self

    def collect(self, q, types, dev_codes=None):
        """Fills the columns (every one of the fixed-width type given, in the query's column order) through
        tsf_query_collect: the library writes rows straight into these arrays, decoding whole pages in place.
        dev_codes (int array per device): each row's code of its device, kept in self.codes instead of the
        device index in self.dev. Time, devices and values share one allocation (_block)."""
        names = list(self.cols)
        dts = [np.dtype(np.int64), np.dtype(np.int32 if dev_codes is None else dev_codes.dtype)]
        dts += [np.dtype(_FIXED[t]) for t in types]
        arrays = _block(self.cap, dts)
        pres = [np.empty(self.cap, np.bool_) for _ in types]  # touched only from a column's first null on
        k = C.Collect()
        C.lib.tsf_collect_init(ctypes.byref(k))
        if dev_codes is not None:
            table = np.ascontiguousarray(dev_codes, np.int32)
            k.device_codes = table.ctypes.data_as(ctypes.POINTER(C.c_i32))
            k.device_width = dts[1].itemsize
        cc = (C.CollectColumn * len(types))()
        for i, t in enumerate(types):
            cc[i].type, cc[i].first_null = t, (1 << (8 * ctypes.sizeof(C.c_size))) - 1
        k.ncolumns, k.columns = len(types), cc
        err = new_error()
        while not q._empty:
            k.cap, k.times, k.devices = self.cap, arrays[0].ctypes.data, arrays[1].ctypes.data
            for i in range(len(types)):
                cc[i].values, cc[i].present = arrays[2 + i].ctypes.data, pres[i].ctypes.data
            check(C.lib.tsf_query_collect(q._q, ctypes.byref(k), ctypes.byref(err)), err, "query")
            if k.done:
                break
            self.cap = max(2 * self.cap, k.nrows + (1 << 16))
            grown = _block(self.cap, dts)
            for old, new in zip(arrays, grown):
                new[:k.nrows] = old[:k.nrows]
            arrays = grown
            for a in pres:
                a.resize(self.cap, refcheck=False)
        self.n = n = k.nrows
        self.time, self.dev = arrays[0][:n], arrays[1][:n]
        for i, name in enumerate(names):
            col = self.cols[name] = _Col(n)
            col.type, col.kind, col.vals, col.filled = types[i], "fixed", arrays[2 + i][:n], n
            if cc[i].first_null <= n:
                pres[i][:cc[i].first_null] = True
                pres[i].resize(n, refcheck=False)
                col.present = pres[i]
        self.in_place, self.copied = k.cells_in_place, k.cells_copied
        self.time_bounds = (k.time_min, k.time_max) if n else None
        if dev_codes is not None:
            self.codes, self.dev = self.dev, None
        return self

    def _grow(self, cap):
        self.cap = cap
        self.time.resize(cap, refcheck=False)
        self.dev.resize(cap, refcheck=False)
        for col in self.cols.values():
            if col is not None:
                col.grow(cap)


class Batch:
    """Rows of one device from a query: device (name), device_index, time (int64 array, file units),
    columns ({name: array}; a column with nulls is a numpy.ma.MaskedArray, masked = null), types
    ({name: type name}), file (index in Dataset.files; None for a TsFile's query). The arrays are copies
    owned by NumPy: they stay valid after the query and the file are closed."""
    __slots__ = ("device", "device_index", "time", "columns", "types", "file")

    def __len__(self):
        return len(self.time)

    def __getitem__(self, name):
        return self.columns[name]

    def __repr__(self):
        return "Batch(%r, %d rows, columns %s)" % (self.device, len(self.time), list(self.columns))


class Query(_Closing):
    """An open query (TsFile.query): iterate it for Batch objects; close() (or the end of the iteration,
    or closing the file) frees it. stats: the library's counters once closed (chunks_read, chunks_skipped,
    pages_read, pages_skipped, blocks_read, blocks_skipped, bytes_read, bytes_decompressed, rows); a
    TsFile keeps those of its last to_pandas / to_numpy as last_query_stats."""

    def __init__(self, f, devs, table, columns, start, end, where, tags, batch_size, threads):
        self._file = f
        self._q = None
        self.stats = None
        self._filter = None
        self._keep = []
        qo = C.QueryOptions()
        C.lib.tsf_query_options_init(ctypes.byref(qo))
        all_devices = len(devs) == len(f.devices)
        if table is not None and not (devs and len(devs) == len(f._table_by_name[table].devices)):
            table = None
        if table is not None:
            qo.table = table.encode()
            self._keep.append(qo.table)
        elif not all_devices:
            arr = (C.c_size * max(len(devs), 1))(*[d.index for d in devs])
            self._keep.append(arr)
            qo.devices, qo.ndevices = arr, len(devs)
            if not devs:
                self._empty = True
        if columns is not None:
            if isinstance(columns, str):
                columns = [columns]
            enc = [c.encode() for c in columns]
            arr = (C.c_str * max(len(enc), 1))(*enc)
            self._keep += [enc, arr]
            qo.columns, qo.ncolumns = arr, len(enc)
        if start is not None:
            qo.time_min = start
        if end is not None:
            qo.time_max = end
        if batch_size:
            qo.batch_size = batch_size
        if threads:
            qo.threads = threads
        self._qo = qo
        text = where_text(where, tags)
        self._where_text = text
        err = new_error()
        if text:
            flt = ctypes.c_void_p()
            check(C.lib.tsf_filter_parse(ctypes.byref(flt), text.encode(), ctypes.byref(err)), err,
                  "where %r" % (text,))
            self._filter = flt
            qo.where = flt
        self._empty = len(devs) == 0
        q = ctypes.c_void_p()
        try:
            check(C.lib.tsf_query_open(f._handle(), ctypes.byref(qo), ctypes.byref(q), ctypes.byref(err)), err,
                  "query")
        except BaseException:
            self.close()
            raise
        self._q = q
        f._queries.add(self)

    def __arrow_c_stream__(self, requested_schema=None, time_unit="ms"):
        """This query's rows as an Arrow C stream (PyCapsule "arrow_array_stream"; requested_schema is
        ignored): a fresh stream over the same options, with a reader of its own, so it does not depend on
        this object, its iteration or its file staying open. Columns: time (timestamp[ms, UTC]), then the
        device (tree model) or the tags (table model), then the values."""
        from ._arrow import stream_capsule
        err = new_error()
        flt = ctypes.c_void_p()
        if self._where_text:
            check(C.lib.tsf_filter_parse(ctypes.byref(flt), self._where_text.encode(), ctypes.byref(err)), err,
                  "where %r" % (self._where_text,))
        try:
            self._qo.where = flt if self._where_text else None
            return stream_capsule(self._file.path, self._file._ro, self._qo, time_unit)
        finally:
            self._qo.where = self._filter
            if self._where_text:
                C.lib.tsf_filter_free(flt)

    def _raw(self):
        """The C batches (valid until the next one)."""
        bp = ctypes.POINTER(C.Batch)()
        err = new_error()
        nxt = C.lib.tsf_query_next
        while not self._empty:
            if self._q is None:
                raise TsfError(-8, "the query is closed", "query")
            check(nxt(self._q, ctypes.byref(bp), ctypes.byref(err)), err, "query")
            if not bp:
                break
            yield bp
        self.close()
        self._empty = True

    def __iter__(self):
        names = self._file.devices
        for bp in self._raw():
            b = bp.contents
            n = b.nrows
            out = Batch()
            out.file = None
            out.device_index = b.device
            out.device = names[b.device].name
            out.time = _view(b.times, n, np.int64).copy()
            out.columns, out.types = {}, {}
            cb = b.columns
            for i in range(b.ncolumns):
                c = cb[i]
                name = c.name.decode("utf-8", "surrogateescape")
                out.types[name] = C.TYPE_NAMES.get(c.type, str(c.type))
                present = _present(c.validity, n)
                if c.type in _BINARY:
                    v = np.empty(n, dtype=object)
                    v[:] = _binary_values(c.values, n, present, c.type)
                elif c.type in _FIXED:
                    v = _view(c.values, n, _FIXED[c.type]).copy()
                    if c.type == C.BOOLEAN:
                        v = v.view(np.bool_)
                    if present is not None:
                        v = np.ma.MaskedArray(v, mask=~present)
                else:
                    v = np.ma.MaskedArray(np.zeros(n, np.int8), mask=np.ones(n, np.bool_))
                out.columns[name] = v
            yield out

    def close(self):
        if self._q is not None:
            st = C.QueryStats()
            C.lib.tsf_query_get_stats(self._q, ctypes.byref(st))
            self.stats = {name: getattr(st, name) for name, _ in C.QueryStats._fields_}
            C.lib.tsf_query_close(self._q)
            self._q = None
        if self._filter is not None:
            C.lib.tsf_filter_free(self._filter)
            self._filter = None


def _pread_option(use_pread):
    """tsf_reader_options.use_pread of the Python argument: None = the library's choice by use (-1)."""
    return -1 if use_pread is None else 1 if use_pread else 0


def open(path, checked=True, use_pread=None, page_index=True, cache=None):  # noqa: A001 - the package's entry point
    """Opens a TsFile for reading (a context manager). checked: compare every decoded page with its
    statistics (the library's default); use_pread: True reads with pread, False maps the file, None (default)
    lets the library choose (a file is mapped, a dataset's files are read with pread);
    page_index: use `<path>.tsfidx` when present. A directory (its *.tsfile files), a glob pattern
    (* ? [) or a list of paths opens a Dataset: the files read as one; cache (a path) is then its metadata
    cache file (Dataset)."""
    if isinstance(path, (list, tuple)) or os.path.isdir(path) or any(ch in os.fsdecode(path) for ch in "*?["):
        from ._dataset import Dataset
        return Dataset(path, checked=checked, use_pread=use_pread, cache=cache)
    return TsFile(path, checked=checked, use_pread=use_pread, page_index=page_index)
