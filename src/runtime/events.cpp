#include "spiraltorch/runtime/events.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "core/op_observer.h"
#include "spiraltorch/optim/training_engine.h"
#include "spiraltorch/error.h"

namespace st::events {

namespace {

struct Subscription {
  uint64_t id;
  std::shared_ptr<const Callback> callback;  // shared: a dispatch in flight keeps it alive
};

struct Bus {
  std::mutex mutex;
  std::map<std::string, std::vector<Subscription>, std::less<>> by_type;
  uint64_t next_id = 0;
  size_t count = 0;
  int64_t tensor_op_listeners = 0;  // subscriptions a TensorOp event reaches ("TensorOp" plus "*")
};

Bus& bus() {
  // Leaked on purpose: listeners may hold foreign objects (Python callables) that must not be
  // destroyed during static destruction, after their runtime is gone.
  static Bus* b = new Bus();
  return *b;
}

bool reaches_tensor_op(std::string_view type) { return type == kTensorOp || type == kWildcard; }

void publish_tensor_op(const char* op_name, const Shape& input_shape, const Shape& output_shape);

// Called under the bus lock whenever TensorOp's listener count changes: ops call the publisher
// only while someone listens, so the count and the installed observer never disagree.
void add_tensor_op_listeners(Bus& b, int64_t delta) {
  b.tensor_op_listeners += delta;
  op_observer::install(b.tensor_op_listeners > 0 ? &publish_tensor_op : nullptr);
}

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

const Value* Event::find(std::string_view name) const {
  for (const auto& [key, value] : fields) {
    if (key == name) return &value;
  }
  return nullptr;
}

uint64_t subscribe(const std::string& type, Callback callback) {
  if (type.empty()) throw ValueError("events.subscribe: the event type must be a non-empty string");
  if (!callback) throw ValueError("events.subscribe: the callback for '" + type + "' is empty");
  Bus& b = bus();
  const std::lock_guard lock(b.mutex);
  const uint64_t id = ++b.next_id;
  b.by_type[type].push_back({id, std::make_shared<const Callback>(std::move(callback))});
  ++b.count;
  if (reaches_tensor_op(type)) add_tensor_op_listeners(b, 1);
  return id;
}

bool unsubscribe(const std::string& type, uint64_t id) {
  std::shared_ptr<const Callback> dropped;  // released after the lock
  Bus& b = bus();
  {
    const std::lock_guard lock(b.mutex);
    const auto it = b.by_type.find(type);
    if (it == b.by_type.end()) return false;
    auto& subs = it->second;
    for (auto s = subs.begin(); s != subs.end(); ++s) {
      if (s->id != id) continue;
      dropped = std::move(s->callback);
      subs.erase(s);
      if (subs.empty()) b.by_type.erase(it);
      --b.count;
      if (reaches_tensor_op(type)) add_tensor_op_listeners(b, -1);
      return true;
    }
  }
  return false;
}

size_t clear(const std::optional<std::string>& type) {
  std::map<std::string, std::vector<Subscription>, std::less<>> dropped;  // released after the lock
  Bus& b = bus();
  size_t n = 0;
  {
    const std::lock_guard lock(b.mutex);
    if (!type) {
      dropped.swap(b.by_type);
    } else if (const auto it = b.by_type.find(*type); it != b.by_type.end()) {
      dropped.insert(b.by_type.extract(it));
    }
    for (const auto& [t, subs] : dropped) {
      n += subs.size();
      if (reaches_tensor_op(t)) add_tensor_op_listeners(b, -static_cast<int64_t>(subs.size()));
    }
    b.count -= n;
  }
  return n;
}

bool tensor_op_listened() noexcept { return op_observer::current() != nullptr; }

bool has_listeners(std::string_view type) {
  Bus& b = bus();
  const std::lock_guard lock(b.mutex);
  return b.by_type.find(type) != b.by_type.end() || b.by_type.find(kWildcard) != b.by_type.end();
}

size_t listener_count() {
  Bus& b = bus();
  const std::lock_guard lock(b.mutex);
  return b.count;
}

PublishReport publish(Event event) {
  if (event.type.empty()) throw ValueError("events.publish: the event type must be a non-empty string");
  event.timestamp = now_seconds();
  std::vector<Subscription> targets;  // snapshot: listeners run without the lock
  {
    Bus& b = bus();
    const std::lock_guard lock(b.mutex);
    if (event.type != kWildcard) {
      if (const auto it = b.by_type.find(event.type); it != b.by_type.end()) targets = it->second;
    }
    if (const auto it = b.by_type.find(kWildcard); it != b.by_type.end()) {
      targets.insert(targets.end(), it->second.begin(), it->second.end());
    }
  }
  PublishReport report;
  report.event_type = event.type;
  report.matched = targets.size();
  for (const Subscription& s : targets) {
    try {
      (*s.callback)(event);
      ++report.delivered;
    } catch (const std::exception& e) {
      report.failures.push_back({s.id, e.what()});
    } catch (...) {
      report.failures.push_back({s.id, "unknown exception"});
    }
  }
  return report;
}

namespace {
void publish_tensor_op(const char* op_name, const Shape& input_shape, const Shape& output_shape) {
  Event e;
  e.type = std::string(kTensorOp);
  e.fields.reserve(3);
  e.fields.emplace_back("op_name", std::string(op_name));
  e.fields.emplace_back("input_shape", std::vector<int64_t>(input_shape.begin(), input_shape.end()));
  e.fields.emplace_back("output_shape", std::vector<int64_t>(output_shape.begin(), output_shape.end()));
  // Listeners that build tensors must not re-announce their own ops while handling this one.
  ++op_observer::depth();
  struct Restore {
    ~Restore() { --op_observer::depth(); }
  } restore;
  publish(std::move(e));
}

// The training engine's steps and epochs (TrainerStep, EpochStart, EpochEnd), published while
// anything listens. Installed once with the runtime: each step then costs one listener check.
void publish_training(const char* type, const optim::StepReport* step, const optim::EpochReport* epoch) {
  if (!has_listeners(type)) return;
  Event e;
  e.type = type;
  if (step) {
    e.fields = {{"epoch", step->epoch}, {"step", step->step},       {"samples", step->samples},
                {"loss", step->loss},   {"skipped", step->skipped}, {"source", step->source}};
    if (step->skipped) e.fields.emplace_back("skip_reason", step->skip_reason);
    for (const auto& [name, value] : step->metrics) e.fields.emplace_back(name, value);
  } else if (epoch) {
    e.fields = {{"epoch", epoch->epoch}, {"source", epoch->source}};
    if (std::string_view(type) == "EpochEnd") {
      e.fields.emplace_back("loss", epoch->average_loss);
      e.fields.emplace_back("batches", epoch->batches);
      e.fields.emplace_back("skipped_steps", epoch->skipped_steps);
      if (epoch->val_loss) e.fields.emplace_back("val_loss", *epoch->val_loss);
      if (epoch->val_accuracy) e.fields.emplace_back("val_accuracy", *epoch->val_accuracy);
    }
  }
  publish(std::move(e));
}

[[maybe_unused]] const bool training_publisher_installed = (optim::training_observer::install(&publish_training), true);
}  // namespace

}  // namespace st::events
