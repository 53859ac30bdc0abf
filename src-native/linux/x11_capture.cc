// Screen pixels: an area of the root read through one reused MIT-SHM segment
// (the server writes into memory this process maps), else with XGetImage when
// shared memory is not available (remote display, another IPC namespace),
// converted from the visual's pixel layout to RGBA rows.
//
// MIT-SHM: https://www.x.org/releases/current/doc/xextproto/shm.html
//   (XShmAttach, XShmCreateImage, XShmGetImage, XShmDetach; shmget(2), shmat(2))
// Xlib: XGetImage, XImage and its ZPixmap format, XGetPixel ("Images"),
//   https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "x11_internal.h"

namespace axsnap {

void X11Display::Impl::DestroyShmImage() {
  if (shmImage != nullptr) {
    shmImage->data = nullptr;  // the segment is not the image's to free
    XDestroyImage(shmImage);
    shmImage = nullptr;
  }
}

void X11Display::Impl::ReleaseShm() {
  DestroyShmImage();
  ReleaseSegment();
}

void X11Display::Impl::ReleaseSegment() {
  if (shmImage != nullptr) shmImage->data = nullptr;
  if (shmAttached) {
    if (Alive()) {
      XShmDetach(dpy, &shm);
      XSync(dpy, False);
    }
    shmdt(shm.shmaddr);
    shmAttached = false;
  }
  shm = XShmSegmentInfo{};
  shmCapacity = 0;
}

bool X11Display::Impl::EnsureShmSegment(size_t bytes, std::string& why) {
  if (shmAttached && shmCapacity >= bytes) return true;
  ReleaseSegment();
  const int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
  if (id < 0) {
    why = std::string("shmget: ") + std::strerror(errno);
    return false;
  }
  void* addr = shmat(id, nullptr, 0);
  if (addr == reinterpret_cast<void*>(-1)) {
    why = std::string("shmat: ") + std::strerror(errno);
    shmctl(id, IPC_RMID, nullptr);
    return false;
  }
  shm.shmid = id;
  shm.shmaddr = static_cast<char*>(addr);
  shm.readOnly = False;
  BeginTrap();
  const Status st = XShmAttach(dpy, &shm);
  const int err = EndTrap();
  shmctl(id, IPC_RMID, nullptr);
  if (!st || err != 0) {
    why = "XShmAttach failed" + (err != 0 ? ": " + LastErrorText() : std::string());
    shmdt(addr);
    shm = XShmSegmentInfo{};
    return false;
  }
  shmAttached = true;
  shmCapacity = bytes;
  return true;
}

XImage* X11Display::Impl::ShmGet(int x, int y, int w, int h, std::string& why) {
  if (shmImage == nullptr || shmImage->width != w || shmImage->height != h) {
    DestroyShmImage();
    shmImage = XShmCreateImage(dpy, visual, static_cast<unsigned>(depth), ZPixmap, nullptr, &shm,
                               static_cast<unsigned>(w), static_cast<unsigned>(h));
    if (shmImage == nullptr) {
      why = "XShmCreateImage failed";
      shmBroken = true;
      return nullptr;
    }
  }
  const size_t bytes = static_cast<size_t>(shmImage->bytes_per_line) * static_cast<size_t>(h);
  if (!EnsureShmSegment(bytes, why)) {
    DestroyShmImage();
    shmBroken = true;
    return nullptr;
  }
  shmImage->data = shm.shmaddr;
  BeginTrap();
  const Bool ok = XShmGetImage(dpy, root, shmImage, x, y, AllPlanes);
  const int err = EndTrap();
  if (!ok || err != 0) {
    why = "XShmGetImage failed" + (err != 0 ? ": " + LastErrorText() : std::string());
    return nullptr;
  }
  return shmImage;
}

namespace {

// Converts a ZPixmap XImage to RGBA rows with alpha 255, using the channel
// masks generically (any bit depth of 8/16/24/32 bits per pixel, either byte order).
bool ConvertImage(const XImage* img, const Visual* visual, int w, int h, std::vector<uint8_t>& out, std::string& why) {
  unsigned long masks[3] = {img->red_mask, img->green_mask, img->blue_mask};
  if ((masks[0] == 0 || masks[1] == 0 || masks[2] == 0) && visual != nullptr) {
    masks[0] = visual->red_mask;
    masks[1] = visual->green_mask;
    masks[2] = visual->blue_mask;
  }
  if (masks[0] == 0 || masks[1] == 0 || masks[2] == 0) {
    why = "unsupported visual (no colour masks: not TrueColor/DirectColor)";
    return false;
  }
  out.resize(static_cast<size_t>(w) * h * 4);
  const int bpp = img->bits_per_pixel;
  const int bpl = img->bytes_per_line;
  const bool msb = img->byte_order == MSBFirst;
  const auto* base = reinterpret_cast<const uint8_t*>(img->data);
  uint8_t* dst = out.data();

  // Fast paths: 32 bpp x8r8g8b8 in either byte order.
  if (bpp == 32 && masks[0] == 0xff0000 && masks[1] == 0xff00 && masks[2] == 0xff) {
    for (int y = 0; y < h; ++y) {
      const uint8_t* p = base + static_cast<size_t>(y) * bpl;
      for (int x = 0; x < w; ++x, p += 4, dst += 4) {
        if (msb) {
          dst[0] = p[1];
          dst[1] = p[2];
          dst[2] = p[3];
        } else {
          dst[0] = p[2];
          dst[1] = p[1];
          dst[2] = p[0];
        }
        dst[3] = 255;
      }
    }
    return true;
  }

  int shift[3], bits[3];
  for (int c = 0; c < 3; ++c) {
    shift[c] = __builtin_ctzl(masks[c]);
    bits[c] = __builtin_popcountl(masks[c]);
  }
  auto channel = [&](unsigned long pix, int c) -> uint8_t {
    const unsigned long v = (pix & masks[c]) >> shift[c];
    if (bits[c] == 8) return static_cast<uint8_t>(v);
    if (bits[c] > 8) return static_cast<uint8_t>(v >> (bits[c] - 8));
    const unsigned long max = (1UL << bits[c]) - 1;
    return static_cast<uint8_t>((v * 255 + max / 2) / max);
  };
  const int bytesPerPixel = bpp / 8;
  const bool byteAligned = bpp == 8 || bpp == 16 || bpp == 24 || bpp == 32;
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = base + static_cast<size_t>(y) * bpl;
    for (int x = 0; x < w; ++x, dst += 4) {
      unsigned long pix = 0;
      if (byteAligned) {
        const uint8_t* p = row + static_cast<size_t>(x) * bytesPerPixel;
        for (int k = 0; k < bytesPerPixel; ++k) {
          if (msb) {
            pix = (pix << 8) | p[k];
          } else {
            pix |= static_cast<unsigned long>(p[k]) << (8 * k);
          }
        }
      } else {
        pix = XGetPixel(const_cast<XImage*>(img), x, y);
      }
      dst[0] = channel(pix, 0);
      dst[1] = channel(pix, 1);
      dst[2] = channel(pix, 2);
      dst[3] = 255;
    }
  }
  return true;
}

}  // namespace

