// One frame from PipeWire (pipewire_frame.h), through pw_thread_loop and
// pw_stream as in PipeWire's video-capture example and its stream docs
// (https://docs.pipewire.org/page_tutorial5.html, pipewire/stream.h): the
// stream offers EnumFormat video/raw, answers param_changed(Format) with
// Buffers (dataType MemFd|MemPtr) and Meta (Header, VideoCrop), and reads
// the first buffer whose chunk is non-empty and not corrupted.
#include "pipewire_frame.h"

#include <dlfcn.h>
#include <pipewire/pipewire.h>
#include <spa/param/buffers.h>
#include <spa/param/video/format-utils.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace axsnap {
namespace {

// The libpipewire functions used, found with dlsym.
struct PwApi {
  decltype(&pw_init) init = nullptr;
  decltype(&pw_thread_loop_new) loopNew = nullptr;
  decltype(&pw_thread_loop_get_loop) loopGet = nullptr;
  decltype(&pw_thread_loop_start) loopStart = nullptr;
  decltype(&pw_thread_loop_stop) loopStop = nullptr;
  decltype(&pw_thread_loop_destroy) loopDestroy = nullptr;
  decltype(&pw_thread_loop_lock) lock = nullptr;
  decltype(&pw_thread_loop_unlock) unlock = nullptr;
  decltype(&pw_thread_loop_signal) signal = nullptr;
  decltype(&pw_thread_loop_get_time) getTime = nullptr;
  decltype(&pw_thread_loop_timed_wait_full) timedWait = nullptr;
  decltype(&pw_properties_new) propsNew = nullptr;
  decltype(&pw_stream_new_simple) streamNew = nullptr;
  decltype(&pw_stream_connect) connect = nullptr;
  decltype(&pw_stream_destroy) streamDestroy = nullptr;
  decltype(&pw_stream_dequeue_buffer) dequeue = nullptr;
  decltype(&pw_stream_queue_buffer) queue = nullptr;
  decltype(&pw_stream_update_params) updateParams = nullptr;
  bool ok = false;
  std::string why;
};

const char* LibraryName() {
  const char* v = std::getenv("AXSNAP_PIPEWIRE_LIB");
  return v && *v ? v : "libpipewire-0.3.so.0";
}

template <typename F>
bool Sym(void* lib, const char* name, F& out, std::string& why) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out && why.empty()) why = std::string("libpipewire has no ") + name;
  return out != nullptr;
}

const PwApi& Api() {
  static PwApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* name = LibraryName();
    // Kept for the process's life: PipeWire's threads may outlive a stream by a little.
    void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) {
      const char* e = dlerror();
      api.why = std::string("PipeWire is not installed (") + (e ? e : name) +
                "): install libpipewire-0.3-0 (Debian, Ubuntu) or pipewire-libs (Fedora)";
      return;
    }
    std::string& why = api.why;
    bool ok =
        Sym(lib, "pw_init", api.init, why) & Sym(lib, "pw_thread_loop_new", api.loopNew, why) &
        Sym(lib, "pw_thread_loop_get_loop", api.loopGet, why) & Sym(lib, "pw_thread_loop_start", api.loopStart, why) &
        Sym(lib, "pw_thread_loop_stop", api.loopStop, why) & Sym(lib, "pw_thread_loop_destroy", api.loopDestroy, why) &
        Sym(lib, "pw_thread_loop_lock", api.lock, why) & Sym(lib, "pw_thread_loop_unlock", api.unlock, why) &
        Sym(lib, "pw_thread_loop_signal", api.signal, why) & Sym(lib, "pw_thread_loop_get_time", api.getTime, why) &
        Sym(lib, "pw_thread_loop_timed_wait_full", api.timedWait, why) &
        Sym(lib, "pw_properties_new", api.propsNew, why) & Sym(lib, "pw_stream_new_simple", api.streamNew, why) &
        Sym(lib, "pw_stream_connect", api.connect, why) & Sym(lib, "pw_stream_destroy", api.streamDestroy, why) &
        Sym(lib, "pw_stream_dequeue_buffer", api.dequeue, why) & Sym(lib, "pw_stream_queue_buffer", api.queue, why) &
        Sym(lib, "pw_stream_update_params", api.updateParams, why);
    if (!ok) return;
    api.init(nullptr, nullptr);
    api.ok = true;
  });
  return api;
}

