// Checkpoint and resume of a training loop (see include/spiraltorch/io/training_state.h).
#include "spiraltorch/io/training_state.h"

#include <cmath>
#include <optional>
#include <set>
#include <utility>

#include "spiraltorch/error.h"
#include "spiraltorch/io/safetensors.h"
#include "spiraltorch/io/structure.h"

namespace st::io {
namespace {

using Kind = Structure::Kind;

[[noreturn]] void bad(const std::string& path, const std::string& reason) {
  throw CheckpointError("load_training_state: " + path + ": " + reason);
}

// ---- building the structure

Structure int_node(int64_t v) {
  Structure s;
  s.kind = Kind::Int, s.integer = v;
  return s;
}
Structure float_node(double v) {
  Structure s;
  s.kind = Kind::Float, s.number = v;
  return s;
}
Structure string_node(std::string v) {
  Structure s;
  s.kind = Kind::String, s.text = std::move(v);
  return s;
}
Structure floats_node(const std::vector<double>& values) {
  Structure s;
  s.kind = Kind::List;
  for (double v : values) s.items.push_back(float_node(v));
  return s;
}
Structure dict_node() {
  Structure s;
  s.kind = Kind::Dict;
  return s;
}
void put(Structure& dict, const std::string& key, Structure value) {
  dict.entries.emplace_back(string_node(key), std::move(value));
}
// A tensor stored under `key` in `tensors`.
Structure tensor_node(NamedTensors& tensors, const std::string& key, const Tensor& t) {
  Structure s;
  s.kind = Kind::Tensor, s.text = key;
  tensors.emplace_back(key, t.detach());
  return s;
}

Structure scheduler_node(const optim::SchedulerState& st, const std::string& type) {
  Structure d = dict_node();
  put(d, "last_epoch", int_node(st.last_epoch));
  put(d, "_step_count", int_node(st.step_count));
  put(d, "base_lrs", floats_node(st.base_lrs));
  put(d, "_last_lr", floats_node(st.last_lrs));
  for (const auto& [k, v] : st.extra) put(d, k, float_node(v));
  if (!st.children.empty()) {
    Structure children;
    children.kind = Kind::List;
    for (const optim::SchedulerState& c : st.children) children.items.push_back(scheduler_node(c, ""));
    put(d, "_schedulers", std::move(children));
  }
  if (!type.empty()) put(d, "type", string_node(type));
  return d;
}

// ---- reading it back

struct Reader {
  const std::string& path;
  const std::map<std::string, Tensor>& tensors;

  const Structure* find(const Structure& dict, const std::string& key) const {
    for (const auto& [k, v] : dict.entries)
      if (k.kind == Kind::String && k.text == key) return &v;
    return nullptr;
  }
  const Structure& need(const Structure& dict, const std::string& key, Kind kind, const std::string& where) const {
    const Structure* v = find(dict, key);
    if (!v) bad(path, where + " has no '" + key + "'");
    if (v->kind != kind) bad(path, where + "['" + key + "'] has the wrong type");
    return *v;
  }
  int64_t integer(const Structure& s, const std::string& where) const {
    if (s.kind != Kind::Int) bad(path, where + " must be an int");
    return s.integer;
  }
  double number(const Structure& s, const std::string& where) const {
    if (s.kind == Kind::Float) return s.number;
    if (s.kind == Kind::Int) return static_cast<double>(s.integer);
    if (s.kind == Kind::Bool) return s.boolean ? 1.0 : 0.0;
    bad(path, where + " must be a number");
  }
  std::vector<double> numbers(const Structure& s, const std::string& where) const {
    if (s.kind != Kind::List && s.kind != Kind::Tuple) bad(path, where + " must be a list of numbers");
    std::vector<double> out;
    for (const Structure& item : s.items) out.push_back(number(item, where));
    return out;
  }
  Tensor tensor(const Structure& s, const std::string& where) const {
    if (s.kind != Kind::Tensor) bad(path, where + " must be a tensor");
    return tensors.at(s.text);  // decode_structure checked the key
  }
  void check_type(const Structure& dict, const std::string& want, const std::string& where) const {
    const Structure* t = find(dict, "type");
    if (t && t->kind == Kind::String && t->text != want) {
      bad(path, "the file holds the " + where + " state of a " + t->text + ", not of a " + want);
    }
  }

  nn::StateDict model(const Structure& d) const {
    if (d.kind != Kind::Dict) bad(path, "'model' must be a dict");
    nn::StateDict out;
    for (const auto& [k, v] : d.entries) {
      if (k.kind != Kind::String) bad(path, "'model' keys must be strings");
      out.emplace_back(k.text, tensor(v, "model['" + k.text + "']"));
    }
    return out;
  }

