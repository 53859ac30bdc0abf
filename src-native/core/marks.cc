// Marks on the screenshot (see marks.h).
//
// Placement: labels are placed smallest frame first (a button's label matters
// more than its panel's, and a small frame has fewer places), each at the
// first of eight places around its frame that no placed label covers: inside
// the top-left corner, above it, inside the top-right corner, left of it,
// inside the bottom-left corner, below it, inside the bottom-right corner,
// right of it; then stacked along the frame's top and left edges; and when
// every place is taken, where it covers least, drawn under the labels that
// found a free place. Borders are drawn largest first, so nested frames stay
// visible; labels after all borders.
#include "marks.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace axsnap {

// Rows of 5 bits, bit 4 the leftmost column. Drawn for this project.
const uint8_t kMarkGlyphs[10][7] = {
    {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E},  // 0: slashed, so it does not read as an O
    {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E},  // 1
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F},  // 2
    {0x1E, 0x01, 0x01, 0x0E, 0x01, 0x01, 0x1E},  // 3
    {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02},  // 4
    {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E},  // 5
    {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E},  // 6
    {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08},  // 7
    {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E},  // 8
    {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C},  // 9
};

namespace {

struct Rgb {
  uint8_t r, g, b;
};

// Dark, saturated, and distinct from their neighbours: white digits read on
// each (contrast >= 4.5), the white outline and halo carry them over dark
// backgrounds. Index i takes colour i % 8, so neighbouring indices differ.
constexpr Rgb kPalette[8] = {{200, 0, 0},  {0, 80, 200},  {0, 120, 0},   {140, 0, 160},
                             {190, 80, 0}, {0, 110, 120}, {180, 0, 100}, {0, 0, 130}};
constexpr Rgb kWhite{255, 255, 255};

struct Box {
  int x0, y0, x1, y1;  // half-open
  int Area() const { return (x1 - x0) * (y1 - y0); }
};

int OverlapArea(const Box& a, const Box& b) {
  const int w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const int h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  return w > 0 && h > 0 ? w * h : 0;
}

class Canvas {
 public:
  Canvas(uint8_t* rgba, int w, int h) : p_(rgba), w_(w), h_(h) {}
  void Put(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    uint8_t* q = p_ + (static_cast<size_t>(y) * w_ + x) * 4;
    q[0] = c.r;
    q[1] = c.g;
    q[2] = c.b;
    q[3] = 255;
  }
  void HLine(int x0, int x1, int y, Rgb c) {  // [x0, x1)
    if (y < 0 || y >= h_) return;
    for (int x = std::max(0, x0); x < std::min(w_, x1); ++x) Put(x, y, c);
  }
  void VLine(int x, int y0, int y1, Rgb c) {
    if (x < 0 || x >= w_) return;
    for (int y = std::max(0, y0); y < std::min(h_, y1); ++y) Put(x, y, c);
  }
  void Outline(const Box& b, Rgb c) {
    HLine(b.x0, b.x1, b.y0, c);
    HLine(b.x0, b.x1, b.y1 - 1, c);
    VLine(b.x0, b.y0, b.y1, c);
    VLine(b.x1 - 1, b.y0, b.y1, c);
  }
  void Fill(const Box& b, Rgb c) {
    for (int y = b.y0; y < b.y1; ++y) HLine(b.x0, b.x1, y, c);
  }

 private:
  uint8_t* p_;
  int w_, h_;
};

// Label boxes already placed, bucketed in a coarse grid so a check costs the
// labels nearby, not all of them (thousands of elements are possible).
class Occupancy {
 public:
  Occupancy(int w, int h) : cols_(w / kCell + 1), rows_(h / kCell + 1), cells_(cols_ * rows_) {}
  int Covered(const Box& b) const {
    int area = 0;
    ++query_;  // a box spanning several cells counts once per query
    ForCells(b, [&](int cell) {
      for (int id : cells_[cell]) {
        if (stamp_[id] == query_) continue;
        stamp_[id] = query_;
        area += OverlapArea(b, boxes_[id]);
      }
    });
    return area;
  }
  void Add(const Box& b) {
    const int id = static_cast<int>(boxes_.size());
    boxes_.push_back(b);
    stamp_.push_back(0);
    ForCells(b, [&](int cell) { cells_[cell].push_back(id); });
  }

 private:
  static constexpr int kCell = 48;
  template <typename F>
  void ForCells(const Box& b, F f) const {
    const int c0 = std::clamp(b.x0 / kCell, 0, cols_ - 1), c1 = std::clamp((b.x1 - 1) / kCell, 0, cols_ - 1);
    const int r0 = std::clamp(b.y0 / kCell, 0, rows_ - 1), r1 = std::clamp((b.y1 - 1) / kCell, 0, rows_ - 1);
    for (int r = r0; r <= r1; ++r)
      for (int c = c0; c <= c1; ++c) f(r * cols_ + c);
  }
  int cols_, rows_;
  std::vector<std::vector<int>> cells_;
  std::vector<Box> boxes_;
  mutable std::vector<uint64_t> stamp_;
  mutable uint64_t query_ = 0;
};

struct Item {
  size_t mark;  // position in the caller's marks
  Box frame;    // output pixels, unclipped
  Box visible;  // clipped to the image
  std::string digits;
  Box label{0, 0, 0, 0};
  bool placed = false, overlaps = false;
};

double Safe(double v) { return std::isfinite(v) ? std::clamp(v, -1e7, 1e7) : 0; }

}  // namespace

