"""The Arrow PyCapsule interface: __arrow_c_stream__ over the library's Arrow C stream export
(include/tsf_arrow.h), so pyarrow, polars, DuckDB and other consumers read a query without a copy
through Python.

Each capsule (named "arrow_array_stream") holds an ArrowArrayStream in memory of its own, filled by
tsf_arrow_stream_open_file (one file) or tsf_arrow_dataset_stream_open_paths (a dataset): the stream opens
and owns its own reader of the file (or its own dataset of the files), so it stays valid whatever happens
to the TsFile or Dataset object that made it. A consumer moves the stream out of the capsule (and
releases it when done); the capsule's destructor releases a stream still in it and frees the struct.
"""
import ctypes
import os

from . import _capi as C
from ._errors import check, new_error

CAPSULE_NAME = b"arrow_array_stream"
_NAME = ctypes.c_char_p(CAPSULE_NAME)  # the capsule keeps this pointer: it lives as long as the module


class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [("format", C.c_str), ("name", C.c_str), ("metadata", C.c_str), ("flags", C.c_i64),
                        ("n_children", C.c_i64), ("children", C.P(C.P(ArrowSchema))),
                        ("dictionary", C.P(ArrowSchema)), ("release", ctypes.CFUNCTYPE(None, C.P(ArrowSchema))),
                        ("private_data", C.c_ptr)]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [("length", C.c_i64), ("null_count", C.c_i64), ("offset", C.c_i64), ("n_buffers", C.c_i64),
                       ("n_children", C.c_i64), ("buffers", C.P(C.c_ptr)), ("children", C.P(C.P(ArrowArray))),
                       ("dictionary", C.P(ArrowArray)), ("release", ctypes.CFUNCTYPE(None, C.P(ArrowArray))),
                       ("private_data", C.c_ptr)]


class ArrowArrayStream(ctypes.Structure):
    pass


ArrowArrayStream._fields_ = [
    ("get_schema", ctypes.CFUNCTYPE(C.c_int, C.P(ArrowArrayStream), C.P(ArrowSchema))),
    ("get_next", ctypes.CFUNCTYPE(C.c_int, C.P(ArrowArrayStream), C.P(ArrowArray))),
    ("get_last_error", ctypes.CFUNCTYPE(C.c_str, C.P(ArrowArrayStream))),
    ("release", ctypes.CFUNCTYPE(None, C.P(ArrowArrayStream))),
    ("private_data", C.c_ptr)]


class ArrowOptions(ctypes.Structure):
    _fields_ = [("struct_size", C.c_size), ("query", C.P(C.QueryOptions)), ("time_unit", C.c_int),
                ("device_column", C.c_int), ("time_name", C.c_str), ("allocator", C.c_ptr), ("zero_copy", C.c_int)]


_UNITS = {"ms": 0, "us": 1, "ns": 2}
_libc = ctypes.CDLL(None)
_libc.malloc.restype, _libc.malloc.argtypes = C.c_ptr, [C.c_size]
_libc.free.restype, _libc.free.argtypes = None, [C.c_ptr]
# Function objects of our own (pythonapi["..."] makes a new one; pythonapi.X is shared with every user)
_capsule_new = ctypes.pythonapi["PyCapsule_New"]
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [C.c_ptr, C.c_str, C.c_ptr]
_capsule_pointer = ctypes.pythonapi["PyCapsule_GetPointer"]
_capsule_pointer.restype, _capsule_pointer.argtypes = C.c_ptr, [C.c_ptr, C.c_str]


@ctypes.CFUNCTYPE(None, C.c_ptr)
def _destroy(capsule):
    """PyCapsule destructor (the capsule arrives as a raw pointer: it is being freed)."""
    ptr = _capsule_pointer(capsule, CAPSULE_NAME)
    if ptr:
        stream = ArrowArrayStream.from_address(ptr)
        if stream.release:
            stream.release(ctypes.cast(ptr, C.P(ArrowArrayStream)))
        _libc.free(ptr)


def _bind():
    lib = C.lib
    lib.tsf_arrow_options_init.restype, lib.tsf_arrow_options_init.argtypes = None, [C.P(ArrowOptions)]
    lib.tsf_arrow_stream_open_file.restype = C.c_int
    lib.tsf_arrow_stream_open_file.argtypes = [C.c_ptr, C.c_str, C.P(C.ReaderOptions), C.P(ArrowOptions),
                                               C.P(C.Error)]
    lib.tsf_arrow_dataset_stream_open_paths.restype = C.c_int
    lib.tsf_arrow_dataset_stream_open_paths.argtypes = [C.c_ptr, C.P(C.c_str), C.c_size, C.P(C.DatasetOptions),
                                                        C.P(C.DatasetQueryOptions), C.P(ArrowOptions), C.P(C.Error)]
    o = ArrowOptions()
    lib.tsf_arrow_options_init(ctypes.byref(o))
    if o.struct_size != ctypes.sizeof(ArrowOptions):
        raise C.LibraryNotFound("tsfile_c: tsf_arrow_options of the library is %d bytes, this package declares %d"
                                % (o.struct_size, ctypes.sizeof(ArrowOptions)))


_bind()


def _capsule(open_stream, time_unit, device_column, what):
    """A PyCapsule "arrow_array_stream" whose stream open_stream(ptr, arrow options, error) fills."""
    if time_unit not in _UNITS:
        raise ValueError("time_unit for Arrow must be one of ms, us, ns, got %r" % (time_unit,))
    ao = ArrowOptions()
    C.lib.tsf_arrow_options_init(ctypes.byref(ao))
    ao.time_unit = _UNITS[time_unit]
    ao.device_column = 1 if device_column else 0
    ptr = _libc.malloc(ctypes.sizeof(ArrowArrayStream))
    if not ptr:
        raise MemoryError("Arrow stream")
    ctypes.memset(ptr, 0, ctypes.sizeof(ArrowArrayStream))
    err = new_error()
    try:
        check(open_stream(ptr, ao, err), err, what)
    except BaseException:
        _libc.free(ptr)
        raise
    return _capsule_new(ptr, _NAME, ctypes.cast(_destroy, C.c_ptr))


def stream_capsule(path, reader_options, query_options, time_unit="ms", device_column=True):
    """A PyCapsule "arrow_array_stream" of the query query_options over the file at path."""
    def open_stream(ptr, ao, err):
        ao.query = ctypes.pointer(query_options)
        return C.lib.tsf_arrow_stream_open_file(ptr, os.fsencode(path), ctypes.byref(reader_options),
                                                ctypes.byref(ao), ctypes.byref(err))
    return _capsule(open_stream, time_unit, device_column, "Arrow stream of %s" % (path,))


def dataset_stream_capsule(paths, dataset_options, query_options, time_unit="ms", device_column=True):
    """A PyCapsule "arrow_array_stream" of the dataset query query_options over the files paths (a dataset
    the stream opens and owns)."""
    enc = [os.fsencode(p) for p in paths]
    arr = (C.c_str * max(len(enc), 1))(*enc)

    def open_stream(ptr, ao, err):
        return C.lib.tsf_arrow_dataset_stream_open_paths(ptr, arr, len(enc), ctypes.byref(dataset_options),
                                                         ctypes.byref(query_options), ctypes.byref(ao),
                                                         ctypes.byref(err))
    return _capsule(open_stream, time_unit, device_column, "Arrow stream of the dataset")
