"""tsfile_c.dask on a distributed.LocalCluster with 2 worker processes: every golden file and a generated
multi-file dataset read through read_dataset equal the single-process results (file, chunk-group and time
splits); aggregate() equals Dataset.stats bit for bit, and with statistics=True exactly but for the sums
(within the documented tolerance) while decoding fewer pages; the query options reach the workers' queries
(the library's page counters); a worker killed mid-task is replaced and the answer is unchanged; worker
errors reach the client."""
import glob
import os
import pickle

import numpy as np
import pandas as pd
import pytest

import tsfile_c
import tsfile_c.dask as tdd
from conftest import DATA
from test_dataset import make_dataset

distributed = pytest.importorskip("distributed")  # installed by tools/deps.sh: a skip fails CI

GOLDEN = sorted(glob.glob(os.path.join(DATA, "tsfile-java", "*.tsfile")) +
                glob.glob(os.path.join(DATA, "tsfile-cpp", "*.tsfile")))


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def normalized(df, meta):
    return df[list(meta.columns)].astype(meta.dtypes.to_dict()).reset_index(drop=True)


def test_golden_files(client):
    """Each golden file (each table) through read_dataset == TsFile.to_pandas; a damaged one raises the
    same TsfError in the client, naming the file."""
    checked = failed = 0
    for path in GOLDEN:
        try:
            with tsfile_c.open(path) as f:
                tables = [t.name for t in f.tables if t.columns] if f.model == "table" else [None]
                wants = []
                for t in tables:
                    try:
                        wants.append((t, "datetime", f.to_pandas(table=t)))
                    except OverflowError:
                        wants.append((t, "int", f.to_pandas(table=t, time="int")))
        except tsfile_c.TsfError as e:
            with pytest.raises(tsfile_c.TsfError) as got:
                tdd.read_dataset([path]).compute()
            assert got.value.status == e.status and os.path.basename(path) in str(got.value)
            failed += 1
            continue
        for t, mode, want in wants:
            ddf = tdd.read_dataset([path], table=t, time=mode)
            with tsfile_c.open([path]) as ds:
                meta = ds.frame_meta(table=t, time=mode)
            got = ddf.compute()
            pd.testing.assert_frame_equal(normalized(got, meta), normalized(want, meta), check_exact=True)
            checked += 1
    assert checked >= 80 and len(GOLDEN) >= 88


def test_dataset_splits(client, tmp_path):
    make_dataset(str(tmp_path), nfiles=6, rows=500)
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.to_pandas()
        meta = ds.frame_meta()
    by_file = tdd.read_dataset(str(tmp_path))
    assert by_file.npartitions == 6
    pd.testing.assert_frame_equal(normalized(by_file.compute(), meta), normalized(want, meta), check_exact=True)
    by_two = tdd.read_dataset(str(tmp_path), split="files:4")
    assert by_two.npartitions == 2
    pd.testing.assert_frame_equal(normalized(by_two.compute(), meta), normalized(want, meta), check_exact=True)
    by_time = tdd.read_dataset(str(tmp_path), split="time:1s")
    assert by_time.known_divisions and by_time.npartitions == 30  # 6 files x 5000 ms
    got = by_time.compute()
    assert got.index.is_monotonic_increasing
    sorted_want = want.sort_values("time", kind="stable").set_index("time")
    pd.testing.assert_frame_equal(got, sorted_want[list(got.columns)].astype(got.dtypes.to_dict()), check_exact=True)
    part = by_time.loc[pd.Timestamp(12000, unit="ms"):pd.Timestamp(13999, unit="ms")]
    assert part.npartitions == 2  # the divisions prune the rest
    assert len(part.compute()) == ((sorted_want.index >= pd.Timestamp(12000, unit="ms")) &
                                   (sorted_want.index <= pd.Timestamp(13999, unit="ms"))).sum()


def per_partition(ddf):
    """Per partition: pages read (the library's counter), rows, distinct devices."""
    def one(d):
        return pd.DataFrame({"pages": [d.attrs["tsfile_query_stats"].get("pages_read", 0)], "rows": [len(d)],
                             "devices": [d["device"].nunique()]})
    return ddf.map_partitions(one, meta=pd.DataFrame({k: pd.Series([], dtype=np.int64)
                                                      for k in ("pages", "rows", "devices")})).compute()


def pages(ddf):
    return per_partition(ddf)[["pages", "rows"]].sum()


