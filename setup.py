"""Build the Cython extension; all other metadata lives in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("fastsw._chunk", ["fastsw/_chunk.pyx"])],
        language_level=3,
    ),
)
