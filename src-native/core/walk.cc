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
  int64_t position = -1;  // index among all the parent's children, when the backend left some out
  bool dead = false;
  // A list whose children were counted, not all read (cut, or hidden ones left out): how many it has, and
  // those known not to be rows (ChildList::nonRows), so its rows can be counted instead.
  int64_t childrenAll = -1;
  std::vector<int64_t> nonRows;
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
// `labels`: the labelledBy handles of the nodes kept.
RawNode Build(std::vector<Slot>& slots, std::vector<ElementId>& ids, std::vector<ElementId>& labels) {
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
    labels.insert(labels.end(), node->attrs.labelledBy.begin(), node->attrs.labelledBy.end());
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
  for (const Slot& s : slots)
    for (ElementId id : s.attrs.labelledBy)
      if (id != slots[0].id && held.insert(id).second) out.dropped.push_back(id);
  if (lists)
    for (const ChildList& l : *lists)
      for (ElementId id : l.ids)
        if (id != 0 && id != slots[0].id && held.insert(id).second) out.dropped.push_back(id);
  return err;
}

// A long child list (kLongChildList, backend.h) is cut to its visible
// children before they are read: a 50,000-item page or a 5,000-row list would
// spend the node budget (and the deadline) on elements that cannot print. A
// range found by binary search is checked with these many children outside it.
constexpr size_t kCutSamples = 16;    // spread over both sides
constexpr size_t kCutNeighbours = 8;  // per side

// The frame of one element, read alone; nullopt when it has none, or it is at
// the hidden coordinate, or it could not be read.
std::optional<Rect> FrameOf(Backend& backend, ElementId id, Clock::time_point deadline) {
  if (id == 0) return std::nullopt;
  std::vector<std::optional<Rect>> frames;
  if (backend.ReadFrames({id}, frames, deadline) || frames.empty() || !frames[0]) return std::nullopt;
  const Rect& f = *frames[0];
  if (f.x == kHiddenCoordinate || f.y == kHiddenCoordinate) return std::nullopt;
  return f;
}

// The children of one parent by index: the listed ids, or (a list the backend
// only counted) asked for by index and remembered.
class ChildIndex {
 public:
  ChildIndex(Backend& backend, ElementId parent, const ChildList& list, Clock::time_point deadline)
      : backend_(backend), parent_(parent), list_(list), deadline_(deadline) {}
  size_t size() const { return list_.unlisted ? static_cast<size_t>(*list_.unlisted) : list_.ids.size(); }
  // Fetches the ids at `indices` (one batch); 0 for one that could not be read.
  void Fetch(const std::vector<int64_t>& indices) {
    if (!list_.unlisted) return;
    std::vector<int64_t> missing;
    for (int64_t k : indices)
      if (!got_.count(k)) missing.push_back(k);
    if (missing.empty()) return;
    std::vector<ElementId> ids;
    std::vector<Error> errs;
    if (Error err = backend_.ChildrenAt(parent_, missing, ids, errs, deadline_)) {
      if (err.code == ErrorCode::kTimeout) timedOut = true;
      ids.assign(missing.size(), 0);
    }
    for (const Error& e : errs)
      if (e.code == ErrorCode::kTimeout) timedOut = true;
    for (size_t i = 0; i < missing.size(); i++)
      got_[missing[i]] = i < ids.size() && !(i < errs.size() && errs[i]) ? ids[i] : 0;
  }
  ElementId At(size_t k) {
    if (!list_.unlisted) return list_.ids[k];
    Fetch({static_cast<int64_t>(k)});
    return got_[static_cast<int64_t>(k)];
  }
  // Whether the deadline's error left some children unfetched (a child kept as 0 is left out of the list).
  bool timedOut = false;
  // Every id fetched, for release of those not kept.
  std::vector<ElementId> Fetched() const {
    std::vector<ElementId> out;
    for (const auto& [k, id] : got_)
      if (id != 0) out.push_back(id);
    return out;
  }

 private:
  Backend& backend_;
  ElementId parent_;
  const ChildList& list_;
  Clock::time_point deadline_;
  std::unordered_map<int64_t, ElementId> got_;
};

