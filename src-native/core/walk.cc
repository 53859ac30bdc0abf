#include "walk.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace axsnap {

bool IsListRole(const std::string& r) {
  return r == "AXTable" || r == "AXOutline" || r == "AXList" || r == "AXBrowser" || r == "table" || r == "tree table" ||
         r == "tree" || r == "list" || r == "list box";
}

bool IsRowRole(const std::string& r) {
  return r == "AXRow" || r == "table row" || r == "list item" || r == "tree item";
}

bool IsClippingRole(const std::string& r) {
  return r == "AXScrollArea" || r == "scroll pane" || r == "viewport" || IsListRole(r);
}

bool IsHidden(const NodeAttributes& a) {
  if (a.states.visible.has_value() && !*a.states.visible) return true;
  if (a.frame && (a.frame->x == kHiddenCoordinate || a.frame->y == kHiddenCoordinate)) return true;
  return false;
}

namespace {

struct Slot {
  ElementId id = 0;
  NodeAttributes attrs;
  std::string via;
  std::optional<int64_t> rowIndex;  // ChildList::rowIndex, kept over the node's read
  size_t parent = SIZE_MAX;
  int depth = 0;
  std::optional<Rect> clip;  // visible area at this node
  std::vector<size_t> children;
  bool dead = false;
};

std::optional<Rect> IntersectOpt(const std::optional<Rect>& a, const std::optional<Rect>& b) {
  if (!a) return b;
  if (!b) return a;
  Rect r;
  r.x = std::max(a->x, b->x);
  r.y = std::max(a->y, b->y);
  double right = std::min(a->x + a->w, b->x + b->w);
  double bottom = std::min(a->y + a->h, b->y + b->h);
  r.w = std::max(0.0, right - r.x);
  r.h = std::max(0.0, bottom - r.y);
  return r;
}

// Builds the tree from the flat slots without recursion, so a deep tree
// cannot overflow the worker thread's stack. Children are appended in order;
// a node's children vector is reserved first so pointers into it stay valid.
RawNode Build(std::vector<Slot>& slots, std::vector<ElementId>& ids) {
  RawNode root;
  std::vector<std::pair<size_t, RawNode*>> stack{{0, &root}};
  while (!stack.empty()) {
    auto [i, node] = stack.back();
    stack.pop_back();
    Slot& s = slots[i];
    node->id = s.id;
    node->attrs = std::move(s.attrs);
    if (!s.via.empty()) node->via = s.via;
    ids.push_back(node->id);
    size_t live = 0;
    for (size_t c : s.children)
      if (!slots[c].dead) live++;
    node->children.resize(live);
    size_t k = live;
    for (size_t j = s.children.size(); j-- > 0;) {
      const size_t c = s.children[j];
      if (!slots[c].dead) stack.push_back({c, &node->children[--k]});
    }
  }
  return root;
}

// The permission error of a batch, if any element (or the call) had one.
Error Denied(const Error& err, const std::vector<Error>& errs) {
  if (err.code == ErrorCode::kPermissionDenied) return err;
  for (const Error& e : errs)
    if (e.code == ErrorCode::kPermissionDenied) return e;
  return {};
}

// A walk given up: every handle below the root (and any children just
// listed) goes back through `dropped`.
Error Abandon(const std::vector<Slot>& slots, const std::vector<ChildList>* lists, WalkResult& out, const Error& err) {
  std::unordered_set<ElementId> held;
  for (size_t i = 1; i < slots.size(); i++)
    if (held.insert(slots[i].id).second) out.dropped.push_back(slots[i].id);
  if (lists)
    for (const ChildList& l : *lists)
      for (ElementId id : l.ids)
        if (id != 0 && id != slots[0].id && held.insert(id).second) out.dropped.push_back(id);
  return err;
}

}  // namespace

