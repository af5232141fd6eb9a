"""Generic array-API code that nobody here wrote, given Arrays: it discovers infini_cupy from
the array (``x.__array_namespace__()`` / ``array_namespace(x)``), gives NumPy's answers, and
runs our kernels (launches counted).

Consumers: ``einops`` (its array API mode, and its own functions through our backend),
``array_api_extra``, SciPy (its array-API mode) and
scikit-learn (``array_api_dispatch``), unmodified.
"""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.runtime.launch import recording

einops_array_api = pytest.importorskip("einops.array_api")
xpx = pytest.importorskip("array_api_extra")

rng = np.random.default_rng(3)



def check(got, expected, to_host):
    assert type(got) is xp.Array, type(got)  # the consumer stayed in our namespace
    host = to_host(got)
    assert host.shape == np.shape(expected)
    np.testing.assert_allclose(host, expected, rtol=1e-12, atol=1e-12)


def test_einops_array_api(arr, to_host):
    h = rng.standard_normal((2, 3, 4))
    x = arr(h)
    assert einops_array_api.rearrange.__module__.startswith("einops")
    with recording() as launches:
        check(einops_array_api.rearrange(x, "b h w -> b (w h)"),
              h.transpose(0, 2, 1).reshape(2, 12), to_host)
    assert len(launches) == 1  # the merge needs one copy: our rearrange kernel
    check(einops_array_api.rearrange(x, "b h w -> w b h"), h.transpose(2, 0, 1), to_host)
    check(einops_array_api.reduce(x, "b h w -> b w", "max"), h.max(axis=1), to_host)
    check(einops_array_api.reduce(x, "b (h h2) w -> b w", "sum", h2=3), h.sum(axis=1), to_host)
    check(einops_array_api.repeat(x, "b h w -> b h (w c)", c=2), np.repeat(h, 2, axis=2), to_host)
    packed, shapes = einops_array_api.pack([x, x[:, 0]], "b * w")
    check(packed, np.concatenate([h, h[:, :1]], axis=1), to_host)
    first, second = einops_array_api.unpack(packed, shapes, "b * w")
    check(second, h[:, 0], to_host)


EINOPS_CASES = [  # (einops function, pattern or arguments, keywords)
    ("rearrange", "b h w -> b (w h)", {}),
    ("rearrange", "b h w -> w b h", {}),
    ("rearrange", "b (h h2) w -> (b h2) w h", {"h2": 3}),
    ("rearrange", "b h w -> b 1 h w ()", {}),
    ("rearrange", "... w -> w (...)", {}),
    ("reduce", "b h w -> b w", {"reduction": "max"}),
    ("reduce", "b h w -> h", {"reduction": "sum"}),
    ("reduce", "b h w -> b h 1", {"reduction": "mean"}),
    ("reduce", "b (h h2) w -> b h w", {"reduction": "min", "h2": 3}),
    ("reduce", "b h w -> w", {"reduction": "prod"}),
    ("repeat", "b h w -> b h (w c)", {"c": 2}),
    ("repeat", "b h w -> c b h w", {"c": 3}),
]


@pytest.mark.parametrize("function, pattern, keywords", EINOPS_CASES,
                         ids=[f"{f} {p}" for f, p, _ in EINOPS_CASES])
def test_einops_takes_arrays_by_itself(function, pattern, keywords, on, to_host):
    """Plain ``einops.rearrange``/``reduce``/``repeat`` on Arrays find the namespace's einops
    backend themselves (``infini_cupy.namespace.einops_backend``): NumPy's einops answers, Arrays on
    the same device out, one of our copies where einops' reshape of a transposed view needs
    one."""
    einops = pytest.importorskip("einops")
    h = rng.standard_normal((2, 6, 4))
    x = on(h)
    with recording() as launches:
        got = getattr(einops, function)(x, pattern, **keywords)
    expected = getattr(einops, function)(h, pattern, **keywords)
    check(got, expected, to_host)
    assert got.device == x.device
    if function == "rearrange":
        copies = not np.shares_memory(expected, h)  # einops on NumPy copies exactly there
        assert len(launches) == (1 if copies and x.device != "cpu" else 0)


def test_einops_pack_unpack_einsum_and_lists_of_arrays(on, to_host):
    einops = pytest.importorskip("einops")
    h = rng.standard_normal((2, 3, 4))
    x = on(h)
    packed, shapes = einops.pack([x, x[:, 0]], "b * w")
    check(packed, np.concatenate([h, h[:, :1]], axis=1), to_host)
    first, second = einops.unpack(packed, shapes, "b * w")
    check(first, h, to_host)
    check(second, h[:, 0], to_host)
    check(einops.einsum(x, x, "b h w, b g w -> b h g"), np.einsum("bhw,bgw->bhg", h, h),
          to_host)
    check(einops.rearrange([x, x], "n b h w -> b (n h) w"),
          np.stack([h, h]).transpose(1, 0, 2, 3).reshape(2, 6, 4), to_host)
    with pytest.raises(NotImplementedError, match="mean"):  # einops' own rule for integers
        einops.reduce(on(np.arange(6).reshape(2, 3)), "a b -> a", "mean")


