"""Reading: metadata, queries, statistics, errors on bad input, and the lifetime of what is returned."""
import gc
import os
import shutil

import numpy as np
import pandas as pd
import pytest

import tsfile_c
from conftest import DATA

JAVA = os.path.join(DATA, "tsfile-java")


def test_metadata():
    with tsfile_c.open(os.path.join(JAVA, "table_two_tables_nulls_lz4.tsfile")) as f:
        assert f.model == "table" and f.version == 4
        assert sorted(f.schema) == ["power", "weather"]
        assert [c.category for c in f.schema["weather"]][:2] == ["TAG", "TAG"]
        assert all(d.table in ("power", "weather") for d in f.devices)
    with tsfile_c.open(os.path.join(JAVA, "tree_nonaligned_mixed_uncompressed.tsfile")) as f:
        assert f.model == "tree"
        assert [d.name for d in f.devices] == ["root.sg1.d1", "root.sg2.d2"]
        s = {(x.device, x.name): x for x in f.series}
        df = f.to_pandas(devices=["root.sg1.d1"], time="int")
        for name in df.columns[2:]:
            st = s[("root.sg1.d1", name)]
            assert st.count == df[name].notna().sum() or st.type in ("FLOAT", "DOUBLE")
            assert st.start_time == df["time"].min() and st.end_time == df["time"].max()