// The range [first, end) of children whose frames reach into `clip`
// vertically, found by binary search over their frames (children follow the
// layout's order: a list's rows, a page's blocks). Samples outside the range
// are checked to be outside: a layout that does not follow the order, or an
// element without a frame, gives no range (false).
bool VisibleRange(Backend& backend, ChildIndex& children, const Rect& clip, Clock::time_point deadline, size_t& first,
                  size_t& end) {
  const size_t n = children.size();
  if (n == 0) return false;
  const double top = clip.y, bottom = clip.y + clip.h;
  // 0: above the clip, 1: reaches into it, 2: below it; -1: unknown.
  auto where = [&](const std::optional<Rect>& f) {
    if (!f) return -1;
    if (f->y + f->h <= top) return 0;
    if (f->y >= bottom) return 2;
    return 1;
  };
  auto probe = [&](size_t k) { return where(FrameOf(backend, children.At(k), deadline)); };
  // All of them on screen (two reads): nothing to cut.
  if (probe(0) == 1 && probe(n - 1) == 1) return false;
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int w = probe(mid);
    if (w < 0) return false;
    if (w == 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  first = lo;
  hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int w = probe(mid);
    if (w < 0) return false;
    if (w == 2)
      hi = mid;
    else
      lo = mid + 1;
  }
  end = lo;
  // Outside the range, in one batch, must lie outside: the children next to
  // it on both sides (an interleaved layout shows there) and evenly spaced
  // samples further out.
  std::vector<int64_t> at;
  std::vector<int> expect;
  auto outside = [&](size_t k, int side) {
    at.push_back(static_cast<int64_t>(k));
    expect.push_back(side);
  };
  for (size_t d = 1; d <= kCutNeighbours; d++) {
    if (first >= d) outside(first - d, 0);
    if (end + d - 1 < n) outside(end + d - 1, 2);
  }
  for (size_t s = 1; s <= kCutSamples / 2; s++) {
    if (first > 0) outside((first - 1) * s / (kCutSamples / 2), 0);
    if (end < n) outside(end + (n - 1 - end) * s / (kCutSamples / 2), 2);
  }
  children.Fetch(at);
  std::vector<ElementId> sample;
  for (int64_t k : at) sample.push_back(children.At(static_cast<size_t>(k)));
  std::vector<std::optional<Rect>> frames;
  if (backend.ReadFrames(sample, frames, deadline)) return false;
  for (size_t s = 0; s < sample.size(); s++) {
    if (sample[s] == 0 || s >= frames.size() || !frames[s]) return false;
    const Rect& f = *frames[s];
    if (f.x == kHiddenCoordinate || f.y == kHiddenCoordinate) continue;  // hidden: not on screen either way
    if (where(f) != expect[s]) return false;
  }
  return true;
}

