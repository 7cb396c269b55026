"""ctypes declarations of the tsfile-c C API (include/tsf.h) and the search for libtsf.so.

The library is looked up, in this order, at:
  1. the path in the environment variable TSFILE_C_LIB (a file, or a folder holding libtsf.so);
  2. libtsf.so next to this package (where `pip install` copies the one it was built with);
  3. the build folder of the source tree this package sits in (<repo>/build/libtsf.so), for use
     from a checkout without installing;
  4. the system's library path (libtsf.so.0, libtsf.so, ctypes.util.find_library("tsf")).
When none loads, LibraryNotFound names every place tried and why each failed.

Every option struct is declared field for field as in tsf.h; after loading, each is checked against
the size the library's *_options_init writes into struct_size, so a header that moved on without
this module fails at import instead of corrupting memory.
"""
import ctypes
import ctypes.util
import os

c_size = ctypes.c_size_t
c_int = ctypes.c_int
c_i32 = ctypes.c_int32
c_u32 = ctypes.c_uint32
c_i64 = ctypes.c_int64
c_u64 = ctypes.c_uint64
c_dbl = ctypes.c_double
c_ptr = ctypes.c_void_p
c_str = ctypes.c_char_p
P = ctypes.POINTER

ENV_VAR = "TSFILE_C_LIB"
ERROR_MESSAGE_SIZE = 256

# tsf_type
BOOLEAN, INT32, INT64, FLOAT, DOUBLE, TEXT, VECTOR, TIMESTAMP, DATE, BLOB, STRING = 0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11
TYPE_NAMES = {BOOLEAN: "BOOLEAN", INT32: "INT32", INT64: "INT64", FLOAT: "FLOAT", DOUBLE: "DOUBLE", TEXT: "TEXT",
              VECTOR: "VECTOR", TIMESTAMP: "TIMESTAMP", DATE: "DATE", BLOB: "BLOB", STRING: "STRING"}
TYPE_CODES = {v: k for k, v in TYPE_NAMES.items()}
CATEGORY_NAMES = {0: "TAG", 1: "FIELD", 2: "ATTRIBUTE"}
COLUMN_TAG, COLUMN_FIELD, COLUMN_ATTRIBUTE = 0, 1, 2
ENCODING_AUTO = 0xFE
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class Error(ctypes.Structure):
    _fields_ = [("code", c_int), ("message", ctypes.c_char * ERROR_MESSAGE_SIZE)]


class Bytes(ctypes.Structure):
    _fields_ = [("data", c_ptr), ("len", c_size)]


class ReaderOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("path", c_int), ("allocator", c_ptr), ("use_pread", c_int),
                ("page_index", c_int), ("checked", c_int)]


class TableColumn(ctypes.Structure):
    _fields_ = [("name", c_str), ("type", c_int), ("encoding", c_int), ("compression", c_int),
                ("category", c_int)]


class TableInfo(ctypes.Structure):
    _fields_ = [("name", c_str), ("ncolumns", c_size), ("columns", P(TableColumn)), ("first_device", c_size),
                ("ndevices", c_size)]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("name", c_str), ("table", c_size), ("nsegments", c_size), ("aligned", c_int),
                ("nseries", c_size)]


class Stats(ctypes.Structure):
    _fields_ = [("type", c_int), ("count", c_u64), ("start_time", c_i64), ("end_time", c_i64),
                ("has_values", c_int), ("min", c_dbl), ("max", c_dbl), ("first", c_dbl), ("last", c_dbl),
                ("sum", c_dbl), ("min_i", c_i64), ("max_i", c_i64), ("first_i", c_i64), ("last_i", c_i64),
                ("first_b", Bytes), ("last_b", Bytes), ("min_b", Bytes), ("max_b", Bytes), ("trusted", c_int)]


class SeriesInfo(ctypes.Structure):
    _fields_ = [("measurement", c_str), ("type", c_int), ("encoding", c_int), ("compression", c_int),
                ("nchunks", c_size), ("npages", c_size), ("stats", Stats), ("disk_bytes", c_u64),
                ("page_bytes", c_u64), ("page_bytes_raw", c_u64)]


class QueryOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("table", c_str), ("devices", P(c_size)), ("ndevices", c_size),
                ("columns", P(c_str)), ("ncolumns", c_size), ("time_min", c_i64), ("time_max", c_i64),
                ("batch_size", c_size), ("where", c_ptr), ("threads", ctypes.c_uint), ("page_index", c_ptr),
                ("use_page_index", c_int), ("checked", c_int), ("experimental", c_ptr)]


