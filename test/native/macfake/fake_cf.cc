// The fake CoreFoundation / HIServices AX / CoreGraphics layer: CF objects as
// reference-counted heap objects in a registry that catches misuse, and the
// AX and CG functions answered from the scripted world. See fake_cf.h for
// what differs from Apple and why.
//
// Locking: the world mutex guards the world and is taken before the registry
// mutex, never after. The registry never calls out while holding its lock,
// and nothing here compares elements (which needs the world) with the world
// lock held.

#include "fake_cf.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace axsnap {
namespace macfake {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void Fatal(const char* fmt, ...) {
  std::fprintf(stderr, "fake CF: ");
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  std::abort();
}

// ---------------------------------------------------------------------------
// Text helpers

// Strict UTF-8 → UTF-16 (no overlongs, no surrogates, nothing past U+10FFFF).
bool Utf8ToUtf16(const unsigned char* s, size_t n, std::u16string& out) {
  out.clear();
  size_t i = 0;
  while (i < n) {
    uint32_t c = s[i];
    int extra = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      extra = 0;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, c &= 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, c &= 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, c &= 0x07, min = 0x10000;
    } else {
      return false;
    }
    for (int k = 1; k <= extra; ++k) {
      if (i + k >= n || (s[i + k] & 0xC0) != 0x80) return false;
      c = (c << 6) | (s[i + k] & 0x3F);
    }
    if (extra > 0 && c < min) return false;
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
    if (c >= 0x10000) {
      c -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (c >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (c & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(c));
    }
    i += extra + 1;
  }
  return true;
}

void AppendUtf8(uint32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// One code point of `s` at `i`: its value and how many units it takes, or
// -1 for a lone surrogate.
int64_t CodePointAt(const std::u16string& s, size_t i, size_t end, int& units) {
  const uint32_t c = s[i];
  units = 1;
  if (c >= 0xD800 && c <= 0xDBFF) {
    if (i + 1 < end && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
      units = 2;
      return 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
    }
    return -1;
  }
  if (c >= 0xDC00 && c <= 0xDFFF) return -1;
  return c;
}

// UTF-16 → UTF-8, lone surrogates as U+FFFD. `lossless` says whether there were none.
std::string Utf16ToUtf8(const std::u16string& s, bool* lossless = nullptr) {
  std::string out;
  bool ok = true;
  for (size_t i = 0; i < s.size();) {
    int units = 1;
    const int64_t c = CodePointAt(s, i, s.size(), units);
    if (c < 0) ok = false;
    AppendUtf8(c < 0 ? 0xFFFD : static_cast<uint32_t>(c), out);
    i += units;
  }
  if (lossless) *lossless = ok;
  return out;
}

// A string as a quoted log token: JSON-style escapes, UTF-8 kept.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out + "\"";
}

// Numbers in log lines: integers without a decimal point, others with %g.
std::string Num(double d) {
  char buf[64];
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(d));
  else
    std::snprintf(buf, sizeof buf, "%.10g", d);
  return buf;
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// ---------------------------------------------------------------------------
// The object model

enum class Kind : CFTypeID {
  kString = 7,
  kDictionary = 18,
  kArray = 19,
  kBoolean = 21,
  kNumber = 22,
  kURL = 29,
  kAXValue = 0x1001,
  kAXUIElement = 0x1002,
  kCGEvent = 0x1003,
  kCGEventSource = 0x1004,
  kAXObserver = 0x1005,
  kRunLoop = 0x1006,
  kRunLoopSource = 0x1007,
};

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kString: return "CFString";
    case Kind::kDictionary: return "CFDictionary";
    case Kind::kArray: return "CFArray";
    case Kind::kBoolean: return "CFBoolean";
    case Kind::kNumber: return "CFNumber";
    case Kind::kURL: return "CFURL";
    case Kind::kAXValue: return "AXValue";
    case Kind::kAXUIElement: return "AXUIElement";
    case Kind::kCGEvent: return "CGEvent";
    case Kind::kCGEventSource: return "CGEventSource";
    case Kind::kAXObserver: return "AXObserver";
    case Kind::kRunLoop: return "CFRunLoop";
    case Kind::kRunLoopSource: return "CFRunLoopSource";
  }
  return "?";
}

struct Obj {
  explicit Obj(Kind k) : kind(k) {}
  virtual ~Obj() = default;
  // Called once when the count reaches zero: releases what the object holds.
  virtual void DropReferences() {}
  // For leak reports and use-after-free messages. Must not call the registry.
  virtual std::string Describe() const { return KindName(kind); }
  // `other` has the same kind. Elements look at the world: never call these
  // with the world lock held.
  virtual bool Equals(const Obj& other) const { return this == &other; }
  virtual CFHashCode Hash() const { return reinterpret_cast<uintptr_t>(this); }

  const Kind kind;
  long refs = 1;  // guarded by the registry mutex
  bool immortal = false;
};

const Obj* AsObj(CFTypeRef cf) { return static_cast<const Obj*>(cf); }
CFTypeRef AsRef(const Obj* o) { return static_cast<CFTypeRef>(o); }
template <typename R>
R AsTyped(const Obj* o) {
  return reinterpret_cast<R>(const_cast<Obj*>(o));
}

// Every CF object lives here from creation until it is freed; freed ones stay
// in a quarantine for a while so a late CFRelease is named precisely.
class Registry {
 public:
  static Registry& Get() {
    // Leaked on purpose: static destructors of other files may release CF
    // objects after this file's statics are gone.
    static Registry* registry = new Registry;
    return *registry;
  }

  template <typename T>
  T* Add(std::unique_ptr<T> obj, bool immortal = false) {
    T* raw = obj.get();
    raw->immortal = immortal;
    std::lock_guard<std::mutex> lock(mu_);
    // The address may be one the quarantine just let go of.
    dead_.erase(AsRef(raw));
    live_.emplace(AsRef(raw), std::move(obj));
    if (immortal) ++immortal_;
    return raw;
  }

  Obj* Check(CFTypeRef cf, const char* fn) {
    if (!cf) Fatal("%s(NULL): Apple crashes on a NULL CF object here", fn);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(cf);
    if (it != live_.end()) return it->second.get();
    auto dead = dead_.find(cf);
    if (dead != dead_.end())
      Fatal("%s(%p): use of a freed CF object (%s): an over-release, or use after the last release", fn, cf,
            dead->second.c_str());
    Fatal("%s(%p): not a CF object (never created by this fake, or freed long ago)", fn, cf);
  }

  void Retain(CFTypeRef cf) {
    Obj* o = Check(cf, "CFRetain");
    std::lock_guard<std::mutex> lock(mu_);
    if (!o->immortal) ++o->refs;
  }

  void Release(CFTypeRef cf) {
    Obj* o = Check(cf, "CFRelease");
    std::unique_ptr<Obj> dying;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (o->immortal) return;
      if (--o->refs > 0) return;
      auto it = live_.find(cf);
      dying = std::move(it->second);
      live_.erase(it);
      dead_[cf] = dying->Describe();
    }
    // Outside the lock: dropping references releases other objects.
    dying->DropReferences();
    std::unique_ptr<Obj> evicted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      quarantine_.push_back(std::move(dying));
      if (quarantine_.size() > kQuarantine) {
        evicted = std::move(quarantine_.front());
        quarantine_.pop_front();
        dead_.erase(AsRef(evicted.get()));
      }
    }
  }

  int64_t LiveCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(live_.size()) - immortal_;
  }

  std::string Summary() {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t count = static_cast<int64_t>(live_.size()) - immortal_;
    std::string out = std::to_string(count) + " live CF objects";
    int shown = 0;
    for (const auto& entry : live_) {
      if (entry.second->immortal) continue;
      if (shown == 20) {
        out += ", ...";
        break;
      }
      out +=
          (shown == 0 ? ": " : ", ") + entry.second->Describe() + " (refs " + std::to_string(entry.second->refs) + ")";
      ++shown;
    }
    return out;
  }

 private:
  static constexpr size_t kQuarantine = 65536;
  std::mutex mu_;
  std::unordered_map<CFTypeRef, std::unique_ptr<Obj>> live_;
  std::unordered_map<CFTypeRef, std::string> dead_;
  std::deque<std::unique_ptr<Obj>> quarantine_;
  int64_t immortal_ = 0;
};

template <typename T>
T* Checked(CFTypeRef cf, const char* fn) {
  Obj* o = Registry::Get().Check(cf, fn);
  if (o->kind != T::kKind) Fatal("%s: expected a %s, got %s", fn, KindName(T::kKind), o->Describe().c_str());
  return static_cast<T*>(o);
}

void CheckAllocator(CFAllocatorRef alloc, const char* fn) {
  if (alloc != nullptr) Fatal("%s: only kCFAllocatorDefault (NULL) is supported by the fake", fn);
}

void CheckEncoding(CFStringEncoding enc, const char* fn) {
  if (enc != kCFStringEncodingUTF8) Fatal("%s: encoding 0x%x: the fake supports kCFStringEncodingUTF8 only", fn, enc);
}

// ---------------------------------------------------------------------------
// CF types

struct StrObj : Obj {
  static constexpr Kind kKind = Kind::kString;
  explicit StrObj(std::u16string units) : Obj(kKind), utf16(std::move(units)), utf8(Utf16ToUtf8(utf16)) {}
  std::string Describe() const override { return "CFString " + Quote(utf8.substr(0, 60)); }
  bool Equals(const Obj& other) const override { return utf16 == static_cast<const StrObj&>(other).utf16; }
  CFHashCode Hash() const override { return std::hash<std::u16string>()(utf16); }
  const std::u16string utf16;
  const std::string utf8;  // lone surrogates as U+FFFD
};

StrObj* NewString(std::u16string units) { return Registry::Get().Add(std::make_unique<StrObj>(std::move(units))); }

StrObj* NewString(const std::string& utf8) {
  std::u16string units;
  if (!Utf8ToUtf16(reinterpret_cast<const unsigned char*>(utf8.data()), utf8.size(), units))
    Fatal("internal: invalid UTF-8 in the world: %s", Quote(utf8).c_str());
  return NewString(std::move(units));
}

// CFSTR and the fake's constant keys: interned, immortal.
StrObj* Interned(const char* cStr) {
  static std::mutex* mu = new std::mutex;
  static auto* table = new std::unordered_map<std::string, StrObj*>;
  std::lock_guard<std::mutex> lock(*mu);
  auto it = table->find(cStr);
  if (it != table->end()) return it->second;
  std::u16string units;
  if (!Utf8ToUtf16(reinterpret_cast<const unsigned char*>(cStr), std::strlen(cStr), units))
    Fatal("CFSTR(%s): not valid UTF-8", Quote(cStr).c_str());
  StrObj* s = Registry::Get().Add(std::make_unique<StrObj>(std::move(units)), /*immortal=*/true);
  table->emplace(cStr, s);
  return s;
}

struct ArrObj : Obj {
  static constexpr Kind kKind = Kind::kArray;
  ArrObj() : Obj(kKind) {}
  // Takes over +1 references.
  explicit ArrObj(std::vector<const Obj*> owned) : Obj(kKind), items(std::move(owned)) {}
  void DropReferences() override {
    std::vector<const Obj*> held;
    held.swap(items);
    for (const Obj* o : held) CFRelease(AsRef(o));
  }
  std::string Describe() const override { return "CFArray count " + std::to_string(items.size()); }
  bool Equals(const Obj& other) const override;
  CFHashCode Hash() const override { return items.size(); }
  std::vector<const Obj*> items;
};

ArrObj* NewArray(std::vector<const Obj*> owned) {
  return Registry::Get().Add(std::make_unique<ArrObj>(std::move(owned)));
}

struct DictObj : Obj {
  static constexpr Kind kKind = Kind::kDictionary;
  DictObj() : Obj(kKind) {}
  void DropReferences() override {
    std::vector<std::pair<const Obj*, const Obj*>> held;
    held.swap(entries);
    for (auto& e : held) {
      CFRelease(AsRef(e.first));
      CFRelease(AsRef(e.second));
    }
  }
  std::string Describe() const override { return "CFDictionary count " + std::to_string(entries.size()); }
  bool Equals(const Obj& other) const override;
  CFHashCode Hash() const override { return entries.size(); }
  const Obj* Find(const Obj* key) const;
  // Takes over +1 references; a later equal key replaces an earlier one.
  void Put(const Obj* key, const Obj* value);
  std::vector<std::pair<const Obj*, const Obj*>> entries;
};

struct NumObj : Obj {
  static constexpr Kind kKind = Kind::kNumber;
  NumObj() : Obj(kKind) {}
  std::string Describe() const override { return "CFNumber " + (isFloat ? Num(d) : std::to_string(i)); }
  bool Equals(const Obj& other) const override {
    const auto& o = static_cast<const NumObj&>(other);
    if (!isFloat && !o.isFloat) return i == o.i;
    return Value() == o.Value();
  }
  CFHashCode Hash() const override { return std::hash<double>()(Value()); }
  double Value() const { return isFloat ? d : static_cast<double>(i); }
  bool isFloat = false;
  int64_t i = 0;
  double d = 0;
};

NumObj* NewInt(int64_t v) {
  auto n = std::make_unique<NumObj>();
  n->i = v;
  return Registry::Get().Add(std::move(n));
}

NumObj* NewDouble(double v) {
  auto n = std::make_unique<NumObj>();
  n->isFloat = true;
  n->d = v;
  return Registry::Get().Add(std::move(n));
}

struct BoolObj : Obj {
  static constexpr Kind kKind = Kind::kBoolean;
  explicit BoolObj(bool v) : Obj(kKind), value(v) {}
  std::string Describe() const override { return value ? "kCFBooleanTrue" : "kCFBooleanFalse"; }
  CFHashCode Hash() const override { return value ? 1 : 0; }
  const bool value;
};

BoolObj* ImmortalBool(bool v) { return Registry::Get().Add(std::make_unique<BoolObj>(v), /*immortal=*/true); }

struct UrlObj : Obj {
  static constexpr Kind kKind = Kind::kURL;
  explicit UrlObj(const StrObj* s, const UrlObj* b = nullptr) : Obj(kKind), str(s), base(b) {}  // takes over +1s
  void DropReferences() override {
    if (str) CFRelease(AsRef(std::exchange(str, nullptr)));
    if (base) CFRelease(AsRef(std::exchange(base, nullptr)));
  }
  std::string Describe() const override {
    return "CFURL " + (str ? Quote(str->utf8) : std::string("(freed)")) +
           (base ? " relative to " + base->Describe() : std::string());
  }
  bool Equals(const Obj& other) const override {
    const auto& o = static_cast<const UrlObj&>(other);
    return str->Equals(*o.str) && (!base) == (!o.base) && (!base || base->Equals(*o.base));
  }
  CFHashCode Hash() const override { return str->Hash(); }
  const StrObj* str;
  const UrlObj* base;  // issue 12 item 10: a URL relative to a base
};

bool ValidUrl(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c <= 0x20 || c == 0x7F || std::strchr("<>\"{}|\\^`", c)) return false;
  return true;
}

UrlObj* NewUrl(const std::string& s) { return Registry::Get().Add(std::make_unique<UrlObj>(NewString(s))); }

// Issue 12 item 10: a URL relative to a base, as web content's links are.
UrlObj* NewUrlWithBase(const std::string& relative, const std::string& base) {
  return Registry::Get().Add(std::make_unique<UrlObj>(NewString(relative), NewUrl(base)));
}

