#include "spiraltorch/nn/handoff.h"

#include "core/sha256.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::nn {

using st::Sha256;

// ---------------------------------------------------------------- helpers -------
namespace {

std::string list_keys(const std::vector<std::string>& v, size_t limit = 20) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < limit; ++i) s += (i ? ", '" : "'") + v[i] + "'";
  if (v.size() > limit) s += ", ... (" + std::to_string(v.size() - limit) + " more)";
  return s;
}

}  // namespace

std::string state_dict_hash(const StateDict& state) {
  std::vector<const std::pair<std::string, Tensor>*> sorted;
  for (const auto& e : state) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
  Sha256 h;
  for (const auto* e : sorted) {
    h.update_str(e->first);
    const Tensor& t = e->second;
    h.update_str(dtype_name(t.dtype()));
    h.update_u64(static_cast<uint64_t>(t.dim()));
    for (int64_t d : t.shape()) h.update_u64(static_cast<uint64_t>(d));
    const Tensor c = to_device(t.detach(), Device()).contiguous();  // hashes host bytes
    h.update(c.raw_data(), static_cast<size_t>(c.numel()) * c.itemsize());
  }
  return h.hex();
}

bool glob_match(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// ------------------------------------------------------------- transforms --------

Transform parse_transform(const std::string& name) {
  if (name == "identity" || name.empty()) return Transform::Identity;
  if (name == "transpose") return Transform::Transpose;
  if (name == "copy_overlap_zeros" || name == "copy_overlap") return Transform::CopyOverlapZeros;
  if (name == "transpose_copy_overlap_zeros" || name == "transpose_copy_overlap") {
    return Transform::TransposeCopyOverlapZeros;
  }
  throw ValueError("unsupported state_dict transform '" + name +
                   "' (expected identity, transpose, copy_overlap_zeros or transpose_copy_overlap_zeros)");
}

std::string transform_name(Transform t) {
  switch (t) {
    case Transform::Identity:
      return "identity";
    case Transform::Transpose:
      return "transpose";
    case Transform::CopyOverlapZeros:
      return "copy_overlap_zeros";
    case Transform::TransposeCopyOverlapZeros:
      return "transpose_copy_overlap_zeros";
  }
  return "identity";
}

namespace {

Shape transposed(const Shape& s) {
  if (s.size() != 2) return s;
  return {s[1], s[0]};
}

bool is_transpose(Transform t) { return t == Transform::Transpose || t == Transform::TransposeCopyOverlapZeros; }
bool is_overlap(Transform t) { return t == Transform::CopyOverlapZeros || t == Transform::TransposeCopyOverlapZeros; }

}  // namespace

std::optional<Shape> transformed_shape(const Shape& source, Transform t, const Shape& expected) {
  if (is_transpose(t) && source.size() > 2) return std::nullopt;
  const Shape s = is_transpose(t) ? transposed(source) : source;
  if (is_overlap(t)) {
    if (s.size() != expected.size()) return std::nullopt;
    return expected;
  }
  return s;
}

Tensor apply_transform(const Tensor& source, Transform t, const Shape& expected) {
  Tensor s = source.detach();
  if (is_transpose(t)) {
    if (s.dim() > 2) throw ShapeError("transpose transform: source of shape " + shape_str(s.shape()) + " is not 2-D");
    if (s.dim() == 2) s = st::t(s);
  }
  if (!is_overlap(t)) return s;
  if (s.dim() != static_cast<int64_t>(expected.size())) {
    throw ShapeError("copy_overlap_zeros: source of shape " + shape_str(s.shape()) + " and target " +
                     shape_str(expected) + " have different ranks");
  }
  Tensor out = zeros(expected, s.dtype(), s.device());
  Tensor dst = out;
  Tensor src = s;
  for (int64_t d = 0; d < s.dim(); ++d) {
    const int64_t n = std::min(s.shape()[d], expected[d]);
    dst = narrow(dst, d, 0, n);
    src = narrow(src, d, 0, n);
  }
  NoGradGuard ng;
  if (src.numel() > 0) copy_(dst, src);
  return out;
}

// ---------------------------------------------------------------- reports --------

std::string HandoffReport::problems() const {
  std::vector<std::string> missing_v, mismatch_v, conflict_v, unexpected_v;
  for (const auto& e : entries) {
    if (e.status == "missing_source") {
      missing_v.push_back("'" + e.name + "' (source '" + e.source_name + "' not in checkpoint)");
    } else if (e.status == "missing_rule") {
      missing_v.push_back("'" + e.name + "'");
    } else if (e.status == "shape_mismatch") {
      std::string s = "'" + e.name + "' expects " + shape_str(*e.expected_shape) + ", got ";
      s += e.source_shape ? shape_str(*e.source_shape) : std::string("an incompatible shape");
      if (!e.source_name.empty() && e.source_name != e.name) s += " from '" + e.source_name + "'";
      if (e.transform != "identity") {
        s += " (" + e.transform + " of " + shape_str(*e.original_source_shape) + ")";
      }
      mismatch_v.push_back(s);
    } else if (e.status == "conflict") {
      conflict_v.push_back("'" + e.name + "' <- '" + e.source_name + "'");
    } else if (e.status == "unexpected_target") {
      unexpected_v.push_back("'" + e.name + "'");
    }
  }
  std::string out;
  auto add = [&](const std::string& label, const std::vector<std::string>& v) {
    if (v.empty()) return;
    if (!out.empty()) out += "; ";
    out += label + " (" + std::to_string(v.size()) + "): ";
    for (size_t i = 0; i < v.size() && i < 20; ++i) out += (i ? ", " : "") + v[i];
    if (v.size() > 20) out += ", ... (" + std::to_string(v.size() - 20) + " more)";
  };
  add("missing", missing_v);
  add("shape mismatch", mismatch_v);
  add("conflicting rules", conflict_v);
  add("rules for unknown targets", unexpected_v);
  if (!extra_keys.empty()) {
    if (!out.empty()) out += "; ";
    out += "unused checkpoint keys (" + std::to_string(extra_keys.size()) + "): " + list_keys(extra_keys, 10);
  }
  if (out.empty() && matched == 0) out = "nothing matched";
  return out;
}

namespace {

struct Target {
  Shape shape;
  Dtype dtype;
};

std::map<std::string, Target> module_targets(const Module& module) {
  std::map<std::string, Target> out;
  for (const auto& [k, t] : module.state_dict()) out[k] = Target{t.shape(), t.dtype()};
  return out;
}

bool allowed_missing(const HandoffOptions& o, const std::string& key) {
  for (const auto& p : o.allow_missing) {
    if (glob_match(p, key)) return true;
  }
  return false;
}

void fill_match(HandoffEntry& e, const Tensor& src, Transform tr, const Target& tgt, HandoffReport& r) {
  e.original_source_shape = src.shape();
  e.source_dtype = dtype_name(src.dtype());
  e.source_shape = transformed_shape(src.shape(), tr, tgt.shape);
  const bool ok = e.source_shape && *e.source_shape == tgt.shape;
  if (!ok) {
    e.status = "shape_mismatch";
    e.detail = "expected " + shape_str(tgt.shape) + ", got " +
               (e.source_shape ? shape_str(*e.source_shape) : std::string("incompatible rank"));
    r.shape_mismatched += 1;
    return;
  }
  // Overlap bookkeeping (what a resize keeps and drops).
  const Shape oriented = is_transpose(tr) ? transposed(src.shape()) : src.shape();
  int64_t kept = 1;
  for (size_t d = 0; d < tgt.shape.size(); ++d) kept *= std::min(oriented[d], tgt.shape[d]);
  if (tgt.shape.empty()) kept = 1;
  e.kept = kept;
  e.dropped = shape_numel(src.shape()) - kept;
  e.zero_filled = shape_numel(tgt.shape) - kept;
  if (!is_floating(tgt.dtype) && is_floating(src.dtype())) {
    e.status = "dtype_mismatch";
    e.detail = "floating source for a " + std::string(dtype_name(tgt.dtype)) + " target";
    r.shape_mismatched += 1;
    return;
  }
  e.status = "matched";
  r.matched += 1;
  r.adapted.emplace_back(e.name, cast(apply_transform(src, tr, tgt.shape), tgt.dtype).contiguous());
}

void finish(HandoffReport& r, const StateDict& external, const HandoffOptions& o) {
  std::sort(r.entries.begin(), r.entries.end(), [](const HandoffEntry& a, const HandoffEntry& b) {
    return a.name != b.name ? a.name < b.name : a.source_name < b.source_name;
  });
  std::sort(r.extra_keys.begin(), r.extra_keys.end());
  r.source_hash = state_dict_hash(external);
  r.matched_subset_hash = state_dict_hash(r.adapted);
  r.compatible =
      r.missing == 0 && r.shape_mismatched == 0 && r.conflicts == 0 && r.matched > 0 && (o.allow_extra || r.extra == 0);
}

}  // namespace

HandoffReport state_dict_compatibility(const Module& module, const StateDict& external, const HandoffOptions& o) {
  HandoffReport r;
  const auto targets = module_targets(module);
  std::map<std::string, const Tensor*> incoming;
  for (const auto& [k, t] : external) incoming[k] = &t;
  for (const auto& [name, tgt] : targets) {
    HandoffEntry e;
    e.name = name;
    e.expected_shape = tgt.shape;
    e.expected_dtype = dtype_name(tgt.dtype);
    auto it = incoming.find(name);
    if (it == incoming.end()) {
      if (allowed_missing(o, name)) {
        e.status = "allowed_missing";
      } else {
        e.status = "missing_source";
        e.source_name = name;
        e.detail = "not in checkpoint";
        r.missing += 1;
      }
    } else {
      e.source_name = name;
      fill_match(e, *it->second, Transform::Identity, tgt, r);
    }
    r.entries.push_back(std::move(e));
  }
  for (const auto& [k, t] : incoming) {
    if (!targets.count(k)) r.extra_keys.push_back(k);
  }
  r.extra = static_cast<int64_t>(r.extra_keys.size());
  finish(r, external, o);
  return r;
}

HandoffReport state_dict_compatibility_with_key_map(const Module& module, const StateDict& external,
                                                    const KeyMap& key_map, const HandoffOptions& o) {
  HandoffReport r;
  const auto targets = module_targets(module);
  std::map<std::string, const Tensor*> incoming;
  for (const auto& [k, t] : external) incoming[k] = &t;
  std::map<std::string, int> rules_per_target;
  std::set<std::string> used_sources;
  for (const auto& rule : key_map) {
    used_sources.insert(rule.source);
    if (targets.count(rule.target)) rules_per_target[rule.target] += 1;
  }
  std::set<std::string> seen;
  for (const auto& rule : key_map) {
    HandoffEntry e;
    e.name = rule.target;
    e.source_name = rule.source;
    e.transform = transform_name(rule.transform);
    auto tit = targets.find(rule.target);
    if (tit == targets.end()) {
      e.status = "unexpected_target";
      e.detail = "the module has no key '" + rule.target + "'";
      r.extra += 1;
      r.entries.push_back(std::move(e));
      continue;
    }
    const Target& tgt = tit->second;
    e.expected_shape = tgt.shape;
    e.expected_dtype = dtype_name(tgt.dtype);
    seen.insert(rule.target);
    auto sit = incoming.find(rule.source);
    if (rules_per_target[rule.target] > 1) {
      e.status = "conflict";
      e.detail = std::to_string(rules_per_target[rule.target]) + " rules aim at this target";
      if (sit != incoming.end()) e.original_source_shape = sit->second->shape();
      r.conflicts += 1;
    } else if (sit == incoming.end()) {
      if (allowed_missing(o, rule.target)) {
        e.status = "allowed_missing";
      } else {
        e.status = "missing_source";
        e.detail = "source '" + rule.source + "' not in checkpoint";
        r.missing += 1;
      }
    } else {
      fill_match(e, *sit->second, rule.transform, tgt, r);
    }
    r.entries.push_back(std::move(e));
  }
  for (const auto& [name, tgt] : targets) {
    if (seen.count(name)) continue;
    HandoffEntry e;
    e.name = name;
    e.expected_shape = tgt.shape;
    e.expected_dtype = dtype_name(tgt.dtype);
    if (allowed_missing(o, name)) {
      e.status = "allowed_missing";
    } else {
      e.status = "missing_rule";
      e.detail = "no rule maps a checkpoint key to it";
      r.missing += 1;
    }
    r.entries.push_back(std::move(e));
  }
  for (const auto& [k, t] : incoming) {
    if (!used_sources.count(k)) r.extra_keys.push_back(k);
  }
  r.extra += static_cast<int64_t>(r.extra_keys.size());
  finish(r, external, o);
  return r;
}

void commit_report(Module& module, const HandoffReport& report) {
  std::map<std::string, Tensor> live;
  // state_dict() returns detached aliases sharing storage, so copying into them writes the module.
  for (auto& [k, t] : module.state_dict()) live[k] = t;
  std::vector<std::pair<Tensor, Tensor>> writes;
  for (const auto& [k, src] : report.adapted) {
    auto it = live.find(k);
    if (it == live.end()) throw CheckpointError("load: the module has no key '" + k + "'");
    if (it->second.shape() != src.shape()) {
      throw CheckpointError("load: '" + k + "' changed shape since the report was made");
    }
    writes.emplace_back(it->second, src);
  }
  NoGradGuard ng;
  for (auto& [dst, src] : writes) {
    Tensor d = dst;
    copy_(d, src);
  }
}

namespace {
HandoffReport load_or_throw(Module& module, HandoffReport r, const char* op) {
  if (!r.compatible) {
    throw CheckpointError(std::string(op) + ": checkpoint is not compatible, nothing was loaded: " + r.problems());
  }
  commit_report(module, r);
  return r;
}
}  // namespace

HandoffReport load_state_dict_checked(Module& module, const StateDict& external, const HandoffOptions& o) {
  return load_or_throw(module, state_dict_compatibility(module, external, o), "load_state_dict_checked");
}

HandoffReport load_state_dict_subset_mapped_checked(Module& module, const StateDict& external, const KeyMap& key_map,
                                                    const HandoffOptions& o) {
  return load_or_throw(module, state_dict_compatibility_with_key_map(module, external, key_map, o),
                       "load_state_dict_subset_mapped_checked");
}

}  // namespace st::nn
