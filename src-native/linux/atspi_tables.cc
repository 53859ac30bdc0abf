// Big tree views: the rows on screen, not every cell.
//
// GTK3's tree view (a table with MANAGES_DESCENDANTS) answers GetChildren
// with every cell of every row and makes an accessible for each: 30,003
// children in about 1.8 s for 10,000 rows of 3 columns, each then read. Its
// Table interface reaches one cell directly (GetAccessibleAt: about 0.5 ms
// alone, pipelined like any call), Component.GetAccessibleAtPoint finds the
// cell under a point, and a cell off screen has the hidden coordinate. So a
// table of more than kTableCutCells cells is read as: its column headers
// (GetColumnHeader: the children GTK lists first), the cell just below them
// (the first row on screen; its row from TableCell.Position, else
// Table.GetRowAtIndex of its index in the table), then the cells of the rows
// from there that can fit above the table's bottom, at most kTableCutRows
// (GetAccessibleAt), keeping the rows whose first cell is on screen.
// ChildList::total (NRows) and each cell's row number carry the real
// "(showing A-B of M items)" to the renderer. Five dependent steps, about
// 8 ms for 13 rows on screen (most of it GTK making the cells' accessibles);
// an app that refuses a Table call, or whose cell below the headers is not
// a table cell it can place, gets GetChildren instead. Which tables:
// ReadNodes notes the ones that manage their cells (ManagesCells); a small
// one (at most kTableCutCells cells) is read whole, as any other list.
//
// Follows at-spi2-core xml/Table.xml (NRows, NColumns, GetColumnHeader,
// GetAccessibleAt, GetRowAtIndex), xml/TableCell.xml (Position) and
// xml/Component.xml (GetAccessibleAtPoint, GetExtents); MANAGES_DESCENDANTS
// from atspi-constants.h.

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {

namespace {

constexpr int64_t kTableCutCells = 256;
constexpr int64_t kTableCutRows = 20;  // the walk's and the renderer's cap on rows shown
constexpr int64_t kTableMaxColumns = 64;
// Cells read at most: a spreadsheet shows 45 rows of 28 columns on a 1920x1080 screen, and each cell
// costs about ten reads (3 ms in LibreOffice); beyond this the rows are cut, never below kTableMinRows.
constexpr int64_t kTableReadCells = 300;
constexpr int64_t kTableMinRows = 5;
constexpr int64_t kTableNeverListed = 100000;

struct TableRead {
  ObjRef ref;
  int64_t rows = -1, cols = -1;
  std::optional<Rect> frame;
  std::vector<std::string> headers;  // object paths by column; "" = none
  std::optional<Rect> headerFrame;   // the first column's header
  std::vector<std::string> probes;   // cells found below the headers, top first
  std::string probe;                 // the first of them
  std::optional<Rect> probeFrame;    // its place: a row is no taller than the distance to the next
  bool probeIsCell = false;          // a table cell (a table with row objects is read whole)
  int64_t position = -1, rowAtIndex = -1;
  int64_t positionCol = -1, colAtIndex = -1;  // its column
  std::string corner;                         // the cell at the bottom right corner: the last column on screen
  int64_t cornerCol = -1;
  int64_t first = -1;                           // the first row on screen
  int64_t firstCol = 0;                         // the first column read (on screen, when the table says)
  std::vector<std::vector<std::string>> cells;  // rows first.., columns
  std::vector<std::optional<Rect>> rowFrames;   // each row's first cell
  bool fallback = false;                        // the app refused a Table call: GetChildren
  Error err;
  bool Live() const { return !fallback && !err; }
};

bool OnScreen(const Rect& r) { return r.x != kHiddenCoordinate && r.y != kHiddenCoordinate && r.w > 0 && r.h > 0; }

// The object path of a "((so))" reply; "" for the null reference.
std::string RefPath(GVariant* reply) {
  const std::optional<ObjRef> ref = RefOf(reply);
  return ref ? ref->path : std::string();
}

}  // namespace

std::vector<bool> AtspiBackend::ReadVisibleTableRows(const std::vector<ElementId>& ids, std::vector<ChildList>& out,
                                                     std::vector<Error>& errs, Clock::time_point deadline) {
  Impl& im = *impl_;
  std::vector<bool> handled(ids.size(), false);
  std::vector<std::pair<size_t, TableRead>> tables;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!im.managesCells.count(ids[i])) continue;
    if (const ObjRef* ref = im.Lookup(ids[i])) {
      tables.emplace_back(i, TableRead{});
      tables.back().second.ref = *ref;
    }
  }
  if (tables.empty()) return handled;
  const int perCall = static_cast<int>(im.PerCall(deadline).count());
  // True when the reply cannot be used; a refusal sends the table to GetChildren, any other failure is its error.
  auto unusable = [perCall](TableRead& t, const Reply& r) {
    if (r.outcome == Outcome::kOk) return false;
    if (t.Live()) {
      if (r.outcome == Outcome::kFailed)
        t.fallback = true;
      else
        t.err = OutcomeError(r.outcome, t.ref.bus, r.message, perCall);
    }
    return true;
  };
  // One dependent step: `issue` queues a table's calls in a batch. False when the bus closed (GetChildren says so).
  auto step = [&](const std::function<void(Batch&, TableRead&)>& issue) {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.UsePeers(&im.peers);
    for (auto& entry : tables)
      if (entry.second.Live()) issue(b, entry.second);
    b.Run();
    if (b.Abandoned())
      for (auto& entry : tables)
        if (entry.second.Live()) entry.second.err = MakeError(ErrorCode::kTimeout, "the deadline passed");
    return !b.BusClosed();
  };

  // 1. Size and place.
  bool open = step([&](Batch& b, TableRead& t) {
    TableRead* tp = &t;
    // A bridge that GetAll would crash (Impl::getAllUnsafe): the table is read as any other list.
    if (im.GetAllUnsafe(t.ref.bus)) {
      t.fallback = true;
      return;
    }
    b.Call(t.ref.bus, t.ref.path, kIfProperties, "GetAll", g_variant_new("(s)", kIfTable), "(a{sv})",
           [tp, &unusable](const Reply& r) {
             if (unusable(*tp, r)) return;
             VariantPtr dict = AdoptVariant(g_variant_get_child_value(r.value, 0));
             VariantPtr rows = AdoptVariant(g_variant_lookup_value(dict.get(), "NRows", nullptr));
             VariantPtr cols = AdoptVariant(g_variant_lookup_value(dict.get(), "NColumns", nullptr));
             if (!rows || !cols || !VariantToInt(rows.get(), tp->rows) || !VariantToInt(cols.get(), tp->cols))
               tp->fallback = true;
           });
    b.Call(t.ref.bus, t.ref.path, kIfComponent, "GetExtents", g_variant_new("(u)", im.CoordType(t.ref.bus)), "((iiii))",
           [tp, &unusable](const Reply& r) {
             if (!unusable(*tp, r)) tp->frame = RectOf(r.value);
           });
  });
  for (auto& entry : tables) {
    TableRead& t = entry.second;
    // A small table is read whole, as any other list.
    if (t.Live() && (t.rows < 0 || t.cols <= 0 || t.rows * t.cols <= kTableCutCells)) t.fallback = true;
  }

  // 2. Column headers.
  open = open && step([&](Batch& b, TableRead& t) {
           TableRead* tp = &t;
           const guint32 coords = im.CoordType(t.ref.bus);
           const int64_t cols = std::min(t.cols, kTableMaxColumns);
           t.headers.assign(static_cast<size_t>(cols), std::string());
           for (int64_t c = 0; c < cols; ++c) {
             b.Call(t.ref.bus, t.ref.path, kIfTable, "GetColumnHeader", g_variant_new("(i)", gint32(c)), "((so))",
                    [tp, c, coords, &b, &unusable](const Reply& r) {
                      if (unusable(*tp, r)) return;
                      std::string path = RefPath(r.value);
                      if (c == 0 && !path.empty())
                        b.Call(tp->ref.bus, path, kIfComponent, "GetExtents", g_variant_new("(u)", coords), "((iiii))",
                               [tp](const Reply& er) {
                                 if (er.outcome == Outcome::kOk) tp->headerFrame = RectOf(er.value);
                               });
                      tp->headers[static_cast<size_t>(c)] = std::move(path);
                    });
           }
         });

  // 3. The cell just below the headers: a few points down, past a gap between rows.
  constexpr int kProbeDy[] = {1, 4, 8};
  open = open && step([&](Batch& b, TableRead& t) {
           if (!t.frame || !OnScreen(*t.frame) || t.rows == 0) return;
           const Rect& f = *t.frame;
           // Without headers, the leftmost column on screen (a spreadsheet scrolled right starts there).
           double top = f.y, x = f.x + std::min(2.0, f.w / 2);
           if (t.headerFrame && OnScreen(*t.headerFrame)) {
             const Rect& h = *t.headerFrame;
             top = std::max(top, std::min(h.y + h.h, f.y + f.h));
             x = std::clamp(h.x + h.w / 2, f.x + 1, f.x + f.w - 1);  // a header scrolled half out
           }
           TableRead* tp = &t;
           t.probes.assign(std::size(kProbeDy), std::string());
           for (size_t k = 0; k < std::size(kProbeDy); ++k) {
             const double y = top + kProbeDy[k];
             if (y >= f.y + f.h) break;
             b.Call(t.ref.bus, t.ref.path, kIfComponent, "GetAccessibleAtPoint",
                    g_variant_new("(iiu)", gint32(x), gint32(y), im.CoordType(t.ref.bus)), "((so))",
                    [tp, k, &unusable](const Reply& r) {
                      if (!unusable(*tp, r)) tp->probes[k] = RefPath(r.value);
                    });
           }
           // The bottom right corner: the last column on screen.
           b.Call(t.ref.bus, t.ref.path, kIfComponent, "GetAccessibleAtPoint",
                  g_variant_new("(iiu)", gint32(f.x + f.w - std::min(3.0, f.w / 2)),
                                gint32(f.y + f.h - std::min(3.0, f.h / 2)), im.CoordType(t.ref.bus)),
                  "((so))", [tp](const Reply& r) {
                    if (r.outcome == Outcome::kOk) tp->corner = RefPath(r.value);
                  });
         });
  for (auto& entry : tables)
    for (const std::string& p : entry.second.probes)
      if (!p.empty()) {
        entry.second.probe = p;
        break;
      }

  // 4. Its row: TableCell.Position, else the table's row of its index; and its height.
  open = open && step([&](Batch& b, TableRead& t) {
           if (t.probe.empty()) return;
           TableRead* tp = &t;
           b.Call(t.ref.bus, t.probe, kIfComponent, "GetExtents", g_variant_new("(u)", im.CoordType(t.ref.bus)),
                  "((iiii))", [tp](const Reply& r) {
                    if (r.outcome == Outcome::kOk) tp->probeFrame = RectOf(r.value);
                  });
           b.Call(t.ref.bus, t.probe, kIfAccessible, "GetRole", nullptr, "(u)", [tp](const Reply& r) {
             guint32 role = 0;
             if (r.outcome == Outcome::kOk) g_variant_get(r.value, "(u)", &role);
             tp->probeIsCell = RoleName(role) == "table cell";
           });
           b.GetProperty(t.ref.bus, t.probe, kIfTableCell, "Position", [tp](const Reply& r) {
             if (r.outcome != Outcome::kOk || !g_variant_is_of_type(r.value, G_VARIANT_TYPE("(ii)"))) return;
             gint32 row = -1, col = -1;
             g_variant_get(r.value, "(ii)", &row, &col);
             tp->position = row;
             tp->positionCol = col;
           });
           b.Call(t.ref.bus, t.probe, kIfAccessible, "GetIndexInParent", nullptr, "(i)",
                  [tp, &b, &unusable](const Reply& r) {
                    // Only needed without Position: a refusal here is not the table's.
                    if (r.outcome == Outcome::kFailed || unusable(*tp, r)) return;
                    gint32 index = -1;
                    g_variant_get(r.value, "(i)", &index);
                    if (index < 0) return;
                    b.Call(tp->ref.bus, tp->ref.path, kIfTable, "GetRowAtIndex", g_variant_new("(i)", index), "(i)",
                           [tp, &unusable](const Reply& rr) {
                             if (rr.outcome == Outcome::kFailed || unusable(*tp, rr)) return;
                             gint32 row = -1;
                             g_variant_get(rr.value, "(i)", &row);
                             tp->rowAtIndex = row;
                           });
                    b.Call(tp->ref.bus, tp->ref.path, kIfTable, "GetColumnAtIndex", g_variant_new("(i)", index), "(i)",
                           [tp](const Reply& rr) {
                             if (rr.outcome != Outcome::kOk) return;
                             gint32 col = -1;
                             g_variant_get(rr.value, "(i)", &col);
                             tp->colAtIndex = col;
                           });
                  });
           // The corner's column: TableCell.Position, else the table's column of its index. Only narrows.
           if (t.corner.empty() || t.corner == t.probe) return;
           b.GetProperty(t.ref.bus, t.corner, kIfTableCell, "Position", [tp](const Reply& r) {
             if (r.outcome != Outcome::kOk || !g_variant_is_of_type(r.value, G_VARIANT_TYPE("(ii)"))) return;
             gint32 row = -1, col = -1;
             g_variant_get(r.value, "(ii)", &row, &col);
             tp->cornerCol = col;
           });
           b.Call(t.ref.bus, t.corner, kIfAccessible, "GetIndexInParent", nullptr, "(i)", [tp, &b](const Reply& r) {
             if (r.outcome != Outcome::kOk) return;
             gint32 index = -1;
             g_variant_get(r.value, "(i)", &index);
             if (index < 0) return;
             b.Call(tp->ref.bus, tp->ref.path, kIfTable, "GetColumnAtIndex", g_variant_new("(i)", index), "(i)",
                    [tp](const Reply& rr) {
                      if (rr.outcome != Outcome::kOk || tp->cornerCol >= 0) return;
                      gint32 col = -1;
                      g_variant_get(rr.value, "(i)", &col);
                      tp->cornerCol = col;
                    });
           });
         });
  for (auto& entry : tables) {
    TableRead& t = entry.second;
    if (!t.Live()) continue;
    if (t.probe.empty()) {
      // Nothing below the headers: off screen, only headers are shown; else the table cannot say, read it whole.
      if (t.frame && OnScreen(*t.frame)) t.fallback = true;
    } else {
      t.first = t.position >= 0 ? t.position : t.rowAtIndex;
      const int64_t col = t.positionCol >= 0 ? t.positionCol : t.colAtIndex;
      if (col > 0 && col < t.cols) t.firstCol = col;
      // Not a cell the table can place (or a table of rows, which the renderer lists as rows): read it whole.
      if (!t.probeIsCell || t.first < 0 || t.first >= t.rows) t.fallback = true;
    }
  }

  // 5. The cells of the rows from there, and each row's place.
  open = open && step([&](Batch& b, TableRead& t) {
           if (t.first < 0) return;
           // The columns on screen: from the first (the probe's) to the corner's, else as many as headers.
           int64_t cols = std::min(t.cols - t.firstCol, kTableMaxColumns);
           if (t.cornerCol >= t.firstCol) cols = std::min(cols, t.cornerCol - t.firstCol + 1);
           int64_t n = std::min(t.rows - t.first, kTableCutRows);
           n = std::min(n, std::max(kTableMinRows, kTableReadCells / std::max<int64_t>(cols, 1)));
           if (t.probeFrame && OnScreen(*t.probeFrame) && t.frame) {
             // Rows are at least a cell high: no more than this many fit between the first and the bottom.
             const double below = t.frame->y + t.frame->h - t.probeFrame->y;
             n = std::min<int64_t>(n, static_cast<int64_t>(std::ceil(below / t.probeFrame->h)) + 1);
           }
           t.cells.assign(static_cast<size_t>(n), std::vector<std::string>(static_cast<size_t>(cols)));
           t.rowFrames.assign(static_cast<size_t>(n), std::nullopt);
           TableRead* tp = &t;
           const guint32 coords = im.CoordType(t.ref.bus);
           for (int64_t k = 0; k < n; ++k) {
             for (int64_t c = 0; c < cols; ++c) {
               b.Call(t.ref.bus, t.ref.path, kIfTable, "GetAccessibleAt",
                      g_variant_new("(ii)", gint32(t.first + k), gint32(t.firstCol + c)), "((so))",
                      [tp, k, c, coords, &b, &unusable](const Reply& r) {
                        if (unusable(*tp, r)) return;
                        std::string path = RefPath(r.value);
                        if (c == 0 && !path.empty())
                          b.Call(tp->ref.bus, path, kIfComponent, "GetExtents", g_variant_new("(u)", coords),
                                 "((iiii))", [tp, k](const Reply& er) {
                                   if (er.outcome == Outcome::kOk) tp->rowFrames[size_t(k)] = RectOf(er.value);
                                 });
                        tp->cells[size_t(k)][size_t(c)] = std::move(path);
                      });
             }
           }
         });
  if (!open) return handled;  // the bus closed: GetChildren reports it

  for (auto& entry : tables) {
    const size_t i = entry.first;
    TableRead& t = entry.second;
    // A table too big to list (Calc's sheet: 2^20 rows of 2^14 columns, made on demand) is never
    // listed, nor searched by index: when its cells on screen cannot be placed, none print.
    const bool huge = t.rows > 0 && t.cols > 0 && t.rows * t.cols > kTableNeverListed;
    if (t.fallback && !(huge && !t.err)) continue;
    handled[i] = true;
    if (t.err) {
      errs[i] = t.err;
      continue;
    }
    ChildList& list = out[i];
    list.total = t.rows;
    auto add = [&](const std::string& path, const char* via, int64_t row) {
      if (path.empty()) return;
      list.ids.push_back(im.Intern(t.ref.bus, path));
      list.via.emplace_back(via);
      list.rowIndex.push_back(row);
    };
    for (const std::string& h : t.headers) add(h, "", -1);
    // The rows on screen: below the headers, above the bottom; they follow one another.
    const Rect f = t.frame.value_or(Rect{});
    const double top = t.headerFrame && OnScreen(*t.headerFrame) ? t.headerFrame->y + t.headerFrame->h : f.y;
    bool started = false;
    for (size_t k = 0; k < t.cells.size(); ++k) {
      const std::optional<Rect>& rf = t.rowFrames[k];
      const bool visible = rf && OnScreen(*rf) && rf->y < f.y + f.h && rf->y + rf->h > top;
      if (!visible) {
        if (started) break;
        continue;
      }
      started = true;
      for (const std::string& cell : t.cells[k]) add(cell, "visibleRows", t.first + static_cast<int64_t>(k));
    }
  }
  return handled;
}
}  // namespace axsnap
