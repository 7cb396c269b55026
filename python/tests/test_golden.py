"""Every golden file of tests/data (tsfile-java, tsfile-cpp) read through to_pandas equals its expected
CSV, by the rules of the C golden tests (golden.py)."""
import glob
import os

import pytest

import tsfile_c
from conftest import DATA
from golden import first_difference, load_csv, rows_from_frame

JAVA = sorted(glob.glob(os.path.join(DATA, "tsfile-java", "*.tsfile")))
CPP = sorted(glob.glob(os.path.join(DATA, "tsfile-cpp", "*.tsfile")))


def frames(f):
    """(table or None, DataFrame) pairs covering the whole file; time='int' where the file's times or
    TIMESTAMP values do not fit datetime64 (checked to happen only for such values)."""
    tables = [t for t in f.tables if t.columns] if f.model == "table" else [None]
    for t in tables:
        kw = {"table": t.name} if t is not None else {}
        try:
            df = f.to_pandas(**kw)
        except OverflowError as e:
            assert "do not fit datetime64" in str(e)
            df = f.to_pandas(time="int", **kw)
            assert (df["time"].min() < -(1 << 62) // 10**6 or df["time"].max() > (1 << 62) // 10**6 or
                    any(s.type == "TIMESTAMP" for s in f.series)), "OverflowError for times that fit"
        yield t, df


@pytest.mark.parametrize("path", JAVA + CPP, ids=os.path.basename)
def test_golden_file(path):
    java = path in JAVA
    want = load_csv(path[:-len(".tsfile")] + (".tsfile.csv" if java else ".csv"), java)
    got = []
    with tsfile_c.open(path) as f:
        for table, df in frames(f):
            assert list(df.columns[:1]) == ["time"]
            got += rows_from_frame(f, df, table, java)
    got.sort(key=lambda r: (r[0], r[1], r[2]))
    diff = first_difference(got, want)
    assert diff is None, diff


def test_all_golden_files_found():
    assert len(JAVA) >= 87 and len(CPP) >= 1