int MarkGlyphScale(int width, int height) { return std::max(width, height) >= 800 ? 2 : 1; }

void MarkLabelSize(int digits, int s, int& w, int& h) {
  w = 2 + 2 * s + digits * 5 * s + std::max(0, digits - 1) * s;
  h = 2 + 2 * s + 7 * s;
}

void DrawMarks(uint8_t* rgba, int width, int height, double sx, double sy, const std::vector<Mark>& marks,
               std::vector<PlacedLabel>& placed) {
  placed.clear();
  if (rgba == nullptr || width <= 0 || height <= 0) return;
  std::vector<Item> items;
  items.reserve(marks.size());
  for (size_t i = 0; i < marks.size(); ++i) {
    const Mark& m = marks[i];
    if (!(m.w > 0) || !(m.h > 0) || !std::isfinite(m.w) || !std::isfinite(m.h) || m.index < 0) continue;
    Item it;
    it.mark = i;
    it.frame = {static_cast<int>(std::floor(Safe(m.x * sx))), static_cast<int>(std::floor(Safe(m.y * sy))),
                static_cast<int>(std::ceil(Safe((m.x + m.w) * sx))),
                static_cast<int>(std::ceil(Safe((m.y + m.h) * sy)))};
    if (it.frame.x1 <= it.frame.x0) it.frame.x1 = it.frame.x0 + 1;  // thinner than a pixel: still one
    if (it.frame.y1 <= it.frame.y0) it.frame.y1 = it.frame.y0 + 1;
    it.visible = {std::max(0, it.frame.x0), std::max(0, it.frame.y0), std::min(width, it.frame.x1),
                  std::min(height, it.frame.y1)};
    if (it.visible.x1 <= it.visible.x0 || it.visible.y1 <= it.visible.y0) continue;  // off the image
    it.digits = std::to_string(m.index);
    items.push_back(std::move(it));
  }
  if (items.empty()) return;
  const int s = MarkGlyphScale(width, height);

  // Placement, smallest visible frame first.
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return items[a].visible.Area() < items[b].visible.Area(); });
  Occupancy taken(width, height);
  std::vector<Box> candidates;
  for (size_t k : order) {
    Item& it = items[k];
    int lw = 0, lh = 0;
    MarkLabelSize(static_cast<int>(it.digits.size()), s, lw, lh);
    if (lw > width || lh > height) continue;  // an image smaller than a label: nothing fits
    const Box& v = it.visible;
    auto at = [&](int x, int y) {
      x = std::clamp(x, 0, width - lw);
      y = std::clamp(y, 0, height - lh);
      return Box{x, y, x + lw, y + lh};
    };
    candidates = {at(v.x0, v.y0),      at(v.x0, v.y0 - lh), at(v.x1 - lw, v.y0),      at(v.x0 - lw, v.y0),
                  at(v.x0, v.y1 - lh), at(v.x0, v.y1),      at(v.x1 - lw, v.y1 - lh), at(v.x1, v.y0)};
    for (int step = 1; step <= 8; ++step) {  // stacked along the top and the left edge, inside the frame
      if (v.x0 + (step + 1) * lw <= v.x1) candidates.push_back(at(v.x0 + step * lw, v.y0));
      if (v.y0 + (step + 1) * lh <= v.y1) candidates.push_back(at(v.x0, v.y0 + step * lh));
    }
    int best = -1, bestArea = 0;
    for (size_t c = 0; c < candidates.size(); ++c) {
      const int area = taken.Covered(candidates[c]);
      if (best < 0 || area < bestArea) {
        best = static_cast<int>(c);
        bestArea = area;
      }
      if (area == 0) break;
    }
    it.label = candidates[best];
    it.placed = true;
    it.overlaps = bestArea > 0;
    taken.Add(it.label);
  }

  Canvas canvas(rgba, width, height);
  // Borders, largest first; a white halo just inside each, where there is room.
  std::vector<size_t> byArea(order.rbegin(), order.rend());
  for (size_t k : byArea) {
    const Item& it = items[k];
    const Rgb c = kPalette[marks[it.mark].index % 8];
    const Box& f = it.frame;
    if (f.x1 - f.x0 >= 4 && f.y1 - f.y0 >= 4) canvas.Outline({f.x0 + 1, f.y0 + 1, f.x1 - 1, f.y1 - 1}, kWhite);
    canvas.Outline(f, c);
  }
  // Labels: the ones that had to overlap first, so the others stay whole on top.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k : order) {
      const Item& it = items[k];
      if (!it.placed || it.overlaps != (pass == 0)) continue;
      const Rgb c = kPalette[marks[it.mark].index % 8];
      canvas.Fill(it.label, c);
      canvas.Outline(it.label, kWhite);
      int gx = it.label.x0 + 1 + s;
      const int gy = it.label.y0 + 1 + s;
      for (char ch : it.digits) {
        const uint8_t* rows = kMarkGlyphs[ch - '0'];
        for (int r = 0; r < 7; ++r)
          for (int col = 0; col < 5; ++col)
            if (rows[r] & (0x10 >> col))
              canvas.Fill({gx + col * s, gy + r * s, gx + (col + 1) * s, gy + (r + 1) * s}, kWhite);
        gx += 6 * s;
      }
    }
  for (const Item& it : items)
    if (it.placed)
      placed.push_back({marks[it.mark].index, it.label.x0, it.label.y0, it.label.x1 - it.label.x0,
                        it.label.y1 - it.label.y0, it.overlaps});
}

}  // namespace axsnap
