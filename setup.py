"""Build the Cython extension; all other metadata lives in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("fastsw._pretok", ["fastsw/_pretok.pyx"]),
         Extension("fastsw._count", ["fastsw/_count.pyx"])],
        language_level=3,
    ),
)