// The fake's URL resolution (see fake_cf.h): enough for links in a page.
std::string ResolveUrl(const std::string& relative, const std::string& base) {
  const size_t colon = relative.find(':');
  if (colon != std::string::npos && relative.find('/') > colon) return relative;  // has a scheme
  const size_t schemeEnd = base.find("://");
  if (relative.rfind("//", 0) == 0)
    return (schemeEnd == std::string::npos ? std::string() : base.substr(0, schemeEnd + 1)) + relative;
  if (!relative.empty() && relative[0] == '/') {
    const size_t hostEnd = schemeEnd == std::string::npos ? std::string::npos : base.find('/', schemeEnd + 3);
    return (hostEnd == std::string::npos ? base : base.substr(0, hostEnd)) + relative;
  }
  const size_t slash = base.rfind('/');
  if (slash == std::string::npos || (schemeEnd != std::string::npos && slash < schemeEnd + 3))
    return base + "/" + relative;
  return base.substr(0, slash + 1) + relative;
}

struct AXValObj : Obj {
  static constexpr Kind kKind = Kind::kAXValue;
  explicit AXValObj(AXValueType t) : Obj(kKind), type(t) {}
  std::string Describe() const override {
    switch (type) {
      case kAXValueTypeCGPoint: return "AXValue point " + Num(point.x) + "," + Num(point.y);
      case kAXValueTypeCGSize: return "AXValue size " + Num(size.width) + "," + Num(size.height);
      case kAXValueTypeCGRect:
        return "AXValue rect " + Num(rect.origin.x) + "," + Num(rect.origin.y) + "," + Num(rect.size.width) + "," +
               Num(rect.size.height);
      case kAXValueTypeCFRange:
        return "AXValue range " + std::to_string(range.location) + "," + std::to_string(range.length);
      case kAXValueTypeAXError: return "AXValue error " + std::to_string(error);
      default: return "AXValue illegal";
    }
  }
  bool Equals(const Obj& other) const override {
    const auto& o = static_cast<const AXValObj&>(other);
    if (type != o.type) return false;
    switch (type) {
      case kAXValueTypeCGPoint: return point.x == o.point.x && point.y == o.point.y;
      case kAXValueTypeCGSize: return size.width == o.size.width && size.height == o.size.height;
      case kAXValueTypeCGRect:
        return rect.origin.x == o.rect.origin.x && rect.origin.y == o.rect.origin.y &&
               rect.size.width == o.rect.size.width && rect.size.height == o.rect.size.height;
      case kAXValueTypeCFRange: return range.location == o.range.location && range.length == o.range.length;
      case kAXValueTypeAXError: return error == o.error;
      default: return true;
    }
  }
  CFHashCode Hash() const override { return type; }
  const AXValueType type;
  CGPoint point{};
  CGSize size{};
  CGRect rect{};
  CFRange range{};
  AXError error = kAXErrorSuccess;
};

AXValObj* NewAXError(AXError code) {
  auto v = std::make_unique<AXValObj>(kAXValueTypeAXError);
  v->error = code;
  return Registry::Get().Add(std::move(v));
}

// ---------------------------------------------------------------------------
// The world, the log

struct WorldState {
  std::mutex mu;
  std::condition_variable cv;  // hung calls wait on it, so a new world ends them early
  std::unique_ptr<FakeWorld> world;
  uint64_t generation = 0;
  float globalTimeout = 0;  // seconds; 0 = Apple's default
};

WorldState& State() {
  static WorldState* state = new WorldState;
  return *state;
}

constexpr float kDefaultTimeoutSeconds = 6.0f;

struct LogState {
  std::mutex mu;
  std::vector<std::string> lines;
};

LogState& LogStore() {
  static LogState* log = new LogState;
  return *log;
}

// ---------------------------------------------------------------------------
// AXUIElement

enum class ElemKind { kApp, kSystem, kElement };

struct ElemObj : Obj {
  static constexpr Kind kKind = Kind::kAXUIElement;
  ElemObj(ElemKind k, int64_t p, int64_t i) : Obj(kKind), which(k), pid(p), id(i) {}
  std::string Describe() const override {
    switch (which) {
      case ElemKind::kApp: return "AXUIElement app pid " + std::to_string(pid);
      case ElemKind::kSystem: return "AXUIElement system-wide";
      case ElemKind::kElement: break;
    }
    return "AXUIElement pid " + std::to_string(pid) + " id " + std::to_string(id);
  }
  // The element it designates: an app reference is its app's root element.
  std::tuple<int, int64_t, int64_t> Canonical() const {
    if (which == ElemKind::kApp) {
      WorldState& st = State();
      std::lock_guard<std::mutex> lock(st.mu);
      if (st.world)
        if (FakeApp* app = st.world->App(pid)) return {static_cast<int>(ElemKind::kElement), pid, app->rootId};
    }
    return {static_cast<int>(which), pid, id};
  }
  bool Equals(const Obj& other) const override { return Canonical() == static_cast<const ElemObj&>(other).Canonical(); }
  CFHashCode Hash() const override {
    const auto key = Canonical();
    return std::hash<int64_t>()(std::get<1>(key)) * 31 + std::hash<int64_t>()(std::get<2>(key)) * 7 +
           static_cast<CFHashCode>(std::get<0>(key));
  }
  const ElemKind which;
  const int64_t pid;
  const int64_t id;
  std::atomic<float> timeout{-1};  // seconds; < 0: not set on this reference
};

ElemObj* NewElement(ElemKind k, int64_t pid, int64_t id) {
  return Registry::Get().Add(std::make_unique<ElemObj>(k, pid, id));
}

// ---------------------------------------------------------------------------
// CGEvent, CGEventSource

struct SourceObj : Obj {
  static constexpr Kind kKind = Kind::kCGEventSource;
  explicit SourceObj(CGEventSourceStateID s) : Obj(kKind), state(s) {}
  const CGEventSourceStateID state;
};

struct EventObj : Obj {
  static constexpr Kind kKind = Kind::kCGEvent;
  explicit EventObj(CGEventType t) : Obj(kKind), type(t) {}
  std::string Describe() const override { return "CGEvent type " + std::to_string(type); }
  CGEventType type;
  CGPoint location{};
  CGMouseButton button = kCGMouseButtonLeft;
  CGKeyCode keyCode = 0;
  std::u16string unicode;
  bool hasUnicode = false;
  CGEventFlags flags = 0;
  std::map<uint32_t, int64_t> fields;
  CGScrollEventUnit units = kCGScrollEventUnitPixel;
  uint32_t wheelCount = 0;
  int32_t wheels[3] = {0, 0, 0};
};

// ---------------------------------------------------------------------------
// AXObserver, CFRunLoop, CFRunLoopSource
//
// Locking: the observer mutex is taken after the world mutex, never before
// it, and the registry mutex may be taken under it; CFRelease (which may run
// an observer's DropReferences) and callbacks run without it.

struct ObserverObj;

struct RunLoopSourceObj : Obj {
  static constexpr Kind kKind = Kind::kRunLoopSource;
  RunLoopSourceObj() : Obj(kKind) {}
  std::string Describe() const override { return "CFRunLoopSource of an AXObserver"; }
  ObserverObj* observer = nullptr;  // null once the observer is gone; guarded by Observers().mu
};

struct RunLoopObj : Obj {
  static constexpr Kind kKind = Kind::kRunLoop;
  RunLoopObj() : Obj(kKind) {}
  // mode -> sources, each retained by the run loop; guarded by Observers().mu
  std::map<std::string, std::vector<RunLoopSourceObj*>> sources;
};

struct QueuedNote {
  Clock::time_point at;
  std::string name;
  int64_t element = 0;  // 0: the app element
};

struct Registration {
  int64_t element = 0;  // the world element id (the app's root for the app element)
  std::string name;
  void* refcon = nullptr;
};

struct ObserverObj : Obj {
  static constexpr Kind kKind = Kind::kAXObserver;
  ObserverObj(int64_t p, AXObserverCallback cb) : Obj(kKind), pid(p), callback(cb) {}
  std::string Describe() const override { return "AXObserver pid " + std::to_string(pid); }
  void DropReferences() override;
  const int64_t pid;
  const AXObserverCallback callback;
  RunLoopSourceObj* source = nullptr;  // +1, ours
  int64_t rootId = 0;                  // the app element's id when created (0: no such app)
  // Guarded by Observers().mu.
  std::vector<Registration> registrations;
  std::vector<QueuedNote> queue;  // ordered by `at`
};

struct ObserverState {
  std::mutex mu;
  std::condition_variable cv;  // a posted notification wakes a running run loop
  std::vector<ObserverObj*> observers;
  std::map<std::thread::id, RunLoopObj*> loops;
};

ObserverState& Observers() {
  static ObserverState* state = new ObserverState;
  return *state;
}

void Enqueue(ObserverObj& o, QueuedNote note) {
  auto at = std::upper_bound(o.queue.begin(), o.queue.end(), note.at,
                             [](Clock::time_point t, const QueuedNote& q) { return t < q.at; });
  o.queue.insert(at, std::move(note));
}

void ObserverObj::DropReferences() {
  std::vector<RunLoopSourceObj*> removed;
  RunLoopSourceObj* own = source;
  {
    ObserverState& os = Observers();
    std::lock_guard<std::mutex> lock(os.mu);
    os.observers.erase(std::remove(os.observers.begin(), os.observers.end(), this), os.observers.end());
    if (own) {
      own->observer = nullptr;
      // Releasing an observer removes its source from the run loops (AXObserverGetRunLoopSource's documentation).
      for (auto& loop : os.loops)
        for (auto& mode : loop.second->sources) {
          auto& list = mode.second;
          for (auto it = list.begin(); it != list.end();)
            if (*it == own) {
              removed.push_back(own);
              it = list.erase(it);
            } else {
              ++it;
            }
        }
    }
  }
  for (RunLoopSourceObj* r : removed) CFRelease(r);
  if (own) CFRelease(own);
  source = nullptr;
}

RunLoopObj* CurrentLoop() {
  ObserverState& os = Observers();
  std::lock_guard<std::mutex> lock(os.mu);
  RunLoopObj*& loop = os.loops[std::this_thread::get_id()];
  if (!loop) loop = Registry::Get().Add(std::make_unique<RunLoopObj>(), /*immortal=*/true);
  return loop;
}

// ---------------------------------------------------------------------------
// Compound equality (needs the types above)

bool ArrObj::Equals(const Obj& other) const {
  const auto& o = static_cast<const ArrObj&>(other);
  if (items.size() != o.items.size()) return false;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i] == o.items[i]) continue;
    if (items[i]->kind != o.items[i]->kind || !items[i]->Equals(*o.items[i])) return false;
  }
  return true;
}

const Obj* DictObj::Find(const Obj* key) const {
  for (const auto& e : entries)
    if (e.first == key || (e.first->kind == key->kind && e.first->Equals(*key))) return e.second;
  return nullptr;
}

void DictObj::Put(const Obj* key, const Obj* value) {
  for (auto& e : entries) {
    if (e.first == key || (e.first->kind == key->kind && e.first->Equals(*key))) {
      CFRelease(AsRef(key));
      CFRelease(AsRef(std::exchange(e.second, value)));
      return;
    }
  }
  entries.emplace_back(key, value);
}

bool DictObj::Equals(const Obj& other) const {
  const auto& o = static_cast<const DictObj&>(other);
  if (entries.size() != o.entries.size()) return false;
  for (const auto& e : entries) {
    const Obj* v = o.Find(e.first);
    if (!v || (v != e.second && (v->kind != e.second->kind || !v->Equals(*e.second)))) return false;
  }
  return true;
}

// A dictionary built by the fake itself (window info): string keys, +1 values.
struct DictBuilder {
  std::unique_ptr<DictObj> dict = std::make_unique<DictObj>();
  DictBuilder& Set(CFStringRef key, const Obj* owned) {
    dict->Put(AsObj(CFRetain(key)), owned);
    return *this;
  }
  DictObj* Done() { return Registry::Get().Add(std::move(dict)); }
};

// ---------------------------------------------------------------------------
// World values ↔ CF

// A +1 CF object for a world value. Call with the world locked.
const Obj* ToCF(const FakeValue& v, FakeWorld& world) {
  switch (v.kind) {
    case FakeValue::Kind::kString: return NewString(v.text);
    case FakeValue::Kind::kInt: return NewInt(v.integer);
    case FakeValue::Kind::kDouble: return NewDouble(v.number);
    case FakeValue::Kind::kBool: return AsObj(CFRetain(v.flag ? kCFBooleanTrue : kCFBooleanFalse));
    case FakeValue::Kind::kPoint: {
      auto a = std::make_unique<AXValObj>(kAXValueTypeCGPoint);
      a->point = CGPointMake(v.x, v.y);
      return Registry::Get().Add(std::move(a));
    }
    case FakeValue::Kind::kSize: {
      auto a = std::make_unique<AXValObj>(kAXValueTypeCGSize);
      a->size = CGSizeMake(v.w, v.h);
      return Registry::Get().Add(std::move(a));
    }
    case FakeValue::Kind::kRect: {
      auto a = std::make_unique<AXValObj>(kAXValueTypeCGRect);
      a->rect = CGRectMake(v.x, v.y, v.w, v.h);
      return Registry::Get().Add(std::move(a));
    }
    case FakeValue::Kind::kRange: {
      auto a = std::make_unique<AXValObj>(kAXValueTypeCFRange);
      a->range = CFRangeMake(static_cast<CFIndex>(v.x), static_cast<CFIndex>(v.w));
      return Registry::Get().Add(std::move(a));
    }
    case FakeValue::Kind::kUrl: return v.base.empty() ? NewUrl(v.text) : NewUrlWithBase(v.text, v.base);
    case FakeValue::Kind::kElement: {
      const FakeElement* el = world.Element(v.integer);
      return NewElement(ElemKind::kElement, el ? el->pid : 0, v.integer);
    }
    case FakeValue::Kind::kArray: {
      std::vector<const Obj*> items;
      items.reserve(v.items.size());
      for (const FakeValue& item : v.items) items.push_back(ToCF(item, world));
      return NewArray(std::move(items));
    }
    case FakeValue::Kind::kError: return NewAXError(static_cast<AXError>(v.integer));
    case FakeValue::Kind::kNoValue: return NewAXError(kAXErrorNoValue);  // only inside arrays
  }
  return NewAXError(kAXErrorFailure);
}

