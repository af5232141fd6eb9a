"""``array_api_strict._array_object.Array``, which xarray's tests import: infini_cupy's."""

from infini_cupy import Array  # noqa: F401
