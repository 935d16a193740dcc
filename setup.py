"""Build the Cython extension, fastsw._pretok (the pre-tokenizer and the counter); all other metadata lives in
pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("fastsw._pretok", ["fastsw/_pretok.pyx"])],
        language_level=3,
    ),
)