def test_chunk_group_split(client, tmp_path):
    """split="chunk-group": a partition per device of each file (3 per file here), concatenating to
    to_pandas; "chunk-groups:2" two devices to a partition; the time range and the device selection drop
    the devices without rows from the plan; fragments stay small."""
    make_dataset(str(tmp_path), nfiles=4, rows=600)
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.to_pandas()
        meta = ds.frame_meta()
        assert [fd.index for fd in ds.file_devices(0)] == [0, 1, 2]
        assert [fd.name for fd in ds.file_devices(1)] == ["t.d0", "t.d1", "t.d2"]
        assert sum(fd.points for i in range(4) for fd in ds.file_devices(i)) == sum(f.points for f in ds.files)
        frs = tdd.fragments(ds, split="chunk-group")
        assert len(frs) == 12 and all(len(pickle.dumps(fr)) < 300 for fr in frs)
    by_dev = tdd.read_dataset(str(tmp_path), split="chunk-group")
    assert by_dev.npartitions == 12
    parts = per_partition(by_dev)
    assert list(parts["devices"]) == [1] * 12 and parts["rows"].sum() == len(want)
    pd.testing.assert_frame_equal(normalized(by_dev.compute(), meta), normalized(want, meta), check_exact=True)
    by_two = tdd.read_dataset(str(tmp_path), split="chunk-groups:2")
    assert by_two.npartitions == 8
    pd.testing.assert_frame_equal(normalized(by_two.compute(), meta), normalized(want, meta), check_exact=True)
    # one file of four meets the range; the devices selection keeps one device per file
    rng = tdd.read_dataset(str(tmp_path), split="chunk-group", start=6000, end=7000, columns=["g"])
    assert rng.npartitions == 3
    with tsfile_c.open(str(tmp_path)) as ds:
        m = ds.frame_meta(columns=["g"])
        pd.testing.assert_frame_equal(normalized(rng.compute(), m),
                                      normalized(ds.to_pandas(columns=["g"], start=6000, end=7000), m),
                                      check_exact=True)
        one = tdd.read_dataset(str(tmp_path), split="chunk-group", devices=["t.d1"])
        assert one.npartitions == 4
        pd.testing.assert_frame_equal(normalized(one.compute(), meta),
                                      normalized(ds.to_pandas(devices=["t.d1"]), meta), check_exact=True)
    with pytest.raises(ValueError, match="chunk-group"):
        tdd.read_dataset(str(tmp_path), split="chunk-groups:0")


def test_pushdown_reaches_the_workers(client, tmp_path):
    make_dataset(str(tmp_path), nfiles=4, rows=3000)

    full = pages(tdd.read_dataset(str(tmp_path)))
    cols = pages(tdd.read_dataset(str(tmp_path), columns=["g"]))
    rng = pages(tdd.read_dataset(str(tmp_path), start=30000, end=35000))
    flt = pages(tdd.read_dataset(str(tmp_path), where="time >= 30000 and time <= 35000"))
    assert cols["pages"] < full["pages"] and cols["rows"] == full["rows"]
    assert rng["pages"] <= full["pages"] / 3 and rng["rows"] == 501  # one file of four is read
    assert flt["rows"] == 501 and flt["pages"] == rng["pages"]
    tagged = tdd.read_dataset(str(tmp_path), tags={"device": "d1"}).compute()
    assert set(tagged["device"].astype(str)) == {"d1"} and len(tagged) == 4 * 1000


@pytest.mark.parametrize("window,group_by", [(None, "device"), (1500, "device"), (2000, None)])
def test_aggregate_bit_identical(client, tmp_path, window, group_by):
    make_dataset(str(tmp_path), nfiles=5, rows=700)
    got = tdd.aggregate(str(tmp_path), group_by=group_by, window=window).compute()
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats(group_by=group_by, window=window)
    assert len(got) and got.equals(want)  # sums added in the same order: the same bits
    g, w = got["sum"].to_numpy(), want["sum"].to_numpy()
    assert np.array_equal(g.view(np.int64), w.view(np.int64))


