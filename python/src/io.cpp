// `spiraltorch.io`: safetensors, JSON and bincode state dicts, manifests.
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>

#include "nn_bind.h"
#include "spiraltorch/io/checkpoint.h"
#include "spiraltorch/io/safetensors.h"
#include "spiraltorch/io/structure.h"

namespace stpy {

namespace {

namespace io = st::io;

// A dict, a sequence of (key, tensor) pairs, or anything with state_dict() (a Module).
io::NamedTensors named_from_py(nb::handle obj, const char* op) {
  if (nb::hasattr(obj, "state_dict") && !nb::isinstance<nb::dict>(obj)) {
    nb::object sd = obj.attr("state_dict")();
    return state_from_py(sd, op);
  }
  return state_from_py(obj, op);
}

io::Metadata metadata_from_py(nb::handle obj, const char* op) {
  io::Metadata out;
  if (obj.is_none()) return out;
  if (!nb::isinstance<nb::dict>(obj)) throw st::ValueError(std::string(op) + ": metadata must be a dict of str to str");
  for (auto [k, v] : nb::borrow<nb::dict>(obj)) {
    if (!nb::isinstance<nb::str>(k) || !nb::isinstance<nb::str>(v)) {
      throw st::ValueError(std::string(op) + ": metadata must map str to str, got " +
                           nb::cast<std::string>(nb::repr(k)) + ": " + nb::cast<std::string>(nb::repr(v)));
    }
    out[utf8_of(k, op, "metadata key")] = utf8_of(v, op, "metadata value");
  }
  return out;
}

nb::dict tensors_to_py(const io::NamedTensors& tensors) {
  nb::dict d;
  for (const auto& [k, t] : tensors) d[nb::str(k.c_str(), k.size())] = nb::cast(t);
  return d;
}

nb::dict metadata_to_py(const io::Metadata& m) {
  nb::dict d;
  for (const auto& [k, v] : m) d[nb::str(k.c_str(), k.size())] = nb::str(v.c_str(), v.size());
  return d;
}

nb::tuple checkpoint_to_py(const io::Checkpoint& c) {
  return nb::make_tuple(tensors_to_py(c.tensors), metadata_to_py(c.metadata));
}

// The file system's bytes for a path (os.fsencode), so names that are not valid UTF-8
// (surrogate-escaped bytes from os.listdir) work instead of failing to convert.
std::string path_str(nb::handle p) {
  nb::object encoded = nb::module_::import_("os").attr("fsencode")(p);
  if (!nb::isinstance<nb::bytes>(encoded)) throw st::DtypeError("path: os.fsencode did not return bytes");
  nb::bytes b = nb::borrow<nb::bytes>(encoded);
  return std::string(b.c_str(), b.size());
}

std::string bytes_arg(nb::handle b) {
  if (nb::isinstance<nb::bytes>(b)) {
    nb::bytes by = nb::borrow<nb::bytes>(b);
    return std::string(by.c_str(), by.size());
  }
  nb::bytes by = nb::bytes(nb::module_::import_("builtins").attr("bytes")(b));
  return std::string(by.c_str(), by.size());
}

// How the arguments read in the stubs (nb::sig) of the functions below.
#define ST_PATH "str | bytes | os.PathLike[str] | os.PathLike[bytes]"
#define ST_STATE                                              \
  "collections.abc.Mapping[str, spiraltorch._core.Tensor] | " \
  "collections.abc.Sequence[tuple[str, spiraltorch._core.Tensor]] | spiraltorch._core.nn.Module"
#define ST_CHECKPOINT "tuple[dict[str, spiraltorch._core.Tensor], dict[str, str]]"
#define ST_BYTES "bytes | bytearray | memoryview"

using Saver = void (*)(const std::string&, const io::NamedTensors&, const io::Metadata&);
using Loader = io::Checkpoint (*)(const std::string&);

void def_format(nb::module_& m, const char* name, const char* format, Saver save, Loader load, bool manifest_default) {
  const std::string save_name = std::string("save_") + name, load_name = std::string("load_") + name;
  const std::string save_sig =
      "def " + save_name +
      "(path: " ST_PATH ", tensors: " ST_STATE ", metadata: dict[str, str] | None = None, *, manifest: bool = " +
      (manifest_default ? "True" : "False") + ", module_type: str | None = None) -> str | None";
  const std::string load_sig = "def " + load_name + "(path: " ST_PATH ") -> " ST_CHECKPOINT;
  m.def(save_name.c_str(),
        [save, format, save_name](nb::handle path, nb::handle tensors, nb::handle metadata, bool manifest,
                                  std::optional<std::string> module_type) {
    const std::string p = path_str(path);
    const io::NamedTensors named = named_from_py(tensors, save_name.c_str());
    const io::Metadata meta = metadata_from_py(metadata, save_name.c_str());
    if (!module_type && nb::hasattr(tensors, "state_dict") && !nb::isinstance<nb::dict>(tensors)) {
      module_type = nb::cast<std::string>(nb::type_name(tensors.type()));
    }
    std::optional<std::string> mp;
    {
      nb::gil_scoped_release release;
      if (manifest) {
        // Both files through temporaries, so a kill never leaves a mismatched pair.
        mp = io::save_with_manifest(p, format, [&](const std::string& to) { save(to, named, meta); }, named,
                                    module_type, meta);
      } else {
        save(p, named, meta);
      }
    }
    return mp ? nb::object(nb::str(mp->c_str(), mp->size())) : nb::none();
  },
        nb::arg("path"), nb::arg("tensors"), nb::arg("metadata") = nb::none(), nb::kw_only(),
        nb::arg("manifest") = manifest_default, nb::arg("module_type") = nb::none(), nb::sig(save_sig.c_str()),
        (std::string("Writes a state dict (dict, (key, tensor) pairs or a Module) as ") + format +
         " atomically (a temporary file, then rename); with manifest=True also writes <path>.manifest.json and "
         "returns its path, else returns None. metadata maps str to str (ValueError otherwise); module_type is "
         "recorded in the manifest (a Module's class name by default).")
            .c_str());
  if (!load) return;
  m.def(load_name.c_str(),
        [load](nb::handle path) {
    const std::string p = path_str(path);
    io::Checkpoint c;
    {
      nb::gil_scoped_release release;
      c = load(p);
    }
    return checkpoint_to_py(c);
  }, nb::arg("path"), nb::sig(load_sig.c_str()),
        (std::string("Reads a ") + format +
         " state dict; returns (dict of name -> Tensor, metadata dict). "
         "CheckpointError for a truncated or malformed file.")
            .c_str());
}

// st.save's object -> Structure, tensors collected under fresh keys "t0", "t1", ...
// NumPy arrays and scalars are stored as tensors and marked, so load gives them back as NumPy.
io::Structure structure_from_py(nb::handle obj, io::NamedTensors& tensors, const std::string& where, int depth) {
  using Kind = io::Structure::Kind;
  if (depth > io::kMaxStructureDepth) {
    throw st::ValueError("save: " + where + " is nested more than " + std::to_string(io::kMaxStructureDepth) +
                         " levels deep (or the object contains itself)");
  }
  io::Structure s;
  auto add_tensor = [&](const Tensor& t, io::Structure::TensorOrigin origin) {
    s.kind = Kind::Tensor;
    s.text = "t" + std::to_string(tensors.size());
    s.boolean = t.requires_grad();
    s.origin = origin;
    tensors.emplace_back(s.text, t.detach());
  };
  const nb::handle type = obj.type();
  const std::string module =
      nb::hasattr(type, "__module__") ? nb::cast<std::string>(nb::str(type.attr("__module__"))) : "";
  if (nb::isinstance<Tensor>(obj)) {
    add_tensor(nb::cast<Tensor>(obj), io::Structure::TensorOrigin::Tensor);
  } else if (module == "numpy" && nb::hasattr(obj, "__array_interface__")) {
    nb::module_ np = nb::module_::import_("numpy");
    const bool scalar = !nb::isinstance(obj, np.attr("ndarray"));
    nb::object arr = np.attr("asarray")(obj);
    nb::object dt = arr.attr("dtype");
    const std::string kind = nb::cast<std::string>(dt.attr("kind"));
    if (kind.find_first_of("biufcUS") != 0) {
      throw st::DtypeError("save: cannot store the NumPy value at " + where + " (dtype " +
                           nb::cast<std::string>(nb::str(dt)) +
                           "): only booleans, numbers and fixed-width strings "
                           "are stored, never objects (no pickle)");
    }
    // Stored little-endian; a big-endian array comes back as the same values in the native order.
    if (nb::cast<std::string>(dt.attr("byteorder")) == ">") {
      arr = arr.attr("astype")(dt.attr("newbyteorder")("<"));
      dt = arr.attr("dtype");
    }
    const auto origin = scalar ? io::Structure::TensorOrigin::NumpyScalar : io::Structure::TensorOrigin::NumpyArray;
    const std::string name = nb::cast<std::string>(dt.attr("name"));
    static const std::set<std::string> native = {"bool", "uint8", "int32", "int64", "float16", "float32", "float64"};
    if (native.count(name)) {
      add_tensor(tensor_from_data(arr, std::nullopt), origin);
    } else {
      // No Tensor dtype holds it: its raw bytes, with NumPy's dtype string and shape.
      nb::object raw = np.attr("frombuffer")(arr.attr("tobytes")(), "uint8");
      add_tensor(tensor_from_data(raw, std::nullopt), origin);
      s.numpy_dtype = nb::cast<std::string>(dt.attr("str"));
      for (nb::handle d : arr.attr("shape")) s.shape.push_back(nb::cast<int64_t>(d));
      if (io::numpy_itemsize(s.numpy_dtype) == 0) {
        throw st::DtypeError("save: cannot store the NumPy value at " + where + " (dtype " + s.numpy_dtype + ")");
      }
    }
  } else if (obj.is_none()) {
    s.kind = Kind::None;
  } else if (PyBool_Check(obj.ptr())) {
    s.kind = Kind::Bool, s.boolean = obj.ptr() == Py_True;
  } else if (PyLong_Check(obj.ptr())) {
    s.kind = Kind::Int;
    if (!nb::try_cast<int64_t>(obj, s.integer))
      throw st::ValueError("save: the integer at " + where + " does not fit in int64");
  } else if (PyFloat_Check(obj.ptr())) {
    s.kind = Kind::Float, s.number = nb::cast<double>(obj);
  } else if (PyUnicode_Check(obj.ptr())) {
    s.kind = Kind::String, s.text = utf8_of(obj, "save", "string");
  } else if (PyDict_Check(obj.ptr())) {
    s.kind = Kind::Dict;
    for (auto [k, v] : nb::borrow<nb::dict>(obj)) {
      io::Structure key;
      if (PyUnicode_Check(k.ptr())) {
        key.kind = Kind::String, key.text = utf8_of(k, "save", "dictionary key");
      } else if (PyLong_Check(k.ptr()) && !PyBool_Check(k.ptr()) && nb::try_cast<int64_t>(k, key.integer)) {
        key.kind = Kind::Int;
      } else {
        throw st::DtypeError("save: dictionary keys must be str or int64, got " +
                             nb::cast<std::string>(nb::str(k.type().attr("__name__"))) + " at " + where);
      }
      const std::string at = where + "[" + nb::cast<std::string>(nb::repr(k)) + "]";
      s.entries.emplace_back(std::move(key), structure_from_py(v, tensors, at, depth + 1));
    }
  } else if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    s.kind = PyList_Check(obj.ptr()) ? Kind::List : Kind::Tuple;
    size_t i = 0;
    for (nb::handle item : obj) {
      s.items.push_back(structure_from_py(item, tensors, where + "[" + std::to_string(i++) + "]", depth + 1));
    }
  } else {
    throw st::DtypeError("save: cannot store " + nb::cast<std::string>(nb::str(type.attr("__name__"))) + " at " +
                         where +
                         "; st.save takes tensors, NumPy arrays and dicts, lists, tuples, str, int, float, bool and "
                         "None made of them (no pickle)");
  }
  return s;
}

nb::object structure_to_py(const io::Structure& s, nb::dict tensors) {
  using Kind = io::Structure::Kind;
  switch (s.kind) {
    case Kind::None:
      return nb::none();
    case Kind::Bool:
      return nb::bool_(s.boolean);
    case Kind::Int:
      return nb::int_(s.integer);
    case Kind::Float:
      return nb::float_(s.number);
    case Kind::String:
      return nb::str(s.text.data(), s.text.size());
    case Kind::Tensor: {
      nb::object t = tensors[nb::str(s.text.data(), s.text.size())];
      if (s.origin != io::Structure::TensorOrigin::Tensor) {
        nb::module_ np = nb::module_::import_("numpy");
        nb::object arr = t.attr("numpy")();
        // NumPy's canonical type for the dtype (int64, not the equal-sized longlong the buffer names).
        arr = arr.attr("view")(np.attr("dtype")(arr.attr("dtype").attr("str")));
        if (!s.numpy_dtype.empty()) {  // raw bytes (their count checked by decode_structure)
          arr =
              np.attr("frombuffer")(arr.attr("tobytes")(), s.numpy_dtype).attr("reshape")(nb::tuple(nb::cast(s.shape)));
          arr = arr.attr("copy")();
        }
        return s.origin == io::Structure::TensorOrigin::NumpyScalar ? nb::object(arr[nb::tuple()]) : arr;
      }
      if (s.boolean) t.attr("requires_grad_")(true);
      return t;
    }
    case Kind::Dict: {
      nb::dict d;
      for (const auto& [k, v] : s.entries) {
        nb::object key = k.kind == Kind::String ? nb::object(nb::str(k.text.data(), k.text.size()))
                                                : nb::object(nb::int_(k.integer));
        d[key] = structure_to_py(v, tensors);
      }
      return d;
    }
    case Kind::List:
    case Kind::Tuple: {
      nb::list items;
      for (const auto& item : s.items) items.append(structure_to_py(item, tensors));
      return s.kind == Kind::List ? nb::object(items) : nb::object(nb::tuple(items));
    }
  }
  return nb::none();
}

}  // namespace

