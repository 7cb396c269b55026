"""tsfile_c: read and write Apache TsFile files from NumPy and pandas, over the tsfile-c library.

    import tsfile_c
    with tsfile_c.open("demo.tsfile") as f:
        print(f.devices, f.schema)
        df = f.to_pandas(columns=["temperature"], start="2024-01-01T01:00", end="2024-01-01T02:00")
    tsfile_c.write_dataframe(df, "out.tsfile", table="t", tags=["device"])
"""
from ._capi import LibraryNotFound, lib_path
from ._errors import TsfError
from ._reader import Batch, Column, Device, Query, Series, Table, TsFile, open  # noqa: A004
from ._dataset import CacheStats, Dataset, FileDevice, FileInfo, ReaderPool
from ._writer import Writer, write_dataframe
from ._capi import lib as _lib

__version__ = _lib.tsf_version_string().decode()
library_path = lib_path

__all__ = ["open", "TsFile", "Dataset", "ReaderPool", "FileInfo", "FileDevice", "CacheStats", "Query", "Batch", "Table", "Device", "Series",
           "Column", "TsfError", "Writer", "write_dataframe",
           "LibraryNotFound", "library_path"]
