"""tsfile_c.open of a directory, a glob or a list: a Dataset over the library's dataset layer. Its rows equal
the files' own to_pandas results concatenated in file order; its aggregation equals a pandas reference over
those rows; planning leaves files outside a time range unopened."""
import os
import time

import numpy as np
import pandas as pd
import pytest

import tsfile_c


def make_dataset(folder, nfiles=5, rows=400, seed=3):
    """nfiles table-model files of consecutive time ranges: 3 devices (TAG device), f INT64 with nulls,
    g DOUBLE, and a column h (STRING) only in the odd files."""
    rng = np.random.default_rng(seed)
    paths = []
    for k in range(nfiles):
        t = np.arange(rows, dtype=np.int64) * 10 + k * rows * 10
        df = pd.DataFrame({"time": t, "device": ["d%d" % (i % 3) for i in range(rows)],
                           "f": pd.array(rng.integers(-1000, 1000, rows), dtype="Int64"),
                           "g": rng.normal(size=rows)})
        df.loc[rng.random(rows) < 0.1, "f"] = pd.NA
        if k % 2:
            df["h"] = ["s%d" % (i % 7) for i in range(rows)]
        p = os.path.join(folder, "part-%02d.tsfile" % k)
        tsfile_c.write_dataframe(df, p, table="t", tags=["device"])
        paths.append(p)
    return paths


def reference(paths, **kw):
    frames = []
    for p in paths:
        with tsfile_c.open(p) as f:
            frames.append(f.to_pandas(**kw))
    return frames


def test_open_forms(tmp_path):
    paths = make_dataset(str(tmp_path))
    for spec in (str(tmp_path), os.path.join(str(tmp_path), "part-*.tsfile"), paths):
        with tsfile_c.open(spec) as ds:
            assert isinstance(ds, tsfile_c.Dataset)
            assert [f.path.split(os.sep)[-1] for f in ds.files] == [os.path.basename(p) for p in paths]
            assert ds.model == "table"
            assert [c.name for c in ds.schema["t"]] == ["device", "f", "g", "h"]
            assert sorted(d.name for d in ds.devices) == ["t.d0", "t.d1", "t.d2"]
            assert [d.segments[1] for d in ds.devices] == ["d0", "d1", "d2"]
            assert sum(s.count for s in ds.series) == sum(f.points for f in ds.files)
    with tsfile_c.open(paths[0]) as f:  # one path stays a TsFile
        assert isinstance(f, tsfile_c.TsFile)


def test_rows_equal_files_concatenated(tmp_path):
    paths = make_dataset(str(tmp_path))
    with tsfile_c.open(str(tmp_path)) as ds:
        got = ds.to_pandas()
        meta = ds.frame_meta()
    want = pd.concat(reference(paths), ignore_index=True)
    assert list(got.columns) == list(meta.columns)
    assert len(got) == len(want)
    pd.testing.assert_frame_equal(got.astype(meta.dtypes.to_dict()), want[list(meta.columns)].astype(meta.dtypes.to_dict()),
                                  check_exact=True)
    assert str(got["f"].dtype) == "Int64" and got["h"].isna().sum() == 3 * 400  # h absent from 3 files
    # batches name their file; the same rows
    n = 0
    for b in tsfile_c.open(str(tmp_path)).query(columns=["g"]):
        assert b.file in range(5) and b.device.startswith("t.d")
        n += len(b)
    assert n == len(want)


def test_planning_skips_files(tmp_path):
    paths = make_dataset(str(tmp_path))
    with tsfile_c.open(str(tmp_path)) as ds:
        assert ds.plan(start=4000, end=4500) == [1]
        got = ds.to_pandas(start=4000, end=4500, columns=["g"])
        os.rename(paths[0], paths[0] + ".away")  # an unplanned file is not opened again
        try:
            again = ds.to_pandas(start=4000, end=4500, columns=["g"])
        finally:
            os.rename(paths[0] + ".away", paths[0])
    with tsfile_c.open(paths[1]) as f:
        want = f.to_pandas(start=4000, end=4500, columns=["g"])
    assert np.array_equal(got["g"].to_numpy(), want["g"].to_numpy())
    assert np.array_equal(again["g"].to_numpy(), want["g"].to_numpy())


