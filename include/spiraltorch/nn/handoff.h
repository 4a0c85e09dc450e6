#pragma once
// Checked state-dict handoff: read-only compatibility reports between a module and an
// external checkpoint (exact keys or a key map with transforms), and loads that only
// happen when the report is compatible, atomically (validate and convert everything,
// then copy). Works on every Module, containers included.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spiraltorch/nn/module.h"

namespace st::nn {

// How a source tensor becomes the target tensor.
//   identity                      as is
//   transpose                     swap the two dims of a 2-D tensor (1-D: as is)
//   copy_overlap_zeros            zeros of the target shape, then copy the overlapping block
//   transpose_copy_overlap_zeros  transpose, then overlap-copy
enum class Transform { Identity, Transpose, CopyOverlapZeros, TransposeCopyOverlapZeros };

// Accepts the names above and the aliases "copy_overlap" / "transpose_copy_overlap";
// anything else raises ValueError("unsupported state_dict transform '<x>'").
Transform parse_transform(const std::string& name);
std::string transform_name(Transform t);
// Shape of the source after the transform, for a target of shape `expected`
// (nullopt when the transform cannot apply, e.g. overlap between different ranks).
std::optional<Shape> transformed_shape(const Shape& source, Transform t, const Shape& expected);
// The transformed tensor (a new contiguous tensor for overlap transforms, a view otherwise).
Tensor apply_transform(const Tensor& source, Transform t, const Shape& expected);

struct KeyRule {
  std::string source;  // key in the external checkpoint
  std::string target;  // key in the module's state_dict
  Transform transform = Transform::Identity;
};
using KeyMap = std::vector<KeyRule>;

// One line of a report; one per module key (sorted by name), plus one per rule whose
// target is not a key of the module ("unexpected_target").
struct HandoffEntry {
  std::string name;  // target key
  // matched | shape_mismatch | missing_source | missing_rule | unexpected_target | conflict | allowed_missing
  std::string status;
  std::string source_name;  // "" when no rule/key names a source
  std::string transform = "identity";
  std::optional<Shape> expected_shape;         // the module's shape
  std::optional<Shape> source_shape;           // after the transform
  std::optional<Shape> original_source_shape;  // as found in the checkpoint
  std::string expected_dtype, source_dtype;
  // What the (resize) transform keeps: elements copied from the source, source
  // elements dropped, target elements zero-filled. For identity/transpose matches
  // kept == numel and the others are 0.
  int64_t kept = 0, dropped = 0, zero_filled = 0;
  std::string detail;  // human-readable reason for a non-matched status
};

struct HandoffReport {
  bool compatible = false;
  int64_t matched = 0, missing = 0, shape_mismatched = 0, extra = 0, conflicts = 0;
  std::vector<HandoffEntry> entries;    // sorted by name
  std::vector<std::string> extra_keys;  // checkpoint keys no rule/key uses (sorted)
  std::string source_hash;              // sha256 of the whole external state
  std::string matched_subset_hash;      // sha256 of the adapted (target-keyed) matched tensors
  StateDict adapted;                    // target key -> transformed tensor in the target dtype (matched only)
  // "missing: 'a' (no source 'x'); shape mismatch: 'b' expects (2, 3), got (3, 2) ..."
  std::string problems() const;
};

struct HandoffOptions {
  // Target keys matching one of these glob patterns ('*', '?') may be absent from the
  // checkpoint (status "allowed_missing"), e.g. "*::lora_*" when loading a base model.
  std::vector<std::string> allow_missing;
  // When false, unused checkpoint keys (extra) make the report incompatible.
  bool allow_extra = true;
};

// Exact keys: each module key is looked up under the same name.
HandoffReport state_dict_compatibility(const Module& module, const StateDict& external,
                                       const HandoffOptions& options = {});
// Key map: each rule takes `source` from the checkpoint to `target` in the module.
// Two rules aiming at one target are both reported as "conflict".
HandoffReport state_dict_compatibility_with_key_map(const Module& module, const StateDict& external,
                                                    const KeyMap& key_map, const HandoffOptions& options = {});
// Load only when compatible, atomically; else CheckpointError naming every problem.
HandoffReport load_state_dict_checked(Module& module, const StateDict& external, const HandoffOptions& options = {});
HandoffReport load_state_dict_subset_mapped_checked(Module& module, const StateDict& external, const KeyMap& key_map,
                                                    const HandoffOptions& options = {});
// Copies the report's adapted tensors into the module (all conversions already done).
void commit_report(Module& module, const HandoffReport& report);

// sha256 over the entries sorted by key: key, dtype name, rank, dims, raw bytes.
std::string state_dict_hash(const StateDict& state);

// Simple glob match ('*' any run, '?' one char).
bool glob_match(const std::string& pattern, const std::string& text);

}  // namespace st::nn
