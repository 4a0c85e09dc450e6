#pragma once
// The process-wide event bus: typed events (`TensorOp`, `EpochEnd`, custom types, ...) delivered
// synchronously to subscribed callbacks. Built-in ops announce themselves through the core's op
// observer, which costs them one atomic load when nobody listens.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::events {

// One field value of an event: none, bool, integer, float, text, or an integer list (a shape).
using Value = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>>;

struct Event {
  std::string type;
  // Ordered (name, value) pairs; the order is the order listeners see them in.
  std::vector<std::pair<std::string, Value>> fields;
  double timestamp = 0.0;  // UNIX seconds, set by publish()

  // The value of field `name`, or nullptr.
  const Value* find(std::string_view name) const;
};

using Callback = std::function<void(const Event&)>;

struct Failure {
  uint64_t subscription_id;
  std::string message;
};

struct PublishReport {
  std::string event_type;
  size_t matched = 0;    // listeners the event was addressed to
  size_t delivered = 0;  // listeners that returned normally
  std::vector<Failure> failures;
  bool ok() const { return failures.empty(); }
};

// The wildcard type: its listeners receive every event.
inline constexpr std::string_view kWildcard = "*";
inline constexpr std::string_view kTensorOp = "TensorOp";

// Calls `callback(event)` for every event of `type` ("*" for all). Returns the subscription id;
// ids increase from 1 across all types. Throws ValueError on an empty type or callback.
uint64_t subscribe(const std::string& type, Callback callback);
// Removes one subscription; false when `type` has no subscription `id`.
bool unsubscribe(const std::string& type, uint64_t id);
// Removes every subscription of `type` (all types when nullopt); returns how many went.
size_t clear(const std::optional<std::string>& type = std::nullopt);
// True when an event of `type` would reach a listener (specific or wildcard).
bool has_listeners(std::string_view type);
// Number of live subscriptions of all types.
size_t listener_count();

// Delivers `event` (timestamp set now) to the listeners of its type in subscription order, then to
// the wildcard listeners; a listener that throws is recorded in the report and dispatch goes on.
// Listeners run on the calling thread, outside the bus lock (they may subscribe or publish).
PublishReport publish(Event event);

// True while a TensorOp event would reach a listener (specific or wildcard): the bus then has its
// publisher installed as the core's op observer (src/core/op_observer.h), through which built-in
// ops announce themselves without including the runtime.
bool tensor_op_listened() noexcept;

}  // namespace st::events