// A world value from a CF value the backend sets; false when the fake has no
// world equivalent (the app would reject it). Call with the world locked.
bool FromCF(const Obj* o, FakeWorld& world, FakeValue& out) {
  switch (o->kind) {
    case Kind::kString: out = FakeValue::String(static_cast<const StrObj*>(o)->utf8); return true;
    case Kind::kNumber: {
      const auto* n = static_cast<const NumObj*>(o);
      out = n->isFloat ? FakeValue::Double(n->d) : FakeValue::Int(n->i);
      return true;
    }
    case Kind::kBoolean: out = FakeValue::Bool(static_cast<const BoolObj*>(o)->value); return true;
    case Kind::kURL: {
      const auto* u = static_cast<const UrlObj*>(o);
      out = u->base ? FakeValue::UrlWithBase(u->str->utf8, u->base->str->utf8) : FakeValue::Url(u->str->utf8);
      return true;
    }
    case Kind::kAXValue: {
      const auto* a = static_cast<const AXValObj*>(o);
      switch (a->type) {
        case kAXValueTypeCGPoint: out = FakeValue::Point(a->point.x, a->point.y); return true;
        case kAXValueTypeCGSize: out = FakeValue::Size(a->size.width, a->size.height); return true;
        case kAXValueTypeCGRect:
          out = FakeValue::RectValue(a->rect.origin.x, a->rect.origin.y, a->rect.size.width, a->rect.size.height);
          return true;
        case kAXValueTypeCFRange: out = FakeValue::Range(a->range.location, a->range.length); return true;
        default: return false;
      }
    }
    case Kind::kAXUIElement: {
      const auto* e = static_cast<const ElemObj*>(o);
      if (e->which == ElemKind::kSystem) return false;
      if (e->which == ElemKind::kApp) {
        FakeApp* app = world.App(e->pid);
        if (!app) return false;
        out = FakeValue::Element(app->rootId);
        return true;
      }
      if (!world.Element(e->id)) return false;
      out = FakeValue::Element(e->id);
      return true;
    }
    case Kind::kArray: {
      std::vector<FakeValue> items;
      for (const Obj* item : static_cast<const ArrObj*>(o)->items) {
        FakeValue v;
        if (!FromCF(item, world, v)) return false;
        items.push_back(std::move(v));
      }
      out = FakeValue::Array(std::move(items));
      return true;
    }
    default: return false;
  }
}

// How a set value appears in the log.
std::string Repr(const FakeValue& v) {
  switch (v.kind) {
    case FakeValue::Kind::kNoValue: return "novalue";
    case FakeValue::Kind::kString: return Quote(v.text);
    case FakeValue::Kind::kInt: return std::to_string(v.integer);
    case FakeValue::Kind::kDouble: return Num(v.number);
    case FakeValue::Kind::kBool: return v.flag ? "true" : "false";
    case FakeValue::Kind::kPoint: return "point(" + Num(v.x) + "," + Num(v.y) + ")";
    case FakeValue::Kind::kSize: return "size(" + Num(v.w) + "," + Num(v.h) + ")";
    case FakeValue::Kind::kRect: return "rect(" + Num(v.x) + "," + Num(v.y) + "," + Num(v.w) + "," + Num(v.h) + ")";
    case FakeValue::Kind::kRange: return "range(" + Num(v.x) + "," + Num(v.w) + ")";
    case FakeValue::Kind::kUrl: return "url(" + Quote(v.text) + ")";
    case FakeValue::Kind::kElement: return "element(" + std::to_string(v.integer) + ")";
    case FakeValue::Kind::kError: return "error(" + std::to_string(v.integer) + ")";
    case FakeValue::Kind::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < v.items.size(); ++i) out += (i ? "," : "") + Repr(v.items[i]);
      return out + "]";
    }
  }
  return "?";
}

bool SameKindForSet(const FakeValue& current, const FakeValue& next) {
  using K = FakeValue::Kind;
  if (current.kind == K::kNoValue || current.kind == K::kError) return true;
  auto numeric = [](K k) { return k == K::kInt || k == K::kDouble; };
  if (numeric(current.kind) && numeric(next.kind)) return true;
  return current.kind == next.kind;
}

// ---------------------------------------------------------------------------
// Resolving an AX call against the world

struct Target {
  FakeApp* app = nullptr;
  FakeElement* el = nullptr;  // the app's root for an app reference
  bool system = false;
  std::string Name() const { return system ? "system" : std::to_string(el->id); }
};

enum class Call { kRead, kOther };

// Every call that would be an IPC to an app on macOS passes here: counted, so
// tests can hold the backend to a number of calls per element.
std::atomic<int64_t> gAXCalls{0};

// issue 12 item 9 (threads): calls made on the marked thread.
std::mutex gMarkMu;
std::thread::id gMarkedThread;
std::atomic<int64_t> gAXCallsOnMarked{0};

void CountThread() {
  std::lock_guard<std::mutex> lock(gMarkMu);
  if (gMarkedThread != std::thread::id() && std::this_thread::get_id() == gMarkedThread) gAXCallsOnMarked++;
}

// Resolves `e`, applies the trust check, the app's hang and the scripted
// faults. On success `t` is valid while `lock` stays held.
AXError Enter(const ElemObj* e, Call call, Target& t, std::unique_lock<std::mutex>& lock) {
  gAXCalls++;
  CountThread();
  WorldState& st = State();
  FakeWorld* w = st.world.get();
  if (!w)
    return e->which == ElemKind::kSystem ? kAXErrorNoValue
           : e->which == ElemKind::kApp  ? kAXErrorCannotComplete
                                         : kAXErrorInvalidUIElement;
  if (!w->trusted) return kAXErrorAPIDisabled;
  if (e->which == ElemKind::kSystem) {
    t.system = true;
    return kAXErrorSuccess;
  }
  if (e->which == ElemKind::kApp) {
    t.app = w->App(e->pid);
    if (!t.app) return kAXErrorCannotComplete;
    t.el = w->Element(t.app->rootId);
  } else {
    t.el = w->Element(e->id);
    if (!t.el || t.el->pid != e->pid) return kAXErrorInvalidUIElement;
    t.app = w->App(t.el->pid);
  }
  if (!t.app || !t.el) return kAXErrorInvalidUIElement;

  if (t.app->hungMs > 0) {
    float seconds = e->timeout.load();
    if (seconds < 0) seconds = st.globalTimeout;
    if (seconds <= 0) seconds = kDefaultTimeoutSeconds;
    const auto limit = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    const auto hang = std::chrono::milliseconds(t.app->hungMs);
    const uint64_t generation = st.generation;
    st.cv.wait_for(lock, std::min(hang, limit), [&] { return st.generation != generation; });
    // A new world: the element this call was about is gone.
    if (st.generation != generation) return kAXErrorInvalidUIElement;
    if (hang >= limit) return kAXErrorCannotComplete;
  }

  const FakeFaults& ef = t.el->faults;
  const FakeFaults& af = t.app->faults;
  if (ef.cannotComplete || af.cannotComplete) return kAXErrorCannotComplete;
  if (ef.dieAfterReads >= 0 && t.el->reads >= ef.dieAfterReads) return kAXErrorInvalidUIElement;
  if (af.dieAfterReads >= 0 && t.app->reads >= af.dieAfterReads) return kAXErrorInvalidUIElement;
  if (call == Call::kRead) {
    ++t.el->reads;
    ++t.app->reads;
  }
  return kAXErrorSuccess;
}

bool Revealed(const FakeApp& app) {
  return app.chromium && app.revealRequestedAt &&
         Clock::now() >= *app.revealRequestedAt + std::chrono::milliseconds(app.chromium->revealAfterMs);
}

// The value of `name`, or nullopt when the element does not support it.
std::optional<FakeValue> Attr(FakeWorld& w, const Target& t, const std::string& name) {
  // A delayed activation lands when its time has come.
  if (w.pendingFocus && Clock::now() >= w.pendingFocus->second) {
    w.focusedPid = w.pendingFocus->first;
    w.pendingFocus.reset();
  }
  if (t.system) {
    auto it = w.systemWideAttrs.find(name);
    if (it != w.systemWideAttrs.end()) return it->second;
    if (name == "AXRole") return FakeValue::String("AXSystemWide");
    FakeApp* focused = w.focusedPid ? w.App(w.focusedPid) : nullptr;
    if (name == "AXFocusedApplication") return focused ? FakeValue::Element(focused->rootId) : FakeValue::NoValue();
    if (name == "AXFocusedUIElement") {
      if (!focused) return FakeValue::NoValue();
      const FakeElement* root = w.Element(focused->rootId);
      auto f = root->attrs.find("AXFocusedUIElement");
      return f != root->attrs.end() ? f->second : FakeValue::NoValue();
    }
    return std::nullopt;
  }
  auto it = t.el->attrs.find(name);
  // The app element's own switches, derived from the world unless scripted.
  if (t.el->id == t.app->rootId && it == t.el->attrs.end()) {
    if (name == "AXHidden") return FakeValue::Bool(t.app->hidden);
    if (name == "AXFrontmost") return FakeValue::Bool(w.focusedPid == t.app->pid);
  }
  if (name == "AXChildren" && t.el->growEveryMs > 0) {
    FakeValue children =
        it != t.el->attrs.end() && it->second.kind == FakeValue::Kind::kArray ? it->second : FakeValue::Array({});
    const auto grown = (Clock::now() - t.el->installedAt) / std::chrono::milliseconds(t.el->growEveryMs);
    const size_t n = std::min(t.el->hiddenChildren.size(), static_cast<size_t>(std::max<int64_t>(0, grown)));
    for (size_t i = 0; i < n; i++) children.items.push_back(t.el->hiddenChildren[i]);
    return children;
  }
  if (name == "AXChildren" && !t.el->hiddenChildren.empty() && Revealed(*t.app)) {
    FakeValue children =
        it != t.el->attrs.end() && it->second.kind == FakeValue::Kind::kArray ? it->second : FakeValue::Array({});
    for (const FakeValue& c : t.el->hiddenChildren) children.items.push_back(c);
    return children;
  }
  if (it == t.el->attrs.end()) return std::nullopt;
  return it->second;
}

}  // namespace
void AppendLog(std::string line);
namespace {

// One attribute read: the value (+1 in `out`) or the AXError.
AXError ReadOne(FakeWorld& w, const Target& t, const std::string& name, bool inBatch, const Obj*& out) {
  out = nullptr;
  if (!t.system) {
    for (const FakeFaults* f : {&t.el->faults, &t.app->faults}) {
      if (f->logReads.count(name)) AppendLog("read " + t.Name() + " " + name);
      auto it = f->failAttribute.find(name);
      if (it != f->failAttribute.end()) return static_cast<AXError>(it->second);
      if (inBatch && f->failBatchSlots.count(name)) return kAXErrorCannotComplete;
    }
  }
  if (!t.system && name == "AXSelectedTextRange") {
    FakeFaults& f = t.el->faults;
    if (f.pendingSelection && f.selectionLagLeft == 0) {
      t.el->attrs[name] = *f.pendingSelection;
      f.pendingSelection.reset();
    } else if (f.pendingSelection && f.selectionLagLeft > 0) {
      f.selectionLagLeft--;
    }
  }
  std::optional<FakeValue> v = Attr(w, t, name);
  if (!v) return inBatch ? kAXErrorNoValue : kAXErrorAttributeUnsupported;
  if (v->kind == FakeValue::Kind::kNoValue) return kAXErrorNoValue;
  if (v->kind == FakeValue::Kind::kError) return static_cast<AXError>(v->integer);
  out = ToCF(*v, w);
  return kAXErrorSuccess;
}

std::string StringArg(CFStringRef s, const char* fn) { return Checked<StrObj>(s, fn)->utf8; }

bool IsWindow(const FakeElement& el) {
  auto it = el.attrs.find("AXRole");
  return it != el.attrs.end() && it->second.kind == FakeValue::Kind::kString && it->second.text == "AXWindow";
}

bool IsMinimized(const FakeElement& el) {
  auto it = el.attrs.find("AXMinimized");
  return it != el.attrs.end() && it->second.kind == FakeValue::Kind::kBool && it->second.flag;
}

std::vector<FakeElement*> AppWindows(FakeWorld& w, const FakeApp& app) {
  std::vector<FakeElement*> out;
  const FakeElement* root = w.Element(app.rootId);
  auto it = root->attrs.find("AXWindows");
  if (it == root->attrs.end() || it->second.kind != FakeValue::Kind::kArray) return out;
  for (const FakeValue& v : it->second.items)
    if (v.kind == FakeValue::Kind::kElement)
      if (FakeElement* el = w.Element(v.integer)) out.push_back(el);
  return out;
}

// Is this CG window the view of a minimized AX window?
bool BacksMinimizedWindow(FakeWorld& w, const FakeApp& app, const FakeCGWindow& cg) {
  for (FakeElement* win : AppWindows(w, app))
    if (CGWindowOf(w, *win) == &cg) return IsMinimized(*win);
  return false;
}

void MoveToFront(FakeWorld& w, const FakeCGWindow* cg) {
  auto it = std::find_if(w.windows.begin(), w.windows.end(), [&](const FakeCGWindow& x) { return &x == cg; });
  if (it != w.windows.end()) std::rotate(w.windows.begin(), it, it + 1);
}

void SetFlag(FakeElement& el, const char* name, bool value) { el.attrs[name] = FakeValue::Bool(value); }

// Makes `win` the app's main and focused window.
void MakeMain(FakeWorld& w, FakeApp& app, FakeElement& win, bool main) {
  for (FakeElement* other : AppWindows(w, app)) {
    if (other == &win) continue;
    if (main && other->attrs.count("AXMain")) SetFlag(*other, "AXMain", false);
    if (other->attrs.count("AXFocused")) SetFlag(*other, "AXFocused", false);
  }
  FakeElement* root = w.Element(app.rootId);
  if (main) {
    SetFlag(win, "AXMain", true);
    root->attrs["AXMainWindow"] = FakeValue::Element(win.id);
  }
  SetFlag(win, "AXFocused", true);
  root->attrs["AXFocusedWindow"] = FakeValue::Element(win.id);
}

const char* StepName(Step step) {
  switch (step) {
    case Step::kUnhide: return "unhide";
    case Step::kActivate: return "activate";
    case Step::kOpen: return "open";
    case Step::kUnminimize: return "unminimize";
    case Step::kRaise: return "raise";
    case Step::kMain: return "main";
  }
  return "?";
}

void Unhide(FakeWorld& w, FakeApp& app) {
  app.hidden = false;
  for (FakeCGWindow& cg : w.windows)
    if (cg.pid == app.pid && !BacksMinimizedWindow(w, app, cg)) cg.onScreen = true;
}

}  // namespace

// ---------------------------------------------------------------------------
// Public C++ side (fake_cf.h)

FakeValue FakeValue::String(std::string s) {
  FakeValue v;
  v.kind = Kind::kString;
  v.text = std::move(s);
  return v;
}
FakeValue FakeValue::Int(int64_t i) {
  FakeValue v;
  v.kind = Kind::kInt;
  v.integer = i;
  return v;
}
FakeValue FakeValue::Double(double d) {
  FakeValue v;
  v.kind = Kind::kDouble;
  v.number = d;
  return v;
}
FakeValue FakeValue::Bool(bool b) {
  FakeValue v;
  v.kind = Kind::kBool;
  v.flag = b;
  return v;
}
FakeValue FakeValue::Point(double x, double y) {
  FakeValue v;
  v.kind = Kind::kPoint;
  v.x = x, v.y = y;
  return v;
}
FakeValue FakeValue::Size(double w, double h) {
  FakeValue v;
  v.kind = Kind::kSize;
  v.w = w, v.h = h;
  return v;
}
FakeValue FakeValue::RectValue(double x, double y, double w, double h) {
  FakeValue v;
  v.kind = Kind::kRect;
  v.x = x, v.y = y, v.w = w, v.h = h;
  return v;
}
FakeValue FakeValue::Range(int64_t location, int64_t length) {
  FakeValue v;
  v.kind = Kind::kRange;
  v.x = static_cast<double>(location), v.w = static_cast<double>(length);
  return v;
}
FakeValue FakeValue::Url(std::string s) {
  FakeValue v;
  v.kind = Kind::kUrl;
  v.text = std::move(s);
  return v;
}
FakeValue FakeValue::UrlWithBase(std::string relative, std::string base) {
  FakeValue v = Url(std::move(relative));
  v.base = std::move(base);
  return v;
}
FakeValue FakeValue::Element(int64_t id) {
  FakeValue v;
  v.kind = Kind::kElement;
  v.integer = id;
  return v;
}
FakeValue FakeValue::Array(std::vector<FakeValue> items) {
  FakeValue v;
  v.kind = Kind::kArray;
  v.items = std::move(items);
  return v;
}
FakeValue FakeValue::Error(int32_t code) {
  FakeValue v;
  v.kind = Kind::kError;
  v.integer = code;
  return v;
}