@pytest.mark.parametrize("window", [None, 700])
def test_stats_equal_pandas_reference(tmp_path, window):
    paths = make_dataset(str(tmp_path))
    with tsfile_c.open(str(tmp_path)) as ds:
        got = ds.stats(window=window, columns=["f", "g"])
        one = ds.stats(window=window, columns=["f", "g"], threads=2, files_at_once=3)
    pd.testing.assert_frame_equal(got, one, check_exact=True)
    rows = pd.concat(reference(paths, time="int"), ignore_index=True)
    rows["device"] = "t." + rows["device"].astype(str)
    rows["w"] = 0 if window is None else rows["time"] // window * window
    for col in ("f", "g"):
        sub = rows[rows[col].notna()]
        grp = sub.groupby(["device", "w"], sort=True)[col]
        want = grp.agg(["count", "min", "max", "first", "last"])
        mine = got[got["column"] == col]
        assert len(mine) == len(want)
        assert np.array_equal(mine["count"].to_numpy(np.int64), want["count"].to_numpy(np.int64))
        for k in ("min", "max", "first", "last"):
            assert np.array_equal(mine[k].to_numpy(np.float64), want[k].to_numpy(np.float64)), k
        sums = np.array([float(np.sum(g.to_numpy(np.float64))) for _, g in grp])  # to a rounding of the order
        assert np.allclose(mine["sum"].to_numpy(), sums, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("window", [None, 700])
def test_stats_frame_takes_its_columns(tmp_path, window):
    # the stats frame is put together from the aggregation's arrays without copying them (pandas' make_block),
    # and equals the frame built column by column
    from tsfile_c._dataset import STATS_COLUMNS, STATS_DTYPES, agg_frame_of
    make_dataset(str(tmp_path))
    with tsfile_c.open(str(tmp_path)) as ds:
        arrays, devices, cols = ds._stats_arrays("device", window)
    n = len(arrays["dev"])
    assert n > 5 and (arrays["win"] == -(1 << 63)).all() == (window is None)
    got = agg_frame_of(dict(arrays), devices, cols)
    want = agg_frame_of({k: v.copy() for k, v in arrays.items()}, devices, cols, blocks=False)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.columns) == STATS_COLUMNS
    assert list(got.dtypes) == [pd.api.types.pandas_dtype(t) for t in STATS_DTYPES]
    for c in ("count", "first_time", "last_time"):
        assert np.shares_memory(got[c].to_numpy(), arrays[c]), c
    assert got["device"].tolist() == [devices[i] for i in arrays["dev"]]
    assert got["column"].tolist() == [cols[i] for i in arrays["col"]]


@pytest.mark.parametrize("window", [None, 1000])
@pytest.mark.parametrize("null_file", [1, 2])
def test_stats_column_null_throughout_a_later_file(tmp_path, window, null_file):
    """A column null throughout a later file (a key without values there: count 0) changes nothing of the
    earlier files' aggregates of it, first and first_time included (values 5.. at times 100..)."""
    n = 50
    for i in range(3):
        f = pd.array([None] * n if i == null_file else list(np.arange(n) * 1.5 + 5 + i), dtype="Float64")
        df = pd.DataFrame({"time": np.arange(n, dtype=np.int64) * 10 + 100 + i * 300, "device": ["d1"] * n,
                           "f": f, "g": np.arange(n, dtype=np.int64)})
        tsfile_c.write_dataframe(df, str(tmp_path / ("p%d.tsfile" % i)), table="t", tags=["device"])
    with tsfile_c.open(str(tmp_path)) as ds:
        got = ds.stats(window=window, columns=["f"])
    rows = pd.concat(reference(sorted(str(p) for p in tmp_path.iterdir()), time="int"), ignore_index=True)
    rows["w"] = 0 if window is None else rows["time"] // window * window
    sub = rows[rows["f"].notna()]
    want = sub.groupby("w", sort=True)["f"].agg(["count", "min", "max", "first", "last"])
    want["first_time"] = sub.groupby("w", sort=True)["time"].min()
    want["last_time"] = sub.groupby("w", sort=True)["time"].max()
    mine = got[got["count"] > 0]
    assert len(mine) == len(want)
    for k in want.columns:
        assert np.array_equal(mine[k].to_numpy(np.float64), want[k].to_numpy(np.float64)), k


