// Marks on the screenshot (screenshot: { marks: true }): each printed
// element's frame gets a 1-px border in a colour of its own (with a white
// halo inside it) and a small label with its index in a built-in 5x7 digit
// font. Drawn on the pixels the encoder is about to compress, after the
// budget's downscale, so labels have the same pixel size in every output and
// the PNG is encoded once per budget step, as without marks.
//
// Portable C++17, no platform headers; the only caller with real pixels is
// the N-API's encodeMarked (src-native/napi/marks_js.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace axsnap {

// One printed element: its index and its frame in source pixels (the pixels
// given to the encoder before any downscale).
struct Mark {
  int64_t index = 0;
  double x = 0, y = 0, w = 0, h = 0;
};

// Where a label went, in output pixels. `overlaps`: no place free of other
// labels was found, so it was drawn under the others.
struct PlacedLabel {
  int64_t index = 0;
  int x = 0, y = 0, w = 0, h = 0;
  bool overlaps = false;
};

// The label font: digit rows, bit 4 the leftmost of 5 columns.
extern const uint8_t kMarkGlyphs[10][7];

// The glyph scale for an output of this size: 2 when its longest side is at
// least 800 px, else 1.
int MarkGlyphScale(int width, int height);
// A label's size for `digits` digits at glyph scale `s`: a 1-px outline, s px
// of padding, glyphs 5s wide with s px between them, 7s high.
void MarkLabelSize(int digits, int s, int& w, int& h);

// Draws `marks` on `rgba` (width*height*4, row stride width*4), whose pixels
// are `sx` x `sy` times the source pixels the marks are in. Frames with no
// area or entirely outside the image get nothing. `placed` gets one label per
// marked element, in mark order.
void DrawMarks(uint8_t* rgba, int width, int height, double sx, double sy, const std::vector<Mark>& marks,
               std::vector<PlacedLabel>& placed);

}  // namespace axsnap