void bind_io(nb::module_& root) {
  nb::module_ m = root.def_submodule("io", "Checkpoint files: safetensors, JSON, bincode and manifests.");

  def_format(m, "safetensors", "safetensors",
             [](const std::string& p, const io::NamedTensors& t, const io::Metadata& md) {
    io::save_safetensors(p, t, md);
  }, nullptr, false);
  // load_safetensors has a copy option and accepts directories / sharded indexes.
  m.def("load_safetensors",
        [](nb::handle path, bool copy) {
    const std::string p = path_str(path);
    io::Checkpoint c;
    {
      nb::gil_scoped_release release;
      c = io::load_safetensors(p, copy);
    }
    return checkpoint_to_py(c);
  }, nb::arg("path"), nb::kw_only(), nb::arg("copy") = true,
        nb::sig("def load_safetensors(path: " ST_PATH ", *, copy: bool = True) -> " ST_CHECKPOINT),
        "Reads a .safetensors file, a directory, or a sharded model.safetensors.index.json; returns\n"
        "(dict of name -> Tensor, metadata dict). By default (copy=True) the tensors own their memory.\n"
        "With copy=False they alias a private copy-on-write memory map of the file: cheap to load, and\n"
        "writes never reach the file, but the file must stay unchanged while the tensors live -- truncating\n"
        "it makes reads fault (SIGBUS, killing the process) and rewriting it in place changes the tensors.");
  def_format(m, "json", "json", [](const std::string& p, const io::NamedTensors& t, const io::Metadata& md) {
    io::save_json(p, t, md);
  }, [](const std::string& p) { return io::load_json(p); }, true);
  def_format(m, "bincode", "bincode", [](const std::string& p, const io::NamedTensors& t, const io::Metadata& md) {
    io::save_bincode(p, t, md);
  }, [](const std::string& p) { return io::load_bincode(p); }, true);

  m.def("safetensors_header",
        [](nb::handle path) {
    const io::SafetensorsHeader h = io::read_safetensors_header(path_str(path));
    nb::list entries;
    for (const auto& r : h.tensors) {
      nb::dict e;
      e["name"] = r.name;
      e["dtype"] = nb::cast(r.dtype);
      e["shape"] = nb::tuple(nb::cast(r.shape));
      e["data_offsets"] = nb::make_tuple(r.begin, r.end);
      entries.append(e);
    }
    return nb::make_tuple(entries, metadata_to_py(h.metadata));
  }, nb::arg("path"),
        nb::sig("def safetensors_header(path: " ST_PATH ") -> tuple[list[dict[str, typing.Any]], dict[str, str]]"),
        "Validates a safetensors file's header without reading tensor data; returns (entries, metadata), each entry "
        "a dict with name, dtype, shape and data_offsets. CheckpointError for a malformed header.");

  m.def("save_safetensors_bytes",
        [](nb::handle tensors, nb::handle metadata) {
    const std::string s = io::save_safetensors_bytes(named_from_py(tensors, "save_safetensors_bytes"),
                                                     metadata_from_py(metadata, "save_safetensors_bytes"));
    return nb::bytes(s.data(), s.size());
  }, nb::arg("tensors"), nb::arg("metadata") = nb::none(),
        nb::sig("def save_safetensors_bytes(tensors: " ST_STATE ", metadata: dict[str, str] | None = None) -> bytes"),
        "The safetensors encoding of a state dict as bytes (what save_safetensors would write).");
  m.def("load_safetensors_bytes",
        [](nb::handle data) {
    const std::string s = bytes_arg(data);
    io::Checkpoint c;
    {
      nb::gil_scoped_release release;
      c = io::load_safetensors_bytes(s);
    }
    return checkpoint_to_py(c);
  }, nb::arg("data"), nb::sig("def load_safetensors_bytes(data: " ST_BYTES ") -> " ST_CHECKPOINT),
        "Decodes safetensors bytes into (dict of name -> Tensor, metadata dict); CheckpointError when malformed.");
  m.def("load_json_bytes", [](nb::handle data) { return checkpoint_to_py(io::load_json_bytes(bytes_arg(data))); },
        nb::arg("data"), nb::sig("def load_json_bytes(data: " ST_BYTES ") -> " ST_CHECKPOINT),
        "Decodes the JSON checkpoint format from bytes into (dict of name -> Tensor, metadata dict); "
        "CheckpointError when malformed.");
  m.def("load_bincode_bytes", [](nb::handle data) { return checkpoint_to_py(io::load_bincode_bytes(bytes_arg(data))); },
        nb::arg("data"), nb::sig("def load_bincode_bytes(data: " ST_BYTES ") -> " ST_CHECKPOINT),
        "Decodes the bincode checkpoint format from bytes into (dict of name -> Tensor, metadata dict); "
        "CheckpointError when malformed.");

  m.def("temporary_host_tag", &io::temporary_host_tag,
        "The tag (16 hex digits) naming this host and PID namespace in the names of atomic saves' temporaries\n"
        "(`.<file>.tmp-<tag>-<pid>-<n>`): only temporaries of this tag whose process is gone, or any a day old,\n"
        "are removed by later saves.");
  m.def(
      "encode_structure",
      [](nb::handle obj) {
    io::NamedTensors tensors;
    const io::Structure s = structure_from_py(obj, tensors, "obj", 0);
    nb::dict named;
    for (const auto& [k, t] : tensors) named[nb::str(k.c_str(), k.size())] = nb::cast(t);
    return nb::make_tuple(nb::str(io::encode_structure(s).c_str()), named);
  }, nb::arg("obj"),
      nb::sig("def encode_structure(obj: typing.Any) -> tuple[str, dict[str, spiraltorch._core.Tensor]]"),
      "st.save's encoding of obj (tensors, NumPy arrays and scalars, and dicts, lists, tuples, str, int, float, bool\n"
      "and None made of them): returns (structure JSON, {key: Tensor}). TypeError/DtypeError for anything else.");
  m.def("decode_structure",
        [](const std::string& text, nb::dict tensors) {
    std::map<std::string, uint64_t> keys;
    for (auto [k, v] : tensors) {
      if (!nb::isinstance<nb::str>(k) || !nb::isinstance<Tensor>(v))
        throw st::DtypeError("decode_structure: tensors must map str to Tensor");
      const Tensor& t = nb::cast<const Tensor&>(v);
      keys[nb::cast<std::string>(k)] = static_cast<uint64_t>(t.numel()) * t.itemsize();
    }
    const io::Structure s = io::decode_structure(text, keys);
    return structure_to_py(s, tensors);
  }, nb::arg("text"), nb::arg("tensors"),
        nb::sig("def decode_structure(text: str, tensors: dict[str, spiraltorch._core.Tensor]) -> typing.Any"),
        "Rebuilds what encode_structure described from its JSON and the file's tensors. Data only: any malformed\n"
        "description raises CheckpointError.");

  m.def("write_manifest",
        [](nb::handle weights, const std::string& format, nb::handle tensors, std::optional<std::string> module_type,
           nb::handle metadata) {
    return io::write_manifest(path_str(weights), format, named_from_py(tensors, "write_manifest"), module_type,
                              metadata_from_py(metadata, "write_manifest"));
  },
        nb::arg("weights_path"), nb::arg("format"), nb::arg("tensors"), nb::arg("module_type") = nb::none(),
        nb::arg("metadata") = nb::none(),
        nb::sig("def write_manifest(weights_path: " ST_PATH ", format: str, tensors: " ST_STATE
                ", module_type: str | None = "
                "None, metadata: dict[str, str] | None = None) -> str"),
        "Writes <weights_path>.manifest.json (format, size and sha256 of the weights, tensor names, dtypes and "
        "shapes); returns its path.");
  m.def("read_manifest",
        [](nb::handle path, bool verify) {
    const io::Manifest man = io::read_manifest(path_str(path), verify);
    nb::dict d;
    d["format"] = man.format;
    d["weights_path"] = man.weights_path;
    d["bytes"] = man.bytes;
    d["sha256"] = man.sha256;
    d["spiraltorch_version"] = man.spiraltorch_version;
    d["module_type"] = man.module_type ? nb::cast(*man.module_type) : nb::none();
    nb::list ts;
    for (const auto& [name, ds] : man.tensors) {
      nb::dict e;
      e["name"] = name;
      e["dtype"] = nb::cast(ds.first);
      e["shape"] = nb::tuple(nb::cast(ds.second));
      ts.append(e);
    }
    d["tensors"] = ts;
    return d;
  }, nb::arg("path"), nb::arg("verify") = true,
        nb::sig("def read_manifest(path: " ST_PATH ", verify: bool = True) -> dict[str, typing.Any]"),
        "Parses <weights>.manifest.json; verify=True also checks the weights' size and sha256.");
  m.def("manifest_path", [](nb::handle weights) { return io::manifest_path(path_str(weights)); },
        nb::arg("weights_path"), nb::sig("def manifest_path(weights_path: " ST_PATH ") -> str"),
        "The manifest's path for a weights file: <weights_path>.manifest.json.");
  m.def("sha256_file", [](nb::handle path) { return io::sha256_file(path_str(path)); }, nb::arg("path"),
        nb::sig("def sha256_file(path: " ST_PATH ") -> str"), "The SHA-256 of a file's bytes as 64 hex digits.");
  m.attr("MAX_SAFETENSORS_HEADER") = io::kMaxSafetensorsHeader;
}

}  // namespace stpy
