#pragma once
// Names that bindings show in signatures and .pyi stubs for arguments they take as a plain
// nb::handle / nb::object and convert themselves: tag types that are never instantiated, each with
// the stub text nanobind prints for it (used through nb::typed<nb::handle, stub::X> aliases, e.g. in
// nn_bind.h, optim_args.h, toolkit_args.h), so help() and the stubs say what is accepted, not `object`.
#include <nanobind/nanobind.h>

#include "convert.h"

namespace stpy::stub {
struct ArrayLike {};       // a tensor or data st.tensor() accepts (NumPy arrays, nested sequences, numbers)
struct Self {};            // the object the method was called on
struct PackedSequence {};  // spiraltorch.nn.utils.rnn.PackedSequence
struct DeviceLike {};      // a device name or st.device
struct KeyMapLike {};      // a checkpoint key map (nn_handoff.cpp's key_map_from_py)
struct FloatSeq {};        // any iterable of numbers
struct NpArray {};         // numpy.typing.ArrayLike (converted through numpy)
struct NpDtype {};         // numpy.typing.DTypeLike (a name, a NumPy dtype or scalar type)
struct Any {};             // any value
struct AtlasFrame {};      // spiraltorch.telemetry.AtlasFrame (a Python class)
struct AtlasRoute {};      // spiraltorch.telemetry.AtlasRoute (a Python class; only push_bounded is called)
struct NdArray {};         // numpy.ndarray
}  // namespace stpy::stub

namespace nanobind::detail {
#define ST_STUB_NAME(tag, text)         \
  template <>                           \
  struct type_caster<stpy::stub::tag> { \
    static constexpr auto Name = text;  \
  };
ST_STUB_NAME(ArrayLike, const_name<stpy::Tensor>() + const_name(" | numpy.typing.ArrayLike"))
ST_STUB_NAME(Self, const_name("typing.Self"))
ST_STUB_NAME(PackedSequence, const_name("spiraltorch.nn.utils.rnn.PackedSequence"))
ST_STUB_NAME(DeviceLike, const_name("str | spiraltorch.accelerator.device"))
ST_STUB_NAME(KeyMapLike,
             const_name("collections.abc.Mapping[str, str | dict[str, str]] | "
                        "collections.abc.Sequence[tuple[str, str] | tuple[str, str, str] | dict[str, str]]"))
ST_STUB_NAME(FloatSeq, const_name("collections.abc.Iterable[float]"))
ST_STUB_NAME(NpArray, const_name("numpy.typing.ArrayLike"))
ST_STUB_NAME(NpDtype, const_name("numpy.typing.DTypeLike"))
ST_STUB_NAME(Any, const_name("typing.Any"))
ST_STUB_NAME(AtlasFrame, const_name("spiraltorch.telemetry.AtlasFrame"))
ST_STUB_NAME(AtlasRoute, const_name("spiraltorch.telemetry.AtlasRoute"))
ST_STUB_NAME(NdArray, const_name("numpy.ndarray"))
#undef ST_STUB_NAME
}  // namespace nanobind::detail
