// The bounded walk: breadth-first, level by level, so a backend can pipeline
// one level's reads into about one round trip. It owns the policies that must
// not differ per platform: node and depth limits, the overall deadline, the
// cycle guard, the visible-row cut and not descending into hidden elements.
// It reports how it ended (complete, node limit, depth limit, deadline).
#pragma once

#include "backend.h"
#include "types.h"

namespace axsnap {

struct WalkOptions {
  int64_t maxNodes = 2400;  // elements read; the renderer prints at most its own limit
  int maxDepth = 64;
  Clock::time_point deadline;
  int maxRows = 20;  // rows kept per list (visible ones)
  // Whether elements at maxDepth have their children listed, so the walk can
  // say it was cut by depth. A caller that wants only the top levels (the
  // menu bar's items) turns it off and saves a call per element.
  bool probeBeyondDepth = true;
};

struct WalkResult {
  RawNode root;
  WalkEnd ended = WalkEnd::kComplete;
  int64_t nodesObserved = 0;
  std::vector<std::string> notes;
  // Every element id the result holds, for release: its nodes' (the root first), then the labels its nodes
  // name in labelledBy that are not nodes of it.
  std::vector<ElementId> ids;
  // Ids the walk was given but did not keep (cut rows, dead or duplicate elements).
  std::vector<ElementId> dropped;
};

// Walks the subtree of `root` (already identified by the caller). Errors only
// when the root itself cannot be read; a failure below the root cuts that
// branch and is reported in `notes`.
Error Walk(Backend& backend, ElementId root, const Rect* windowFrame, const WalkOptions& options, WalkResult& out);

// Role predicates the walk needs (both platforms' vocabularies).
bool IsListRole(const std::string& role);
bool IsRowRole(const std::string& role);
bool IsClippingRole(const std::string& role);
bool IsHidden(const NodeAttributes& a);

}  // namespace axsnap
