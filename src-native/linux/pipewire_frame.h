// One video frame from a PipeWire node (a Mutter ScreenCast stream), as RGBA.
//
// libpipewire-0.3.so.0 is loaded at run time (dlopen), so the addon loads and
// X11 works where PipeWire is not installed; the SPA pod builders used to
// offer formats are header-only. AXSNAP_PIPEWIRE_LIB names another library
// file, for tests only: AXSNAP_PIPEWIRE_LIB=/nonexistent makes PipeWire
// "not installed" for one process (test/linux/wayland-capture-input.test.ts).
//
// Each grab opens a stream to the node, offers BGRx/BGRA/RGBx/RGBA in shared
// memory (MemFd or MemPtr: headless mutter has no DMA-BUF, and mapped memory
// is what we can read without a GPU), takes the first complete frame, honours
// its VideoCrop meta, converts it, and closes the stream. Bounded by the
// deadline: a node that never sends a frame costs the deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "../core/types.h"

namespace axsnap {

// True when libpipewire could be loaded (loads it on first call); `why` says what is missing otherwise.
bool PipeWireAvailable(std::string& why);

// The first frame of `node`: RGBA rows (alpha 255), its size, and the part of the stream it shows
// (`crop`, stream pixels: the VideoCrop meta, else the whole frame).
Error GrabPipeWireFrame(uint32_t node, std::chrono::steady_clock::time_point deadline, std::vector<uint8_t>& rgba,
                        int& width, int& height, Rect& crop);

}  // namespace axsnap
