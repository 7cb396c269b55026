"""Builds the tsfile-c Python package. The package is pure Python over libtsf.so (ctypes); at build time
the shared library is copied next to the package when one is found: the file (or folder) named by
TSFILE_C_LIB, else ../build/libtsf.so (the source tree's Release build). Without one the package looks
for the library at run time (tsfile_c/_capi.py lists where)."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def find_library():
    env = os.environ.get("TSFILE_C_LIB")
    if env:
        path = os.path.join(env, "libtsf.so") if os.path.isdir(env) else env
        if not os.path.exists(path):
            raise SystemExit("TSFILE_C_LIB=%s: no such library" % env)
        return path
    path = os.path.join(os.path.dirname(HERE), "build", "libtsf.so")
    return path if os.path.exists(path) else None


LIB = find_library()


class BuildPy(build_py):
    def run(self):
        super().run()
        if LIB:
            dst = os.path.join(self.build_lib, "tsfile_c", "libtsf.so")
            shutil.copyfile(os.path.realpath(LIB), dst)
            print("tsfile_c: bundling %s" % os.path.realpath(LIB))
        else:
            print("tsfile_c: no libtsf.so found (TSFILE_C_LIB, ../build); the package will look for it at run time")


class BinaryDistribution(Distribution):
    """A wheel that carries libtsf.so is platform-specific."""

    def has_ext_modules(self):
        return LIB is not None


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