def make_paged(folder, nfiles=4, rows=1500):
    """Table-model files of 2 devices with 100-point pages: a INT64 (nulls), b DOUBLE (GORILLA: trusted
    statistics), s STRING; device x at 10 ms steps, file k from k * rows * 10 ms."""
    rng = np.random.default_rng(7)
    for k in range(nfiles):
        n = 2 * rows
        t = np.repeat(np.arange(rows, dtype=np.int64) * 10 + k * rows * 10, 2)
        df = pd.DataFrame({"time": t, "device": ["x", "y"] * rows,
                           "a": pd.array(rng.integers(-10 ** 6, 10 ** 6, n), dtype="Int64"),
                           "b": rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, n),
                           "s": ["v%d" % (i % 5) for i in range(n)]})
        df.loc[rng.random(n) < 0.05, "a"] = pd.NA
        tsfile_c.write_dataframe(df, os.path.join(folder, "p-%02d.tsfile" % k), table="t", tags=["device"],
                                 encoding={"a": "TS_2DIFF", "b": "GORILLA", "s": "PLAIN"}, page_max_points=100)


def assert_stats_match(got, want):
    """Exact for every column but sum and mean; sums of the integer column bit for bit, of the DOUBLE
    column within the documented tolerance 1e-9 * count * max(|min|, |max|)."""
    assert len(got) and list(got.columns) == list(want.columns)
    exact = [c for c in got.columns if c not in ("sum", "mean")]
    pd.testing.assert_frame_equal(got[exact], want[exact], check_exact=True)
    ints = (got["column"] == "a").to_numpy()
    assert np.array_equal(got["sum"].to_numpy()[ints].view(np.int64), want["sum"].to_numpy()[ints].view(np.int64))
    other = ~ints
    bound = 1e-9 * want["count"].to_numpy()[other] * np.maximum(want["min"].abs(), want["max"].abs()).to_numpy()[other]
    assert (np.abs(got["sum"].to_numpy()[other] - want["sum"].to_numpy()[other]) <= bound).all()


@pytest.mark.parametrize("window,group_by,start,end", [(None, "device", None, None), (3500, "device", None, None),
                                                       (3500, None, 2345, 51234), (86_400_000, "device", None, None)])
def test_aggregate_statistics(client, tmp_path, window, group_by, start, end):
    """statistics=True: the same answers as Dataset.stats (sums within the tolerance) with fewer pages
    decoded than a read of the same columns, none at all when no window or range cuts a page."""
    make_paged(str(tmp_path))
    got = tdd.aggregate(str(tmp_path), group_by=group_by, window=window, start=start, end=end,
                        statistics=True).compute()
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats(group_by=group_by, window=window, start=start, end=end)
    assert_stats_match(got, want)
    info = got.attrs["tsfile_agg_info"]
    read = pages(tdd.read_dataset(str(tmp_path), start=start, end=end))
    assert info["chunks_from_stats"] + info["pages_from_stats"] > 0
    assert info["pages_decoded"] < read["pages"] / 2
    if window != 3500:  # 4 files x 2 devices x 3 columns: one chunk each, all inside one window
        assert info["pages_decoded"] == 0 and info["chunks_from_stats"] == 4 * 2 * 3
        assert info["points_from_stats"] == want["count"].sum()
    else:
        assert info["pages_decoded"] > 0  # the windows cut pages: those are decoded


def test_aggregate_statistics_selection(client, tmp_path):
    """columns / devices / tags reach the statistics path; where= is refused; TsFile.stats(force_decode=True)
    gives the same answers with every page decoded."""
    make_paged(str(tmp_path), nfiles=2, rows=600)
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats(window=2000, columns=["a", "b"], tags={"device": "y"})
        want_dev = ds.stats(columns=["b"], devices=["t.x"])
    got = tdd.aggregate(str(tmp_path), window=2000, columns=["a", "b"], tags={"device": "y"}, statistics=True)
    assert_stats_match(got.compute(), want)
    got_dev = tdd.aggregate(str(tmp_path), columns="b", devices="t.x", statistics=True).compute()
    assert_stats_match(got_dev, want_dev)
    with pytest.raises(ValueError, match="where"):
        tdd.aggregate(str(tmp_path), where="a > 0", statistics=True)
    with pytest.raises(tsfile_c.TsfError, match="nope"):
        tdd.aggregate(str(tmp_path), columns=["nope"], statistics=True)
    with tsfile_c.open(os.path.join(str(tmp_path), "p-00.tsfile")) as f:
        s = f.stats(window=2000)
        fast = dict(f.last_stats_info)
        d = f.stats(window=2000, force_decode=True)
        slow = dict(f.last_stats_info)
    cols = ["device", "series", "window_start", "count", "first_time", "last_time", "min", "max", "first", "last"]
    pd.testing.assert_frame_equal(s[cols], d[cols], check_exact=True)
    assert slow["pages_from_stats"] == slow["chunks_from_stats"] == 0 and slow["pages_decoded"] > fast["pages_decoded"]



