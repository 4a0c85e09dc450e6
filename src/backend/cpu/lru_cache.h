#pragma once
// A small thread-safe LRU map for objects that are expensive to build and then shared
// read-only (oneDNN primitives in src/backend/cpu/conv_onednn.cpp).
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace st::backend {

template <class Key, class Value, class Hash = std::hash<Key>>
class LruCache {
 public:
  // A null pointer is a valid cached value (e.g. "this cannot be built").
  using Ptr = std::shared_ptr<const Value>;

  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  // The value for `key`, built by `make()` on a miss. `make` runs outside the lock (it may
  // take milliseconds); when two threads miss at once, the first value stored wins.
  template <class Make>
  Ptr get(const Key& key, Make&& make) {
    {
      const std::lock_guard lock(mu_);
      if (const auto it = index_.find(key); it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
    }
    Ptr made = std::forward<Make>(make)();
    const std::lock_guard lock(mu_);
    if (const auto it = index_.find(key); it != index_.end()) return it->second->second;
    order_.emplace_front(key, made);
    index_.emplace(key, order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();  // callers still holding the Ptr keep the value alive
    }
    return made;
  }

  size_t size() const {
    const std::lock_guard lock(mu_);
    return order_.size();
  }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::pair<Key, Ptr>> order_;  // most recently used first
  std::unordered_map<Key, typename std::list<std::pair<Key, Ptr>>::iterator, Hash> index_;
};

}  // namespace st::backend