class QueryStats(ctypes.Structure):
    _fields_ = [("chunks_read", c_u64), ("chunks_skipped", c_u64), ("pages_read", c_u64), ("pages_skipped", c_u64),
                ("blocks_read", c_u64), ("blocks_skipped", c_u64), ("bytes_read", c_u64),
                ("bytes_decompressed", c_u64), ("rows", c_u64)]


class ColumnBatch(ctypes.Structure):
    _fields_ = [("name", c_str), ("type", c_int), ("values", c_ptr), ("validity", c_ptr)]


class Batch(ctypes.Structure):
    _fields_ = [("device", c_size), ("nrows", c_size), ("times", c_ptr), ("ncolumns", c_size),
                ("columns", P(ColumnBatch))]


class CollectColumn(ctypes.Structure):
    _fields_ = [("type", c_int), ("values", c_ptr), ("present", c_ptr), ("first_null", c_size)]


class Collect(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("cap", c_size), ("nrows", c_size), ("times", c_ptr), ("devices", c_ptr),
                ("ncolumns", c_size), ("columns", P(CollectColumn)), ("done", c_int), ("cells_in_place", c_u64),
                ("cells_copied", c_u64), ("device_codes", P(c_i32)), ("device_width", ctypes.c_uint),
                ("time_min", c_i64), ("time_max", c_i64)]


class AggOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("time_min", c_i64), ("time_max", c_i64), ("window", c_i64),
                ("window_origin", c_i64), ("force_decode", c_int), ("checked", c_int)]


class AggWindow(ctypes.Structure):
    _fields_ = [("start", c_i64), ("end", c_i64), ("stats", Stats)]


class AggInfo(ctypes.Structure):
    _fields_ = [("chunks_from_stats", c_u64), ("pages_from_stats", c_u64), ("pages_decoded", c_u64),
                ("points_from_stats", c_u64), ("points_decoded", c_u64)]


class ColumnSchema(ctypes.Structure):
    _fields_ = [("name", c_str), ("type", c_int), ("encoding", c_int), ("compression", c_int),
                ("category", c_int)]


class WriterOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("page_max_points", c_u32), ("page_max_bytes", c_size),
                ("memory_budget", c_size), ("in_place", c_int), ("fsync", c_int), ("sort_tablets", c_int),
                ("time_compression", c_int), ("float_precision", c_i32), ("bloom_error_rate", c_dbl),
                ("max_index_degree", c_u32), ("path", c_int), ("allocator", c_ptr), ("threads", c_u32),
                ("lz4_probe", c_int), ("gorilla_compact", c_i32), ("page_index", c_int),
                ("flush_interval_ms", c_u32)]


class DatasetOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("reader", P(ReaderOptions)), ("open_source", c_ptr),
                ("close_source", c_ptr), ("source_ctx", c_ptr), ("cache_path", c_str), ("cache_mode", c_int),
                ("reader_pool", c_ptr)]


class DatasetOpenStats(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("files_cached", c_size), ("files_read", c_size), ("files_racy", c_size),
                ("cache_loaded", c_int), ("cache_written", c_int), ("cache_load", Error), ("cache_save", Error)]


class DatasetFileInfo(ctypes.Structure):
    _fields_ = [("path", c_str), ("size", c_u64), ("time_min", c_i64), ("time_max", c_i64), ("points", c_u64),
                ("ndevices", c_size)]


class DatasetDeviceInfo(ctypes.Structure):
    _fields_ = [("name", c_str), ("table", c_size), ("aligned", c_int), ("nseries", c_size), ("time_min", c_i64),
                ("time_max", c_i64), ("nfiles", c_size), ("nsegments", c_size)]


class DatasetSeriesInfo(ctypes.Structure):
    _fields_ = [("measurement", c_str), ("type", c_int), ("time_min", c_i64), ("time_max", c_i64),
                ("count", c_u64), ("nfiles", c_size)]


class DatasetFileDeviceInfo(ctypes.Structure):
    _fields_ = [("device", c_size), ("local", c_size), ("time_min", c_i64), ("time_max", c_i64), ("points", c_u64),
                ("nseries", c_size)]


class DatasetQueryOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("table", c_str), ("devices", P(c_str)), ("ndevices", c_size),
                ("columns", P(c_str)), ("ncolumns", c_size), ("time_min", c_i64), ("time_max", c_i64),
                ("batch_size", c_size), ("where", c_ptr), ("threads", ctypes.c_uint),
                ("files_at_once", ctypes.c_uint), ("checked", c_int)]


class DatasetAggOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("by_device", c_int), ("window", c_i64), ("window_origin", c_i64),
                ("group_tags", ctypes.POINTER(c_str)), ("ngroup_tags", c_size), ("force_decode", c_int)]


class DatasetAggRow(ctypes.Structure):
    _fields_ = [("device", c_size), ("window_start", c_i64), ("column", c_str), ("count", c_u64), ("sum", c_dbl),
                ("min", c_dbl), ("max", c_dbl), ("mean", c_dbl), ("first", c_dbl), ("last", c_dbl),
                ("first_time", c_i64), ("last_time", c_i64), ("group", c_size), ("min_bytes", c_ptr),
                ("min_bytes_len", c_size), ("max_bytes", c_ptr), ("max_bytes_len", c_size)]


PE = P(Error)
# name: (restype, argtypes)
_SIGNATURES = {
    "tsf_version_string": (c_str, []),
    "tsf_status_name": (c_str, [c_int]),
    "tsf_encoding_parse": (c_int, [c_str, P(c_int), PE]),
    "tsf_compression_parse": (c_int, [c_str, P(c_int), PE]),
    "tsf_type_parse": (c_int, [c_str, P(c_int), PE]),
    "tsf_encoding_name": (c_str, [c_int]),
    "tsf_compression_name": (c_str, [c_int]),
    "tsf_reader_options_init": (None, [P(ReaderOptions)]),
    "tsf_reader_open": (c_int, [P(c_ptr), c_str, P(ReaderOptions), PE]),
    "tsf_reader_close": (None, [c_ptr]),
    "tsf_reader_version": (c_int, [c_ptr]),
    "tsf_reader_load_index": (c_int, [c_ptr, PE]),
    "tsf_reader_table_count": (c_size, [c_ptr]),
    "tsf_reader_table": (c_int, [c_ptr, c_size, P(TableInfo), PE]),
    "tsf_reader_device_count": (c_size, [c_ptr]),
    "tsf_reader_device": (c_int, [c_ptr, c_size, P(DeviceInfo), PE]),
    "tsf_reader_device_segment": (c_int, [c_ptr, c_size, c_size, P(Bytes), PE]),
    "tsf_reader_series": (c_int, [c_ptr, c_size, c_size, P(SeriesInfo), PE]),
    "tsf_query_options_init": (None, [P(QueryOptions)]),
    "tsf_query_open": (c_int, [c_ptr, P(QueryOptions), P(c_ptr), PE]),
    "tsf_query_next": (c_int, [c_ptr, P(P(Batch)), PE]),
    "tsf_collect_init": (None, [P(Collect)]),
    "tsf_query_collect": (c_int, [c_ptr, P(Collect), PE]),
    "tsf_query_close": (None, [c_ptr]),
    "tsf_query_get_stats": (None, [c_ptr, P(QueryStats)]),
    "tsf_filter_parse": (c_int, [P(c_ptr), c_str, PE]),
    "tsf_filter_free": (None, [c_ptr]),
    "tsf_agg_options_init": (None, [P(AggOptions)]),
    "tsf_aggregate": (c_int, [c_ptr, c_size, c_size, P(AggOptions), P(c_ptr), PE]),
    "tsf_agg_result_count": (c_size, [c_ptr]),
    "tsf_agg_result_window": (P(AggWindow), [c_ptr, c_size]),
    "tsf_agg_result_info": (None, [c_ptr, P(AggInfo)]),
    "tsf_agg_result_free": (None, [c_ptr]),
    "tsf_writer_options_init": (None, [P(WriterOptions)]),
    "tsf_writer_open": (c_int, [P(c_ptr), c_str, P(WriterOptions), PE]),
    "tsf_writer_register_series": (c_int, [c_ptr, c_str, P(ColumnSchema), PE]),
    "tsf_writer_register_aligned": (c_int, [c_ptr, c_str, P(ColumnSchema), c_size, PE]),
    "tsf_writer_register_table": (c_int, [c_ptr, c_str, P(ColumnSchema), c_size, PE]),
    "tsf_tablet_new": (c_int, [c_ptr, c_str, P(c_str), c_size, c_size, P(c_ptr), PE]),
    "tsf_tablet_free": (None, [c_ptr]),
    "tsf_tablet_set_times": (c_int, [c_ptr, c_ptr, c_size, PE]),
    "tsf_tablet_set_column": (c_int, [c_ptr, c_size, c_ptr, c_ptr, c_size, PE]),
    "tsf_tablet_set_column_ref": (c_int, [c_ptr, c_size, c_ptr, c_ptr, c_size, PE]),
    "tsf_writer_write_tablet": (c_int, [c_ptr, c_ptr, PE]),
    "tsf_writer_close": (c_int, [c_ptr, PE]),
    "tsf_writer_abort": (None, [c_ptr]),
    "tsf_writer_temp_path": (c_str, [c_ptr]),
    "tsf_dataset_options_init": (None, [P(DatasetOptions)]),
    "tsf_reader_pool_create": (c_int, [P(c_ptr), c_ptr, PE]),
    "tsf_reader_pool_free": (None, [c_ptr]),
    "tsf_dataset_open": (c_int, [P(c_ptr), P(c_str), c_size, P(DatasetOptions), PE]),
    "tsf_dataset_close": (None, [c_ptr]),
    "tsf_dataset_get_open_stats": (c_int, [c_ptr, P(DatasetOpenStats), PE]),
    "tsf_dataset_file_count": (c_size, [c_ptr]),
    "tsf_dataset_file": (c_int, [c_ptr, c_size, P(DatasetFileInfo), PE]),
    "tsf_dataset_table_count": (c_size, [c_ptr]),
    "tsf_dataset_table": (c_int, [c_ptr, c_size, P(TableInfo), PE]),
    "tsf_dataset_device_count": (c_size, [c_ptr]),
    "tsf_dataset_device": (c_int, [c_ptr, c_size, P(DatasetDeviceInfo), PE]),
    "tsf_dataset_device_segment": (c_int, [c_ptr, c_size, c_size, P(Bytes), PE]),
    "tsf_dataset_series": (c_int, [c_ptr, c_size, c_size, P(DatasetSeriesInfo), PE]),
    "tsf_dataset_file_device": (c_int, [c_ptr, c_size, c_size, P(DatasetFileDeviceInfo), PE]),
    "tsf_dataset_query_options_init": (None, [P(DatasetQueryOptions)]),
    "tsf_dataset_agg_options_init": (None, [P(DatasetAggOptions)]),
    "tsf_dataset_aggregate": (c_int, [c_ptr, P(DatasetQueryOptions), P(DatasetAggOptions), P(c_ptr), PE]),
    "tsf_dataset_agg_result_count": (c_size, [c_ptr]),
    "tsf_dataset_agg_result_row": (P(DatasetAggRow), [c_ptr, c_size]),
    "tsf_dataset_agg_result_free": (None, [c_ptr]),
}


