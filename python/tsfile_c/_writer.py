"""Writing DataFrames (and dicts of NumPy arrays) to TsFile: table model (a table with TAG and FIELD
columns) and tree model (a device path; aligned or not).

Memory: fixed-width columns (INT32, INT64, FLOAT, DOUBLE, TIMESTAMP, DATE) are handed to the C tablet
by address (tsf_tablet_set_column_ref) and are not copied on the Python side when their array already
has the C type and is contiguous (an int64 / float64 / float32 / int32 column, or the data of a pandas
nullable array); other dtypes are converted once (e.g. int16 -> int32, datetime64[ns] -> int64 ms).
Times are copied by the library into the tablet (tsf_tablet_set_times). BOOLEAN is copied by the
library. Strings and bytes are encoded once into one buffer, which the tsf_bytes values point into.
Rows go to the library in tablets of up to 8,192 rows, each written before the next is set, so the
borrowed arrays only need to live for the call.
"""
import ctypes
import datetime
import os

import numpy as np

from . import _capi as C
from ._errors import TsfError, check, new_error

_CHUNK = 8192  # rows per tablet (a multiple of 8, so validity bitmaps slice on byte boundaries)
_UNITS = {"s": 1, "ms": 1000, "us": 1000000, "ns": 1000000000}
_NP_TYPE = {C.BOOLEAN: np.uint8, C.INT32: np.int32, C.INT64: np.int64, C.FLOAT: np.float32, C.DOUBLE: np.float64,
            C.TIMESTAMP: np.int64, C.DATE: np.int32}


def _type_code(name):
    code = C.TYPE_CODES.get(str(name).upper())
    if code is None or code == C.VECTOR:
        raise ValueError("unknown TsFile type %r (BOOLEAN, INT32, INT64, FLOAT, DOUBLE, TEXT, STRING, BLOB, DATE, "
                         "TIMESTAMP)" % (name,))
    return code


def _parse(fn, name, what):
    out = ctypes.c_int()
    err = new_error()
    check(fn(str(name).encode(), ctypes.byref(out), ctypes.byref(err)), err, what)
    return out.value


