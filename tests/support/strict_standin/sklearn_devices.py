"""scikit-learn's array-API tests on Arrays: its ``array_api_strict`` parametrization (devices
``"CPU_DEVICE"`` and ``"device1"``) gets infini_cupy, through the stand-in, on our ``cpu`` and
``emulator`` devices. Loaded with ``-p sklearn_devices`` after ``-p array_api_strict``."""

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


def pytest_configure(config):
    from sklearn.utils import _array_api

    combinations = _array_api.yield_namespace_device_dtype_combinations
    renamed = _our_devices(combinations)
    # the modules imported before this plugin (sklearn's conftest: estimator_checks) hold it too
    for module in list(sys.modules.values()):
        if getattr(module, "yield_namespace_device_dtype_combinations", None) is combinations:
            module.yield_namespace_device_dtype_combinations = renamed
