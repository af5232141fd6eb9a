"""The array API namespace, by family: elementwise functions on our kernels
(:mod:`.elementwise_functions`), copying data movement on the rearrange kernels
(:mod:`.data_movement`, with einops patterns from :mod:`.patterns`), everything else delegated
to array-api-compat (:mod:`.delegated`), the float16 and bfloat16 extensions
(:mod:`.extension_dtypes`), and ``__array_namespace_info__`` (:mod:`.info`); these take and
return native arrays. The array object, ``infini_cupy.Array`` (:mod:`.array`, operators in
:mod:`.operators`, devices in :mod:`.device`), and the public functions that wrap and unwrap
it with the standard's signatures (:mod:`.boundary`, from :mod:`.signatures`).
``infini_cupy/__init__.py`` builds the namespace from them."""