def test_aggregate_column_null_in_first_file(client, tmp_path):
    """A column without values in the first file leaves that file's partial with count 0; the next file's
    partial then replaces it whole (as the library's merge does), never adds to its zeros."""
    n = 50
    for i in range(3):
        f = pd.array([None] * n if i == 0 else list(np.arange(n) * 1.5 + i), dtype="Float64")
        df = pd.DataFrame({"time": np.arange(n, dtype=np.int64) * 10 + i * 1000, "device": ["d1"] * n, "f": f,
                           "g": np.arange(n, dtype=np.int64)})
        tsfile_c.write_dataframe(df, str(tmp_path / ("p%d.tsfile" % i)), table="t", tags=["device"])
    got = tdd.aggregate(str(tmp_path)).compute()
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats()
    assert got.equals(want) and got.loc[got["column"] == "f", "first_time"].item() == 1000


def make_overlapping(folder, nfiles=7, rows=300):
    """Files over the same time range (every key of a window meets every file), devices d0..d2 (d3 only in
    files 2 and 5), g DOUBLE of magnitudes 1e-3..1e20 (so the order of additions shows in the bits), f INT64
    null throughout file 3 and throughout the second half of file 4's range, and a column h null throughout
    the last file."""
    rng = np.random.default_rng(11)
    for k in range(nfiles):
        ndev = 4 if k in (2, 5) else 3
        t = np.repeat(np.arange(rows, dtype=np.int64) * 10 + k, ndev)
        n = len(t)
        f = pd.array(rng.integers(-10 ** 6, 10 ** 6, n), dtype="Int64")
        if k == 3:
            f[:] = pd.NA
        if k == 4:
            f[t >= rows * 5] = pd.NA
        h = pd.array(rng.normal(size=n), dtype="Float64")
        if k == nfiles - 1:
            h[:] = pd.NA
        df = pd.DataFrame({"time": t, "device": ["d%d" % (i % ndev) for i in range(n)], "f": f,
                           "g": rng.normal(size=n) * 10.0 ** (rng.integers(-3, 13, n) + 4 * (k % 3)), "h": h})
        tsfile_c.write_dataframe(df, os.path.join(folder, "o-%02d.tsfile" % k), table="t", tags=["device"])


@pytest.mark.parametrize("split_every", [2, 3, 8])
@pytest.mark.parametrize("window,group_by", [(None, None), (1000, "device"), (None, "device")])
def test_aggregate_tree_bit_identical(client, tmp_path, split_every, window, group_by):
    """The merge tree (split_every parts at a time; 7 files: odd counts at every level) gives Dataset.stats
    bit for bit when every key meets every file, so each key's sums are the same chain of additions; keys
    with a column null throughout a file (count-0 partials in the middle and at the end) included."""
    make_overlapping(str(tmp_path))
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats(group_by=group_by, window=window)
    assert (want["count"] == 0).sum() == 0 and (want["column"] == "h").any()
    for split in ("file", "files:2", "files:3"):
        got = tdd.aggregate(str(tmp_path), group_by=group_by, window=window, split=split,
                            split_every=split_every).compute()
        assert got.equals(want), split
        assert np.array_equal(got["sum"].to_numpy().view(np.int64), want["sum"].to_numpy().view(np.int64))