def test_stats_match_values():
    with tsfile_c.open(os.path.join(JAVA, "tree_nonaligned_mixed_uncompressed.tsfile")) as f:
        ints = [x for x in f.series if x.type == "INT64"]
        st = f.stats(series=[x.name for x in ints], window=100000)
        df = f.to_pandas(time="int")
    for (dev, ser), g in st.groupby(["device", "series"]):
        vals = df[df["device"] == dev][["time", ser]].dropna()
        w = (vals["time"] // 100000) * 100000
        agg = vals.groupby(w)[ser].agg(["count", "min", "max", "sum"])
        assert list(g["window_start"]) == list(agg.index)
        assert list(g["count"]) == list(agg["count"]) and list(g["min"]) == list(agg["min"])
        assert list(g["max"]) == list(agg["max"])


def test_time_range_and_tags():
    with tsfile_c.open(os.path.join(JAVA, "table_two_tables_nulls_lz4.tsfile")) as f:
        full = f.to_pandas(table="weather", time="int")
        region = full["region"].dropna().iloc[0]
        sub = f.to_pandas(table="weather", tags={"region": region}, time="int")
        assert len(sub) == (full["region"] == region).sum() and set(sub["region"].astype(str)) == {region}
        t0, t1 = int(full["time"].quantile(0.25)), int(full["time"].quantile(0.75))
        win = f.to_pandas(table="weather", start=t0, end=t1, time="int")
        assert len(win) == ((full["time"] >= t0) & (full["time"] <= t1)).sum()
        dt = f.to_pandas(table="weather", columns=["f_int32"], start=pd.Timestamp(t0, unit="ms"),
                         end=np.datetime64(t1, "ms"))
        assert len(dt) == len(win) and dt["time"].dtype.kind == "M"


def test_missing_file():
    with pytest.raises(tsfile_c.TsfError) as e:
        tsfile_c.open("/nonexistent/x.tsfile")
    assert e.value.status_name == "TSF_EIO" and "/nonexistent/x.tsfile" in e.value.message


def test_damaged_files(tmp_path):
    with pytest.raises(tsfile_c.TsfError) as e:
        tsfile_c.open(os.path.join(JAVA, "corrupt", "tail_metadata_missing.tsfile"))
    assert e.value.status_name == "TSF_ECORRUPT" and "magic" in e.value.message
    with tsfile_c.open(os.path.join(JAVA, "corrupt", "flipped_byte_page_header.tsfile")) as f:
        with pytest.raises(tsfile_c.TsfError) as e:
            f.to_pandas(time="int")
    assert e.value.status == -2 and "page header" in e.value.message
    junk = tmp_path / "junk.tsfile"
    junk.write_bytes(b"not a tsfile at all" * 10)
    with pytest.raises(tsfile_c.TsfError) as e:
        tsfile_c.open(str(junk))
    assert e.value.status_name == "TSF_ECORRUPT"


def test_bad_arguments():
    with tsfile_c.open(os.path.join(JAVA, "tree_nonaligned_mixed_uncompressed.tsfile")) as f:
        with pytest.raises(tsfile_c.TsfError) as e:
            f.to_pandas(where="s1 >")
        assert e.value.status_name == "TSF_EINVAL"
        with pytest.raises(tsfile_c.TsfError):
            f.to_pandas(devices=["root.nope"])
    with pytest.raises(tsfile_c.TsfError) as e:
        f.to_pandas()
    assert e.value.status_name == "TSF_ESTATE"


def test_arrays_outlive_the_reader(tmp_path):
    """Batches and to_numpy arrays own copies: dropping the reader (and reusing its memory) leaves them
    intact, and none of them points into C memory."""
    p = str(tmp_path / "life.tsfile")
    shutil.copyfile(os.path.join(JAVA, "tree_aligned_multichunk_100k_zstd.tsfile"), p)
    f = tsfile_c.open(p)
    it = iter(f.query(batch_size=1000))
    first = next(it)
    keep = {k: np.array(v, copy=True) for k, v in first.columns.items()}
    keep_time = first.time.copy()
    arrays = f.to_numpy()
    ref = {k: np.array(v, copy=True) for k, v in arrays.items()}
    f.close()
    del f, it
    gc.collect()
    os.remove(p)
    junk = [np.full(1 << 16, 0x5A, np.uint8) for _ in range(64)]  # reuse freed memory
    for k, v in first.columns.items():
        assert v.base is None or isinstance(v.base, np.ndarray) or isinstance(v, np.ma.MaskedArray)
        assert np.array_equal(np.asarray(v), np.asarray(keep[k])), k
    assert np.array_equal(first.time, keep_time) and first.time.flags.owndata
    for k, v in arrays.items():
        assert np.array_equal(np.asarray(v), np.asarray(ref[k])), k
        base = v.data if isinstance(v, np.ma.MaskedArray) else v
        assert base.flags.owndata or base.base is None or isinstance(base.base, np.ndarray), k
    del junk


def test_closing_the_file_ends_queries():
    f = tsfile_c.open(os.path.join(JAVA, "tree_aligned_multichunk_100k_zstd.tsfile"))
    it = iter(f.query(batch_size=100))
    next(it)
    f.close()
    with pytest.raises(tsfile_c.TsfError) as e:
        next(it)
    assert e.value.status_name == "TSF_ESTATE"


def _frame_of_batches(f, **kw):
    """The rows of f.query(**kw) as {"time": int64, "dev": device names, column: MaskedArray}."""
    batches = list(f.query(**kw))
    out = {"time": np.concatenate([b.time for b in batches]),
           "dev": np.concatenate([np.full(len(b), b.device.split(".")[-1], dtype=object) for b in batches])}
    for name in batches[0].columns:
        out[name] = np.ma.concatenate([np.ma.asarray(b.columns[name]) for b in batches])
    return out


def test_collected_columns_equal_the_batches(tmp_path, monkeypatch):
    """to_pandas fills its arrays through tsf_query_collect (whole pages decoded in place) when every column
    has one fixed-width type: the same rows as the query's batches, with nulls after present rows, time
    ranges cutting pages, a filter, two threads, and arrays grown past a short estimate."""
    n = 3000
    rng = np.random.default_rng(7)
    k = np.arange(3 * n)
    c = pd.array(rng.integers(0, 100, 3 * n), dtype="Int32")
    c[k % 17 == 9] = pd.NA
    e = pd.array(k % 3 == 0, dtype="boolean")
    e[(k >= 2 * n + 500) & (k % 5 == 0)] = pd.NA  # nulls only in the last device, from its 500th row
    df = pd.DataFrame({"time": np.tile(np.arange(n, dtype=np.int64) * 10, 3), "dev": np.repeat(["d0", "d1", "d2"], n),
                       "a": rng.integers(-10**12, 10**12, 3 * n), "b": rng.standard_normal(3 * n), "c": c, "e": e})
    p = str(tmp_path / "collect.tsfile")
    tsfile_c.write_dataframe(df, p, table="t", tags=["dev"], time_unit="ms", page_max_points=100)
    cases = [{}, {"start": 1555, "end": 23333}, {"columns": ["c", "a"]}, {"columns": ["e", "b"], "start": 15},
             {"where": "a > 0"}, {"threads": 2}]
    with tsfile_c.open(p) as f:
        for grow in (False, True):
            if grow:  # estimates of one row: the arrays grow between collect calls
                monkeypatch.setattr(tsfile_c._reader, "_rows_in", lambda s, t0, t1: 1)
            for kw in cases:
                got = f.to_pandas(table="t", time="int", **kw)
                stats = f.last_query_stats
                ref = _frame_of_batches(f, table="t", **kw)
                assert list(got.columns) == ["time", "dev"] + list(ref)[2:], kw
                assert np.array_equal(got["time"].to_numpy(), ref["time"]), kw
                assert np.array_equal(got["dev"].astype(object).to_numpy(), ref["dev"]), kw
                for name in list(ref)[2:]:
                    want, col = ref[name], got[name]
                    assert np.array_equal(col.isna().to_numpy(), np.ma.getmaskarray(want)), (kw, name)
                    ok = ~np.ma.getmaskarray(want)
                    assert np.array_equal(col.to_numpy()[ok].astype(want.dtype), want.data[ok]), (kw, name)
                assert stats["cells_in_place"] + stats["cells_copied"] == len(got) * (len(ref) - 1), kw
                if not kw and not grow:  # times, a and b of whole pages go in place
                    assert stats["cells_in_place"] >= 3 * len(got), stats
                if "where" in kw or "threads" in kw:
                    assert stats["cells_in_place"] == 0, kw


def test_collected_time_bounds(tmp_path):
    """The least and greatest time the library reports while collecting decide whether the times fit
    datetime64[ns]: one row past it raises OverflowError, wherever it is."""
    for where in (0, 1, 2):
        t = np.array([1000, 2000, 3000], dtype=np.int64)
        t[where] = (-1 if where == 0 else 1) * 10 ** 14 * (where + 1)  # ms: out of datetime64[ns]
        t.sort()
        df = pd.DataFrame({"time": t, "dev": ["x"] * 3, "a": np.arange(3, dtype=np.int64)})
        p = str(tmp_path / ("b%d.tsfile" % where))
        tsfile_c.write_dataframe(df, p, table="t", tags=["dev"], time_unit="ms")
        with tsfile_c.open(p) as f:
            with pytest.raises(OverflowError):
                f.to_pandas(table="t", columns=["a"])
            assert "cells_in_place" in f.last_query_stats
            ok = f.to_pandas(table="t", columns=["a"], start=-10 ** 13, end=10 ** 13)
            assert list(ok["time"].astype("int64") // 10 ** 6) == [x for x in t if abs(x) < 10 ** 13]