FakeApp* FakeWorld::App(int64_t pid) {
  for (FakeApp& app : apps)
    if (app.pid == pid) return &app;
  return nullptr;
}

FakeElement* FakeWorld::Element(int64_t id) {
  auto it = elements.find(id);
  return it == elements.end() ? nullptr : &it->second;
}

namespace {

void CheckRefs(FakeWorld& w, const FakeValue& v, const std::string& where) {
  if (v.kind == FakeValue::Kind::kElement && !w.Element(v.integer))
    throw std::invalid_argument(where + ": reference to element " + std::to_string(v.integer) +
                                ", which does not exist");
  if (v.kind == FakeValue::Kind::kUrl && !ValidUrl(v.text))
    throw std::invalid_argument(where + ": " + Quote(v.text) + " is not a URL CFURLCreateWithString accepts");
  if (v.kind == FakeValue::Kind::kUrl && !v.base.empty() && !ValidUrl(v.base))
    throw std::invalid_argument(where + ": " + Quote(v.base) + " is not a URL CFURLCreateWithString accepts");
  for (const FakeValue& item : v.items) CheckRefs(w, item, where);
}

}  // namespace

void InstallWorld(FakeWorld world) {
  std::set<int64_t> pids;
  // Installed apps that are not running yet hold elements too: checked the same way.
  std::vector<FakeApp*> all;
  for (FakeApp& app : world.apps) all.push_back(&app);
  for (FakeInstalled& i : world.installed)
    if (i.app) all.push_back(&*i.app);
  for (FakeApp* each : all) {
    FakeApp& app = *each;
    if (!pids.insert(app.pid).second) throw std::invalid_argument("two apps with pid " + std::to_string(app.pid));
    FakeElement* root = world.Element(app.rootId);
    if (!root || root->pid != app.pid)
      throw std::invalid_argument("app " + std::to_string(app.pid) + ": its root element is missing");
    if (!root->attrs.count("AXRole")) root->attrs["AXRole"] = FakeValue::String("AXApplication");
    if (!root->attrs.count("AXTitle")) root->attrs["AXTitle"] = FakeValue::String(app.name);
    for (FakeCGWindow& cg : world.windows)
      if (cg.pid == app.pid && cg.ownerName.empty()) cg.ownerName = app.name;
    if (app.chromium && app.chromium->attribute != "AXManualAccessibility" &&
        app.chromium->attribute != "AXEnhancedUserInterface")
      throw std::invalid_argument("app " + std::to_string(app.pid) +
                                  ": chromium.attribute must be "
                                  "AXManualAccessibility or AXEnhancedUserInterface");
  }
  for (FakeApp& app : world.apps)
    for (const FakeNotification& n : app.notifications)
      if (n.element != 0 && (!world.Element(n.element) || world.Element(n.element)->pid != app.pid))
        throw std::invalid_argument("app " + std::to_string(app.pid) + ": notification " + n.name + " from element " +
                                    std::to_string(n.element) + ", which is not an element of the app");
  if (world.focusedPid && !world.App(world.focusedPid))
    throw std::invalid_argument("focusedPid " + std::to_string(world.focusedPid) + " is not an app");
  for (auto& entry : world.elements) {
    FakeElement& el = entry.second;
    const std::string where = "element " + std::to_string(el.id);
    if (el.id != entry.first) throw std::invalid_argument(where + ": id does not match its key");
    if (!pids.count(el.pid)) throw std::invalid_argument(where + ": no app with pid " + std::to_string(el.pid));
    for (const auto& attr : el.attrs) CheckRefs(world, attr.second, where + " " + attr.first);
    for (const FakeValue& c : el.hiddenChildren) {
      if (c.kind != FakeValue::Kind::kElement)
        throw std::invalid_argument(where + ": hiddenChildren holds non-elements");
      CheckRefs(world, c, where + " hiddenChildren");
    }
  }
  for (const auto& attr : world.systemWideAttrs) CheckRefs(world, attr.second, "systemWide " + attr.first);
  std::set<uint32_t> numbers;
  for (const FakeCGWindow& cg : world.windows)
    if (!numbers.insert(cg.number).second)
      throw std::invalid_argument("two CG windows numbered " + std::to_string(cg.number));
  for (auto& entry : world.elements)
    if (entry.second.cgWindow && !numbers.count(*entry.second.cgWindow))
      throw std::invalid_argument("element " + std::to_string(entry.first) + ": cgWindow " +
                                  std::to_string(*entry.second.cgWindow) + " is not in the window list");

  const Clock::time_point installed = Clock::now();
  for (auto& entry : world.elements) entry.second.installedAt = installed;
  ClearLog();
  WorldState& st = State();
  std::unique_ptr<FakeWorld> old;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    old = std::move(st.world);
    st.world = std::make_unique<FakeWorld>(std::move(world));
    ++st.generation;
  }
  st.cv.notify_all();
}

void ClearWorld() {
  WorldState& st = State();
  std::unique_ptr<FakeWorld> old;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    old = std::move(st.world);
    ++st.generation;
  }
  st.cv.notify_all();
}

void WithWorld(const std::function<void(FakeWorld* world)>& fn) {
  WorldState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  fn(st.world.get());
}

FakeCGWindow* CGWindowOf(FakeWorld& world, const FakeElement& window) {
  if (!window.cgWindow)
    for (FakeCGWindow& cg : world.windows)
      if (cg.pid == window.pid && static_cast<int64_t>(cg.number) == window.id) return &cg;
  for (FakeCGWindow& cg : world.windows) {
    if (window.cgWindow) {
      if (cg.number == *window.cgWindow) return &cg;
      continue;
    }
    auto title = window.attrs.find("AXTitle");
    if (cg.pid == window.pid && title != window.attrs.end() && title->second.kind == FakeValue::Kind::kString &&
        cg.name == title->second.text)
      return &cg;
  }
  return nullptr;
}

// The reopen event: the app's kept windows (or those of another Space) come into AX and on screen.
void OrderIn(FakeWorld& w, FakeApp& app) {
  FakeElement* root = w.Element(app.rootId);
  for (int64_t id : app.reopenWindows) {
    FakeElement* win = w.Element(id);
    if (!win) continue;
    for (const char* list : {"AXWindows", "AXChildren"}) {
      FakeValue& v = root->attrs[list];
      if (v.kind != FakeValue::Kind::kArray) v = FakeValue::Array({});
      v.items.push_back(FakeValue::Element(id));
    }
    if (FakeCGWindow* cg = CGWindowOf(w, *win)) cg->onScreen = true;
    if (id == app.reopenWindows.front()) MakeMain(w, app, *win, /*main=*/true);
  }
  app.reopenWindows.clear();
}

bool ApplyStep(FakeWorld& w, FakeApp& app, Step step, int64_t windowId) {
  if (!app.recoverOn.empty() && !app.recovered) {
    // A scripted app: only its one step brings the windows back; the others
    // are accepted and change nothing, like an app that ignores them.
    if (app.recoverOn != StepName(step)) return false;
    app.recovered = true;
    app.hidden = false;
    for (FakeElement* win : AppWindows(w, app))
      if (win->attrs.count("AXMinimized")) SetFlag(*win, "AXMinimized", false);
    for (FakeCGWindow& cg : w.windows)
      if (cg.pid == app.pid) cg.onScreen = true;
  }
  FakeElement* win = windowId ? w.Element(windowId) : nullptr;
  switch (step) {
    case Step::kUnhide: Unhide(w, app); break;
    case Step::kActivate:
    case Step::kOpen: {
      if (step == Step::kOpen) OrderIn(w, app);
      Unhide(w, app);
      for (FakeApp& other : w.apps) other.active = other.pid == app.pid;
      if (app.activationDelayMs > 0 && w.focusedPid != app.pid) {
        w.pendingFocus = {app.pid, Clock::now() + std::chrono::milliseconds(app.activationDelayMs)};
      } else {
        w.focusedPid = app.pid;
      }
      // Activation brings the app's windows in front of the others, keeping their order.
      std::stable_partition(w.windows.begin(), w.windows.end(),
                            [&](const FakeCGWindow& cg) { return cg.pid == app.pid; });
      break;
    }
    case Step::kUnminimize:
      if (win) {
        SetFlag(*win, "AXMinimized", false);
        if (FakeCGWindow* cg = CGWindowOf(w, *win)) cg->onScreen = !app.hidden;
      }
      break;
    case Step::kRaise:
      if (win)
        if (FakeCGWindow* cg = CGWindowOf(w, *win)) MoveToFront(w, cg);
      break;
    case Step::kMain:
      if (win) MakeMain(w, app, *win, /*main=*/true);
      break;
  }
  return true;
}

void PostNotification(int64_t pid, const std::string& name, int64_t element) {
  ObserverState& os = Observers();
  {
    std::lock_guard<std::mutex> lock(os.mu);
    for (ObserverObj* o : os.observers)
      if (o->pid == pid) Enqueue(*o, QueuedNote{Clock::now(), name, element});
  }
  os.cv.notify_all();
}

int64_t LiveObservers() {
  ObserverState& os = Observers();
  std::lock_guard<std::mutex> lock(os.mu);
  return static_cast<int64_t>(os.observers.size());
}

void AppendLog(std::string line) {
  LogState& log = LogStore();
  std::lock_guard<std::mutex> lock(log.mu);
  log.lines.push_back(std::move(line));
}

std::vector<std::string> Log() {
  LogState& log = LogStore();
  std::lock_guard<std::mutex> lock(log.mu);
  return log.lines;
}

void ClearLog() {
  LogState& log = LogStore();
  std::lock_guard<std::mutex> lock(log.mu);
  log.lines.clear();
}

int64_t LiveObjects() { return Registry::Get().LiveCount(); }
std::string LiveObjectsSummary() { return Registry::Get().Summary(); }

}  // namespace macfake

int64_t FakeCFLiveObjects() { return macfake::LiveObjects(); }
int64_t FakeAXCalls() { return macfake::gAXCalls.load(); }

namespace macfake {
// issue 12 item 9 (threads)
void MarkThread() {
  std::lock_guard<std::mutex> lock(gMarkMu);
  gMarkedThread = std::this_thread::get_id();
  gAXCallsOnMarked = 0;
}
int64_t AXCallsOnMarkedThread() { return gAXCallsOnMarked.load(); }
}  // namespace macfake
std::string FakeCFLiveObjectsSummary() { return macfake::LiveObjectsSummary(); }
std::vector<std::string> FakeWorldLog() { return macfake::Log(); }
void ClearFakeWorld() { macfake::ClearWorld(); }
void ClearFakeWorldLog() { macfake::ClearLog(); }

}  // namespace axsnap

// ===========================================================================
// The C functions of apple_c.h

// The C functions below use the object model above.
using namespace axsnap::macfake;  // NOLINT(google-build-using-namespace)

// ---- CFBase ---------------------------------------------------------------

const CFAllocatorRef kCFAllocatorDefault = nullptr;

CFTypeRef CFRetain(CFTypeRef cf) {
  Registry::Get().Retain(cf);
  return cf;
}

void CFRelease(CFTypeRef cf) { Registry::Get().Release(cf); }

CFTypeID CFGetTypeID(CFTypeRef cf) { return static_cast<CFTypeID>(Registry::Get().Check(cf, "CFGetTypeID")->kind); }

Boolean CFEqual(CFTypeRef cf1, CFTypeRef cf2) {
  const Obj* a = Registry::Get().Check(cf1, "CFEqual");
  const Obj* b = Registry::Get().Check(cf2, "CFEqual");
  if (a == b) return true;
  return a->kind == b->kind && a->Equals(*b);
}

CFHashCode CFHash(CFTypeRef cf) { return Registry::Get().Check(cf, "CFHash")->Hash(); }

// ---- CFString -------------------------------------------------------------

CFTypeID CFStringGetTypeID(void) { return static_cast<CFTypeID>(StrObj::kKind); }

CFStringRef CFStringCreateWithBytes(CFAllocatorRef alloc, const UInt8* bytes, CFIndex numBytes,
                                    CFStringEncoding encoding, Boolean isExternalRepresentation) {
  CheckAllocator(alloc, "CFStringCreateWithBytes");
  CheckEncoding(encoding, "CFStringCreateWithBytes");
  if (numBytes < 0 || (!bytes && numBytes > 0)) Fatal("CFStringCreateWithBytes: bad buffer (%ld bytes)", numBytes);
  size_t n = static_cast<size_t>(numBytes);
  // The external representation of UTF-8 may start with a byte order mark.
  if (isExternalRepresentation && n >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) {
    bytes += 3;
    n -= 3;
  }
  std::u16string units;
  if (!Utf8ToUtf16(bytes, n, units)) return nullptr;
  return AsTyped<CFStringRef>(NewString(std::move(units)));
}

CFStringRef CFStringCreateWithCString(CFAllocatorRef alloc, const char* cStr, CFStringEncoding encoding) {
  CheckAllocator(alloc, "CFStringCreateWithCString");
  CheckEncoding(encoding, "CFStringCreateWithCString");
  if (!cStr) Fatal("CFStringCreateWithCString(NULL): Apple crashes here");
  std::u16string units;
  if (!Utf8ToUtf16(reinterpret_cast<const unsigned char*>(cStr), std::strlen(cStr), units)) return nullptr;
  return AsTyped<CFStringRef>(NewString(std::move(units)));
}

CFStringRef CFStringCreateWithCharacters(CFAllocatorRef alloc, const UniChar* chars, CFIndex numChars) {
  CheckAllocator(alloc, "CFStringCreateWithCharacters");
  if (numChars < 0 || (!chars && numChars > 0)) Fatal("CFStringCreateWithCharacters: bad buffer (%ld)", numChars);
  // CFString keeps lone surrogates as they are.
  std::u16string units(reinterpret_cast<const char16_t*>(chars), static_cast<size_t>(numChars));
  return AsTyped<CFStringRef>(NewString(std::move(units)));
}

CFIndex CFStringGetLength(CFStringRef theString) {
  return static_cast<CFIndex>(Checked<StrObj>(theString, "CFStringGetLength")->utf16.size());
}

CFIndex CFStringGetMaximumSizeForEncoding(CFIndex length, CFStringEncoding encoding) {
  CheckEncoding(encoding, "CFStringGetMaximumSizeForEncoding");
  // Apple: three bytes per UTF-16 unit for UTF-8 (a surrogate pair, 4 bytes, is 2 units).
  if (length < 0 || length > std::numeric_limits<CFIndex>::max() / 3) return -1;  // kCFNotFound
  return length * 3;
}

