"""The exception the package raises for every failure the C library reports."""
import ctypes

from ._capi import Error, lib


class TsfError(Exception):
    """A tsfile-c call failed: `status` is the library's tsf_status (negative int), `status_name` its
    constant name ("TSF_ECORRUPT"), `message` the library's message naming what failed and where, and
    `call` the operation that failed."""

    def __init__(self, status, message, call=""):
        self.status = int(status)
        self.status_name = (lib.tsf_status_name(self.status) or b"?").decode()
        self.message = message
        self.call = call
        super().__init__("%s%s: %s" % (call + ": " if call else "", self.status_name, message))

    def __reduce__(self):  # pickles (e.g. raised in a Dask worker) with its fields
        return (TsfError, (self.status, self.message, self.call))


def new_error():
    return Error()


def check(status, err, call):
    """Raises TsfError for a non-zero status, with the message the library left in err."""
    if status:
        raise TsfError(status, err.message.decode("utf-8", "replace"), call)


def byref(x):
    return ctypes.byref(x)
