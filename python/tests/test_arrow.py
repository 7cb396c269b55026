"""__arrow_c_stream__: a consumer written here walks the Arrow C stream the capsule holds (schema formats
and names, every batch's buffers) and finds the values to_pandas gives."""
import ctypes
import os

import numpy as np
import pandas as pd

import tsfile_c
from tsfile_c._arrow import ArrowArray, ArrowArrayStream, ArrowSchema
from conftest import DATA

is_valid = ctypes.pythonapi["PyCapsule_IsValid"]
is_valid.restype, is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
get_pointer = ctypes.pythonapi["PyCapsule_GetPointer"]
get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
WIDTH = {"l": 8, "i": 4, "g": 8, "f": 4, "tsm:UTC": 8, "tdD": 4}
DTYPE = {"l": np.int64, "i": np.int32, "g": np.float64, "f": np.float32, "tsm:UTC": np.int64, "tdD": np.int32}


def consume(capsule):
    """{column: list of values (None for nulls)} read from the stream in the capsule; releases what it takes."""
    assert is_valid(capsule, b"arrow_array_stream") == 1
    sp = ctypes.cast(get_pointer(capsule, b"arrow_array_stream"), ctypes.POINTER(ArrowArrayStream))
    stream = sp.contents
    schema = ArrowSchema()
    assert stream.get_schema(sp, ctypes.byref(schema)) == 0
    assert schema.format == b"+s"
    cols = [(schema.children[i].contents.name.decode(), schema.children[i].contents.format.decode())
            for i in range(schema.n_children)]
    schema.release(ctypes.byref(schema))
    out = {name: [] for name, _ in cols}
    while True:
        arr = ArrowArray()
        assert stream.get_next(sp, ctypes.byref(arr)) == 0, stream.get_last_error(sp)
        if not arr.release:
            break
        n = arr.length
        for k, (name, fmt) in enumerate(cols):
            child = arr.children[k].contents
            assert child.length == n and child.offset == 0
            valid = [True] * n
            if child.buffers[0]:
                bits = np.frombuffer(ctypes.string_at(child.buffers[0], (n + 7) // 8), np.uint8)
                valid = np.unpackbits(bits, count=n, bitorder="little").astype(bool).tolist()
            assert child.null_count == valid.count(False)
            if fmt in WIDTH:
                vals = np.frombuffer(ctypes.string_at(child.buffers[1], n * WIDTH[fmt]), DTYPE[fmt]).tolist()
            elif fmt == "b":
                vals = np.unpackbits(np.frombuffer(ctypes.string_at(child.buffers[1], (n + 7) // 8), np.uint8),
                                     count=n, bitorder="little").astype(bool).tolist()
            elif fmt in ("u", "z"):
                offs = np.frombuffer(ctypes.string_at(child.buffers[1], 4 * (n + 1)), np.int32)
                data = ctypes.string_at(child.buffers[2], int(offs[-1])) if offs[-1] else b""
                vals = [data[offs[i]:offs[i + 1]] for i in range(n)]
                if fmt == "u":
                    vals = [v.decode() for v in vals]
            else:
                raise AssertionError("format %s of %s" % (fmt, name))
            out[name] += [v if ok else None for v, ok in zip(vals, valid)]
        arr.release(ctypes.byref(arr))
    return cols, out


def test_table_stream_equals_to_pandas(tmp_path):
    p = str(tmp_path / "a.tsfile")
    n = 5000
    df = pd.DataFrame({"time": np.arange(n, dtype=np.int64) * 10, "dev": ["x", "y"] * (n // 2),
                       "v": pd.array([1.5, None, 3.0, 4.0] * (n // 4), dtype="Float64"),
                       "k": np.arange(n, dtype=np.int64), "s": ["a", None, "ccc", ""] * (n // 4)})
    tsfile_c.write_dataframe(df, p, table="t", tags=["dev"])
    with tsfile_c.open(p) as f:
        want = f.to_pandas(time="int")
        cols, got = consume(f.__arrow_c_stream__())
        q = f.query(columns=["k"], start=100, end=199)
        cols_q, got_q = consume(q.__arrow_c_stream__())
    assert [c[0] for c in cols] == ["time", "dev", "v", "k", "s"]
    assert dict(cols)["time"] == "tsm:UTC" and dict(cols)["k"] == "l" and dict(cols)["s"] == "u"
    assert got["time"] == want["time"].tolist() and got["k"] == want["k"].tolist()
    assert got["dev"] == want["dev"].astype(str).tolist()
    assert got["v"] == [None if x is pd.NA else x for x in want["v"].tolist()]
    assert got["s"] == [None if x is pd.NA else x for x in want["s"].tolist()]
    assert [c[0] for c in cols_q] == ["time", "k"] and sorted(got_q["k"]) == list(range(10, 20))  # named ones only


def test_tree_stream_outlives_the_file():
    """The capsule's stream has its own reader: closing the TsFile first leaves it readable."""
    path = os.path.join(DATA, "tsfile-java", "tree_nonaligned_mixed_uncompressed.tsfile")
    f = tsfile_c.open(path)
    ints = [s.name for s in f.devices[0].series if s.type == "INT64"]
    want = f.to_pandas(columns=ints, time="int")
    cap = f.query(columns=ints).__arrow_c_stream__()
    f.close()
    cols, got = consume(cap)
    assert [c[0] for c in cols] == ["time", "device"] + ints
    assert got["device"] == want["device"].astype(str).tolist()
    for c in ints:
        assert got[c] == [None if x is pd.NA else x for x in want[c].tolist()]


def test_unconsumed_capsule_is_released():
    """A capsule dropped without a consumer releases its stream (and the reader it holds)."""
    path = os.path.join(DATA, "tsfile-java", "tree_nonaligned_mixed_uncompressed.tsfile")
    with tsfile_c.open(path) as f:
        for _ in range(200):
            cap = f.__arrow_c_stream__()
            del cap


def _nulls(values):
    return [None if x is pd.NA or x is None else x for x in values]


def test_dataset_stream_equals_to_pandas(tmp_path):
    """A Dataset's stream (the union schema; h, which only the odd files hold, null elsewhere) gives the rows
    of Dataset.to_pandas in its order, for one thread and for several; the stream outlives the Dataset."""
    from test_dataset import make_dataset
    make_dataset(str(tmp_path))
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.to_pandas(time="int")
        cols, got = consume(ds.__arrow_c_stream__())
        _, got_threads = consume(ds.arrow(threads=2, files_at_once=3, batch_size=37).__arrow_c_stream__())
        part = ds.arrow(columns=["h", "f"], start=2000, end=13999, where="f > 0")
        want_part = ds.to_pandas(columns=["h", "f"], start=2000, end=13999, where="f > 0", time="int")
        cap = ds.arrow(devices=["t.d1"]).__arrow_c_stream__()
    assert [c[0] for c in cols] == ["time", "device", "f", "g", "h"]
    assert dict(cols)["h"] == "u" and dict(cols)["f"] == "l" and dict(cols)["g"] == "g"
    assert len(got["time"]) == len(want) > 0
    for g in (got, got_threads):
        assert g["time"] == want["time"].tolist()
        assert g["device"] == want["device"].astype(str).tolist()
        assert g["f"] == _nulls(want["f"].tolist()) and g["g"] == want["g"].tolist()
        assert g["h"] == _nulls(want["h"].tolist())
    assert any(v is None for v in got["h"]) and any(v is not None for v in got["h"])
    cols_p, got_p = consume(part.__arrow_c_stream__())
    assert [c[0] for c in cols_p] == ["time", "h", "f"]  # named columns only
    assert got_p["time"] == want_part["time"].tolist() and got_p["f"] == want_part["f"].tolist()
    assert got_p["h"] == _nulls(want_part["h"].tolist())
    _, got_d1 = consume(cap)  # the Dataset is closed: the capsule's stream has its own
    assert set(got_d1["device"]) == {"d1"} and len(got_d1["time"]) == (want["device"] == "d1").sum()
