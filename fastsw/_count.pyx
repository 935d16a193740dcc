# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled pretoken counter; ``fastsw.counting._count_document_py`` is its pure-Python twin.

Both functions update one count table in place and must leave identical tables behind. The table
(see :class:`fastsw.counting.CountTable`) is:

* ``index``: dict, pretoken ``str`` -> its index (insertion order);
* ``pretokens``: list of ``str`` in index order;
* ``counts``: ``array('q')`` (int64), one count per pretoken;
* ``has_letter``: ``array('b')``, 1 if the pretoken contains a letter (the phase-2 test);
* ``runs``: dict, tuple of pretoken indices (a maximal run of >= 2 letter pretokens) -> count.

Design note: a document is handled in two passes. The first maps each pretoken to its index with
one borrowed dict lookup and appends unseen pretokens (calling ``letter_test`` once per new
pretoken, so the regex runs once per distinct pretoken, not per occurrence). The arrays are then
grown once, and the second pass increments int64 counts and cuts letter runs over a C array of
indices, building a Python tuple only per run.
"""
from cpython cimport array
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.ref cimport PyObject, Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.long cimport PyLong_FromSsize_t, PyLong_AsSsize_t

import array as _array


cdef extern from "Python.h":
    PyObject* PyDict_GetItemWithError(object d, object key) except? NULL


cdef inline void _add_run(dict runs, Py_ssize_t* ids, Py_ssize_t start, Py_ssize_t stop) except *:
    cdef Py_ssize_t k
    cdef tuple key = PyTuple_New(stop - start)
    for k in range(start, stop):
        value = PyLong_FromSsize_t(ids[k])
        Py_INCREF(value)  # PyTuple_SET_ITEM steals a reference
        PyTuple_SET_ITEM(key, k - start, value)
    old = runs.get(key)
    runs[key] = 1 if old is None else old + 1


def count_document(list pieces, dict index, list pretokens, array.array counts,
                   array.array has_letter, dict runs, bint collect_runs, letter_test):
    """Add one document's ``pieces`` (its pretokens, in order) to the table.

    ``counts`` must be an ``array('q')`` and ``has_letter`` an ``array('b')``, both as long as
    ``pretokens``. ``letter_test(piece) -> bool`` is called for pretokens not seen before.
    """
    cdef Py_ssize_t n = len(pieces), k, i, n_old = len(pretokens), n_new, start
    cdef PyObject* found
    if counts.ob_descr.typecode != b'q' or has_letter.ob_descr.typecode != b'b':
        raise TypeError("counts must be array('q') and has_letter array('b')")
    if len(counts) != n_old or len(has_letter) != n_old:
        raise ValueError("counts and has_letter must have one entry per pretoken")
    if n == 0:
        return
    cdef Py_ssize_t* ids = <Py_ssize_t*> PyMem_Malloc(n * sizeof(Py_ssize_t))
    if ids == NULL:
        raise MemoryError()
    cdef list new_letters = []
    cdef long long* c
    cdef signed char* letter
    try:
        # pass 1: pretoken -> index, appending unseen pretokens
        for k in range(n):
            piece = pieces[k]
            found = PyDict_GetItemWithError(index, piece)
            if found == NULL:
                i = len(pretokens)
                index[piece] = i
                pretokens.append(piece)
                new_letters.append(1 if letter_test(piece) else 0)
            else:
                i = PyLong_AsSsize_t(<object> found)
            ids[k] = i
        n_new = len(pretokens)
        if n_new > n_old:
            array.resize_smart(counts, n_new)
            array.resize_smart(has_letter, n_new)
            c = counts.data.as_longlongs
            letter = has_letter.data.as_schars
            for i in range(n_old, n_new):
                c[i] = 0
                letter[i] = new_letters[i - n_old]
        c = counts.data.as_longlongs
        letter = has_letter.data.as_schars
        # pass 2: counts and letter runs
        for k in range(n):
            c[ids[k]] += 1
        if collect_runs:
            start = -1
            for k in range(n):
                if letter[ids[k]]:
                    if start < 0:
                        start = k
                elif start >= 0:
                    if k - start >= 2:
                        _add_run(runs, ids, start, k)
                    start = -1
            if start >= 0 and n - start >= 2:
                _add_run(runs, ids, start, n)
    finally:
        PyMem_Free(ids)


def merge_pretokens(dict index, list pretokens, list counts, list has_letter, list src_pretokens, src_counts,
                    src_letter):
    """Add a table's pretokens (``src_*``, any sequences; counts as ints, letters as 0/1) to a
    :class:`fastsw.counting.Counts`' ``index``/``pretokens``/``counts``/``has_letter`` lists.

    Returns ``remap``, an ``array('q')``: source index -> index in the destination.
    """
    cdef Py_ssize_t n = len(src_pretokens), j, i
    cdef PyObject* found
    cdef array.array remap = array.clone(array.array('q'), n, zero=False)
    cdef long long* r = remap.data.as_longlongs
    for j in range(n):
        piece = src_pretokens[j]
        found = PyDict_GetItemWithError(index, piece)
        if found == NULL:
            i = len(pretokens)
            index[piece] = i
            pretokens.append(piece)
            counts.append(int(src_counts[j]))
            has_letter.append(bool(src_letter[j]))
        else:
            i = PyLong_AsSsize_t(<object> found)
            counts[i] = counts[i] + src_counts[j]
        r[j] = i
    return remap


def merge_runs(dict runs, dict src_runs, array.array remap):
    """Add ``src_runs`` (tuple of source indices -> count) to ``runs``, re-indexed through ``remap``
    (``array('q')`` from :func:`merge_pretokens`)."""
    cdef Py_ssize_t n = len(remap), k, m, idx
    cdef long long* r = remap.data.as_longlongs
    cdef tuple run, key
    if remap.ob_descr.typecode != b'q':
        raise TypeError("remap must be array('q')")
    for run_obj, count in src_runs.items():
        run = <tuple> run_obj
        m = len(run)
        key = PyTuple_New(m)
        for k in range(m):
            idx = PyLong_AsSsize_t(run[k])
            if idx < 0 or idx >= n:
                raise IndexError(f"letter run index {idx} is out of range")
            value = PyLong_FromSsize_t(r[idx])
            Py_INCREF(value)
            PyTuple_SET_ITEM(key, k, value)
        old = runs.get(key)
        runs[key] = count if old is None else old + count


def flatten_runs(dict runs):
    """``runs`` (tuple of indices -> count) as three ``array('q')``: the indices of all runs
    concatenated, each run's length, each run's count (in the dict's order). Cheap to send between
    processes; :func:`merge_flat_runs` reads it back."""
    cdef Py_ssize_t n_runs = len(runs), total = 0, k, m, pos = 0, r = 0
    for run_obj in runs:
        total += len(<tuple> run_obj)
    cdef array.array flat = array.clone(array.array('q'), total, zero=False)
    cdef array.array lengths = array.clone(array.array('q'), n_runs, zero=False)
    cdef array.array counts = array.clone(array.array('q'), n_runs, zero=False)
    cdef long long* f = flat.data.as_longlongs
    cdef tuple run
    for run_obj, count in runs.items():
        run = <tuple> run_obj
        m = len(run)
        for k in range(m):
            f[pos + k] = PyLong_AsSsize_t(run[k])
        pos += m
        lengths.data.as_longlongs[r] = m
        counts.data.as_longlongs[r] = count
        r += 1
    return flat, lengths, counts


def merge_flat_runs(dict runs, array.array flat, array.array lengths, array.array counts, array.array remap):
    """Add runs given by :func:`flatten_runs` to ``runs``, re-indexed through ``remap``."""
    cdef Py_ssize_t n_remap = len(remap), n_runs = len(lengths), r, k, m, pos = 0, idx
    cdef Py_ssize_t n_flat = len(flat)
    cdef long long* f = flat.data.as_longlongs
    cdef long long* rm = remap.data.as_longlongs
    cdef tuple key
    for arr in (flat, lengths, counts, remap):
        if (<array.array> arr).ob_descr.typecode != b'q':
            raise TypeError("flat, lengths, counts and remap must be array('q')")
    if len(counts) != n_runs:
        raise ValueError("lengths and counts differ in length")
    for r in range(n_runs):
        m = lengths.data.as_longlongs[r]
        if m < 0 or pos + m > n_flat:
            raise ValueError("run lengths do not match the flat indices")
        key = PyTuple_New(m)
        for k in range(m):
            idx = f[pos + k]
            if idx < 0 or idx >= n_remap:
                raise IndexError(f"letter run index {idx} is out of range")
            value = PyLong_FromSsize_t(rm[idx])
            Py_INCREF(value)
            PyTuple_SET_ITEM(key, k, value)
        pos += m
        count = counts.data.as_longlongs[r]
        old = runs.get(key)
        runs[key] = count if old is None else old + count