class LibraryNotFound(OSError):
    """libtsf.so could not be loaded from any of the places searched (listed in the message)."""


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get(ENV_VAR)
    if env:
        yield "%s=%s" % (ENV_VAR, env), (os.path.join(env, "libtsf.so") if os.path.isdir(env) else env)
    else:
        yield "%s (not set)" % ENV_VAR, None
    yield "next to the package", os.path.join(here, "libtsf.so")
    yield "the source tree's build folder", os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libtsf.so")
    for name in ("libtsf.so.0", "libtsf.so"):
        yield "the system library path", name
    found = ctypes.util.find_library("tsf")
    yield "ctypes.util.find_library('tsf')", found


def _load():
    tried = []
    for where, path in _candidates():
        if path is None:
            tried.append(where)
            continue
        if os.sep in path and not os.path.exists(path):
            tried.append("%s: %s (absent)" % (where, path))
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s: %s (%s)" % (where, path, e))
    raise LibraryNotFound("tsfile_c: cannot load libtsf.so; tried:\n  " + "\n  ".join(tried) +
                          "\nBuild it (cmake --build build) and set %s to its path, or reinstall the package "
                          "after the build." % ENV_VAR)


def _bind(lib):
    for name, (res, args) in _SIGNATURES.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    for struct, init in ((ReaderOptions, lib.tsf_reader_options_init), (QueryOptions, lib.tsf_query_options_init),
                         (AggOptions, lib.tsf_agg_options_init), (WriterOptions, lib.tsf_writer_options_init),
                         (DatasetOptions, lib.tsf_dataset_options_init),
                         (DatasetQueryOptions, lib.tsf_dataset_query_options_init),
                         (DatasetAggOptions, lib.tsf_dataset_agg_options_init)):
        o = struct()
        init(ctypes.byref(o))
        if o.struct_size != ctypes.sizeof(struct):
            raise LibraryNotFound("tsfile_c: %s of the loaded library is %d bytes, this package declares %d: "
                                  "the library and the package are from different versions"
                                  % (struct.__name__, o.struct_size, ctypes.sizeof(struct)))


lib, lib_path = _load()
_bind(lib)