def test_errors(tmp_path):
    make_dataset(str(tmp_path), nfiles=2)
    with pytest.raises(tsfile_c.TsfError) as e:
        tsfile_c.open(os.path.join(str(tmp_path), "nothing-*.tsfile"))
    assert e.value.status_name == "TSF_ENOTFOUND"
    bad = pd.DataFrame({"time": [1, 2], "device": ["d0", "d0"], "f": [0.5, 1.5]})  # f as DOUBLE: a type conflict
    tsfile_c.write_dataframe(bad, os.path.join(str(tmp_path), "zz.tsfile"), table="t", tags=["device"])
    with pytest.raises(tsfile_c.TsfError) as e:
        tsfile_c.open(str(tmp_path))
    assert e.value.status_name == "TSF_ECORRUPT" and "zz.tsfile" in e.value.message


def test_devices_in_some_files(tmp_path):
    """A device selection reads only the files holding those devices (one lacks t.d1 here)."""
    for k, devs in enumerate((["d0", "d1"], ["d0"])):
        df = pd.DataFrame({"time": np.arange(6, dtype=np.int64) + 100 * k, "device": [devs[i % len(devs)] for i in range(6)],
                           "v": np.arange(6.0) + k})
        tsfile_c.write_dataframe(df, os.path.join(str(tmp_path), "f%d.tsfile" % k), table="t", tags=["device"])
    with tsfile_c.open(str(tmp_path)) as ds:
        got = ds.to_pandas(devices=["t.d1"])
        assert [b.file for b in ds.query(devices="t.d1")] == [0]
        with pytest.raises(tsfile_c.TsfError):
            ds.to_pandas(devices=["t.nope"])
    with tsfile_c.open(os.path.join(str(tmp_path), "f0.tsfile")) as f:
        want = f.to_pandas(devices=["t.d1"])
    assert list(got["v"]) == list(want["v"]) == [1.0, 3.0, 5.0]


def _summary(ds):
    """What a Dataset took from the files' metadata."""
    return (ds.files, [(d.name, d.segments, [(s.name, s.type, s.count, s.start_time, s.end_time) for s in d.series])
                       for d in ds.devices], [(c.name, c.type, c.category) for c in ds.schema["t"]])


def test_metadata_cache(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    paths = make_dataset(str(folder))
    old = time.time() - 3600
    for p in paths:  # old enough to be cached (a file modified in the last seconds is read every time)
        os.utime(p, (old, old))
    cache = str(tmp_path / "meta.cache")
    with tsfile_c.open(str(folder)) as plain:
        want, rows = _summary(plain), plain.to_pandas()
        assert plain.cache_stats.files_read == 5 and not plain.cache_stats.written
    with tsfile_c.open(str(folder), cache=cache) as cold:
        assert cold.cache_stats[:2] == (0, 5) and cold.cache_stats.written and os.path.exists(cache)
        assert _summary(cold) == want
    with tsfile_c.open(str(folder), cache=cache) as warm:
        st = warm.cache_stats
        assert (st.files_cached, st.files_read, st.loaded, st.written) == (5, 0, True, False)
        assert _summary(warm) == want
        pd.testing.assert_frame_equal(warm.to_pandas(), rows, check_exact=True)
    # a rewritten file is read again; the others still come from the cache
    make_dataset(str(folder), nfiles=1, seed=9)
    os.utime(paths[0], (old + 5, old + 5))
    with tsfile_c.open(str(folder), cache=cache) as ds, tsfile_c.open(str(folder)) as fresh:
        assert ds.cache_stats[:2] == (4, 1) and ds.cache_stats.written
        assert _summary(ds) == _summary(fresh)
    # a damaged cache is ignored (and says why), the dataset is the same, the cache rebuilt
    with open(cache, "r+b") as f:
        f.seek(40)
        f.write(b"\xff\xff")
    with tsfile_c.open(str(folder), cache=cache) as ds:
        assert "dataset cache" in ds.cache_stats.load_error and ds.cache_stats.written
        assert not ds.cache_stats.loaded and ds.cache_stats.files_read == 5
    with tsfile_c.Dataset(paths, cache=cache) as ds:
        assert ds.cache_stats.files_cached == 5 and ds.cache_stats.load_error is None


def test_reader_pool(tmp_path):
    make_dataset(str(tmp_path), nfiles=3, rows=500)
    with tsfile_c.open(str(tmp_path)) as ds:
        want, rows = ds.stats(window=700), ds.to_pandas()
    pool = tsfile_c.ReaderPool()
    for _ in range(2):  # the second time from the kept readers and their buffers
        with tsfile_c.Dataset(str(tmp_path), pool=pool) as ds:
            assert ds.stats(window=700).equals(want)
            assert ds.to_pandas().equals(rows)
    pool.close()
    with pytest.raises(ValueError):
        tsfile_c.Dataset(str(tmp_path), pool=pool)
