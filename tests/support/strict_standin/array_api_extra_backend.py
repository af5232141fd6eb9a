"""array-api-extra's own tests on Arrays: its ``array_api_strict`` backend gets infini_cupy
through the stand-in. Loaded with ``-p array_api_extra_backend`` after ``-p array_api_strict``.

Its fixtures call array_api_strict's flag setter on the namespace that ``array_namespace``
returns (infini_cupy itself, here), and ask for ``Device("device1")``, array_api_strict's
second device: this plugin gives them the stand-in's setter and our other CPU device (``cpu``
for a suite on emulator Arrays, ``emulator`` for one on ``cpu`` Arrays)."""

import pytest

OTHER_DEVICE = {"emulator": "cpu", "cpu": "emulator"}  # the one not in force
MARKERS = ("skip_xp_backend(library, *, reason=None): skip the test on that backend",
           "xfail_xp_backend(library, *, reason=None, strict=None): xfail it there",
           "thread_unsafe: the test is not thread-safe")


def pytest_configure(config):
    import array_api_strict
    import infini_cupy

    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    # set on the namespace of this test process only: array-api-extra's xp fixture calls it
    infini_cupy.set_array_api_strict_flags = array_api_strict.set_array_api_strict_flags


def _other_device(fixture):
    """array-api-extra's ``device`` fixture, with our other device for array_api_strict."""
    def device(library, xp):
        if library.value == "array_api_strict":
            return xp.Device(OTHER_DEVICE[str(xp.empty(0).device)])
        return fixture(library, xp)
    device.replaced = True
    return device


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef, request):
    func = fixturedef.func
    if (fixturedef.argname == "device" and func.__module__.startswith("array_api_extra")
            and not getattr(func, "replaced", False)):
        fixturedef.func = _other_device(func)