def test_aggregate_tree_order_matters(client, tmp_path):
    """The data of the tree test is one where adding a key's partial sums in another order changes bits: the
    file-order fold of the per-file sums gives Dataset.stats, a pairwise tree over them does not (for some
    keys), so a merge tree that folded in every merge would fail the tree test."""
    make_overlapping(str(tmp_path))
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats(window=1000).set_index(["device", "window_start", "column"])["sum"]
        per_file = []
        for f in ds.files:
            with tsfile_c.open([f.path]) as one:
                per_file.append(one.stats(window=1000).set_index(["device", "window_start", "column"]))

    def pairwise(xs):
        return xs[0] if len(xs) == 1 else pairwise(xs[:len(xs) // 2]) + pairwise(xs[len(xs) // 2:])
    differ = 0
    for key in want.index[want.index.get_level_values("column") == "g"]:
        sums = [p.loc[key, "sum"] for p in per_file if key in p.index and p.loc[key, "count"] > 0]
        seq = sums[0]
        for x in sums[1:]:
            seq += x
        assert seq == want[key]
        differ += pairwise(sums) != seq
    assert differ > 0


def test_aggregate_empty_parts_and_selection(client, tmp_path):
    """Files without the selected device (the first one among them) give empty partials."""
    make_overlapping(str(tmp_path))
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats(devices=["t.d3"], window=700)
    assert len(want) and set(want["device"]) == {"t.d3"}
    for split_every in (2, 8):
        got = tdd.aggregate(str(tmp_path), devices=["t.d3"], window=700, split_every=split_every).compute()
        assert got.equals(want)
    got = tdd.aggregate(str(tmp_path), tags={"device": "d3"}, window=700, split_every=2).compute()
    assert got.equals(want)


@pytest.mark.parametrize("split,nparts", [("chunk-group", 23), ("chunk-groups:2", 14), ("time:1s", 3),
                                          ("time:2000ms", 2), ("files:3", 3)])
def test_aggregate_split(client, tmp_path, split, nparts):
    """aggregate(split=...) makes read_dataset's fragments into tasks (chunk-group: one per device of each
    file; time: one per interval, the files meeting it) and gives Dataset.stats bit for bit."""
    make_overlapping(str(tmp_path), rows=250)  # times 0..2496: intervals of 1 s meet 3, of 2 s meet 2
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats(window=500)
        assert len(tdd.fragments(ds, split=split)) == nparts
    job = tdd.aggregate(str(tmp_path), window=500, split=split, split_every=3)
    assert sum(isinstance(k, str) and k.startswith("tsfile-partial-agg") for k in job.dask) == nparts
    assert job.compute().equals(want)


def test_aggregate_split_refused(client, tmp_path):
    """Splits that would add a key's values in another order than the library are refused."""
    make_overlapping(str(tmp_path), nfiles=2, rows=100)
    with pytest.raises(ValueError, match="group_by='device'"):
        tdd.aggregate(str(tmp_path), group_by=None, split="chunk-group")
    with pytest.raises(ValueError, match="window"):
        tdd.aggregate(str(tmp_path), window=300, split="time:1s")
    with pytest.raises(ValueError, match="window"):
        tdd.aggregate(str(tmp_path), split="time:1s")
    with pytest.raises(ValueError, match="origin"):
        tdd.aggregate(str(tmp_path), window=500, origin=7, split="time:1s")
    with pytest.raises(ValueError, match="split_every"):
        tdd.aggregate(str(tmp_path), split_every=1)


def test_aggregate_column_null_throughout(client, tmp_path):
    """A column null in every file: its keys have count 0 in every partial; the result has them as the library
    has them (count 0, mean 0)."""
    n = 40
    for i in range(3):
        df = pd.DataFrame({"time": np.arange(n, dtype=np.int64) * 10 + i * 1000, "device": ["d1"] * n,
                           "f": pd.array([None] * n, dtype="Float64"), "g": np.arange(n, dtype=np.int64)})
        tsfile_c.write_dataframe(df, str(tmp_path / ("p%d.tsfile" % i)), table="t", tags=["device"])
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats()
    for split_every in (2, 8):
        got = tdd.aggregate(str(tmp_path), split_every=split_every).compute()
        assert got.equals(want)


def test_to_tsfile_round_trip(client, tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    make_dataset(str(src), nfiles=3, rows=300)
    ddf = tdd.read_dataset(str(src), columns=["f", "g"])
    paths = tdd.to_tsfile(ddf, str(dst), table="t", tags=["device"])
    assert len(paths) == 3 and all(os.path.exists(p) for p in paths)
    with tsfile_c.open(str(dst)) as back, tsfile_c.open(str(src)) as orig:
        meta = orig.frame_meta(columns=["f", "g"])
        pd.testing.assert_frame_equal(normalized(back.to_pandas(), meta), normalized(orig.to_pandas(columns=["f", "g"]), meta),
                                      check_exact=True)
    split = tdd.to_tsfile(ddf, str(tmp_path / "by_dev"), table="t", tags=["device"], partition_on="device")
    assert len(split) == 9 and any(p.endswith("-d2.tsfile") for p in split)


def test_library_loaded_once_per_worker(client, tmp_path):
    make_dataset(str(tmp_path), nfiles=4, rows=200)

    def handle():
        import tsfile_c._capi as c
        return os.getpid(), id(c.lib), c.lib._handle

    before = client.run(handle)
    for _ in range(3):
        tdd.read_dataset(str(tmp_path)).compute()
    after = client.run(handle)
    assert before == after and len(after) == 2


def test_workers_keep_readers(client, tmp_path):
    paths = make_dataset(str(tmp_path), nfiles=4, rows=300)

    def pool_made():
        import tsfile_c.dask as d
        return d._POOL is not None

    for k in range(3):
        if k == 2:  # a file rewritten between two aggregations: the reader a worker kept must not answer
            with tsfile_c.open(paths[0]) as f:
                df = f.to_pandas()
            df["g"] = df["g"] * 3
            tsfile_c.write_dataframe(df, paths[0], table="t", tags=["device"])
        got = tdd.aggregate(str(tmp_path), window=500).compute()
        with tsfile_c.open(str(tmp_path)) as ds:
            want = ds.stats(window=500)
        assert len(got) and got.equals(want)
    assert set(client.run(pool_made).values()) == {True}


def test_killed_worker_is_retried(client, tmp_path):
    make_dataset(str(tmp_path), nfiles=4, rows=300)
    marker = str(tmp_path / "killed")
    want = tdd.read_dataset(str(tmp_path)).compute()

    def kill_once(df):
        if len(df) and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)  # the worker process dies mid-task
        return df

    ddf = tdd.read_dataset(str(tmp_path))
    got = ddf.map_partitions(kill_once, meta=ddf._meta).compute()
    assert os.path.exists(marker)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    client.wait_for_workers(2, timeout=60)


def test_worker_errors_name_the_file(client, tmp_path):
    paths = make_dataset(str(tmp_path), nfiles=2, rows=300)
    ddf = tdd.read_dataset(str(tmp_path))
    with open(paths[1], "r+b") as f:  # damaged after planning: the worker meets it
        f.seek(os.path.getsize(paths[1]) // 2)
        f.write(b"\xff" * 64)
    with pytest.raises(tsfile_c.TsfError) as e:
        ddf.compute()
    assert e.value.status_name in ("TSF_ECORRUPT", "TSF_EIO") and "part-01.tsfile" in str(e.value)
    with pytest.raises(tsfile_c.TsfError) as e:
        tdd.read_dataset(str(tmp_path), columns=["nope"], where="nope > 1").compute()
    assert "nope" in str(e.value)


def test_plain_malloc_workers(client):
    """plain_malloc(): workers start without distributed's MALLOC_TRIM_THRESHOLD_, even when an earlier nanny
    of this process has put it into os.environ (the module's cluster did; set it again to be sure), while
    the cluster of the module's fixture keeps its own."""
    def trim():  # read in the worker (client.run(os.environ.get, ...) would pickle this process's os.environ)
        return __import__("os").environ.get("MALLOC_TRIM_THRESHOLD_")
    os.environ["MALLOC_TRIM_THRESHOLD_"] = "65536"
    with tdd.plain_malloc():
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        with distributed.Client(cluster, set_as_default=False) as c:
            assert set(c.run(trim).values()) == {None}
    finally:
        cluster.close()
    assert set(client.run(trim).values()) == {"65536"}
    assert "MALLOC_TRIM_THRESHOLD_" not in os.environ


def test_aggregate_default_tree(client, tmp_path):
    """The default split_every (16): up to 16 partials go straight to the root, more make a level of merges
    (split_every=8 would merge 12 partials in 2 merges and 18 in 3); the answer stays Dataset.stats'."""
    make_dataset(str(tmp_path), nfiles=6, rows=60)
    with tsfile_c.open(str(tmp_path)) as ds:
        want = ds.stats(window=100)
    for split, leaves, merges in (("chunk-groups:2", 12, 0), ("chunk-group", 18, 2)):
        job = tdd.aggregate(str(tmp_path), window=100, split=split)
        keys = [str(k) for k in dict(job.__dask_graph__())]
        assert sum("tsfile-partial-agg" in k for k in keys) == leaves, split
        assert sum("tsfile-merge-agg" in k for k in keys) == merges, split
        assert job.compute().equals(want), split
