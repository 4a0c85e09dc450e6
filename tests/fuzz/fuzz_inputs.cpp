#include "fuzz_inputs.h"

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "spiraltorch/error.h"
#include "spiraltorch/io/checkpoint.h"
#include "spiraltorch/io/safetensors.h"
#include "spiraltorch/io/structure.h"
#include "spiraltorch/runtime/spiralk.h"

namespace st::fuzz {
namespace {

// Throws std::logic_error (not a CheckpointError, so it escapes) when `ok` is false.
void require(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("fuzz invariant broken: ") + what);
}

template <class Load, class Save>
void round_trip(const uint8_t* data, size_t size, Load load, Save save, const char* what) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  io::Checkpoint first;
  try {
    first = load(bytes);
  } catch (const CheckpointError&) {
    return;  // rejected with the documented error: fine
  }
  const std::string saved = save(first);
  const io::Checkpoint second = load(saved);  // what we wrote must load
  require(second.tensors.size() == first.tensors.size(), what);
  require(save(second) == saved, what);
}

}  // namespace

void safetensors_input(const uint8_t* data, size_t size) {
  round_trip(data, size, [](const std::string& b) { return io::load_safetensors_bytes(b, "fuzz"); },
             [](const io::Checkpoint& c) { return io::save_safetensors_bytes(c.tensors, c.metadata); },
             "safetensors save(load(x)) is not a fixed point");
}

void json_input(const uint8_t* data, size_t size) {
  round_trip(data, size, [](const std::string& b) { return io::load_json_bytes(b, "fuzz"); },
             [](const io::Checkpoint& c) { return io::save_json_bytes(c.tensors, c.metadata); },
             "json save(load(x)) is not a fixed point");
}

void bincode_input(const uint8_t* data, size_t size) {
  round_trip(data, size, [](const std::string& b) { return io::load_bincode_bytes(b, "fuzz"); },
             [](const io::Checkpoint& c) { return io::save_bincode_bytes(c.tensors, c.metadata); },
             "bincode save(load(x)) is not a fixed point");
}

void manifest_input(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  io::Manifest m;
  try {
    m = io::parse_manifest_bytes(text, "dir/model.safetensors.manifest.json");
  } catch (const CheckpointError&) {
    return;
  }
  require(m.format == "safetensors" || m.format == "json" || m.format == "bincode", "manifest format");
  // The weights must stay inside the manifest's directory.
  const std::filesystem::path rel = std::filesystem::path(m.weights_path).lexically_relative("dir");
  require(!rel.empty() && *rel.begin() != "..", "manifest weights path leaves its directory");
  for (const auto& entry : m.tensors) {
    for (const int64_t d : entry.second.second) require(d >= 0, "manifest negative dimension");
  }
}

void structure_input(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::map<std::string, uint64_t> keys = {{"t0", 0}, {"t1", 8}, {"t2", 16}};
  io::Structure s;
  try {
    s = io::decode_structure(text, keys);
  } catch (const CheckpointError&) {
    return;
  }
  // What load accepts, save can write, and that text is a fixed point (text, so NaN compares).
  const std::string once = io::encode_structure(s);
  require(io::encode_structure(io::decode_structure(once, keys)) == once, "structure round trip");
}

void spiralk_input(const uint8_t* data, size_t size) {
  const std::string_view src(reinterpret_cast<const char*>(data), size);
  try {
    const spiralk::Program p = spiralk::Program::parse(src);
    p.eval({{"c", 4096.0}, {"r", 8.0}, {"k", 32.0}, {"sg", true}, {"name", std::string("cuda")}});
  } catch (const spiralk::SpiralKError&) {
    // rejected with a positioned error: fine
  }
}

InputFn input_fn(std::string_view target) {
  if (target == "safetensors") return safetensors_input;
  if (target == "json") return json_input;
  if (target == "bincode") return bincode_input;
  if (target == "manifest") return manifest_input;
  if (target == "structure") return structure_input;
  if (target == "spiralk") return spiralk_input;
  return nullptr;
}

}  // namespace st::fuzz