Boolean CFStringGetCString(CFStringRef theString, char* buffer, CFIndex bufferSize, CFStringEncoding encoding) {
  const StrObj* s = Checked<StrObj>(theString, "CFStringGetCString");
  CheckEncoding(encoding, "CFStringGetCString");
  if (!buffer || bufferSize < 0) Fatal("CFStringGetCString: bad buffer");
  bool lossless = true;
  const std::string utf8 = Utf16ToUtf8(s->utf16, &lossless);
  if (!lossless) return false;  // a lone surrogate has no UTF-8 form
  if (static_cast<size_t>(bufferSize) < utf8.size() + 1) return false;
  std::memcpy(buffer, utf8.data(), utf8.size());
  buffer[utf8.size()] = '\0';
  return true;
}

const char* CFStringGetCStringPtr(CFStringRef theString, CFStringEncoding encoding) {
  Checked<StrObj>(theString, "CFStringGetCStringPtr");
  CheckEncoding(encoding, "CFStringGetCStringPtr");
  return nullptr;  // Apple may return NULL at any time: the caller must cope, and does here always.
}

namespace {
void CheckRange(const StrObj* s, CFRange range, const char* fn) {
  const auto size = static_cast<CFIndex>(s->utf16.size());
  if (range.location < 0 || range.length < 0 || range.location > size || range.length > size - range.location)
    Fatal("%s: range {%ld, %ld} outside a string of length %ld (Apple raises)", fn, range.location, range.length, size);
}
}  // namespace

CFIndex CFStringGetBytes(CFStringRef theString, CFRange range, CFStringEncoding encoding, UInt8 lossByte,
                         Boolean isExternalRepresentation, UInt8* buffer, CFIndex maxBufLen, CFIndex* usedBufLen) {
  const StrObj* s = Checked<StrObj>(theString, "CFStringGetBytes");
  CheckEncoding(encoding, "CFStringGetBytes");
  CheckRange(s, range, "CFStringGetBytes");
  (void)isExternalRepresentation;  // no byte order mark for UTF-8
  const size_t end = static_cast<size_t>(range.location + range.length);
  CFIndex used = 0, converted = 0;
  for (size_t i = static_cast<size_t>(range.location); i < end;) {
    int units = 1;
    const int64_t c = CodePointAt(s->utf16, i, end, units);
    std::string bytes;
    if (c < 0) {
      if (!lossByte) break;  // Apple stops at the first unconvertible character
      bytes.push_back(static_cast<char>(lossByte));
    } else {
      AppendUtf8(static_cast<uint32_t>(c), bytes);
    }
    if (buffer) {
      if (used + static_cast<CFIndex>(bytes.size()) > maxBufLen) break;
      std::memcpy(buffer + used, bytes.data(), bytes.size());
    }
    used += static_cast<CFIndex>(bytes.size());
    converted += units;
    i += units;
  }
  if (usedBufLen) *usedBufLen = used;
  return converted;
}

void CFStringGetCharacters(CFStringRef theString, CFRange range, UniChar* buffer) {
  const StrObj* s = Checked<StrObj>(theString, "CFStringGetCharacters");
  CheckRange(s, range, "CFStringGetCharacters");
  if (!buffer && range.length > 0) Fatal("CFStringGetCharacters: NULL buffer");
  std::memcpy(buffer, s->utf16.data() + range.location, static_cast<size_t>(range.length) * sizeof(UniChar));
}

CFStringRef __CFStringMakeConstantString(const char* cStr) {
  if (!cStr) Fatal("CFSTR(NULL)");
  return AsTyped<CFStringRef>(Interned(cStr));
}

// ---- CFArray --------------------------------------------------------------

namespace {
const void* CallbackRetain(CFAllocatorRef, const void* value) { return CFRetain(value); }
void CallbackRelease(CFAllocatorRef, const void* value) { CFRelease(value); }
Boolean CallbackEqual(const void* a, const void* b) { return CFEqual(a, b); }
CFHashCode CallbackHash(const void* value) { return CFHash(value); }
}  // namespace

const CFArrayCallBacks kCFTypeArrayCallBacks = {0, CallbackRetain, CallbackRelease, nullptr, CallbackEqual};
const CFDictionaryKeyCallBacks kCFTypeDictionaryKeyCallBacks = {0,       CallbackRetain, CallbackRelease,
                                                                nullptr, CallbackEqual,  CallbackHash};
const CFDictionaryValueCallBacks kCFTypeDictionaryValueCallBacks = {0, CallbackRetain, CallbackRelease, nullptr,
                                                                    CallbackEqual};

CFTypeID CFArrayGetTypeID(void) { return static_cast<CFTypeID>(ArrObj::kKind); }

CFArrayRef CFArrayCreate(CFAllocatorRef allocator, const void** values, CFIndex numValues,
                         const CFArrayCallBacks* callBacks) {
  CheckAllocator(allocator, "CFArrayCreate");
  if (callBacks != &kCFTypeArrayCallBacks)
    Fatal("CFArrayCreate: the fake supports &kCFTypeArrayCallBacks only (got %p)", static_cast<const void*>(callBacks));
  if (numValues < 0 || (!values && numValues > 0)) Fatal("CFArrayCreate: bad values (%ld)", numValues);
  std::vector<const Obj*> items;
  items.reserve(static_cast<size_t>(numValues));
  for (CFIndex i = 0; i < numValues; ++i) {
    Registry::Get().Check(values[i], "CFArrayCreate value");
    items.push_back(AsObj(CFRetain(values[i])));
  }
  return AsTyped<CFArrayRef>(NewArray(std::move(items)));
}

CFIndex CFArrayGetCount(CFArrayRef theArray) {
  return static_cast<CFIndex>(Checked<ArrObj>(theArray, "CFArrayGetCount")->items.size());
}

const void* CFArrayGetValueAtIndex(CFArrayRef theArray, CFIndex idx) {
  const ArrObj* a = Checked<ArrObj>(theArray, "CFArrayGetValueAtIndex");
  if (idx < 0 || static_cast<size_t>(idx) >= a->items.size())
    Fatal("CFArrayGetValueAtIndex: index %ld outside an array of %zu (Apple raises)", idx, a->items.size());
  return AsRef(a->items[static_cast<size_t>(idx)]);
}

// ---- CFDictionary ---------------------------------------------------------

CFTypeID CFDictionaryGetTypeID(void) { return static_cast<CFTypeID>(DictObj::kKind); }

CFDictionaryRef CFDictionaryCreate(CFAllocatorRef allocator, const void** keys, const void** values, CFIndex numValues,
                                   const CFDictionaryKeyCallBacks* keyCallBacks,
                                   const CFDictionaryValueCallBacks* valueCallBacks) {
  CheckAllocator(allocator, "CFDictionaryCreate");
  if (keyCallBacks != &kCFTypeDictionaryKeyCallBacks || valueCallBacks != &kCFTypeDictionaryValueCallBacks)
    Fatal("CFDictionaryCreate: the fake supports kCFTypeDictionaryKeyCallBacks/ValueCallBacks only");
  if (numValues < 0 || (numValues > 0 && (!keys || !values))) Fatal("CFDictionaryCreate: bad arrays (%ld)", numValues);
  auto dict = std::make_unique<DictObj>();
  for (CFIndex i = 0; i < numValues; ++i) {
    Registry::Get().Check(keys[i], "CFDictionaryCreate key");
    Registry::Get().Check(values[i], "CFDictionaryCreate value");
    dict->Put(AsObj(CFRetain(keys[i])), AsObj(CFRetain(values[i])));
  }
  return AsTyped<CFDictionaryRef>(Registry::Get().Add(std::move(dict)));
}

const void* CFDictionaryGetValue(CFDictionaryRef theDict, const void* key) {
  const DictObj* d = Checked<DictObj>(theDict, "CFDictionaryGetValue");
  const Obj* k = Registry::Get().Check(key, "CFDictionaryGetValue key");
  return AsRef(d->Find(k));
}

Boolean CFDictionaryGetValueIfPresent(CFDictionaryRef theDict, const void* key, const void** value) {
  const DictObj* d = Checked<DictObj>(theDict, "CFDictionaryGetValueIfPresent");
  const Obj* k = Registry::Get().Check(key, "CFDictionaryGetValueIfPresent key");
  const Obj* v = d->Find(k);
  if (v && value) *value = AsRef(v);
  return v != nullptr;
}

// ---- CFNumber, CFBoolean --------------------------------------------------

CFTypeID CFNumberGetTypeID(void) { return static_cast<CFTypeID>(NumObj::kKind); }

namespace {

bool IsFloatType(CFNumberType t) {
  return t == kCFNumberFloat32Type || t == kCFNumberFloat64Type || t == kCFNumberFloatType ||
         t == kCFNumberDoubleType || t == kCFNumberCGFloatType;
}

// Width in bytes of an integer CFNumberType on LP64.
int IntWidth(CFNumberType t) {
  switch (t) {
    case kCFNumberSInt8Type:
    case kCFNumberCharType: return 1;
    case kCFNumberSInt16Type:
    case kCFNumberShortType: return 2;
    case kCFNumberSInt32Type:
    case kCFNumberIntType: return 4;
    case kCFNumberSInt64Type:
    case kCFNumberLongType:
    case kCFNumberLongLongType:
    case kCFNumberCFIndexType:
    case kCFNumberNSIntegerType: return 8;
    default: return 0;
  }
}

template <typename T>
bool StoreInt(int64_t v, bool exact, void* out) {
  const T t = static_cast<T>(v);
  std::memcpy(out, &t, sizeof t);
  return exact && static_cast<int64_t>(t) == v;
}

}  // namespace

CFNumberRef CFNumberCreate(CFAllocatorRef allocator, CFNumberType theType, const void* valuePtr) {
  CheckAllocator(allocator, "CFNumberCreate");
  if (!valuePtr) Fatal("CFNumberCreate: NULL valuePtr");
  if (theType == kCFNumberFloat32Type || theType == kCFNumberFloatType) {
    float f;
    std::memcpy(&f, valuePtr, sizeof f);
    return AsTyped<CFNumberRef>(NewDouble(f));
  }
  if (IsFloatType(theType)) {
    double d;
    std::memcpy(&d, valuePtr, sizeof d);
    return AsTyped<CFNumberRef>(NewDouble(d));
  }
  int64_t v = 0;
  switch (IntWidth(theType)) {
    case 1: v = *static_cast<const int8_t*>(valuePtr); break;
    case 2: {
      int16_t x;
      std::memcpy(&x, valuePtr, sizeof x);
      v = x;
      break;
    }
    case 4: {
      int32_t x;
      std::memcpy(&x, valuePtr, sizeof x);
      v = x;
      break;
    }
    case 8: std::memcpy(&v, valuePtr, sizeof v); break;
    default: Fatal("CFNumberCreate: unknown CFNumberType %ld", static_cast<long>(theType));
  }
  return AsTyped<CFNumberRef>(NewInt(v));
}

Boolean CFNumberGetValue(CFNumberRef number, CFNumberType theType, void* valuePtr) {
  const NumObj* n = Checked<NumObj>(number, "CFNumberGetValue");
  if (!valuePtr) Fatal("CFNumberGetValue: NULL valuePtr");
  if (theType == kCFNumberFloat32Type || theType == kCFNumberFloatType) {
    const double d = n->Value();
    const float f = static_cast<float>(d);
    std::memcpy(valuePtr, &f, sizeof f);
    return static_cast<double>(f) == d || std::isnan(d);
  }
  if (IsFloatType(theType)) {
    const double d = n->Value();
    std::memcpy(valuePtr, &d, sizeof d);
    return n->isFloat || static_cast<int64_t>(d) == n->i;
  }
  int64_t v = n->i;
  bool exact = true;
  if (n->isFloat) {
    // Truncated towards zero like Apple; lossy when there was a fraction or it did not fit.
    const double d = n->d;
    if (std::isnan(d) || d >= 9.2233720368547758e18 || d < -9.2233720368547758e18) {
      v = std::isnan(d) ? 0 : (d > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min());
      exact = false;
    } else {
      v = static_cast<int64_t>(d);
      exact = static_cast<double>(v) == d;
    }
  }
  switch (IntWidth(theType)) {
    case 1: return StoreInt<int8_t>(v, exact, valuePtr);
    case 2: return StoreInt<int16_t>(v, exact, valuePtr);
    case 4: return StoreInt<int32_t>(v, exact, valuePtr);
    case 8: return StoreInt<int64_t>(v, exact, valuePtr);
    default: Fatal("CFNumberGetValue: unknown CFNumberType %ld", static_cast<long>(theType));
  }
}

const CFBooleanRef kCFBooleanTrue = AsTyped<CFBooleanRef>(ImmortalBool(true));
const CFBooleanRef kCFBooleanFalse = AsTyped<CFBooleanRef>(ImmortalBool(false));

CFTypeID CFBooleanGetTypeID(void) { return static_cast<CFTypeID>(BoolObj::kKind); }

Boolean CFBooleanGetValue(CFBooleanRef boolean) { return Checked<BoolObj>(boolean, "CFBooleanGetValue")->value; }

// ---- CFURL ----------------------------------------------------------------

CFTypeID CFURLGetTypeID(void) { return static_cast<CFTypeID>(UrlObj::kKind); }

CFStringRef CFURLGetString(CFURLRef anURL) {
  return AsTyped<CFStringRef>(Checked<UrlObj>(anURL, "CFURLGetString")->str);
}

CFURLRef CFURLCreateWithString(CFAllocatorRef allocator, CFStringRef URLString, CFURLRef baseURL) {
  CheckAllocator(allocator, "CFURLCreateWithString");
  const StrObj* s = Checked<StrObj>(URLString, "CFURLCreateWithString");
  const UrlObj* base = baseURL ? Checked<UrlObj>(baseURL, "CFURLCreateWithString baseURL") : nullptr;
  if (!ValidUrl(s->utf8)) return nullptr;
  return AsTyped<CFURLRef>(Registry::Get().Add(
      std::make_unique<UrlObj>(static_cast<const StrObj*>(AsObj(CFRetain(URLString))),
                               base ? static_cast<const UrlObj*>(AsObj(CFRetain(baseURL))) : nullptr)));
}

// Issue 12 item 10: the URL resolved against its base; itself (+1) without one.
CFURLRef CFURLCopyAbsoluteURL(CFURLRef relativeURL) {
  const UrlObj* u = Checked<UrlObj>(relativeURL, "CFURLCopyAbsoluteURL");
  if (!u->base) return static_cast<CFURLRef>(CFRetain(relativeURL));
  const UrlObj* b = u->base;
  std::string base = b->str->utf8;
  // A base relative to its own base resolves first.
  if (b->base) base = ResolveUrl(base, b->base->str->utf8);
  return AsTyped<CFURLRef>(NewUrl(ResolveUrl(u->str->utf8, base)));
}

// ---- CGGeometry -----------------------------------------------------------

const CGRect CGRectNull = {{INFINITY, INFINITY}, {0, 0}};

bool CGRectMakeWithDictionaryRepresentation(CFDictionaryRef dict, CGRect* rect) {
  if (!dict || !rect) return false;
  const DictObj* d = Checked<DictObj>(dict, "CGRectMakeWithDictionaryRepresentation");
  double v[4];
  const char* keys[4] = {"X", "Y", "Width", "Height"};
  for (int i = 0; i < 4; ++i) {
    const Obj* n = d->Find(Interned(keys[i]));
    if (!n || n->kind != Kind::kNumber) return false;
    v[i] = static_cast<const NumObj*>(n)->Value();
  }
  *rect = CGRectMake(v[0], v[1], v[2], v[3]);
  return true;
}

// ---- AXValue --------------------------------------------------------------

CFTypeID AXValueGetTypeID(void) { return static_cast<CFTypeID>(AXValObj::kKind); }

