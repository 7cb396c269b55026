"""Lifetimes across the binding: what a caller holds (an Arrow stream capsule, batches, a DataFrame) stays
valid after the file, the query or the dataset it came from is closed and collected, and using a closed
object raises instead of reaching freed memory. tools/test_python_asan.sh runs this file against a library
built with AddressSanitizer, where a read of freed memory aborts the run."""
import gc
import os

import numpy as np
import pandas as pd
import pytest

import tsfile_c
from tsfile_c import TsfError
from conftest import DATA
from test_arrow import consume

ALLTYPES = os.path.join(DATA, "tsfile-java", "tree_aligned_alltypes_nulls_snappy.tsfile")
MULTICHUNK = os.path.join(DATA, "tsfile-java", "tree_aligned_multichunk_100k_zstd.tsfile")


def _expected(path):
    with tsfile_c.open(path) as f:
        return f.to_pandas(time="int")


def test_stream_outlives_file():
    """A capsule taken from a file, then the file closed and collected: the stream still reads every row."""
    want = _expected(ALLTYPES)
    f = tsfile_c.open(ALLTYPES)
    cap = f.__arrow_c_stream__()
    f.close()
    del f
    gc.collect()
    _, got = consume(cap)
    assert got["time"] == want["time"].tolist()
    assert got["device"] == want["device"].astype(str).tolist()
    for c in want.columns[2:]:
        if want[c].dtype.kind in "iu":
            assert got[c] == [None if x is pd.NA else x for x in want[c].tolist()]


def test_query_stream_outlives_query_and_file():
    """The stream of a half-read query outlives the query and the file."""
    want = _expected(MULTICHUNK)
    f = tsfile_c.open(MULTICHUNK)
    q = f.query()
    it = iter(q)
    next(it)
    cap = q.__arrow_c_stream__()
    f.close()  # closes q too
    del f, q, it
    gc.collect()
    _, got = consume(cap)
    assert len(got["time"]) == len(want)
    assert got["time"] == want["time"].tolist()


def test_query_after_close_raises_and_batches_stay():
    """Batches taken before the file closed keep their values; the query then raises, it does not read."""
    with tsfile_c.open(MULTICHUNK) as f:
        want = [(b.time.copy(), {k: np.ma.getdata(v).copy() for k, v in b.columns.items()}) for b in f.query()]
    f = tsfile_c.open(MULTICHUNK)
    it = iter(f.query())
    held = [next(it), next(it)]
    f.close()
    del f
    gc.collect()
    with pytest.raises(TsfError):
        next(it)
    for b, (t, cols) in zip(held, want):
        assert np.array_equal(b.time, t)
        for k, v in cols.items():
            assert np.array_equal(np.ma.getdata(b.columns[k]), v)


def test_frame_outlives_file():
    """A DataFrame and to_numpy arrays keep their values once the file is closed and collected."""
    want = _expected(MULTICHUNK)
    f = tsfile_c.open(MULTICHUNK)
    df = f.to_pandas(time="int")
    arrs = f.to_numpy()
    f.close()
    del f
    gc.collect()
    assert df.equals(want)
    assert np.array_equal(arrs["time"], want["time"].to_numpy())


def test_closed_objects_raise():
    """Every entry point of a closed file or dataset raises TsfError."""
    f = tsfile_c.open(ALLTYPES)
    f.close()
    for call in (lambda: f.to_pandas(time="int"), lambda: f.query(), lambda: f.__arrow_c_stream__(),
                 lambda: f.stats()):
        with pytest.raises(TsfError):
            call()
    ds = tsfile_c.open([ALLTYPES, MULTICHUNK])
    ds.close()
    for call in (lambda: ds.to_pandas(time="int"), lambda: list(ds.query()), lambda: ds.stats()):
        with pytest.raises(TsfError):
            call()