namespace x11 {

Error XCaptureRect(Impl& d, const Rect& r, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured) {
  rgba.clear();
  width = height = 0;
  captured = Rect{};
  if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
  if (!std::isfinite(r.x) || !std::isfinite(r.y) || !std::isfinite(r.w) || !std::isfinite(r.h)) {
    return Error{ErrorCode::kInvalidArgument, "capture rectangle is not finite"};
  }
  int sw = 0, sh = 0;
  d.RootSize(sw, sh);
  // Clip to the screen: XGetImage outside the root raises BadMatch.
  const double x0 = std::max(0.0, std::floor(r.x)), y0 = std::max(0.0, std::floor(r.y));
  const double x1 = std::min<double>(sw, std::ceil(r.x + r.w)), y1 = std::min<double>(sh, std::ceil(r.y + r.h));
  if (!(x1 > x0) || !(y1 > y0)) {
    return Error{ErrorCode::kCaptureFailed, "capture area is entirely off screen"};
  }
  const int x = static_cast<int>(x0), y = static_cast<int>(y0);
  const int w = static_cast<int>(x1 - x0), h = static_cast<int>(y1 - y0);

  std::string why;
  if (d.hasShm) {
    if (XImage* img = d.ShmGet(x, y, w, h, why)) {
      if (!ConvertImage(img, d.visual, w, h, rgba, why)) return Error{ErrorCode::kCaptureFailed, why};
      width = w;
      height = h;
      captured = Rect{x0, y0, x1 - x0, y1 - y0};
      return {};
    }
    if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};
    if (d.shmBroken) {
      // Remote display, separate IPC namespace, no shm permission: XGetImage from now on.
      d.ReleaseShm();
      d.hasShm = false;
    }
  }
  d.BeginTrap();
  XImage* img = XGetImage(d.dpy, d.root, x, y, static_cast<unsigned>(w), static_cast<unsigned>(h), AllPlanes, ZPixmap);
  const int err = d.EndTrap();
  if (img == nullptr || err != 0) {
    if (img != nullptr) XDestroyImage(img);
    std::string msg = "XGetImage failed";
    if (err != 0) msg += ": " + d.LastErrorText();
    if (!why.empty()) msg += " (after " + why + ")";
    return Error{ErrorCode::kCaptureFailed, msg};
  }
  const bool ok = ConvertImage(img, d.visual, w, h, rgba, why);
  XDestroyImage(img);
  if (!ok) {
    rgba.clear();
    return Error{ErrorCode::kCaptureFailed, why};
  }
  width = w;
  height = h;
  captured = Rect{x0, y0, x1 - x0, y1 - y0};
  return {};
}

}  // namespace x11
}  // namespace axsnap