AXValueRef AXValueCreate(AXValueType theType, const void* valuePtr) {
  if (!valuePtr) Fatal("AXValueCreate: NULL valuePtr");
  auto v = std::make_unique<AXValObj>(theType);
  switch (theType) {
    case kAXValueTypeCGPoint: std::memcpy(&v->point, valuePtr, sizeof v->point); break;
    case kAXValueTypeCGSize: std::memcpy(&v->size, valuePtr, sizeof v->size); break;
    case kAXValueTypeCGRect: std::memcpy(&v->rect, valuePtr, sizeof v->rect); break;
    case kAXValueTypeCFRange: std::memcpy(&v->range, valuePtr, sizeof v->range); break;
    case kAXValueTypeAXError: std::memcpy(&v->error, valuePtr, sizeof v->error); break;
    default: return nullptr;  // Apple: NULL for an illegal type
  }
  return AsTyped<AXValueRef>(Registry::Get().Add(std::move(v)));
}

AXValueType AXValueGetType(AXValueRef value) { return Checked<AXValObj>(value, "AXValueGetType")->type; }

Boolean AXValueGetValue(AXValueRef value, AXValueType theType, void* valuePtr) {
  const AXValObj* v = Checked<AXValObj>(value, "AXValueGetValue");
  if (!valuePtr) Fatal("AXValueGetValue: NULL valuePtr");
  if (v->type != theType) return false;
  switch (theType) {
    case kAXValueTypeCGPoint: std::memcpy(valuePtr, &v->point, sizeof v->point); return true;
    case kAXValueTypeCGSize: std::memcpy(valuePtr, &v->size, sizeof v->size); return true;
    case kAXValueTypeCGRect: std::memcpy(valuePtr, &v->rect, sizeof v->rect); return true;
    case kAXValueTypeCFRange: std::memcpy(valuePtr, &v->range, sizeof v->range); return true;
    case kAXValueTypeAXError: std::memcpy(valuePtr, &v->error, sizeof v->error); return true;
    default: return false;
  }
}

// ---- AXUIElement ----------------------------------------------------------

namespace {

const ElemObj* ElementArg(AXUIElementRef element, const char* fn) {
  return element ? Checked<ElemObj>(element, fn) : nullptr;
}

std::string AXLine(const std::string& head, AXError err) {
  return err == kAXErrorSuccess ? head : head + " -> " + std::to_string(err);
}

}  // namespace

CFTypeID AXUIElementGetTypeID(void) { return static_cast<CFTypeID>(ElemObj::kKind); }

AXUIElementRef AXUIElementCreateApplication(pid_t pid) {
  return AsTyped<AXUIElementRef>(NewElement(ElemKind::kApp, pid, 0));
}

AXUIElementRef AXUIElementCreateSystemWide(void) {
  return AsTyped<AXUIElementRef>(NewElement(ElemKind::kSystem, 0, 0));
}

AXError AXUIElementCopyAttributeValue(AXUIElementRef element, CFStringRef attribute, CFTypeRef* value) {
  const ElemObj* e = ElementArg(element, "AXUIElementCopyAttributeValue");
  if (!e || !attribute || !value) return kAXErrorIllegalArgument;
  const std::string name = StringArg(attribute, "AXUIElementCopyAttributeValue");
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kRead, t, lock)) return err;
  const Obj* out = nullptr;
  AXError err = ReadOne(*State().world, t, name, /*inBatch=*/false, out);
  if (err == kAXErrorSuccess) *value = AsRef(out);
  return err;
}

AXError AXUIElementGetAttributeValueCount(AXUIElementRef element, CFStringRef attribute, CFIndex* count) {
  const ElemObj* e = ElementArg(element, "AXUIElementGetAttributeValueCount");
  if (!e || !attribute || !count) return kAXErrorIllegalArgument;
  const std::string name = StringArg(attribute, "AXUIElementGetAttributeValueCount");
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kRead, t, lock)) return err;
  FakeWorld& w = *State().world;
  if (!t.system) {
    for (const FakeFaults* f : {&t.el->faults, &t.app->faults}) {
      auto it = f->failAttribute.find(name);
      if (it != f->failAttribute.end()) return static_cast<AXError>(it->second);
    }
  }
  std::optional<FakeValue> v = Attr(w, t, name);
  if (!v) return kAXErrorAttributeUnsupported;
  if (v->kind == FakeValue::Kind::kNoValue) return kAXErrorNoValue;
  if (v->kind == FakeValue::Kind::kError) return static_cast<AXError>(v->integer);
  if (v->kind != FakeValue::Kind::kArray) return kAXErrorIllegalArgument;
  *count = static_cast<CFIndex>(v->items.size());
  return kAXErrorSuccess;
}

AXError AXUIElementCopyAttributeValues(AXUIElementRef element, CFStringRef attribute, CFIndex index, CFIndex maxValues,
                                       CFArrayRef* values) {
  const ElemObj* e = ElementArg(element, "AXUIElementCopyAttributeValues");
  if (!e || !attribute || !values || index < 0 || maxValues < 0) return kAXErrorIllegalArgument;
  const std::string name = StringArg(attribute, "AXUIElementCopyAttributeValues");
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kRead, t, lock)) return err;
  FakeWorld& w = *State().world;
  if (!t.system) {
    for (const FakeFaults* f : {&t.el->faults, &t.app->faults}) {
      auto it = f->failAttribute.find(name);
      if (it != f->failAttribute.end()) return static_cast<AXError>(it->second);
    }
  }
  std::optional<FakeValue> v = Attr(w, t, name);
  if (!v) return kAXErrorAttributeUnsupported;
  if (v->kind == FakeValue::Kind::kNoValue) return kAXErrorNoValue;
  if (v->kind == FakeValue::Kind::kError) return static_cast<AXError>(v->integer);
  if (v->kind != FakeValue::Kind::kArray) return kAXErrorIllegalArgument;
  const size_t size = v->items.size();
  if (static_cast<size_t>(index) > size) return kAXErrorIllegalArgument;
  const size_t end = std::min(size, static_cast<size_t>(index) + static_cast<size_t>(maxValues));
  std::vector<const Obj*> items;
  for (size_t i = static_cast<size_t>(index); i < end; ++i) items.push_back(ToCF(v->items[i], w));
  *values = AsTyped<CFArrayRef>(NewArray(std::move(items)));
  return kAXErrorSuccess;
}

// Only AXStringForRange, over a string AXValue: enough for the backend's cap
// on very long text values.
AXError AXUIElementCopyParameterizedAttributeValue(AXUIElementRef element, CFStringRef parameterizedAttribute,
                                                   CFTypeRef parameter, CFTypeRef* result) {
  const ElemObj* e = ElementArg(element, "AXUIElementCopyParameterizedAttributeValue");
  if (!e || !parameterizedAttribute || !parameter || !result) return kAXErrorIllegalArgument;
  const std::string name = StringArg(parameterizedAttribute, "AXUIElementCopyParameterizedAttributeValue");
  const AXValObj* range = Checked<AXValObj>(parameter, "AXUIElementCopyParameterizedAttributeValue parameter");
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kRead, t, lock)) return err;
  if (t.system || name != "AXStringForRange") return kAXErrorParameterizedAttributeUnsupported;
  if (range->type != kAXValueTypeCFRange) return kAXErrorIllegalArgument;
  for (const FakeFaults* f : {&t.el->faults, &t.app->faults})
    if (f->logReads.count(name)) AppendLog("read " + t.Name() + " " + name);
  auto it = t.el->attrs.find("AXValue");
  if (it == t.el->attrs.end() || it->second.kind != FakeValue::Kind::kString) return kAXErrorNoValue;
  std::u16string units;
  Utf8ToUtf16(reinterpret_cast<const unsigned char*>(it->second.text.data()), it->second.text.size(), units);
  const CFIndex start = range->range.location, length = range->range.length;
  if (start < 0 || length < 0 || static_cast<size_t>(start + length) > units.size()) return kAXErrorIllegalArgument;
  *result = AsRef(NewString(units.substr(static_cast<size_t>(start), static_cast<size_t>(length))));
  return kAXErrorSuccess;
}

AXError AXUIElementCopyMultipleAttributeValues(AXUIElementRef element, CFArrayRef attributes,
                                               AXCopyMultipleAttributeOptions options, CFArrayRef* values) {
  const ElemObj* e = ElementArg(element, "AXUIElementCopyMultipleAttributeValues");
  if (!e || !attributes || !values) return kAXErrorIllegalArgument;
  const ArrObj* names = Checked<ArrObj>(attributes, "AXUIElementCopyMultipleAttributeValues");
  std::vector<std::string> list;
  for (const Obj* n : names->items) {
    if (n->kind != Kind::kString) return kAXErrorIllegalArgument;
    list.push_back(static_cast<const StrObj*>(n)->utf8);
  }
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kRead, t, lock)) return err;
  FakeWorld& w = *State().world;
  if (!t.system)
    for (const FakeFaults* f : {&t.el->faults, &t.app->faults})
      if (f->logReads.count("AXUIElementCopyMultipleAttributeValues")) {
        AppendLog("batch " + t.Name());
        break;
      }
  if (!t.system && t.el->faults.batchError != 0) {
    // batchErrorTimes: a refusal that passes (issue 12 item 10).
    FakeFaults& f = t.el->faults;
    if (f.batchErrorTimes <= 0 || ++f.batchRefused <= f.batchErrorTimes) return static_cast<AXError>(f.batchError);
  }
  std::vector<const Obj*> slots;
  slots.reserve(list.size());
  for (const std::string& name : list) {
    const Obj* out = nullptr;
    const AXError err = ReadOne(w, t, name, /*inBatch=*/true, out);
    if (err != kAXErrorSuccess) {
      if (options & kAXCopyMultipleAttributeOptionStopOnError) {
        for (const Obj* s : slots) CFRelease(AsRef(s));
        return err;
      }
      out = NewAXError(err);
    }
    slots.push_back(out);
  }
  *values = AsTyped<CFArrayRef>(NewArray(std::move(slots)));
  return kAXErrorSuccess;
}

AXError AXUIElementIsAttributeSettable(AXUIElementRef element, CFStringRef attribute, Boolean* settable) {
  const ElemObj* e = ElementArg(element, "AXUIElementIsAttributeSettable");
  if (!e || !attribute || !settable) return kAXErrorIllegalArgument;
  const std::string name = StringArg(attribute, "AXUIElementIsAttributeSettable");
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kOther, t, lock)) return err;
  if (t.system) {
    if (!Attr(*State().world, t, name)) return kAXErrorAttributeUnsupported;
    *settable = false;
    return kAXErrorSuccess;
  }
  const bool canSet = t.el->settable.count(name) > 0;
  const bool chromiumAttr = t.el->id == t.app->rootId && t.app->chromium && name == t.app->chromium->attribute;
  if (!canSet && !chromiumAttr && !t.el->attrs.count(name)) return kAXErrorAttributeUnsupported;
  *settable = canSet || chromiumAttr;
  return kAXErrorSuccess;
}

AXError AXUIElementSetAttributeValue(AXUIElementRef element, CFStringRef attribute, CFTypeRef value) {
  const ElemObj* e = ElementArg(element, "AXUIElementSetAttributeValue");
  if (!e || !attribute || !value) return kAXErrorIllegalArgument;
  const std::string name = StringArg(attribute, "AXUIElementSetAttributeValue");
  const Obj* v = Registry::Get().Check(value, "AXUIElementSetAttributeValue value");
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kOther, t, lock)) return err;
  FakeWorld& w = *State().world;
  FakeValue next;
  const bool converted = FromCF(v, w, next);
  const std::string head = "set " + t.Name() + " " + name + " " + (converted ? Repr(next) : v->Describe());
  // A scripted setError: the set is applied, then answered with that error.
  const AXError answer = t.system ? kAXErrorSuccess : static_cast<AXError>(t.el->faults.setError);
  auto done = [&](AXError err) {
    if (err == kAXErrorSuccess && answer != kAXErrorSuccess) err = answer;
    AppendLog(AXLine(head, err));
    return err;
  };
  if (t.system) return done(kAXErrorAttributeUnsupported);
  FakeElement& el = *t.el;
  FakeApp& app = *t.app;

  // Chromium's switch for its accessibility tree, on the app element.
  const bool isChromiumSwitch = name == "AXManualAccessibility" || name == "AXEnhancedUserInterface";
  if (isChromiumSwitch && el.id == app.rootId && app.chromium && !el.settable.count(name)) {
    if (name != app.chromium->attribute) return done(kAXErrorAttributeUnsupported);
    if (!converted || next.kind != FakeValue::Kind::kBool) return done(kAXErrorIllegalArgument);
    el.attrs[name] = next;
    if (next.flag && !app.revealRequestedAt) app.revealRequestedAt = Clock::now();
    if (!next.flag) app.revealRequestedAt.reset();
    return done(static_cast<AXError>(app.chromium->setError));  // applied, whatever it answers
  }

  // AXFrontmost and AXHidden on the app element: activation and unhiding by
  // AX, as apps accept them (a scripted app may ignore them, see ApplyStep).
  if (el.id == app.rootId && (name == "AXFrontmost" || name == "AXHidden") && !el.attrs.count(name)) {
    if (!converted || next.kind != FakeValue::Kind::kBool) return done(kAXErrorIllegalArgument);
    if (name == "AXFrontmost" && next.flag) ApplyStep(w, app, Step::kActivate, 0);
    if (name == "AXHidden" && !next.flag) ApplyStep(w, app, Step::kUnhide, 0);
    return done(kAXErrorSuccess);
  }
  if (!el.settable.count(name))
    return done(el.attrs.count(name) ? kAXErrorIllegalArgument : kAXErrorAttributeUnsupported);
  if (!converted) return done(kAXErrorIllegalArgument);
  auto current = el.attrs.find(name);
  if (current != el.attrs.end() && !SameKindForSet(current->second, next)) return done(kAXErrorIllegalArgument);

  const bool isBool = next.kind == FakeValue::Kind::kBool;
  if (IsWindow(el) && isBool && name == "AXMinimized") {
    if (!next.flag) {
      ApplyStep(w, app, Step::kUnminimize, el.id);  // ignored by a scripted app waiting for another step
    } else {
      el.attrs[name] = next;
      if (FakeCGWindow* cg = CGWindowOf(w, el)) cg->onScreen = false;
    }
    return done(kAXErrorSuccess);
  }
  if (IsWindow(el) && isBool && next.flag && name == "AXMain") {
    ApplyStep(w, app, Step::kMain, el.id);
    return done(kAXErrorSuccess);
  }
  if (isBool && next.flag && name == "AXFocused") {
    if (IsWindow(el)) {
      MakeMain(w, app, el, /*main=*/false);
    } else {
      el.attrs[name] = next;
      w.Element(app.rootId)->attrs["AXFocusedUIElement"] = FakeValue::Element(el.id);
    }
    return done(kAXErrorSuccess);
  }
  // Text edits at the selection (AppKit's behaviour): the range stays within
  // the value; the selected text is replaced, and the caret goes after it.
  auto text = el.attrs.find("AXValue");
  const bool hasText = text != el.attrs.end() && text->second.kind == FakeValue::Kind::kString;
  if (hasText && name == "AXSelectedTextRange" && next.kind == FakeValue::Kind::kRange) {
    std::u16string units;
    Utf8ToUtf16(reinterpret_cast<const unsigned char*>(text->second.text.data()), text->second.text.size(), units);
    if (next.x < 0 || next.w < 0 || next.x + next.w > static_cast<double>(units.size()))
      return done(kAXErrorIllegalArgument);
    if (el.faults.selectionLagReads != 0) {
      el.faults.pendingSelection = next;
      el.faults.selectionLagLeft = el.faults.selectionLagReads;
      return done(kAXErrorSuccess);
    }
  }
  if (hasText && name == "AXSelectedText" && next.kind == FakeValue::Kind::kString) {
    std::u16string units, inserted;
    Utf8ToUtf16(reinterpret_cast<const unsigned char*>(text->second.text.data()), text->second.text.size(), units);
    Utf8ToUtf16(reinterpret_cast<const unsigned char*>(next.text.data()), next.text.size(), inserted);
    size_t at = units.size(), length = 0;
    auto range = el.attrs.find("AXSelectedTextRange");
    if (range != el.attrs.end() && range->second.kind == FakeValue::Kind::kRange) {
      if (range->second.x < 0 || range->second.w < 0 ||
          range->second.x + range->second.w > static_cast<double>(units.size()))
        return done(kAXErrorIllegalArgument);
      at = static_cast<size_t>(range->second.x);
      length = static_cast<size_t>(range->second.w);
    }
    units.replace(at, length, inserted);
    text->second = FakeValue::String(Utf16ToUtf8(units));
    el.attrs["AXSelectedTextRange"] = FakeValue::Range(static_cast<int64_t>(at + inserted.size()), 0);
    if (el.attrs.count("AXNumberOfCharacters"))
      el.attrs["AXNumberOfCharacters"] = FakeValue::Int(static_cast<int64_t>(units.size()));
    uint64_t hash = 0xcbf29ce484222325ull;
    for (unsigned char c : text->second.text) hash = (hash ^ c) * 0x100000001b3ull;
    const AXError err = done(kAXErrorSuccess);
    AppendLog("text " + t.Name() + " replaced range(" + std::to_string(at) + "," + std::to_string(length) +
              "): " + std::to_string(units.size()) + " units fnv1a=" + Hex(hash));
    return err;
  }
  el.attrs[name] = next;
  return done(kAXErrorSuccess);
}