  optim::OptimizerState optimizer(const Structure& d, const std::string& type) const {
    if (d.kind != Kind::Dict) bad(path, "'optimizer' must be a dict");
    check_type(d, type, "optimizer");
    optim::OptimizerState s;
    for (const auto& [k, v] : need(d, "state", Kind::Dict, "optimizer").entries) {
      if (k.kind != Kind::Int) bad(path, "optimizer['state'] keys must be parameter numbers");
      if (v.kind != Kind::Dict) bad(path, "optimizer['state'][" + std::to_string(k.integer) + "] must be a dict");
      optim::ParamState ps;
      for (const auto& [bk, bv] : v.entries) {
        const std::string where = "optimizer['state'][" + std::to_string(k.integer) + "]['" + bk.text + "']";
        if (bk.kind != Kind::String) bad(path, "optimizer state keys must be strings");
        if (bk.text == "step") {
          ps.step = bv.kind == Kind::Tensor ? static_cast<int64_t>(tensor(bv, where).item())
                                            : static_cast<int64_t>(number(bv, where));
        } else if (bv.kind != Kind::None) {
          ps.buffers.emplace(bk.text, tensor(bv, where));
        }
      }
      s.state.emplace(k.integer, std::move(ps));
    }
    // PyTorch's pair options (as Python's state_dict writes them) are kept as two numbers each.
    static const std::map<std::string, std::pair<std::string, std::string>> pairs{
        {"betas", {"beta1", "beta2"}},
        {"etas", {"eta_minus", "eta_plus"}},
        {"step_sizes", {"step_size_min", "step_size_max"}}};
    const Structure& groups = need(d, "param_groups", Kind::List, "optimizer");
    for (size_t gi = 0; gi < groups.items.size(); ++gi) {
      const Structure& g = groups.items[gi];
      const std::string where = "optimizer['param_groups'][" + std::to_string(gi) + "]";
      if (g.kind != Kind::Dict) bad(path, where + " must be a dict");
      optim::Options o;
      std::vector<int64_t> ids;
      for (const auto& [k, v] : g.entries) {
        if (k.kind != Kind::String) bad(path, where + " keys must be strings");
        if (k.text == "params") {
          if (v.kind != Kind::List && v.kind != Kind::Tuple) bad(path, where + "['params'] must be a list");
          for (const Structure& i : v.items) ids.push_back(integer(i, where + "['params']"));
        } else if (auto p = pairs.find(k.text); p != pairs.end()) {
          const std::vector<double> two = numbers(v, where + "['" + k.text + "']");
          if (two.size() != 2) bad(path, where + "['" + k.text + "'] must hold two numbers");
          o[p->second.first] = two[0];
          o[p->second.second] = two[1];
        } else if (v.kind == Kind::Float || v.kind == Kind::Int || v.kind == Kind::Bool) {
          o[k.text] = number(v, where);
        }  // anything else (PyTorch's foreach=None, ...) is not an option here
      }
      s.groups.push_back(std::move(o));
      s.group_params.push_back(std::move(ids));
    }
    if (const Structure* n = find(d, "skipped_steps")) s.skipped_steps = integer(*n, "optimizer['skipped_steps']");
    return s;
  }