# (name, call on an Array or NumPy array, whether our kernels run)
EXTRA_CASES = [
    ("cov", lambda m, a: m.cov(a[0]), True),
    ("kron", lambda m, a: m.kron(a[0], a[1]), True),
    ("pad", lambda m, a: m.pad(a, 1), True),
    ("sinc", lambda m, a: m.sinc(a), True),
    ("create_diagonal", lambda m, a: m.create_diagonal(a[0, 0]), True),
    ("isclose", lambda m, a: m.isclose(a, a + 1e-9), True),
    ("setdiff1d", lambda m, a: m.setdiff1d(a[0, 0], a[0, 0, :2]), True),
    ("apply_where", lambda m, a: m.apply_where(a > 0, a, lambda v: v * v, fill_value=0.0), True),
    ("atleast_nd", lambda m, a: m.atleast_nd(a[0, 0], ndim=3), False),
    ("nunique", lambda m, a: m.nunique(a), False),
]


@pytest.mark.parametrize("name, call, ours", EXTRA_CASES, ids=[c[0] for c in EXTRA_CASES])
def test_array_api_extra(arr, to_host, name, call, ours):
    h = rng.standard_normal((2, 3, 4))
    expected = np.asarray(call(xpx, h))  # the same function on NumPy arrays: the oracle
    with recording() as launches:
        got = call(xpx, arr(h))
    check(got, expected, to_host)
    assert bool(launches) == ours, [r.name for r in launches]


def test_array_api_extra_at_writes_through_our_setitem(arr, to_host):
    h = rng.standard_normal((3, 4))
    x = arr(h)
    with recording() as launches:
        y = xpx.at(x)[1, ::2].set(5.0, copy=True)
    expected = h.copy()
    expected[1, ::2] = 5.0
    check(y, expected, to_host)
    check(x, h, to_host)  # copy=True left x alone
    assert len(launches) >= 2  # the copy, and x[key] = v as one strided copy
    y = xpx.at(x)[x > 0].add(1.0, copy=True)
    check(y, np.where(h > 0, h + 1, h), to_host)


SCIPY_ON_EMULATOR_ARRAYS = """
import numpy as np, infini_cupy as xp
from infini_cupy.runtime.launch import recording
from scipy import special, stats
rng = np.random.default_rng(5)
h = rng.standard_normal((40, 3))
with xp.backend("emulate"), recording() as launches:
    x = xp.asarray(h)
    for got, expected in ((special.expit(x), special.expit(h)), (stats.zscore(x), stats.zscore(h)),
                          (special.logsumexp(x, axis=0), special.logsumexp(h, axis=0))):
        assert type(got) is xp.Array and got.device == "emulator", type(got)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-14)
assert launches, "scipy ran without our kernels"
print("ok")
"""


SKLEARN_ON_EMULATOR_ARRAYS = """
import numpy as np, sklearn, infini_cupy as xp
from infini_cupy.runtime.launch import recording
from sklearn import feature_selection, metrics, preprocessing
rng = np.random.default_rng(6)
h, target = rng.standard_normal((50, 4)), rng.standard_normal(50)
labels = (target > 0).astype(np.int64)
expected = [feature_selection.r_regression(h, target),
            preprocessing.StandardScaler().fit_transform(h), metrics.r2_score(target, h[:, 0]),
            metrics.roc_auc_score(labels, h[:, 0])]
sklearn.set_config(array_api_dispatch=True)
with xp.backend("emulate"), recording() as launches:
    x, y = xp.asarray(h), xp.asarray(target)
    got = [feature_selection.r_regression(x, y),  # NumPy-written: x.mean(axis=0) on an Array
           preprocessing.StandardScaler().fit_transform(x), metrics.r2_score(y, x[:, 0]),
           # NumPy's forms: xp.where(mask)[0], xp.diff(fps, 2)
           metrics.roc_auc_score(xp.asarray(labels), x[:, 0])]
for g, e in zip(got, expected):
    if isinstance(g, xp.Array):
        assert g.device == "emulator", g.device
        g = np.asarray(g)
    np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
assert launches, "scikit-learn ran without our kernels"
print("ok")
"""


def _run_in_array_api_mode(code: str, backend_name: str) -> None:
    """``code`` in a subprocess with SciPy's array-API mode on (``SCIPY_ARRAY_API=1``, read at
    import; scikit-learn's array-API dispatch needs it); it prints ``ok``."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    if backend_name != "emulate":
        pytest.skip("runs on emulator Arrays")
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, SCIPY_ARRAY_API="1",
               PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


def test_scipy_array_api_on_emulator_arrays(backend_name):
    """SciPy's array-API mode finds infini_cupy from emulator Arrays, keeps them Arrays,
    matches SciPy on NumPy and runs our kernels."""
    pytest.importorskip("scipy")
    _run_in_array_api_mode(SCIPY_ON_EMULATOR_ARRAYS, backend_name)


def test_sklearn_array_api_dispatch_on_emulator_arrays(backend_name):
    """scikit-learn with ``array_api_dispatch=True`` on emulator Arrays: its array-API code,
    its NumPy-written code (``r_regression`` calls ``x.mean``) and NumPy's call forms
    (``roc_auc_score``) give its answers on NumPy and run our kernels (its own array-API tests: ``test_sklearn_suite.py``)."""
    pytest.importorskip("sklearn")
    _run_in_array_api_mode(SKLEARN_ON_EMULATOR_ARRAYS, backend_name)
