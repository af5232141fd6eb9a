// Entry points of an emulated kernel library: the generated wrapper defines, per name
// expression, emu_entry_<i>(void **args) (unpacks cuLaunchKernel-style packed arguments into
// the kernel's typed parameters; run once per CUDA thread) and emu_params_<i>() (the
// parameter count then each parameter's size, so the launcher can reject wrong arguments).
#pragma once

#include <type_traits>
#include <utility>

namespace emu {

template <typename... Params, size_t... I>
__forceinline__ void invoke_at(void (*kernel)(Params...), void **args, std::index_sequence<I...>) {
    kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<Params>> *>(args[I])...);
}

template <typename... Params>
__forceinline__ void invoke(void (*kernel)(Params...), void **args) {
    invoke_at(kernel, args, std::index_sequence_for<Params...>{});
}

template <typename... Params>
const unsigned *param_sizes(void (*)(Params...)) {
    static const unsigned sizes[] = {unsigned(sizeof...(Params)), unsigned(sizeof(Params))...};
    return sizes;
}

}  // namespace emu

#define EMU_EXPORT extern "C" __attribute__((visibility("default")))
