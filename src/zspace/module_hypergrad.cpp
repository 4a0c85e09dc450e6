#include "spiraltorch/zspace/module_hypergrad.h"

#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "spiraltorch/error.h"

namespace st::zspace {

namespace {

// Settings per module. A module's address can be reused by a new module after the first is
// destroyed, so each entry keeps the module's lifetime token and counts only while that token is
// the live module's own.
struct Entry {
  std::weak_ptr<const void> lifetime;
  HypergradSettings settings;
};

struct Table {
  std::mutex mutex;
  std::unordered_map<const nn::Module*, Entry> entries;
  size_t swept_size = 0;  // entries after the last sweep of expired ones
};

Table& table() {
  // Leaked on purpose: modules held by Python objects may be destroyed during interpreter exit.
  static Table* t = new Table();
  return *t;
}

bool same_owner(const std::weak_ptr<const void>& a, const std::weak_ptr<const void>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

// The live entry of `module`, or nullptr (a stale entry for a former module at this address goes).
// Called with the table locked.
Entry* find_locked(Table& t, const nn::Module& module) {
  const auto it = t.entries.find(&module);
  if (it == t.entries.end()) return nullptr;
  if (it->second.lifetime.expired() || !same_owner(it->second.lifetime, module.lifetime())) {
    t.entries.erase(it);
    return nullptr;
  }
  return &it->second;
}

void set_locked(Table& t, const nn::Module& module, const std::optional<HypergradSettings>& settings) {
  if (!settings) {
    t.entries.erase(&module);
    return;
  }
  t.entries.insert_or_assign(&module, Entry{module.lifetime(), *settings});
  // Entries of destroyed modules are dropped once the table has doubled since the last sweep.
  if (t.entries.size() > 2 * t.swept_size + 16) {
    std::erase_if(t.entries, [](const auto& kv) { return kv.second.lifetime.expired(); });
    t.swept_size = t.entries.size();
  }
}

}  // namespace

void attach_hypergrad(nn::Module& module, double curvature, double learning_rate) {
  if (!(curvature < 0) || !std::isfinite(curvature)) {
    throw ValueError("attach_hypergrad: curvature must be negative and finite, got " + std::to_string(curvature));
  }
  if (!(learning_rate > 0) || !std::isfinite(learning_rate)) {
    throw ValueError("attach_hypergrad: learning_rate must be positive and finite, got " +
                     std::to_string(learning_rate));
  }
  const std::vector<std::pair<std::string, nn::Module*>> modules = module.named_modules();
  Table& t = table();
  const std::lock_guard lock(t.mutex);
  for (const auto& [path, m] : modules) set_locked(t, *m, HypergradSettings{curvature, learning_rate});
}

void detach_hypergrad(nn::Module& module) {
  const std::vector<std::pair<std::string, nn::Module*>> modules = module.named_modules();
  Table& t = table();
  const std::lock_guard lock(t.mutex);
  for (const auto& [path, m] : modules) t.entries.erase(m);
}

void set_own_hypergrad(const nn::Module& module, const std::optional<HypergradSettings>& settings) {
  Table& t = table();
  const std::lock_guard lock(t.mutex);
  set_locked(t, module, settings);
}

std::optional<HypergradSettings> hypergrad_of(const nn::Module& module) {
  Table& t = table();
  const std::lock_guard lock(t.mutex);
  const Entry* e = find_locked(t, module);
  return e ? std::optional<HypergradSettings>(e->settings) : std::nullopt;
}

std::vector<std::pair<Tensor, std::optional<HypergradSettings>>> parameters_with_hypergrad(const nn::Module& module) {
  std::vector<std::pair<Tensor, std::optional<HypergradSettings>>> out;
  std::set<TensorImpl*> seen;  // a parameter shared by two modules is updated once
  Table& t = table();
  const std::lock_guard lock(t.mutex);
  std::function<void(const nn::Module&)> visit = [&](const nn::Module& m) {
    const Entry* e = find_locked(t, m);
    const std::optional<HypergradSettings> settings = e ? std::optional<HypergradSettings>(e->settings) : std::nullopt;
    for (const auto& [name, p] : m.own_parameters()) {
      if (p.defined() && p.requires_grad() && seen.insert(p.impl()).second) out.emplace_back(p, settings);
    }
    for (const auto& [slot, child] : m.children()) visit(*child);
  };
  visit(module);
  return out;
}

}  // namespace st::zspace
