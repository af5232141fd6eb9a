"""scikit-learn's array-API tests on Arrays: its ``array_api_strict`` parametrization (devices
``"CPU_DEVICE"`` and ``"device1"``, in the mixed-namespace pairs too) gets infini_cupy,
through the stand-in, on our ``cpu`` and ``emulator`` devices. Loaded with ``-p sklearn_devices`` after ``-p array_api_strict``."""

import sys

DEVICE_FOR = {"CPU_DEVICE": "cpu", "device1": "emulator"}


def _our_devices(combinations):
    """``yield_namespace_device_dtype_combinations`` with array_api_strict's devices ours."""
    def renamed(*args, **kwargs):
        for namespace, device, dtype in combinations(*args, **kwargs):
            if namespace == "array_api_strict":
                device = DEVICE_FOR.get(device, device)
            yield namespace, device, dtype
    return renamed


def _our_mixed_devices(permutations):
    """``yield_mixed_namespace_input_permutations`` (pairs of namespace and device, with an
    id) with array_api_strict's devices ours (``array_api_strict to torch cpu``: an Array on
    the emulator, converted to a torch CPU tensor through DLPack)."""
    def renamed(*args, **kwargs):
        for *pair, label in permutations(*args, **kwargs):
            yield (*(p._replace(device=DEVICE_FOR.get(p.device, p.device))
                     if p.xp == "array_api_strict" else p for p in pair), label)
    return renamed


def pytest_configure(config):
    from sklearn.utils import _array_api

    for name, ours in (("yield_namespace_device_dtype_combinations", _our_devices),
                       ("yield_mixed_namespace_input_permutations", _our_mixed_devices)):
        original = getattr(_array_api, name, None)
        if original is None:  # (an older scikit-learn without it)
            continue
        renamed = ours(original)
        # the modules imported before this plugin (sklearn's conftest: estimator_checks) hold
        # it too
        for module in list(sys.modules.values()):
            if getattr(module, name, None) is original:
                setattr(module, name, renamed)
