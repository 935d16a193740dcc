"""One switch, one meaning: FASTSW_PUREPYTHON is read in one place (fastsw._config) by every part."""

import pytest

import fastsw
from fastsw import _config
from fastsw.corpus import counting


@pytest.mark.parametrize("value, pure", [("", False), ("0", False), ("1", True), ("yes", True)])
def test_every_part_reads_the_switch_the_same_way(monkeypatch, value, pure):
    monkeypatch.setenv("FASTSW_PUREPYTHON", value)
    assert _config.pure_python() is pure
    want = "python" if pure else "numba"
    tok = fastsw.train(["a cat sat on a mat", "the cat"], algo="bpe", vocab_size=250)
    assert tok.training_info["backend"] == want  # training
    assert tok._resolve_backend(None) == want  # encoding
    assert counting.native_counting(fastsw.Pretokenizer()) is not pure  # counting


def test_unset_is_not_pure(monkeypatch):
    monkeypatch.delenv("FASTSW_PUREPYTHON", raising=False)
    assert _config.pure_python() is False
    assert _config.resolve_backend("auto") == "numba"


@pytest.mark.parametrize("bad", ["fast", "Numba", None])
def test_backend_names_are_checked_once(bad):
    with pytest.raises(ValueError, match="is not one of auto, numba, python"):
        fastsw.train(["a b"], algo="bpe", vocab_size=260, backend=bad)
    tok = fastsw.train(["a b"], algo="bpe", vocab_size=244)
    with pytest.raises(ValueError, match="is not one of auto, numba, python"):
        tok.encode("a", backend=bad or "x")