def _times(values, unit, what):
    """An int64 array of times in `unit` from integers or datetime64 values (exactly; no nulls)."""
    arr = np.asarray(values)
    if arr.dtype.kind == "M":
        if np.isnat(arr).any():
            raise ValueError("%s: null (NaT) times" % what)
        have = np.datetime_data(arr.dtype)[0]
        ints = arr.view(np.int64)
        if have == unit:
            return np.ascontiguousarray(ints)
        if have not in _UNITS:
            return arr.astype("datetime64[%s]" % unit).view(np.int64)
        num, den = _UNITS[unit], _UNITS[have]
        if num >= den:
            return ints * (num // den)
        f = den // num
        if (ints % f).any():
            raise ValueError("%s: times finer than the time unit %r (pass time_unit=%r or round them)"
                             % (what, unit, have))
        return ints // f
    if arr.dtype.kind in "iu":
        return np.ascontiguousarray(arr, dtype=np.int64)
    if arr.dtype.kind == "O" and len(arr) and isinstance(arr[0], (datetime.datetime, np.datetime64)):
        return _times(arr.astype("datetime64[ns]"), unit, what)
    raise TypeError("%s: times must be integers or datetime64, not %s" % (what, arr.dtype))


class _Cell:
    """One column ready for the tablet: type code, C values (array), present mask (None = all present),
    and the buffers the values point into."""
    __slots__ = ("name", "type", "values", "present", "keep")


def _binary(objs, present, typ, name):
    """tsf_bytes values (n x 2 uint64: address, length) for a list of str/bytes (None where absent)."""
    enc = []
    for v in objs:
        if v is None:
            enc.append(b"")
        elif isinstance(v, bytes):
            enc.append(v)
        elif isinstance(v, str):
            enc.append(v.encode("utf-8", "surrogateescape"))
        elif isinstance(v, (bytearray, memoryview)):
            enc.append(bytes(v))
        else:
            raise TypeError("column %r: %s value %r (expected str or bytes)" % (name, C.TYPE_NAMES[typ], v))
    lens = np.fromiter(map(len, enc), np.uint64, len(enc))
    buf = np.frombuffer(b"".join(enc) + b"\0", np.uint8)
    pairs = np.empty((len(enc), 2), np.uint64)
    if len(enc):
        pairs[0, 0] = 0
        np.cumsum(lens[:-1], out=pairs[1:, 0])
        pairs[:, 0] += np.uint64(buf.ctypes.data)
        pairs[:, 1] = lens
    return pairs, buf


def _column(name, col, typ, unit, table_model):
    """A _Cell from a pandas Series / NumPy array / list. typ: the TsFile type name to store, or None to
    pick one from the dtype."""
    cell = _Cell()
    cell.name, cell.keep, cell.present = name, [], None
    dtype = getattr(col, "dtype", None)
    values = col
    mask = None  # True = null
    arr = getattr(col, "array", None)  # pandas Series -> its ExtensionArray / PandasArray
    if isinstance(col, np.ma.MaskedArray):
        values, mask = col.data, np.ma.getmaskarray(col)
        dtype = values.dtype
    elif dtype is not None and hasattr(arr, "_data") and hasattr(arr, "_mask"):  # pandas nullable (masked) array
        values, mask = arr._data, arr._mask
        dtype = values.dtype
    elif dtype is not None and getattr(dtype, "name", "") == "category":
        values = np.asarray(col.astype(object))
        dtype = values.dtype
    elif dtype is not None and (getattr(dtype, "name", "") == "string" or hasattr(col, "to_numpy")):
        values = col.to_numpy() if hasattr(col, "to_numpy") else np.asarray(col)
        dtype = values.dtype
    else:
        values = np.asarray(col)
        dtype = values.dtype
    if dtype.kind == "M":
        mask = np.isnat(values) if mask is None else (mask | np.isnat(values))
        if not mask.any():
            mask = None
    if typ is None:
        typ = _pick_type(name, values, dtype, mask, table_model)
    code = _type_code(typ)
    cell.type = code
    if code in (C.TEXT, C.STRING, C.BLOB):
        objs = values.tolist() if hasattr(values, "tolist") else list(values)
        absent = [v is None or (isinstance(v, float) and v != v) or v is _NA for v in objs]
        if mask is not None:
            absent = [a or bool(m) for a, m in zip(absent, mask.tolist())]
        objs = [None if a else v for v, a in zip(objs, absent)]
        pairs, buf = _binary(objs, None, code, name)
        cell.values, cell.keep = pairs, [buf]
        if any(absent):
            mask = np.array(absent, np.bool_)
    elif code == C.DATE:
        if dtype.kind in "iu":
            cell.values = np.ascontiguousarray(values, np.int32)
        else:
            objs = values.tolist()
            ints = []
            for k, v in enumerate(objs):
                if v is None or v is _NA or (isinstance(v, float) and v != v) or (mask is not None and mask[k]):
                    ints.append(0)
                    if mask is None:
                        mask = np.zeros(len(objs), np.bool_)
                    mask[k] = True
                elif isinstance(v, datetime.date):
                    ints.append(v.year * 10000 + v.month * 100 + v.day)
                else:
                    raise TypeError("column %r: DATE value %r (expected datetime.date)" % (name, v))
            cell.values = np.array(ints, np.int32)
    elif code == C.TIMESTAMP:
        if dtype.kind == "M":
            filled = values.copy() if mask is not None else values
            if mask is not None:
                filled[mask] = np.datetime64(0, "s")
            cell.values = _times(filled, unit, "column %r" % name)
        else:
            cell.values = np.ascontiguousarray(values, np.int64)
    else:
        want = _NP_TYPE[code]
        if dtype.kind == "O":
            objs = values.tolist()
            absent = np.array([v is None or v is _NA for v in objs], np.bool_)
            if absent.any():
                mask = absent if mask is None else (mask | absent)
                objs = [0 if a else v for v, a in zip(objs, absent.tolist())]
            values = np.array(objs)
        if code == C.BOOLEAN:
            values = np.ascontiguousarray(values, np.bool_).view(np.uint8)
        elif code in (C.INT32, C.INT64) and dtype.kind in "iu":
            info = np.iinfo(want)
            if values.dtype != want and len(values) and (values.max() > info.max or values.min() < info.min):
                raise ValueError("column %r: values beyond %s" % (name, C.TYPE_NAMES[code]))
        cell.values = np.ascontiguousarray(values, dtype=want)
    if mask is not None and np.any(mask):
        cell.present = ~np.asarray(mask, np.bool_)
    return cell


try:
    import pandas as _pd
    _NA = _pd.NA
except ImportError:  # pandas is optional for writing dicts of arrays
    _NA = object()


def _pick_type(name, values, dtype, mask, table_model):
    k = dtype.kind
    if k == "b":
        return "BOOLEAN"
    if k in "iu":
        if dtype.itemsize < 4 or (k == "i" and dtype.itemsize == 4) or (k == "u" and dtype.itemsize == 2):
            return "INT32"
        return "INT64"
    if k == "f":
        return "FLOAT" if dtype.itemsize <= 4 else "DOUBLE"
    if k == "M":
        return "TIMESTAMP"
    if k in "US":
        return "STRING" if k == "U" else "BLOB"
    if k == "O":
        absent = np.zeros(len(values), np.bool_) if mask is None else mask
        for v, a in zip(values.tolist(), absent.tolist()):
            if a or v is None or v is _NA or (isinstance(v, float) and v != v):
                continue
            if isinstance(v, str):
                return "STRING"
            if isinstance(v, (bytes, bytearray, memoryview)):
                return "BLOB"
            if isinstance(v, datetime.datetime):
                break
            if isinstance(v, datetime.date):
                return "DATE"
            if isinstance(v, bool):
                return "BOOLEAN"
            break
        else:
            return "STRING"  # only nulls
    raise TypeError("column %r: cannot store dtype %s (pass types={%r: 'TYPE'})" % (name, dtype, name))


class Writer:
    """A TsFile being written (a context manager: closing finishes the file; an exception inside the
    `with` abandons it and removes the temporary). Options are the fields of tsf_writer_options:
    page_max_points, page_max_bytes, memory_budget, sort_tablets, threads, float_precision, fsync,
    page_index, ..."""

    def __init__(self, path, **options):
        self.path = path
        self._w = None
        self._registered = {}
        wo = C.WriterOptions()
        C.lib.tsf_writer_options_init(ctypes.byref(wo))
        names = {f[0] for f in C.WriterOptions._fields_} - {"struct_size", "allocator", "path"}
        for k, v in options.items():
            if k not in names:
                raise TypeError("unknown writer option %r (options: %s)" % (k, ", ".join(sorted(names))))
            if k == "time_compression":
                v = _parse(C.lib.tsf_compression_parse, v, "time_compression")
            setattr(wo, k, v)
        err = new_error()
        w = ctypes.c_void_p()
        check(C.lib.tsf_writer_open(ctypes.byref(w), os.fsencode(path), ctypes.byref(wo), ctypes.byref(err)), err,
              "write %s" % (path,))
        self._w = w

    def _handle(self):
        if self._w is None:
            raise TsfError(-8, "the writer is closed", "write")
        return self._w

    def close(self):
        """Finishes the file (index and tail) and renames it into place."""
        if self._w is not None:
            w, self._w = self._w, None
            err = new_error()
            check(C.lib.tsf_writer_close(w, ctypes.byref(err)), err, "close %s" % (self.path,))

    def abort(self):
        """Abandons the file: frees the writer; the temporary it wrote is removed."""
        if self._w is not None:
            w, self._w = self._w, None
            tmp = C.lib.tsf_writer_temp_path(w)
            tmp = os.fsdecode(tmp) if tmp else None
            C.lib.tsf_writer_abort(w)
            if tmp and os.path.exists(tmp):
                os.remove(tmp)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def __del__(self):
        try:
            self.abort()
        except Exception:
            pass

    def write_dataframe(self, df, table=None, tags=(), device=None, time="time", encoding="AUTO",
                        compression="LZ4", types=None, aligned=True, time_unit="ms"):
        """Writes the rows of df (a DataFrame, or a dict of equal-length arrays). Table model: table=name,
        tags=[TAG columns] (STRING), every other column but `time` a FIELD. Tree model: device=path
        ("root.sg.d1"), every other column a measurement of it (aligned=True: an aligned device, nulls
        allowed; False: one series per column, nulls are absent points); or device=<a column of df> holding
        each row's device path: the rows of each device go to that device (in order of first appearance). time: the time column (datetime64
        or integers in time_unit). encoding / compression: a name for every column, or {column: name}
        (missing ones AUTO / LZ4). types: {column: TsFile type name} overrides the types picked from the
        dtypes."""
        if (table is None) == (device is None):
            raise ValueError("pass exactly one of table= (table model) and device= (tree model)")
        if time_unit not in _UNITS:
            raise ValueError("time_unit must be one of %s" % ", ".join(_UNITS))
        cols = list(df.keys())
        if device is not None and device in cols:
            return self._write_by_device(df, device, time=time, encoding=encoding, compression=compression,
                                         types=types, aligned=aligned, time_unit=time_unit)
        if time not in cols:
            raise KeyError("time column %r is not in the data (columns: %s)" % (time, ", ".join(map(str, cols))))
        tags = [tags] if isinstance(tags, str) else list(tags)
        for t in tags:
            if t not in cols:
                raise KeyError("tag column %r is not in the data" % (t,))
        if table is None and tags:
            raise ValueError("tags= is for the table model (table=)")
        types = dict(types or {})
        for t in tags:
            types.setdefault(t, "STRING")
        fields = [c for c in cols if c != time and c not in tags]
        names = tags + fields
        times = _times(df[time], time_unit, "time column %r" % (time,))
        n = len(times)
        cells = [_column(str(c), df[c], types.get(c), time_unit, table is not None) for c in names]
        for c in cells:
            if len(c.values) != n:
                raise ValueError("column %r has %d rows, the time column %d" % (c.name, len(c.values), n))
        target = table if table is not None else device
        self._register(target, table is not None, aligned, cells, len(tags), encoding, compression)
        if n:
            self._write_rows(target, cells, times)

    def _write_by_device(self, df, column, **kw):
        paths = np.asarray(df[column].astype(object) if hasattr(df[column], "astype") else df[column], dtype=object)
        uniq, first, inverse = np.unique(paths.astype(str), return_index=True, return_inverse=True)
        rest = [c for c in df.keys() if c != column]
        for k in np.argsort(first, kind="stable").tolist():
            rows = np.flatnonzero(inverse == k)
            part = {c: (df[c].iloc[rows] if hasattr(df[c], "iloc") else np.asarray(df[c])[rows]) for c in rest}
            self.write_dataframe(part, device=str(uniq[k]), **kw)

    def _register(self, target, table_model, aligned, cells, ntags, encoding, compression):
        key = (table_model, target)
        sig = [(c.name, c.type) for c in cells]
        if key in self._registered:
            if self._registered[key] != sig:
                raise TsfError(-1, "%s %r was registered with columns %s; this write has %s"
                               % ("table" if table_model else "device", target, self._registered[key], sig), "write")
            return
        w = self._handle()
        sch = (C.ColumnSchema * max(len(cells), 1))()
        enc_names = []
        for k, c in enumerate(cells):
            e = encoding.get(c.name, "AUTO") if isinstance(encoding, dict) else encoding
            z = compression.get(c.name, "LZ4") if isinstance(compression, dict) else compression
            if table_model and k < ntags and not isinstance(encoding, dict):
                e = "PLAIN" if str(e).upper() == "AUTO" else e
            nm = c.name.encode()
            enc_names.append(nm)
            sch[k].name = nm
            sch[k].type = c.type
            sch[k].encoding = _parse(C.lib.tsf_encoding_parse, e, "encoding of %r" % c.name)
            sch[k].compression = _parse(C.lib.tsf_compression_parse, z, "compression of %r" % c.name)
            sch[k].category = C.COLUMN_TAG if (table_model and k < ntags) else C.COLUMN_FIELD
        err = new_error()
        tb = target.encode()
        if table_model:
            check(C.lib.tsf_writer_register_table(w, tb, sch, len(cells), ctypes.byref(err)), err,
                  "register table %r" % target)
        elif aligned:
            check(C.lib.tsf_writer_register_aligned(w, tb, sch, len(cells), ctypes.byref(err)), err,
                  "register device %r" % target)
        else:
            for k in range(len(cells)):
                check(C.lib.tsf_writer_register_series(w, tb, ctypes.byref(sch[k]), ctypes.byref(err)), err,
                      "register series %s.%s" % (target, cells[k].name))
        self._registered[key] = sig

    def _write_rows(self, target, cells, times):
        w = self._handle()
        lib = C.lib
        err = new_error()
        n = len(times)
        cap = min(n, _CHUNK)
        names = (C.c_str * max(len(cells), 1))(*[c.name.encode() for c in cells])
        t = ctypes.c_void_p()
        check(lib.tsf_tablet_new(w, target.encode(), names, len(cells), cap, ctypes.byref(t), ctypes.byref(err)), err,
              "tablet for %r" % target)
        try:
            bitmaps = [None if c.present is None else np.packbits(c.present, bitorder="little") for c in cells]
            tptr = times.ctypes.data
            for off in range(0, n, cap):
                m = min(cap, n - off)
                check(lib.tsf_tablet_set_times(t, tptr + off * 8, m, ctypes.byref(err)), err, "times of %r" % target)
                for k, c in enumerate(cells):
                    v = c.values
                    vp = v.ctypes.data + off * (v.itemsize * (2 if v.ndim == 2 else 1))
                    bp = None if bitmaps[k] is None else bitmaps[k].ctypes.data + off // 8
                    check(lib.tsf_tablet_set_column_ref(t, k, vp, bp, m, ctypes.byref(err)), err,
                          "column %r of %r" % (c.name, target))
                check(lib.tsf_writer_write_tablet(w, t, ctypes.byref(err)), err, "write %r" % target)
        finally:
            lib.tsf_tablet_free(t)


def write_dataframe(df, path, table=None, tags=(), device=None, time="time", encoding="AUTO", compression="LZ4",
                    types=None, aligned=True, time_unit="ms", **options):
    """Writes df to a new TsFile at path (replaced atomically on success): table model with table= and
    tags=, tree model with device=. See Writer.write_dataframe for the arguments; further keywords are
    writer options (sort_tablets=1 sorts rows by time, threads=N encodes columns in parallel, ...)."""
    with Writer(path, **options) as w:
        w.write_dataframe(df, table=table, tags=tags, device=device, time=time, encoding=encoding,
                          compression=compression, types=types, aligned=aligned, time_unit=time_unit)
