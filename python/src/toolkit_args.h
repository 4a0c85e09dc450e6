#pragma once
// Argument types the toolkit bindings (rl, rec, vision, canvas, zspace, geometry) show in
// signatures and stubs. At run time each is a plain nb::handle / nb::object that the binding
// converts itself (tensor_from_data, float(), os.fspath); the nb::typed wrapper only names what
// is accepted, so help() and the .pyi say `Tensor | numpy.typing.ArrayLike` instead of `object`.
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <optional>
#include <variant>

#include "convert.h"
#include "stub_types.h"

namespace stpy {

// A tensor or array-like data.
using ArrayDataArg = nb::typed<nb::handle, stub::ArrayLike>;
// Array-like data for an argument whose default is None (nanobind adds the "| None" itself).
using OptArrayDataArg = ArrayDataArg;
// An iterable of numbers, read with float() item by item.
using FloatSeqArg = nb::typed<nb::handle, stub::FloatSeq>;
// A telemetry route to push frames into, or None.
using AtlasRouteArg = nb::typed<nb::object, stub::AtlasRoute>;  // .none(): nanobind adds "| None"
// A metrics dict of ZSpaceTrainer: {name: number}, 'gradient' (or an alias) a sequence of numbers.
using MetricsArg =
    nb::typed<nb::handle, nb::typed<nb::dict, std::string, std::variant<double, nb::typed<nb::iterable, double>>>>;
// Flattened telemetry {name: number}, or None.
using TelemetryArg = nb::typed<nb::handle, nb::typed<nb::dict, std::string, double>>;  // .none() where used
// A str that the binding checks itself (non-empty, with the error naming the operation).
using TextArg = nb::typed<nb::handle, std::string>;
// Results built as Python dicts, typed for the stubs.
using FloatDict = nb::typed<nb::dict, std::string, double>;
using AnyDict = nb::typed<nb::dict, std::string, stub::Any>;
// A file path: str or os.PathLike.
using PathLikeArg = nb::typed<nb::handle, std::filesystem::path>;

}  // namespace stpy