Error Walk(Backend& backend, ElementId root, const Rect* windowFrame, const WalkOptions& options, WalkResult& out) {
  std::vector<Slot> slots;
  slots.reserve(256);
  std::unordered_set<ElementId> seen;

  {
    std::vector<NodeAttributes> attrs;
    std::vector<Error> errs;
    Error err = backend.ReadNodes({root}, attrs, errs, options.deadline);
    if (err) return err;
    if (errs.size() == 1 && errs[0]) return errs[0];
    Slot s;
    s.id = root;
    s.attrs = std::move(attrs[0]);
    s.clip = windowFrame ? std::optional<Rect>(*windowFrame) : s.attrs.frame;
    slots.push_back(std::move(s));
    seen.insert(root);
  }
  out.ended = WalkEnd::kComplete;
  std::vector<size_t> frontier{0};
  // Reads that failed. An element that is gone was removed between being listed and being read: the
  // tree changed, nothing was lost, as long as the window itself is still there (checked at the end).
  // Any other failure left elements out: the walk is not complete.
  bool appUnresponsive = false, readErrors = false;
  int64_t gone = 0;
  std::string firstError;
  auto failed = [&](const Error& e) {
    switch (e.code) {
      case ErrorCode::kNone: return;
      case ErrorCode::kElementGone: gone++; return;
      case ErrorCode::kTimeout: return;  // the deadline came first: the walk ends at its deadline
      case ErrorCode::kAppUnresponsive: appUnresponsive = true; break;
      default: readErrors = true; break;
    }
    if (firstError.empty()) firstError = e.message;
  };
  // A whole batch that failed: the bus going away is the caller's error, not a cut.
  auto batchFailed = [&](const Error& err) {
    if (err.code == ErrorCode::kTimeout || Clock::now() >= options.deadline)
      out.ended = WalkEnd::kDeadline;
    else
      failed(err);
  };

  while (!frontier.empty()) {
    if (Clock::now() >= options.deadline) {
      out.ended = WalkEnd::kDeadline;
      break;
    }
    if (!options.probeBeyondDepth && slots[frontier.front()].depth >= options.maxDepth) break;
    std::vector<ElementId> parentIds;
    parentIds.reserve(frontier.size());
    for (size_t i : frontier) parentIds.push_back(slots[i].id);
    std::vector<ChildList> lists;
    std::vector<Error> errs;
    Error err = backend.ReadChildren(parentIds, lists, errs, options.deadline);
    // Losing the permission mid-walk is not a cut: the caller must hear it.
    if (Error denied = Denied(err, errs)) return Abandon(slots, &lists, out, denied);
    if (err.code == ErrorCode::kNoAccessibilityBus) return Abandon(slots, &lists, out, err);
    if (err) {
      batchFailed(err);
      break;
    }

    // Children beyond the depth limit are not read: their existence cuts the walk.
    std::vector<size_t> added;
    bool nodeLimit = false;
    for (size_t f = 0; f < frontier.size(); f++) {
      size_t parent = frontier[f];
      if (f < errs.size() && errs[f]) {
        failed(errs[f]);
        continue;
      }
      const ChildList& list = lists[f];
      // Every id the backend handed out and the walk does not keep is reported, so its handle is freed.
      auto dropRest = [&](size_t from) {
        for (size_t k = from; k < list.ids.size(); k++)
          if (list.ids[k] != 0 && seen.find(list.ids[k]) == seen.end()) out.dropped.push_back(list.ids[k]);
      };
      if (nodeLimit || slots[parent].depth + 1 > options.maxDepth) {
        if (!nodeLimit && !list.ids.empty()) out.ended = WalkEnd::kDepthLimit;
        dropRest(0);
        continue;
      }
      if (list.total) slots[parent].attrs.rowCount = list.total;
      for (size_t k = 0; k < list.ids.size(); k++) {
        ElementId child = list.ids[k];
        // Cycle guard and de-duplication: an element already in the tree is not added again.
        if (child == 0 || seen.find(child) != seen.end()) continue;
        if (static_cast<int64_t>(slots.size()) >= options.maxNodes) {
          nodeLimit = true;
          dropRest(k);
          break;
        }
        seen.insert(child);
        Slot s;
        s.id = child;
        s.via = k < list.via.size() ? list.via[k] : std::string();
        if (k < list.rowIndex.size() && list.rowIndex[k] >= 0) s.rowIndex = list.rowIndex[k];
        s.parent = parent;
        s.depth = slots[parent].depth + 1;
        slots[parent].children.push_back(slots.size());
        added.push_back(slots.size());
        slots.push_back(std::move(s));
      }
    }
    if (nodeLimit) out.ended = WalkEnd::kNodeLimit;
    if (Clock::now() >= options.deadline) {
      // The children just added were never read: they are not part of the result.
      for (size_t i : added) slots[i].dead = true;
      out.ended = WalkEnd::kDeadline;
      break;
    }
    if (added.empty()) break;

    std::vector<ElementId> ids;
    ids.reserve(added.size());
    for (size_t i : added) ids.push_back(slots[i].id);
    std::vector<NodeAttributes> attrs;
    errs.clear();
    err = backend.ReadNodes(ids, attrs, errs, options.deadline);
    if (Error denied = Denied(err, errs)) return Abandon(slots, nullptr, out, denied);
    if (err.code == ErrorCode::kNoAccessibilityBus) return Abandon(slots, nullptr, out, err);
    if (err) {
      for (size_t i : added) slots[i].dead = true;
      batchFailed(err);
      break;
    }
    for (size_t k = 0; k < added.size(); k++) {
      Slot& s = slots[added[k]];
      if (k < errs.size() && errs[k]) {
        // An element that died or did not answer is dropped, not guessed at.
        s.dead = true;
        failed(errs[k]);
        continue;
      }
      s.attrs = std::move(attrs[k]);
      if (s.rowIndex) s.attrs.rowIndex = s.rowIndex;
      const Slot& p = slots[s.parent];
      s.clip = IsClippingRole(p.attrs.role) ? IntersectOpt(p.clip, p.attrs.frame) : p.clip;
    }

    // The visible-row cut: a list keeps the rows that intersect its visible area, at most maxRows.
    std::unordered_set<size_t> cutParents;
    for (size_t i : added) {
      const Slot& s = slots[i];
      if (!s.dead && IsRowRole(s.attrs.role) && IsListRole(slots[s.parent].attrs.role)) cutParents.insert(s.parent);
    }
    for (size_t parent : cutParents) {
      Slot& p = slots[parent];
      std::optional<Rect> clip = IntersectOpt(p.clip, p.attrs.frame);
      int64_t rows = 0, kept = 0;
      bool measurable = false;
      for (size_t c : p.children)
        if (!slots[c].dead && IsRowRole(slots[c].attrs.role) && slots[c].attrs.frame) measurable = true;
      for (size_t c : p.children) {
        Slot& row = slots[c];
        if (row.dead || !IsRowRole(row.attrs.role)) continue;
        // The row's place in the whole list, so "(showing A-B of M)" stays true after the cut.
        if (!row.attrs.rowIndex) row.attrs.rowIndex = rows;
        rows++;
        bool visible = !measurable || (clip && row.attrs.frame && Intersects(*row.attrs.frame, *clip));
        if (!visible || kept >= options.maxRows)
          row.dead = true;
        else
          kept++;
      }
      if (kept < rows && !p.attrs.rowCount) p.attrs.rowCount = rows;
    }

    // A batch that ran into the deadline left elements unread: the walk is not complete.
    if (Clock::now() >= options.deadline) {
      out.ended = WalkEnd::kDeadline;
      break;
    }
    std::vector<size_t> next;
    for (size_t i : added) {
      const Slot& s = slots[i];
      // Hidden elements are kept (the renderer leaves them out) but not descended into.
      if (!s.dead && !IsHidden(s.attrs)) next.push_back(i);
    }
    frontier.swap(next);
    if (out.ended == WalkEnd::kNodeLimit) break;
  }

  if (gone > 0 && out.ended != WalkEnd::kDeadline) {
    // Elements vanished: fine if the window is still there, a failed snapshot if it is not.
    std::vector<NodeAttributes> attrs;
    std::vector<Error> errs;
    Error err = backend.ReadNodes({root}, attrs, errs, options.deadline);
    if (!err && errs.size() == 1) err = errs[0];
    if (err.code == ErrorCode::kElementGone || err.code == ErrorCode::kNoAccessibilityBus)
      return Abandon(slots, nullptr, out, err);
    if (err) failed(err);
  }
  // Precedence of the one reason reported: deadline, then failed reads, then the limits.
  if (out.ended != WalkEnd::kDeadline) {
    if (appUnresponsive)
      out.ended = WalkEnd::kUnresponsive;
    else if (readErrors)
      out.ended = WalkEnd::kErrors;
  }
  if (appUnresponsive) out.notes.push_back("some elements did not answer in time and were left out");
  if (readErrors) out.notes.push_back("some elements could not be read and were left out: " + firstError);
  out.nodesObserved = 0;
  for (const Slot& s : slots)
    if (!s.dead) out.nodesObserved++;
  out.root = Build(slots, out.ids);
  for (const Slot& s : slots)
    if (s.dead) out.dropped.push_back(s.id);
  return {};
}

}  // namespace axsnap
