"""write_dataframe -> to_pandas round trips for every type, with and without nulls, in the table and
the tree model; the values come back bit for bit (NaN, -0.0, infinities, extremes)."""
import datetime

import numpy as np
import pandas as pd
import pytest

import tsfile_c

N = 1000
rng = np.random.default_rng(7)


def frame(nulls):
    """Every type; with nulls, each column has its own null pattern (row i null when i % (k+2) == 1)."""
    f64 = rng.normal(size=N)
    f64[:6] = [np.nan, np.inf, -np.inf, -0.0, 5e-324, np.finfo(np.float64).max]
    f32 = rng.normal(size=N).astype(np.float32)
    f32[:4] = [np.nan, np.inf, -0.0, np.finfo(np.float32).min]
    i64 = rng.integers(-(1 << 62), 1 << 62, N)
    i64[:2] = [np.iinfo(np.int64).min, np.iinfo(np.int64).max]
    i32 = rng.integers(-(1 << 31), (1 << 31) - 1, N, dtype=np.int32)
    i32[:2] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max]
    cols = {
        "c_bool": rng.integers(0, 2, N).astype(bool),
        "c_i32": i32,
        "c_i64": i64,
        "c_f32": f32,
        "c_f64": f64,
        "c_str": ["s%d \u00e9\u4e2d\\\"," % i if i % 3 else "" for i in range(N)],
        "c_blob": [bytes(range(i % 7)) for i in range(N)],
        "c_date": [datetime.date(1000 + i % 9000, 1 + i % 12, 1 + i % 28) for i in range(N)],
        "c_ts": pd.to_datetime(rng.integers(0, 4 * 10**12, N), unit="ms"),
    }
    df = pd.DataFrame({"time": np.arange(N, dtype=np.int64) * 1000 - 5000})
    for k, (name, v) in enumerate(cols.items()):
        s = pd.Series(v)
        if nulls:
            null = np.arange(N) % (k + 2) == 1
            if s.dtype == bool:
                s = s.astype("boolean")
            elif s.dtype.kind in "iuf":
                s = s.astype({"i": "Int", "u": "UInt", "f": "Float"}[s.dtype.kind] + str(s.dtype.itemsize * 8))
            elif s.dtype.kind == "O" and name == "c_str":
                s = s.astype("string")
            s[null] = None
        df[name] = s
    return df


