// RAII for CoreFoundation references, with the ownership made explicit at the
// point where a reference enters C++:
//   CFRef<T>::Adopt(x)  x came from a Create/Copy function (+1): we own it.
//   CFRef<T>::Retain(x) x came from a Get function (+0): we retain it.
//   ref.OutParam()      for Copy-style out-parameters; the previous value is
//                       released first and the result is adopted.
// Modelled on Chromium's ScopedCFTypeRef. Apple: "Memory Management
// Programming Guide for Core Foundation", the Create and Get rules.
#pragma once

#include <utility>

#include "apple.h"

namespace axsnap {

template <typename T>
class CFRef {
 public:
  CFRef() = default;
  ~CFRef() { reset(); }

  static CFRef Adopt(T ref) {
    CFRef r;
    r.ref_ = ref;
    return r;
  }
  static CFRef Retain(T ref) {
    CFRef r;
    // CFRetain returns const void*; CGEventRef and friends are non-const pointers.
    if (ref) r.ref_ = static_cast<T>(const_cast<void*>(CFRetain(ref)));
    return r;
  }

  CFRef(const CFRef& other) : ref_(other.ref_) {
    if (ref_) CFRetain(ref_);
  }
  CFRef(CFRef&& other) noexcept : ref_(std::exchange(other.ref_, nullptr)) {}
  CFRef& operator=(CFRef other) noexcept {
    std::swap(ref_, other.ref_);
    return *this;
  }

  T get() const { return ref_; }
  explicit operator bool() const { return ref_ != nullptr; }

  void reset() {
    if (ref_) CFRelease(ref_);
    ref_ = nullptr;
  }
  // Hands the +1 reference to a caller that releases it.
  T release() { return std::exchange(ref_, nullptr); }

  // For `Copy(..., T* out)` APIs: releases the old value, returns a slot whose
  // result this object adopts.
  T* OutParam() {
    reset();
    return &ref_;
  }

 private:
  T ref_ = nullptr;
};

// Copy functions that take a generic CFTypeRef* (AXUIElementCopyAttributeValue)
// go through CFRef<CFTypeRef>; a typed view is taken only after a CFGetTypeID check.
using CFAny = CFRef<CFTypeRef>;

}  // namespace axsnap