// What the stream's callbacks share with the waiting thread (under the thread loop's lock).
struct Grab {
  const PwApi* api = nullptr;
  pw_thread_loop* loop = nullptr;
  pw_stream* stream = nullptr;
  spa_video_info_raw format{};
  bool haveFormat = false;
  int done = 0;  // 1 a frame, -1 the stream failed
  std::string failure;
  std::vector<uint8_t>* rgba = nullptr;
  int width = 0, height = 0;
  Rect crop;
};

bool IsBgr(spa_video_format f) { return f == SPA_VIDEO_FORMAT_BGRx || f == SPA_VIDEO_FORMAT_BGRA; }

void OnProcess(void* data) {
  auto* g = static_cast<Grab*>(data);
  pw_buffer* b = g->api->dequeue(g->stream);
  if (!b) return;
  spa_buffer* buf = b->buffer;
  if (g->done == 0 && g->haveFormat && buf->n_datas > 0) {
    spa_data& d = buf->datas[0];
    auto* header =
        static_cast<spa_meta_header*>(spa_buffer_find_meta_data(buf, SPA_META_Header, sizeof(spa_meta_header)));
    const bool corrupted = header && (header->flags & SPA_META_HEADER_FLAG_CORRUPTED);
    const uint32_t w = g->format.size.width, h = g->format.size.height;
    const int32_t stride = d.chunk ? d.chunk->stride : 0;
    if (!corrupted && d.data && d.chunk && d.chunk->size > 0 && w > 0 && h > 0 && stride >= int32_t(w * 4) &&
        uint64_t(d.chunk->offset) + uint64_t(stride) * (h - 1) + w * 4 <= d.maxsize) {
      Rect crop{0, 0, double(w), double(h)};
      auto* region =
          static_cast<spa_meta_region*>(spa_buffer_find_meta_data(buf, SPA_META_VideoCrop, sizeof(spa_meta_region)));
      if (region && spa_meta_region_is_valid(region)) {
        const double cx = std::clamp<double>(region->region.position.x, 0, w);
        const double cy = std::clamp<double>(region->region.position.y, 0, h);
        crop = Rect{cx, cy, std::min<double>(region->region.size.width, w - cx),
                    std::min<double>(region->region.size.height, h - cy)};
      }
      const int ox = int(crop.x), oy = int(crop.y), cw = int(crop.w), ch = int(crop.h);
      g->rgba->resize(size_t(cw) * ch * 4);
      const auto* base = static_cast<const uint8_t*>(d.data) + d.chunk->offset;
      const bool bgr = IsBgr(g->format.format);
      uint8_t* dst = g->rgba->data();
      for (int y = 0; y < ch; y++) {
        const uint8_t* p = base + size_t(oy + y) * stride + size_t(ox) * 4;
        for (int x = 0; x < cw; x++, p += 4, dst += 4) {
          dst[0] = bgr ? p[2] : p[0];
          dst[1] = p[1];
          dst[2] = bgr ? p[0] : p[2];
          dst[3] = 255;
        }
      }
      g->width = cw;
      g->height = ch;
      g->crop = crop;
      g->done = 1;
      g->api->signal(g->loop, false);
    }
  }
  g->api->queue(g->stream, b);
}

void OnParamChanged(void* data, uint32_t id, const spa_pod* param) {
  auto* g = static_cast<Grab*>(data);
  if (!param || id != SPA_PARAM_Format) return;
  uint32_t mediaType = 0, mediaSubtype = 0;
  if (spa_format_parse(param, &mediaType, &mediaSubtype) < 0) return;
  if (mediaType != SPA_MEDIA_TYPE_video || mediaSubtype != SPA_MEDIA_SUBTYPE_raw) return;
  spa_video_info_raw info{};
  if (spa_format_video_raw_parse(param, &info) < 0) return;
  g->format = info;
  g->haveFormat = true;
  uint8_t storage[1024];
  spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, sizeof(storage));
  const spa_pod* params[3];
  params[0] = static_cast<const spa_pod*>(
      spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers, SPA_PARAM_BUFFERS_dataType,
                                 SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr))));
  params[1] = static_cast<const spa_pod*>(spa_pod_builder_add_object(
      &b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta, SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
      SPA_PARAM_META_size, SPA_POD_Int(sizeof(spa_meta_header))));
  params[2] = static_cast<const spa_pod*>(spa_pod_builder_add_object(
      &b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta, SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoCrop),
      SPA_PARAM_META_size, SPA_POD_Int(sizeof(spa_meta_region))));
  g->api->updateParams(g->stream, params, 3);
}