def bits(s):
    """Comparable values of a column: floats by raw bits, nulls as None."""
    arr = s.array
    if s.dtype.kind == "f" or str(s.dtype) in ("Float32", "Float64"):
        data = arr._data if hasattr(arr, "_data") else s.to_numpy()
        out = data.view(np.uint32 if data.dtype == np.float32 else np.uint64).tolist()
        if hasattr(arr, "_mask"):
            out = [None if m else v for v, m in zip(out, arr._mask.tolist())]
        return out
    if s.dtype.kind == "M":
        return [None if v is pd.NaT else v.value // 10**6 for v in s.tolist()]
    return [None if (v is None or v is pd.NA or v is pd.NaT) else v for v in s.tolist()]


def assert_same(got, want, names):
    for c in names:
        assert bits(got[c]) == bits(want[c]), c


@pytest.mark.parametrize("nulls", [False, True])
def test_table_roundtrip(tmp_path, nulls):
    df = frame(nulls)
    df.insert(1, "dev", ["a", "b", "c", "d"] * (N // 4))
    p = str(tmp_path / "t.tsfile")
    tsfile_c.write_dataframe(df, p, table="t", tags=["dev"])
    with tsfile_c.open(p) as f:
        assert f.model == "table"
        got = f.to_pandas(time="int")
        schema = {c.name: c.type for c in f.schema["t"]}
    assert schema == {"dev": "STRING", "c_bool": "BOOLEAN", "c_i32": "INT32", "c_i64": "INT64", "c_f32": "FLOAT",
                      "c_f64": "DOUBLE", "c_str": "STRING", "c_blob": "BLOB", "c_date": "DATE",
                      "c_ts": "TIMESTAMP"}
    want = df.sort_values(["dev", "time"], kind="stable").reset_index(drop=True)
    assert list(got.columns) == list(df.columns)
    assert got["dev"].dtype == "category"
    assert list(got["dev"].astype(str)) == list(want["dev"])
    assert_same(got, want, ["time"] + list(df.columns[2:]))
    if nulls:
        assert str(got["c_i64"].dtype) == "Int64" and str(got["c_f64"].dtype) == "Float64"
        assert str(got["c_bool"].dtype) == "boolean" and str(got["c_str"].dtype) == "string"


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("nulls", [False, True])
def test_tree_roundtrip(tmp_path, nulls, aligned):
    df = frame(nulls)
    p = str(tmp_path / "t.tsfile")
    tsfile_c.write_dataframe(df, p, device="root.sg.d1", aligned=aligned, encoding={"c_f64": "GORILLA"},
                             compression="ZSTD")
    with tsfile_c.open(p) as f:
        assert f.model == "tree" and [d.name for d in f.devices] == ["root.sg.d1"]
        assert f.devices[0].aligned == aligned
        got = f.to_pandas(time="int")
    if not aligned:  # a non-aligned device has no row where every series is null
        df = df[df.drop(columns="time").notna().any(axis=1)].reset_index(drop=True)
    assert list(got["device"].astype(str).unique()) == ["root.sg.d1"]
    assert sorted(got.columns[2:]) == sorted(df.columns[1:])
    assert_same(got, df, list(df.columns))


def test_numpy_dict_and_query(tmp_path):
    """A dict of NumPy arrays writes like a DataFrame; query batches and to_numpy give the same values."""
    t = np.arange(100000, dtype=np.int64)
    data = {"time": t, "v": (t * 3).astype(np.float64), "w": np.ma.MaskedArray(t, mask=t % 5 == 0)}
    p = str(tmp_path / "n.tsfile")
    tsfile_c.write_dataframe(data, p, device="root.a.b")
    with tsfile_c.open(p) as f:
        arrs = f.to_numpy()
        assert np.array_equal(arrs["time"], t) and np.array_equal(arrs["v"], t * 3.0)
        assert isinstance(arrs["w"], np.ma.MaskedArray)
        assert np.array_equal(np.ma.getmaskarray(arrs["w"]), t % 5 == 0)
        assert np.array_equal(arrs["w"].data[t % 5 != 0], t[t % 5 != 0])
        got = [b for b in f.query(columns=["v"], start=1000, end=1999)]
        assert sum(len(b) for b in got) == 1000
        assert np.array_equal(np.concatenate([b.time for b in got]), t[1000:2000])
        assert np.array_equal(np.concatenate([b["v"] for b in got]), t[1000:2000] * 3.0)
        assert len(f.to_pandas(where="v > 299970", time="int")) == 9


def test_bad_input_raises(tmp_path):
    p = str(tmp_path / "bad.tsfile")
    df = pd.DataFrame({"time": [3, 2, 1], "v": [1.0, 2.0, 3.0]})
    with pytest.raises(tsfile_c.TsfError) as e:
        tsfile_c.write_dataframe(df, p, device="root.sg.d1")
    assert e.value.status_name == "TSF_EINVAL" and "time" in e.value.message
    tsfile_c.write_dataframe(df, p, device="root.sg.d1", sort_tablets=1)  # the writer sorts when asked
    with tsfile_c.open(p) as f:
        assert f.to_pandas(time="int")["time"].tolist() == [1, 2, 3]
    with pytest.raises(tsfile_c.TsfError) as e:
        tsfile_c.write_dataframe(df, p, device="root.sg.d1", encoding="NO_SUCH")
    assert e.value.status_name == "TSF_EINVAL"
    with pytest.raises(TypeError):
        tsfile_c.write_dataframe(pd.DataFrame({"time": [1], "v": [object()]}), p, device="root.sg.d1")
    with pytest.raises(ValueError):
        tsfile_c.write_dataframe(df, p)


def test_tree_device_column(tmp_path):
    """device=<column>: each row goes to the device its column names; devices keep their own columns' nulls."""
    n = 30
    df = pd.DataFrame({"time": np.arange(n, dtype=np.int64) // 3, "dev": ["root.p.b", "root.p.a", "root.p.c"] * 10,
                       "v": np.arange(n, dtype=np.float64), "k": pd.array([None, 1, 2] * 10, dtype="Int32")})
    p = str(tmp_path / "d.tsfile")
    tsfile_c.write_dataframe(df, p, device="dev")
    with tsfile_c.open(p) as f:
        assert sorted(d.name for d in f.devices) == ["root.p.a", "root.p.b", "root.p.c"]
        got = f.to_pandas(time="int")
    for name, part in df.groupby("dev"):
        g = got[got["device"] == name]
        assert g["time"].tolist() == part["time"].tolist() and g["v"].tolist() == part["v"].tolist()
        assert [None if x is pd.NA else x for x in g["k"].tolist()] == \
            [None if x is pd.NA else x for x in part["k"].tolist()]