  optim::SchedulerState scheduler(const Structure& d, const std::string& type, const std::string& where) const {
    if (d.kind != Kind::Dict) bad(path, where + " must be a dict");
    if (!type.empty()) check_type(d, type, "scheduler");
    optim::SchedulerState s;
    s.last_epoch = integer(need(d, "last_epoch", Kind::Int, where), where + "['last_epoch']");
    const Structure* count = find(d, "_step_count");
    s.step_count = count ? integer(*count, where + "['_step_count']") : s.last_epoch + 1;
    const Structure* base = find(d, "base_lrs");
    if (!base) bad(path, where + " has no 'base_lrs'");
    s.base_lrs = numbers(*base, where + "['base_lrs']");
    if (const Structure* last = find(d, "_last_lr")) s.last_lrs = numbers(*last, where + "['_last_lr']");
    static const std::set<std::string> common{"last_epoch", "_step_count", "base_lrs",
                                              "_last_lr",   "_schedulers", "type"};
    for (const auto& [k, v] : d.entries) {
      if (k.kind != Kind::String) bad(path, where + " keys must be strings");
      if (!common.count(k.text) && (v.kind == Kind::Float || v.kind == Kind::Int)) s.extra[k.text] = number(v, where);
    }
    if (const Structure* children = find(d, "_schedulers")) {
      if (children->kind != Kind::List) bad(path, where + "['_schedulers'] must be a list");
      for (size_t i = 0; i < children->items.size(); ++i)
        s.children.push_back(scheduler(children->items[i], "", where + "['_schedulers'][" + std::to_string(i) + "]"));
    }
    return s;
  }
};

}  // namespace

void save_training_state(const std::string& path, const nn::Module& model, const optim::Optimizer& optimizer,
                         const optim::LRScheduler* scheduler, const Progress& progress) {
  NamedTensors tensors;
  Structure root = dict_node();

  Structure m = dict_node();
  for (const auto& [k, t] : model.state_dict()) put(m, k, tensor_node(tensors, "model/" + k, t));
  put(root, "model", std::move(m));

  const optim::OptimizerState os = optimizer.state_dict();
  Structure o = dict_node();
  Structure state = dict_node();
  for (const auto& [i, ps] : os.state) {
    Structure e = dict_node();
    put(e, "step", int_node(ps.step));
    for (const auto& [k, t] : ps.buffers)
      if (t.defined()) put(e, k, tensor_node(tensors, "optimizer/" + std::to_string(i) + "/" + k, t));
    state.entries.emplace_back(int_node(i), std::move(e));
  }
  put(o, "state", std::move(state));
  Structure groups;
  groups.kind = Kind::List;
  for (size_t g = 0; g < os.groups.size(); ++g) {
    Structure gd = dict_node();
    for (const auto& [k, v] : os.groups[g]) put(gd, k, float_node(v));
    Structure ids;
    ids.kind = Kind::List;
    for (int64_t i : os.group_params[g]) ids.items.push_back(int_node(i));
    put(gd, "params", std::move(ids));
    groups.items.push_back(std::move(gd));
  }
  put(o, "param_groups", std::move(groups));
  put(o, "skipped_steps", int_node(os.skipped_steps));
  put(o, "type", string_node(optimizer.type_name()));
  put(root, "optimizer", std::move(o));

  if (scheduler) put(root, "scheduler", scheduler_node(scheduler->state_dict(), scheduler->type_name()));

  Structure p = dict_node();
  for (const auto& [k, v] : progress) put(p, k, int_node(v));
  put(root, "progress", std::move(p));

  save_safetensors(path, tensors, {{kStructureMetadataKey, encode_structure(root)}});
}

Progress load_training_state(const std::string& path, nn::Module& model, optim::Optimizer& optimizer,
                             optim::LRScheduler* scheduler) {
  Checkpoint file = load_safetensors(path);
  const auto meta = file.metadata.find(kStructureMetadataKey);
  if (meta == file.metadata.end()) bad(path, "not a training state (no '" + std::string(kStructureMetadataKey) + "')");
  std::map<std::string, Tensor> tensors;
  std::map<std::string, uint64_t> keys;  // key -> byte size, as decode_structure checks them
  for (auto& [k, t] : file.tensors) {
    keys[k] = static_cast<uint64_t>(t.numel()) * t.itemsize();
    tensors.emplace(k, std::move(t));
  }
  const Structure root = decode_structure(meta->second, keys);
  const Reader r{path, tensors};
  if (root.kind != Kind::Dict) bad(path, "the saved object is not a dict");

  // Parse everything first.
  const nn::StateDict weights = r.model(r.need(root, "model", Kind::Dict, "the file"));
  const optim::OptimizerState os =
      r.optimizer(r.need(root, "optimizer", Kind::Dict, "the file"), optimizer.type_name());
  std::optional<optim::SchedulerState> ss;
  if (scheduler) {
    const Structure* s = r.find(root, "scheduler");
    if (!s) bad(path, "the file holds no scheduler state");
    ss = r.scheduler(*s, scheduler->type_name(), "scheduler");
  }
  Progress progress;
  if (const Structure* p = r.find(root, "progress")) {
    if (p->kind != Kind::Dict) bad(path, "'progress' must be a dict");
    for (const auto& [k, v] : p->entries) {
      if (k.kind != Kind::String) bad(path, "'progress' keys must be strings");
      progress[k.text] = r.integer(v, "progress['" + k.text + "']");
    }
  }

  // Then load: each load_state_dict checks before it writes; a later failure restores the earlier ones.
  nn::StateDict model_before;
  for (const auto& [k, t] : model.state_dict()) model_before.emplace_back(k, t.detach().clone());
  model.load_state_dict(weights, /*strict=*/true);
  std::optional<optim::OptimizerState> optimizer_before;
  try {
    if (scheduler) optimizer_before = optimizer.state_dict();
    optimizer.load_state_dict(os);
    if (scheduler) scheduler->load_state_dict(*ss);
  } catch (...) {
    model.load_state_dict(model_before, true);
    if (optimizer_before) optimizer.load_state_dict(*optimizer_before);
    throw;
  }
  return progress;
}

}  // namespace st::io