// A long child list cut to what shows: its visible range when there is one;
// otherwise all of it (a listed one) or its first `cap` children (one only
// counted, whose ids cost a call each). Ids not kept go to `dropped`. `all`:
// how many children the list has, when only some are kept (else unchanged).
void CutLongList(Backend& backend, ElementId parent, ChildList& list, const std::optional<Rect>& clip, size_t cap,
                 Clock::time_point deadline, std::vector<ElementId>& dropped, int64_t& all, bool& timedOut) {
  ChildIndex children(backend, parent, list, deadline);
  const size_t n = children.size();
  size_t first = 0, end = n;
  const bool cut = clip && VisibleRange(backend, children, *clip, deadline, first, end);
  if (!cut && !list.unlisted) return;
  if (!cut) end = std::min(n, cap);
  std::vector<int64_t> range;
  for (size_t k = first; k < end; k++) range.push_back(static_cast<int64_t>(k));
  children.Fetch(range);
  all = static_cast<int64_t>(n) + list.hiddenLeftOut;
  ChildList kept;
  for (size_t k = first; k < end; k++) {
    const ElementId id = children.At(k);
    if (id == 0) continue;
    kept.ids.push_back(id);
    if (list.via.size() == n) kept.via.push_back(list.via[k]);
    kept.positions.push_back(list.positions.size() == n ? list.positions[k] : static_cast<int64_t>(k));
  }
  std::unordered_set<ElementId> keep(kept.ids.begin(), kept.ids.end());
  const std::vector<ElementId> every = list.unlisted ? children.Fetched() : list.ids;
  for (ElementId id : every)
    if (id != 0 && !keep.count(id)) dropped.push_back(id);
  kept.hiddenLeftOut = list.hiddenLeftOut;
  kept.total = list.total;
  kept.nonRows = std::move(list.nonRows);
  list = std::move(kept);
  if (children.timedOut) timedOut = true;
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
  bool appUnresponsive = false, readErrors = false, deadlineCut = false;
  int64_t gone = 0;
  std::string firstError;
  auto failed = [&](const Error& e) {
    switch (e.code) {
      case ErrorCode::kNone: return;
      case ErrorCode::kElementGone: gone++; return;
      // The deadline came first. A backend may say so a little before the clock reaches it (the AT-SPI
      // batch's timer fires early, or within its margin), so the walk can end before its deadline with
      // these elements unread: the error itself is what marks the cut.
      case ErrorCode::kTimeout: deadlineCut = true; return;
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
      ChildList& list = lists[f];
      // Every id the backend handed out and the walk does not keep is reported, so its handle is freed.
      auto dropRest = [&](size_t from) {
        for (size_t k = from; k < list.ids.size(); k++)
          if (list.ids[k] != 0 && seen.find(list.ids[k]) == seen.end()) out.dropped.push_back(list.ids[k]);
      };
      if (nodeLimit || slots[parent].depth + 1 > options.maxDepth) {
        if (!nodeLimit && (!list.ids.empty() || list.unlisted.value_or(0) > 0)) out.ended = WalkEnd::kDepthLimit;
        dropRest(0);
        continue;
      }
      int64_t all = -1;
      if ((list.unlisted || list.ids.size() >= kLongChildList) && !list.total) {
        const Slot& p = slots[parent];
        const std::optional<Rect> clip = IsClippingRole(p.attrs.role) ? IntersectOpt(p.clip, p.attrs.frame) : p.clip;
        const size_t room = static_cast<size_t>(std::max<int64_t>(0, options.maxNodes - int64_t(slots.size())));
        std::vector<ElementId> cut;
        CutLongList(backend, p.id, list, clip, room + 1, options.deadline, cut, all, deadlineCut);
        for (ElementId id : cut)
          if (id != 0 && seen.find(id) == seen.end()) out.dropped.push_back(id);
      }
      if (list.total) {
        slots[parent].attrs.rowCount = list.total;
      } else if (IsListRole(slots[parent].attrs.role) && (all >= 0 || list.hiddenLeftOut > 0)) {
        // Counted, not all read: the rows among all its children (hidden ones the backend left out still count
        // in "(showing A-B of M items)"); the visible-row cut below takes out the non-rows it reads.
        Slot& p = slots[parent];
        p.childrenAll = all >= 0 ? all : static_cast<int64_t>(list.ids.size()) + list.hiddenLeftOut;
        p.nonRows = std::move(list.nonRows);
        p.attrs.rowCount = p.childrenAll - static_cast<int64_t>(p.nonRows.size());
      }
      const bool positioned = list.positions.size() == list.ids.size();
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
        if (positioned) s.position = list.positions[k];
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
        // An element that died or did not answer is dropped, not guessed at (with any label it named).
        s.dead = true;
        failed(errs[k]);
        if (k < attrs.size())
          out.dropped.insert(out.dropped.end(), attrs[k].labelledBy.begin(), attrs[k].labelledBy.end());
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
      // Rows are counted, not children: a header before a row is no row of the list.
      std::vector<int64_t>& nonRows = p.nonRows;
      for (size_t c : p.children)
        if (!slots[c].dead && slots[c].position >= 0 && !IsRowRole(slots[c].attrs.role))
          nonRows.push_back(slots[c].position);
      std::sort(nonRows.begin(), nonRows.end());
      nonRows.erase(std::unique(nonRows.begin(), nonRows.end()), nonRows.end());
      if (p.childrenAll >= 0) p.attrs.rowCount = p.childrenAll - static_cast<int64_t>(nonRows.size());
      for (size_t c : p.children) {
        Slot& row = slots[c];
        if (row.dead || !IsRowRole(row.attrs.role)) continue;
        // The row's place among the whole list's rows, so "(showing A-B of M)" stays true after the cut.
        if (!row.attrs.rowIndex)
          row.attrs.rowIndex =
              row.position >= 0
                  ? row.position - (std::lower_bound(nonRows.begin(), nonRows.end(), row.position) - nonRows.begin())
                  : rows;
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
  if (deadlineCut) out.ended = WalkEnd::kDeadline;
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
  std::vector<ElementId> labels;
  out.root = Build(slots, out.ids, labels);
  // A printed element's labels are the result's handles too: a label the walk did not reach itself (below a
  // limit, outside the subtree) is held by nothing else, and would stay in the backend's table until it
  // reconnects. After the nodes, so the root stays the first id.
  std::unordered_set<ElementId> inResult(out.ids.begin(), out.ids.end());
  for (ElementId id : labels)
    if (id != 0 && inResult.insert(id).second) out.ids.push_back(id);
  for (const Slot& s : slots) {
    if (!s.dead) continue;
    out.dropped.push_back(s.id);
    out.dropped.insert(out.dropped.end(), s.attrs.labelledBy.begin(), s.attrs.labelledBy.end());
  }
  return {};
}

}  // namespace axsnap