void OnStateChanged(void* data, pw_stream_state, pw_stream_state state, const char* error) {
  auto* g = static_cast<Grab*>(data);
  if (state == PW_STREAM_STATE_ERROR && g->done == 0) {
    g->done = -1;
    g->failure = error ? error : "the PipeWire stream failed";
    g->api->signal(g->loop, false);
  }
}

pw_stream_events MakeEvents() {
  pw_stream_events e{};
  e.version = PW_VERSION_STREAM_EVENTS;
  e.state_changed = OnStateChanged;
  e.param_changed = OnParamChanged;
  e.process = OnProcess;
  return e;
}

}  // namespace

bool PipeWireAvailable(std::string& why) {
  const PwApi& api = Api();
  why = api.why;
  return api.ok;
}

Error GrabPipeWireFrame(uint32_t node, std::chrono::steady_clock::time_point deadline, std::vector<uint8_t>& rgba,
                        int& width, int& height, Rect& crop) {
  const PwApi& api = Api();
  rgba.clear();
  width = height = 0;
  if (!api.ok) return {ErrorCode::kCaptureFailed, api.why};
  static const pw_stream_events events = MakeEvents();
  Grab g;
  g.api = &api;
  g.rgba = &rgba;
  g.loop = api.loopNew("axsnap-frame", nullptr);
  if (!g.loop) return {ErrorCode::kCaptureFailed, "cannot make a PipeWire loop"};
  // Teardown, in PipeWire's order: stop the loop's thread, then destroy the stream and the loop.
  struct Teardown {
    Grab& g;
    bool started = false;
    ~Teardown() {
      if (started) g.api->loopStop(g.loop);
      if (g.stream) g.api->streamDestroy(g.stream);
      g.api->loopDestroy(g.loop);
    }
  } teardown{g};
  g.stream = api.streamNew(
      api.loopGet(g.loop), "axsnap-frame",
      api.propsNew(PW_KEY_MEDIA_TYPE, "Video", PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_MEDIA_ROLE, "Screen", nullptr),
      &events, &g);
  if (!g.stream) return {ErrorCode::kCaptureFailed, "cannot make a PipeWire stream (is the PipeWire daemon running?)"};
  uint8_t storage[1024];
  spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, sizeof(storage));
  spa_rectangle def = SPA_RECTANGLE(1280, 800), minSize = SPA_RECTANGLE(1, 1), maxSize = SPA_RECTANGLE(16384, 16384);
  spa_fraction rate = SPA_FRACTION(0, 1), minRate = SPA_FRACTION(0, 1), maxRate = SPA_FRACTION(1000, 1);
  const spa_pod* params[1];
  params[0] = static_cast<const spa_pod*>(spa_pod_builder_add_object(
      &b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat, SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
      SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw), SPA_FORMAT_VIDEO_format,
      SPA_POD_CHOICE_ENUM_Id(5, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRA,
                             SPA_VIDEO_FORMAT_RGBx, SPA_VIDEO_FORMAT_RGBA),
      SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&def, &minSize, &maxSize), SPA_FORMAT_VIDEO_framerate,
      SPA_POD_CHOICE_RANGE_Fraction(&rate, &minRate, &maxRate)));
  api.lock(g.loop);
  if (api.loopStart(g.loop) < 0) {
    api.unlock(g.loop);
    return {ErrorCode::kCaptureFailed, "cannot start a PipeWire loop"};
  }
  teardown.started = true;
  const int rc =
      api.connect(g.stream, PW_DIRECTION_INPUT, node,
                  static_cast<pw_stream_flags>(PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS), params, 1);
  if (rc < 0) {
    api.unlock(g.loop);
    return {ErrorCode::kCaptureFailed, "cannot connect to PipeWire node " + std::to_string(node)};
  }
  while (g.done == 0) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    timespec abstime{};
    api.getTime(g.loop, &abstime, left.count());
    if (api.timedWait(g.loop, &abstime) != 0 && g.done == 0) break;
  }
  const int done = g.done;
  const std::string failure = g.failure;
  width = g.width;
  height = g.height;
  crop = g.crop;
  api.unlock(g.loop);
  if (done == 1) return {};
  rgba.clear();
  width = height = 0;
  if (done < 0) return {ErrorCode::kCaptureFailed, "PipeWire: " + failure};
  return {ErrorCode::kTimeout, "no frame came from the compositor's PipeWire stream in time"};
}

}  // namespace axsnap
