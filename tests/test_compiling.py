"""fastsw._compiling: the on-disk cache lookup and the background process that compiles kernels into it. Each
test runs in a new process with an empty Numba cache (a fresh install); no wall clock is looked at."""

import json
import os
import subprocess
import sys
from pathlib import Path

import fastsw

ROOT = str(Path(fastsw.__file__).resolve().parents[1])


def fresh_cache_run(code: str, tmp_path):
    """The JSON last printed by ``code`` run in a new process with an empty Numba cache (a fresh install)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    for name in ("FASTSW_PUREPYTHON", "NUMBA_DISABLE_JIT"):
        env.pop(name, None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_a_background_process_fills_this_process_cache(tmp_path):
    # The started process compiles what its function compiles (the candidate cut), into this process's cache:
    # here it is then in the disk cache, not compiled here, and the merge loop (not asked for) is in neither.
    code = (
        "import json\nfrom fastsw import _compiling\nfrom fastsw.trainers import bpe_fast, bpe_kernels as K\n"
        "before = _compiling.ready(bpe_fast.PHASE2_KERNELS)\n"
        "ok = _compiling.finish(_compiling.start('fastsw.trainers.bpe_fast:warmup_phase2'))\n"
        "print(json.dumps([before, ok, _compiling.ready(bpe_fast.PHASE2_KERNELS), "
        "bool(K._cut_candidates.signatures), _compiling.ready([K._merge_loop])]))"
    )
    assert fresh_cache_run(code, tmp_path) == [False, True, True, False, False]


def test_stop_ends_and_reaps_the_process(tmp_path):
    code = (
        "import json, os\nfrom fastsw import _compiling\n"
        "p = _compiling.start('fastsw.trainers.bpe_fast:warmup_ahead')\n_compiling.stop(p)\n"
        "try:\n    os.waitpid(-1, os.WNOHANG)\n    children = True\nexcept ChildProcessError:\n    children = False\n"
        "print(json.dumps([p.returncode, children]))"
    )
    returncode, children = fresh_cache_run(code, tmp_path)
    assert returncode != 0 and not children


def test_a_failed_process_says_so(tmp_path):
    code = (
        "import json\nfrom fastsw import _compiling\n"
        "print(json.dumps(_compiling.finish(_compiling.start('fastsw.trainers.bpe_fast:no_such_function'))))"
    )
    assert fresh_cache_run(code, tmp_path) is False


def test_loading_the_merge_loop_leaves_scipy_linalg_unimported_and_numba_blas_as_numba_finds_it():
    # Loading the merge loop beside the counting (KernelLoad) makes Numba import its NumPy implementations without
    # their BLAS probe (which imports scipy.linalg); Numba's BLAS answer is still the one its own probe gives (in a
    # process without fastsw), and a kernel that uses BLAS compiles and runs where SciPy is installed, and fails
    # with Numba's own error where it is not.
    # (This process's Numba cache: the merge loop loads from it, or compiles once.)
    dot = (
        "dot = njit(lambda a, b: np.dot(a, b))\nx = np.arange(4.0)\n"
        "try:\n    d = float(dot(x, x))\nexcept Exception as e:\n    d = type(e).__name__\n"
    )
    with_fastsw = (
        "import json, sys\nimport numpy as np\nfrom numba import njit\n"
        "from fastsw import _compiling\nfrom fastsw.trainers import bpe_fast\n"
        "before = 'numba.np.arraymath' in sys.modules\n"
        "bpe_fast.KernelLoad().wait()\nfrom numba.np import arraymath\n"
        "after = 'scipy.linalg' in sys.modules\n" + dot + "print(json.dumps([before, after, arraymath._HAVE_BLAS, "
        "_compiling.blas_available(), d]))"
    )
    numba_alone = (
        "import json\nimport numpy as np\nfrom numba import njit\nfrom numba.np import arraymath\n"
        + dot
        + "print(json.dumps([arraymath._HAVE_BLAS, d]))"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    for name in ("FASTSW_PUREPYTHON", "NUMBA_DISABLE_JIT"):
        env.pop(name, None)
    runs = [
        subprocess.run([sys.executable, "-c", c], capture_output=True, text=True, env=env, timeout=600)
        for c in (with_fastsw, numba_alone)
    ]
    for r in runs:
        assert r.returncode == 0, r.stderr
    before, after, have_blas, available, dot_result = json.loads(runs[0].stdout.splitlines()[-1])
    numba_have_blas, numba_dot = json.loads(runs[1].stdout.splitlines()[-1])
    assert not before and not after
    assert have_blas is available is numba_have_blas
    assert dot_result == numba_dot == (14.0 if have_blas else "ImportError")


def test_processes_compiling_the_same_kernels_take_turns(tmp_path):
    # While this process holds the compile lock of the candidate cut, a process started to compile it waits for
    # the lock (the kernel table's /proc/locks lists it as blocked) and compiles nothing meanwhile; released, it
    # compiles the kernels into the cache and ends well.
    code = (
        "import json, time\nfrom fastsw import _compiling\nfrom fastsw.trainers import bpe_fast\n"
        "def blocked(pid):\n"
        "    with open('/proc/locks') as f:\n"
        "        return any('->' in line and line.split()[5] == str(pid) for line in f)\n"
        "function = 'fastsw.trainers.bpe_fast:warmup_phase2'\n"
        "with _compiling.compile_lock(function):\n"
        "    p = _compiling.start(function)\n"
        "    deadline = time.monotonic() + 300\n"
        "    while not blocked(p.pid) and p.poll() is None and time.monotonic() < deadline:\n"
        "        time.sleep(0.01)\n"
        "    seen = [blocked(p.pid), p.poll(), _compiling.ready(bpe_fast.PHASE2_KERNELS)]\n"
        "seen += [_compiling.finish(p), _compiling.ready(bpe_fast.PHASE2_KERNELS)]\n"
        "print(json.dumps(seen))"
    )
    assert fresh_cache_run(code, tmp_path) == [True, None, False, True, True]


STALE_PACKAGE = {
    "__init__.py": "",
    "helpers.py": "from numba import njit\n\n\n@njit\ndef value():\n    return 1\n",
    "stamped.py": (
        "from numba import njit\n\nfrom fastsw._compiling import stamp_module\nfrom pkg.helpers import value\n\n\n"
        "@njit(cache=True)\ndef kernel():\n    return value()\n\n\nstamp_module(__name__)\n"
    ),
    "unstamped.py": "from numba import njit\n\nfrom pkg.helpers import value\n\n\n@njit(cache=True)\ndef kernel():\n"
    "    return value()\n",
}


def test_a_change_of_a_called_file_makes_the_cache_entry_stale(tmp_path):
    # Numba stamps a kernel's cache entry with its own file alone, yet the entry holds the code of the jitted
    # functions it calls from other files: after a change there, a kernel left to Numba's stamp (unstamped.py) runs
    # the old code from the cache; one stamped with its callees' files (stamp_module) compiles the new code.
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name, text in STALE_PACKAGE.items():
        (pkg / name).write_text(text)
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); import pkg.stamped, pkg.unstamped\n"
        "print(json.dumps([pkg.stamped.kernel(), pkg.unstamped.kernel()]))"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"), NUMBA_DISABLE_JIT="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))

    def run():
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.splitlines()[-1])

    assert run() == [1, 1]  # compiled, and written to the cache
    (pkg / "helpers.py").write_text(STALE_PACKAGE["helpers.py"].replace("return 1", "return 2"))
    assert run() == [2, 1]


def test_every_kernel_is_stamped_with_the_files_it_calls():
    # every fastsw module that defines kernels: each kernel's stamp is Numba's own followed by the hashes of the
    # other files whose jitted code it may call (the encoding kernels for MinGram's, BPE's for parity-aware BPE's)
    import importlib
    import pkgutil

    from fastsw._compiling import _jitted_source, callee_files, source_hash

    names = [m.name for m in pkgutil.walk_packages(fastsw.__path__, "fastsw.") if "kernels" in m.name]
    names += ["fastsw.pretokenizers.script_v3"]
    stamped = {}
    for name in names:
        module = importlib.import_module(name)
        kernels = [v for v in vars(module).values() if _jitted_source(v, "fastsw") == name]
        if not kernels or not hasattr(kernels[0], "signatures"):
            continue  # NUMBA_DISABLE_JIT=1: plain functions, nothing is cached
        files = callee_files(name)
        for kernel in kernels:
            stamp = kernel._cache._cache_file._source_stamp
            assert stamp[1:] == tuple(map(source_hash, files)), (name, kernel.__name__)
        stamped[name] = {os.path.basename(f) for f in files}
    if stamped:
        assert "encode_kernels.py" in stamped["fastsw.trainers.mingram_kernels"]
        assert "bpe_kernels.py" in stamped["fastsw.trainers.parity_kernels"]
        assert "encode_kernels.py" in stamped["fastsw.pretokenizers.script_v3"]