AXError AXUIElementCopyActionNames(AXUIElementRef element, CFArrayRef* names) {
  const ElemObj* e = ElementArg(element, "AXUIElementCopyActionNames");
  if (!e || !names) return kAXErrorIllegalArgument;
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kOther, t, lock)) return err;
  std::vector<const Obj*> items;
  if (!t.system)
    for (const std::string& a : t.el->actions) items.push_back(NewString(a));
  *names = AsTyped<CFArrayRef>(NewArray(std::move(items)));
  return kAXErrorSuccess;
}

AXError AXUIElementPerformAction(AXUIElementRef element, CFStringRef action) {
  const ElemObj* e = ElementArg(element, "AXUIElementPerformAction");
  if (!e || !action) return kAXErrorIllegalArgument;
  const std::string name = StringArg(action, "AXUIElementPerformAction");
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kOther, t, lock)) return err;
  const std::string head = "perform " + t.Name() + " " + name;
  if (t.system || std::find(t.el->actions.begin(), t.el->actions.end(), name) == t.el->actions.end()) {
    AppendLog(AXLine(head, kAXErrorActionUnsupported));
    return kAXErrorActionUnsupported;
  }
  if (name == "AXRaise" && IsWindow(*t.el)) ApplyStep(*State().world, *t.app, Step::kRaise, t.el->id);
  // The action happened; the app still answers with an error (an AXPress that
  // opened a modal answers kAXErrorCannotComplete when the modal returns).
  if (t.el->faults.performError != 0) {
    AppendLog(AXLine(head, static_cast<AXError>(t.el->faults.performError)));
    return static_cast<AXError>(t.el->faults.performError);
  }
  AppendLog(head);
  return kAXErrorSuccess;
}

AXError AXUIElementGetPid(AXUIElementRef element, pid_t* pid) {
  const ElemObj* e = ElementArg(element, "AXUIElementGetPid");
  if (!e || !pid) return kAXErrorIllegalArgument;
  if (e->which == ElemKind::kSystem) return kAXErrorIllegalArgument;
  *pid = static_cast<pid_t>(e->pid);
  return kAXErrorSuccess;
}

AXError axsnap::macfake::FakeAXUIElementGetWindow(AXUIElementRef element, CGWindowID* number) {
  const ElemObj* e = ElementArg(element, "_AXUIElementGetWindow");
  if (!e || !number) return kAXErrorIllegalArgument;
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kOther, t, lock)) return err;
  if (t.system || !IsWindow(*t.el)) return kAXErrorFailure;
  const FakeCGWindow* cg = CGWindowOf(*State().world, *t.el);
  if (!cg) return kAXErrorFailure;
  *number = cg->number;
  return kAXErrorSuccess;
}

AXError AXUIElementSetMessagingTimeout(AXUIElementRef element, float timeoutInSeconds) {
  const ElemObj* e = ElementArg(element, "AXUIElementSetMessagingTimeout");
  if (!e || timeoutInSeconds < 0 || std::isnan(timeoutInSeconds)) return kAXErrorIllegalArgument;
  const std::string who = e->which == ElemKind::kSystem ? "system"
                          : e->which == ElemKind::kApp  ? "app " + std::to_string(e->pid)
                                                        : std::to_string(e->id);
  if (e->which == ElemKind::kSystem) {
    std::lock_guard<std::mutex> lock(State().mu);
    State().globalTimeout = timeoutInSeconds;
  } else {
    const_cast<ElemObj*>(e)->timeout = timeoutInSeconds == 0 ? -1.0f : timeoutInSeconds;
  }
  char seconds[32];
  // At float precision: 0.05, not 0.0500000007.
  std::snprintf(seconds, sizeof seconds, "%g", static_cast<double>(timeoutInSeconds));
  AppendLog("timeout " + who + " " + seconds);
  return kAXErrorSuccess;
}

namespace {

bool Contains(const FakeElement& el, double x, double y) {
  auto p = el.attrs.find("AXPosition");
  auto s = el.attrs.find("AXSize");
  if (p == el.attrs.end() || s == el.attrs.end() || p->second.kind != FakeValue::Kind::kPoint ||
      s->second.kind != FakeValue::Kind::kSize)
    return false;
  return x >= p->second.x && x < p->second.x + s->second.w && y >= p->second.y && y < p->second.y + s->second.h;
}

// The deepest element under `start` whose frame holds the point; iterative and
// cycle-safe, since tests script cycles.
FakeElement* Deepest(FakeWorld& w, FakeApp& app, FakeElement* start, double x, double y) {
  FakeElement* best = nullptr;
  int bestDepth = -1;
  std::set<int64_t> seen;
  std::vector<std::pair<FakeElement*, int>> stack{{start, 0}};
  while (!stack.empty()) {
    auto [el, depth] = stack.back();
    stack.pop_back();
    if (!seen.insert(el->id).second) continue;
    if (depth > bestDepth && Contains(*el, x, y)) best = el, bestDepth = depth;
    Target t;
    t.app = &app;
    t.el = el;
    std::optional<FakeValue> children = Attr(w, t, "AXChildren");
    if ((!children || children->kind != FakeValue::Kind::kArray) && el->id == app.rootId)
      children = Attr(w, t, "AXWindows");
    if (!children || children->kind != FakeValue::Kind::kArray) continue;
    // Pushed in reverse so the first child is visited first.
    for (auto it = children->items.rbegin(); it != children->items.rend(); ++it)
      if (it->kind == FakeValue::Kind::kElement)
        if (FakeElement* c = w.Element(it->integer))
          if (c->pid == app.pid) stack.emplace_back(c, depth + 1);
  }
  return best;
}

}  // namespace

AXError AXUIElementCopyElementAtPosition(AXUIElementRef application, float x, float y, AXUIElementRef* element) {
  const ElemObj* e = ElementArg(application, "AXUIElementCopyElementAtPosition");
  if (!e || !element) return kAXErrorIllegalArgument;
  std::unique_lock<std::mutex> lock(State().mu);
  Target t;
  if (AXError err = Enter(e, Call::kOther, t, lock)) return err;
  FakeWorld& w = *State().world;
  if (t.system) {
    // The app owning the frontmost on-screen window under the point.
    for (const FakeCGWindow& cg : w.windows) {
      if (cg.onScreen && x >= cg.x && x < cg.x + cg.w && y >= cg.y && y < cg.y + cg.h) {
        t.app = w.App(cg.pid);
        break;
      }
    }
    if (!t.app) return kAXErrorNoValue;
    t.el = w.Element(t.app->rootId);
  }
  FakeElement* hit = Deepest(w, *t.app, t.el, x, y);
  if (!hit) return kAXErrorNoValue;
  *element = AsTyped<AXUIElementRef>(NewElement(ElemKind::kElement, hit->pid, hit->id));
  return kAXErrorSuccess;
}

Boolean AXIsProcessTrusted(void) {
  std::lock_guard<std::mutex> lock(State().mu);
  return !State().world || State().world->trusted;
}

Boolean AXIsProcessTrustedWithOptions(CFDictionaryRef options) {
  bool prompt = false;
  if (options) {
    const DictObj* d = Checked<DictObj>(options, "AXIsProcessTrustedWithOptions");
    // Looked up before taking the world lock: dictionary lookups compare keys.
    const Obj* v = d->Find(AsObj(kAXTrustedCheckOptionPrompt));
    prompt = v && v->kind == Kind::kBoolean && static_cast<const BoolObj*>(v)->value;
  }
  const bool trusted = AXIsProcessTrusted();
  if (prompt && !trusted) AppendLog("prompt accessibility");
  return trusted;
}

CFStringRef kAXTrustedCheckOptionPrompt = __CFStringMakeConstantString("AXTrustedCheckOptionPrompt");

// ---- CGWindowList ---------------------------------------------------------

const CFStringRef kCGWindowNumber = __CFStringMakeConstantString("kCGWindowNumber");
const CFStringRef kCGWindowOwnerPID = __CFStringMakeConstantString("kCGWindowOwnerPID");
const CFStringRef kCGWindowLayer = __CFStringMakeConstantString("kCGWindowLayer");
const CFStringRef kCGWindowBounds = __CFStringMakeConstantString("kCGWindowBounds");
const CFStringRef kCGWindowName = __CFStringMakeConstantString("kCGWindowName");
const CFStringRef kCGWindowOwnerName = __CFStringMakeConstantString("kCGWindowOwnerName");
const CFStringRef kCGWindowAlpha = __CFStringMakeConstantString("kCGWindowAlpha");
const CFStringRef kCGWindowIsOnscreen = __CFStringMakeConstantString("kCGWindowIsOnscreen");

CFArrayRef CGWindowListCopyWindowInfo(CGWindowListOption option, CGWindowID relativeToWindow) {
  std::lock_guard<std::mutex> lock(State().mu);
  std::vector<const Obj*> out;
  FakeWorld* w = State().world.get();
  if (!w) return AsTyped<CFArrayRef>(NewArray({}));
  const bool granted = w->screenRecording == "granted";
  int relative = -1;
  for (size_t i = 0; i < w->windows.size(); ++i)
    if (relativeToWindow != kCGNullWindowID && w->windows[i].number == relativeToWindow) relative = static_cast<int>(i);
  const bool above = option & kCGWindowListOptionOnScreenAboveWindow;
  const bool below = option & kCGWindowListOptionOnScreenBelowWindow;
  const bool including = option & kCGWindowListOptionIncludingWindow;
  const bool onScreenOnly = option & (kCGWindowListOptionOnScreenOnly | kCGWindowListOptionOnScreenAboveWindow |
                                      kCGWindowListOptionOnScreenBelowWindow);
  for (size_t i = 0; i < w->windows.size(); ++i) {
    const FakeCGWindow& cg = w->windows[i];
    const int at = static_cast<int>(i);
    bool keep = true;
    if ((above || below) && relative >= 0)
      keep = (above && at < relative) || (below && at > relative) || (including && at == relative);
    else if (including)
      keep = at == relative;
    if (!keep) continue;
    if (onScreenOnly && !cg.onScreen && !(including && at == relative)) continue;
    if ((option & kCGWindowListExcludeDesktopElements) && cg.layer < 0) continue;
    DictBuilder bounds;
    bounds.Set(AsTyped<CFStringRef>(Interned("X")), NewDouble(cg.x))
        .Set(AsTyped<CFStringRef>(Interned("Y")), NewDouble(cg.y))
        .Set(AsTyped<CFStringRef>(Interned("Width")), NewDouble(cg.w))
        .Set(AsTyped<CFStringRef>(Interned("Height")), NewDouble(cg.h));
    DictBuilder info;
    info.Set(kCGWindowNumber, NewInt(cg.number))
        .Set(kCGWindowOwnerPID, NewInt(cg.pid))
        .Set(kCGWindowLayer, NewInt(cg.layer))
        .Set(kCGWindowBounds, bounds.Done())
        .Set(kCGWindowOwnerName, NewString(cg.ownerName))
        .Set(kCGWindowAlpha, NewDouble(cg.alpha));
    if (granted) info.Set(kCGWindowName, NewString(cg.name));
    if (cg.onScreen) info.Set(kCGWindowIsOnscreen, AsObj(CFRetain(kCFBooleanTrue)));
    out.push_back(info.Done());
  }
  return AsTyped<CFArrayRef>(NewArray(std::move(out)));
}

// ---- CGEvent --------------------------------------------------------------

CGEventSourceRef CGEventSourceCreate(CGEventSourceStateID stateID) {
  return AsTyped<CGEventSourceRef>(Registry::Get().Add(std::make_unique<SourceObj>(stateID)));
}

namespace {

void CheckSource(CGEventSourceRef source, const char* fn) {
  if (source) Checked<SourceObj>(source, fn);
}

EventObj* NewEvent(CGEventType type) { return Registry::Get().Add(std::make_unique<EventObj>(type)); }

const char* MouseName(CGEventType t) {
  switch (t) {
    case kCGEventLeftMouseDown: return "leftMouseDown";
    case kCGEventLeftMouseUp: return "leftMouseUp";
    case kCGEventRightMouseDown: return "rightMouseDown";
    case kCGEventRightMouseUp: return "rightMouseUp";
    case kCGEventMouseMoved: return "mouseMoved";
    case kCGEventLeftMouseDragged: return "leftMouseDragged";
    case kCGEventRightMouseDragged: return "rightMouseDragged";
    case kCGEventOtherMouseDown: return "otherMouseDown";
    case kCGEventOtherMouseUp: return "otherMouseUp";
    case kCGEventOtherMouseDragged: return "otherMouseDragged";
    default: return nullptr;
  }
}

bool IsButtonEvent(CGEventType t) {
  return t == kCGEventLeftMouseDown || t == kCGEventLeftMouseUp || t == kCGEventRightMouseDown ||
         t == kCGEventRightMouseUp || t == kCGEventOtherMouseDown || t == kCGEventOtherMouseUp;
}

std::string EventLine(const EventObj& ev) {
  const std::string flags = "flags=" + Hex(ev.flags);
  if (const char* mouse = MouseName(ev.type)) {
    std::string line = std::string("event ") + mouse + " " + Num(ev.location.x) + "," + Num(ev.location.y);
    if (ev.type >= kCGEventOtherMouseDown) line += " button=" + std::to_string(ev.button);
    auto clicks = ev.fields.find(kCGMouseEventClickState);
    if (IsButtonEvent(ev.type) || clicks != ev.fields.end())
      line += " clicks=" + std::to_string(clicks != ev.fields.end() ? clicks->second : 1);
    return line + " " + flags;
  }
  switch (ev.type) {
    case kCGEventKeyDown:
      if (ev.hasUnicode) return "event unicode " + Quote(Utf16ToUtf8(ev.unicode)) + (ev.flags ? " " + flags : "");
      return "event keyDown code=" + std::to_string(ev.keyCode) + " " + flags;
    case kCGEventKeyUp: return "event keyUp code=" + std::to_string(ev.keyCode) + " " + flags;
    case kCGEventScrollWheel: {
      const int32_t dy = ev.wheelCount >= 1 ? ev.wheels[0] : 0;
      const int32_t dx = ev.wheelCount >= 2 ? ev.wheels[1] : 0;
      return "event scroll " + std::to_string(dx) + " " + std::to_string(dy) + " " +
             (ev.units == kCGScrollEventUnitLine ? "line" : "pixel") + " at " + Num(ev.location.x) + "," +
             Num(ev.location.y) + (ev.flags ? " " + flags : "");
    }
    default: return "event type=" + std::to_string(ev.type) + " " + flags;
  }
}

}  // namespace

