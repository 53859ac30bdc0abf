// Reference counts for element handles. Two snapshots of the same window hold
// the same ids (a backend maps one element to one id), so releasing one
// snapshot must not free what the other still holds. Used on the worker
// thread only.
#pragma once

#include <unordered_map>
#include <vector>

#include "backend.h"

namespace axsnap {

class HandleLedger {
 public:
  void Acquire(const std::vector<ElementId>& ids) {
    for (ElementId id : ids) counts_[id]++;
  }

  // Drops one reference per id; the backend forgets ids nobody holds any more.
  void Release(Backend& backend, const std::vector<ElementId>& ids) {
    std::vector<ElementId> free;
    for (ElementId id : ids) {
      auto it = counts_.find(id);
      if (it == counts_.end()) continue;
      if (--it->second == 0) {
        counts_.erase(it);
        free.push_back(id);
      }
    }
    if (!free.empty()) backend.Release(free);
  }

  // Ids a walk saw but did not keep: forgotten unless some snapshot holds them.
  void ReleaseUnheld(Backend& backend, const std::vector<ElementId>& ids) {
    std::vector<ElementId> free;
    for (ElementId id : ids)
      if (counts_.find(id) == counts_.end()) free.push_back(id);
    if (!free.empty()) backend.Release(free);
  }

  size_t Held() const { return counts_.size(); }

 private:
  std::unordered_map<ElementId, int> counts_;
};

}  // namespace axsnap
