"""Build the Cython extension, fastsw.pretokenizers._pretok (the pre-tokenizer and the counter); all other metadata lives in
pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("fastsw.pretokenizers._pretok", ["fastsw/pretokenizers/_pretok.pyx"])],
        language_level=3,
    ),
)