CGEventRef CGEventCreateMouseEvent(CGEventSourceRef source, CGEventType mouseType, CGPoint mouseCursorPosition,
                                   CGMouseButton mouseButton) {
  CheckSource(source, "CGEventCreateMouseEvent");
  if (!MouseName(mouseType)) Fatal("CGEventCreateMouseEvent: %u is not a mouse event type", mouseType);
  EventObj* ev = NewEvent(mouseType);
  ev->location = mouseCursorPosition;
  ev->button = mouseButton;
  return AsTyped<CGEventRef>(ev);
}

// ---- issue 12 (items 1, 2): keyboard events as a Mac makes them ----------

namespace {

// The flags CGEventCreateKeyboardEvent gives a key of its own (fake_cf.h).
CGEventFlags OwnKeyFlags(CGKeyCode code) {
  if (code >= 123 && code <= 126) return kCGEventFlagMaskSecondaryFn | kCGEventFlagMaskNumericPad;  // arrows
  static const CGKeyCode kFunctionKeys[] = {114, 115, 116, 117, 119, 121,  // Help Home PgUp FwdDel End PgDn
                                            122, 120, 99,  118, 96,  97,  98,  100,
                                            101, 109, 103, 111, 105, 107, 113, 106,  // F1-F16
                                            64,  79,  80,  90};                      // F17-F20
  for (CGKeyCode k : kFunctionKeys)
    if (k == code) return kCGEventFlagMaskSecondaryFn;
  static const CGKeyCode kKeypad[] = {65, 67, 69, 71, 75, 76, 78, 81, 82, 83, 84, 85, 86, 87, 88, 89, 91, 92};
  for (CGKeyCode k : kKeypad)
    if (k == code) return kCGEventFlagMaskNumericPad;
  return 0;
}

bool KeyEventFails(CGKeyCode code) {
  std::lock_guard<std::mutex> lock(State().mu);
  const FakeWorld* w = State().world.get();
  return w && w->keyEventFails.count(code) > 0;
}

}  // namespace

CGEventRef CGEventCreateKeyboardEvent(CGEventSourceRef source, CGKeyCode virtualKey, bool keyDown) {
  CheckSource(source, "CGEventCreateKeyboardEvent");
  if (KeyEventFails(virtualKey)) return nullptr;
  EventObj* ev = NewEvent(keyDown ? kCGEventKeyDown : kCGEventKeyUp);
  ev->keyCode = virtualKey;
  ev->flags = OwnKeyFlags(virtualKey);
  return AsTyped<CGEventRef>(ev);
}

CGEventFlags CGEventGetFlags(CGEventRef event) { return Checked<EventObj>(event, "CGEventGetFlags")->flags; }

// ---- end issue 12 (items 1, 2) --------------------------------------------

CGEventRef CGEventCreateScrollWheelEvent2(CGEventSourceRef source, CGScrollEventUnit units, uint32_t wheelCount,
                                          int32_t wheel1, int32_t wheel2, int32_t wheel3) {
  CheckSource(source, "CGEventCreateScrollWheelEvent2");
  if (wheelCount < 1 || wheelCount > 3) return nullptr;  // Apple: NULL outside 1...3
  EventObj* ev = NewEvent(kCGEventScrollWheel);
  ev->units = units;
  ev->wheelCount = wheelCount;
  ev->wheels[0] = wheel1, ev->wheels[1] = wheel2, ev->wheels[2] = wheel3;
  return AsTyped<CGEventRef>(ev);
}

void CGEventKeyboardSetUnicodeString(CGEventRef event, UniCharCount stringLength, const UniChar* unicodeString) {
  EventObj* ev = Checked<EventObj>(event, "CGEventKeyboardSetUnicodeString");
  if (!unicodeString && stringLength > 0) Fatal("CGEventKeyboardSetUnicodeString: NULL string");
  const size_t kept = std::min<size_t>(stringLength, 20);  // what the receiving app uses
  ev->unicode.assign(reinterpret_cast<const char16_t*>(unicodeString), kept);
  ev->hasUnicode = true;
}

void CGEventSetFlags(CGEventRef event, CGEventFlags flags) {
  Checked<EventObj>(event, "CGEventSetFlags")->flags = flags;
}

void CGEventSetLocation(CGEventRef event, CGPoint location) {
  Checked<EventObj>(event, "CGEventSetLocation")->location = location;
}

void CGEventSetIntegerValueField(CGEventRef event, CGEventField field, int64_t value) {
  Checked<EventObj>(event, "CGEventSetIntegerValueField")->fields[field] = value;
}

void CGEventPost(CGEventTapLocation tap, CGEventRef event) {
  const EventObj* ev = Checked<EventObj>(event, "CGEventPost");
  (void)tap;
  const std::string line = EventLine(*ev);
  // Scripted: a slow window server, and focus that another app takes.
  int64_t delayMs = 0;
  {
    std::lock_guard<std::mutex> lock(State().mu);
    if (FakeWorld* w = State().world.get()) {
      if (w->postDelay && w->eventsPosted >= w->postDelay->afterEvents) delayMs = w->postDelay->ms;
      ++w->eventsPosted;
      if (w->focusMoves && w->eventsPosted == w->focusMoves->afterEvents) w->focusedPid = w->focusMoves->toPid;
    }
  }
  if (delayMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
  AppendLog(AXIsProcessTrusted() ? line : "dropped " + line);
}

// ---- Screen Recording -----------------------------------------------------

bool CGPreflightScreenCaptureAccess(void) {
  std::lock_guard<std::mutex> lock(State().mu);
  return !State().world || State().world->screenRecording == "granted";
}

bool CGRequestScreenCaptureAccess(void) {
  AppendLog("prompt screen recording");
  return CGPreflightScreenCaptureAccess();
}

// ---- AXObserver -----------------------------------------------------------

CFTypeID AXObserverGetTypeID(void) { return static_cast<CFTypeID>(ObserverObj::kKind); }

AXError AXObserverCreate(pid_t application, AXObserverCallback callback, AXObserverRef* outObserver) {
  if (!outObserver || !callback || application <= 0) return kAXErrorIllegalArgument;
  auto* o = Registry::Get().Add(std::make_unique<ObserverObj>(application, callback));
  o->source = Registry::Get().Add(std::make_unique<RunLoopSourceObj>());
  o->source->observer = o;
  const Clock::time_point created = Clock::now();
  std::vector<QueuedNote> script;
  {
    WorldState& st = State();
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.world)
      if (FakeApp* app = st.world->App(application)) {
        o->rootId = app->rootId;
        for (const FakeNotification& n : app->notifications)
          script.push_back(QueuedNote{created + std::chrono::milliseconds(n.atMs), n.name, n.element});
      }
  }
  {
    ObserverState& os = Observers();
    std::lock_guard<std::mutex> lock(os.mu);
    for (QueuedNote& n : script) Enqueue(*o, std::move(n));
    os.observers.push_back(o);
  }
  *outObserver = AsTyped<AXObserverRef>(o);
  return kAXErrorSuccess;
}

namespace {

// Registration and removal: an AX call on `element` (hangs, faults and trust
// apply), then the observer's own bookkeeping.
AXError Observe(AXObserverRef observer, AXUIElementRef element, CFStringRef notification, void* refcon, bool add,
                const char* fn) {
  ObserverObj* o = Checked<ObserverObj>(observer, fn);
  const ElemObj* e = ElementArg(element, fn);
  if (!e || !notification) return kAXErrorIllegalArgument;
  const std::string name = StringArg(notification, fn);
  if (name.empty() || name.size() > 1024) return kAXErrorIllegalArgument;
  if (e->which == ElemKind::kSystem) return kAXErrorNotificationUnsupported;
  if (e->pid != o->pid) return kAXErrorIllegalArgument;
  int64_t id = 0;
  AXError err = kAXErrorSuccess;
  std::string who;
  {
    std::unique_lock<std::mutex> lock(State().mu);
    Target t;
    err = Enter(e, Call::kOther, t, lock);
    if (err == kAXErrorSuccess) {
      id = t.el->id;
      who = t.Name();
      if (add && t.app->refuseNotifications.count(name)) err = kAXErrorNotificationUnsupported;
      if (add && t.app->busyNotifications.count(name)) err = kAXErrorCannotComplete;
    }
  }
  if (err == kAXErrorSuccess) {
    ObserverState& os = Observers();
    std::lock_guard<std::mutex> lock(os.mu);
    auto it = std::find_if(o->registrations.begin(), o->registrations.end(),
                           [&](const Registration& r) { return r.element == id && r.name == name; });
    if (add && it != o->registrations.end()) {
      err = kAXErrorNotificationAlreadyRegistered;
    } else if (add) {
      o->registrations.push_back(Registration{id, name, refcon});
    } else if (it == o->registrations.end()) {
      err = kAXErrorNotificationNotRegistered;
    } else {
      o->registrations.erase(it);
    }
  }
  AppendLog(AXLine(std::string(add ? "observe " : "unobserve ") + (who.empty() ? "?" : who) + " " + name, err));
  return err;
}

}  // namespace

AXError AXObserverAddNotification(AXObserverRef observer, AXUIElementRef element, CFStringRef notification,
                                  void* refcon) {
  return Observe(observer, element, notification, refcon, /*add=*/true, "AXObserverAddNotification");
}

AXError AXObserverRemoveNotification(AXObserverRef observer, AXUIElementRef element, CFStringRef notification) {
  return Observe(observer, element, notification, nullptr, /*add=*/false, "AXObserverRemoveNotification");
}

CFRunLoopSourceRef AXObserverGetRunLoopSource(AXObserverRef observer) {
  if (!observer) return nullptr;
  return AsTyped<CFRunLoopSourceRef>(Checked<ObserverObj>(observer, "AXObserverGetRunLoopSource")->source);
}

// ---- CFRunLoop ------------------------------------------------------------

const CFRunLoopMode kCFRunLoopDefaultMode = __CFStringMakeConstantString("kCFRunLoopDefaultMode");

CFRunLoopRef CFRunLoopGetCurrent(void) { return AsTyped<CFRunLoopRef>(CurrentLoop()); }

void CFRunLoopAddSource(CFRunLoopRef rl, CFRunLoopSourceRef source, CFRunLoopMode mode) {
  RunLoopObj* loop = Checked<RunLoopObj>(rl, "CFRunLoopAddSource");
  RunLoopSourceObj* src = Checked<RunLoopSourceObj>(source, "CFRunLoopAddSource");
  const std::string m = StringArg(mode, "CFRunLoopAddSource");
  ObserverState& os = Observers();
  std::lock_guard<std::mutex> lock(os.mu);
  auto& list = loop->sources[m];
  if (std::find(list.begin(), list.end(), src) != list.end()) return;
  Registry::Get().Retain(src);
  list.push_back(src);
}

void CFRunLoopRemoveSource(CFRunLoopRef rl, CFRunLoopSourceRef source, CFRunLoopMode mode) {
  RunLoopObj* loop = Checked<RunLoopObj>(rl, "CFRunLoopRemoveSource");
  RunLoopSourceObj* src = Checked<RunLoopSourceObj>(source, "CFRunLoopRemoveSource");
  const std::string m = StringArg(mode, "CFRunLoopRemoveSource");
  bool removed = false;
  {
    ObserverState& os = Observers();
    std::lock_guard<std::mutex> lock(os.mu);
    auto& list = loop->sources[m];
    auto it = std::find(list.begin(), list.end(), src);
    if (it != list.end()) {
      list.erase(it);
      removed = true;
    }
  }
  if (removed) CFRelease(src);
}

CFRunLoopRunResult CFRunLoopRunInMode(CFRunLoopMode mode, CFTimeInterval seconds, Boolean returnAfterSourceHandled) {
  const std::string m = StringArg(mode, "CFRunLoopRunInMode");
  RunLoopObj* loop = CurrentLoop();
  if (!(seconds > 0)) seconds = 0;  // NaN and negatives: one pass
  const Clock::time_point until =
      Clock::now() + std::chrono::microseconds(static_cast<int64_t>(std::min(seconds, 1e6) * 1e6));
  ObserverState& os = Observers();
  for (;;) {
    ObserverObj* to = nullptr;
    QueuedNote note;
    void* refcon = nullptr;
    {
      std::unique_lock<std::mutex> lock(os.mu);
      auto found = loop->sources.find(m);
      if (found == loop->sources.end() || found->second.empty()) return kCFRunLoopRunFinished;
      const Clock::time_point now = Clock::now();
      Clock::time_point next = Clock::time_point::max();
      // The first due notification of any source in the mode; one with no
      // registration that matches it is dropped (nobody asked for it).
      for (RunLoopSourceObj* src : found->second) {
        ObserverObj* o = src->observer;
        if (!o) continue;
        while (!to && !o->queue.empty() && o->queue.front().at <= now) {
          QueuedNote q = std::move(o->queue.front());
          o->queue.erase(o->queue.begin());
          const int64_t element = q.element ? q.element : o->rootId;
          for (const Registration& r : o->registrations)
            if (r.name == q.name && (r.element == element || r.element == o->rootId)) {
              to = o;
              note = std::move(q);
              refcon = r.refcon;
              break;
            }
        }
        if (to) break;
        if (!o->queue.empty()) next = std::min(next, o->queue.front().at);
      }
      if (to) {
        Registry::Get().Retain(to);  // held through the callback
      } else {
        if (now >= until) return kCFRunLoopRunTimedOut;
        os.cv.wait_until(lock, std::min(next, until));
        continue;
      }
    }
    AXUIElementRef element = note.element
                                 ? AsTyped<AXUIElementRef>(NewElement(ElemKind::kElement, to->pid, note.element))
                                 : AsTyped<AXUIElementRef>(NewElement(ElemKind::kApp, to->pid, 0));
    AppendLog("notify " + std::to_string(to->pid) + " " + note.name +
              (note.element ? " " + std::to_string(note.element) : std::string()));
    to->callback(AsTyped<AXObserverRef>(to), element, __CFStringMakeConstantString(note.name.c_str()), refcon);
    CFRelease(element);
    CFRelease(to);
    if (returnAfterSourceHandled) return kCFRunLoopRunHandledSource;
  }
}
