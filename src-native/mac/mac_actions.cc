// Actions through AX: performing a named action the element lists, setting a
// value (text or number), focus, selecting a row through its list, and
// inserting text at the end without writing the value back (never into a
// secure field). An error after a request was sent is "delivered, uncertain"
// unless it proves nothing was done.
//
// Apple: HIServices' AXUIElement.h (AXUIElementPerformAction,
// AXUIElementSetAttributeValue, AXUIElementIsAttributeSettable,
// AXUIElementCopyActionNames), AXError.h, AXAttributeConstants.h
// (kAXSelectedRowsAttribute, kAXSelectedChildrenAttribute,
// kAXSelectedTextRangeAttribute, kAXSelectedTextAttribute,
// kAXNumberOfCharactersAttribute), AXValue.h (kAXValueTypeCFRange).

#include "mac_internal.h"

namespace axsnap {

namespace {

// After a perform or a set was sent: apps often answer with an error although
// they acted (an AXPress that opens a modal answers kAXErrorCannotComplete
// when the modal returns; AppKit controls answer kAXErrorFailure after
// pressing). Only errors that prove nothing was done are failures; the rest
// are "delivered, uncertain", which must never lead to a second attempt.
Error AfterDelivery(AXError e, const std::string& what) {
  if (e == kAXErrorSuccess) return {};
  if (e == kAXErrorInvalidUIElement || e == kAXErrorIllegalArgument || e == kAXErrorAPIDisabled)
    return AXFailure(e, what);
  return {ErrorCode::kDeliveryUncertain, what + " was sent; the app answered " + AXErrorName(e)};
}

}  // namespace

Error MacBackend::DoAction(ElementId id, const std::string& name, Clock::time_point deadline) {
  AXUIElementRef el = elements_.Get(id);
  if (!el) return {ErrorCode::kElementGone, "unknown element"};
  SetTimeoutFor(el, deadline);
  // Only an action the element does not list is "not supported": an app may
  // answer kAXErrorActionUnsupported after performing one it does list.
  CFRef<CFArrayRef> names;
  const AXError ne = AXUIElementCopyActionNames(el, names.OutParam());
  if (ne != kAXErrorSuccess && Fatal(ne)) return AXFailure(ne, "reading actions");
  if (ne == kAXErrorSuccess && names) {
    bool listed = false;
    std::string all;
    for (CFIndex i = 0; i < CFArrayGetCount(names.get()); i++) {
      const std::string n = Str(CFArrayGetValueAtIndex(names.get(), i));
      listed = listed || n == name;
      all += (all.empty() ? "" : ", ") + n;
    }
    if (!listed)
      return {ErrorCode::kActionNotSupported,
              "the element has no action " + name + " (it has: " + (all.empty() ? "none" : all) + ")"};
  }
  CFRef<CFStringRef> action = MakeCFString(name);
  return AfterDelivery(AXUIElementPerformAction(el, action.get()), "action " + name);
}

Error MacBackend::SetValue(ElementId id, CFTypeRef value, Clock::time_point deadline) {
  AXUIElementRef el = elements_.Get(id);
  if (!el) return {ErrorCode::kElementGone, "unknown element"};
  SetTimeoutFor(el, deadline);
  Boolean settable = false;
  const AXError se = AXUIElementIsAttributeSettable(el, CFSTR("AXValue"), &settable);
  if (se != kAXErrorSuccess && Fatal(se)) return AXFailure(se, "checking the value");
  if (se != kAXErrorSuccess || !settable) return {ErrorCode::kNotSettable, "the element's value cannot be set"};
  return AfterDelivery(AXUIElementSetAttributeValue(el, CFSTR("AXValue"), value), "setting the value");
}

Error MacBackend::SetText(ElementId id, const std::string& text, Clock::time_point deadline) {
  CFRef<CFStringRef> value = MakeCFString(text);
  return SetValue(id, value.get(), deadline);
}

Error MacBackend::SetNumber(ElementId id, double number, Clock::time_point deadline) {
  CFRef<CFNumberRef> value =
      CFRef<CFNumberRef>::Adopt(CFNumberCreate(kCFAllocatorDefault, kCFNumberDoubleType, &number));
  return SetValue(id, value.get(), deadline);
}

Error MacBackend::Focus(ElementId id, Clock::time_point deadline) {
  AXUIElementRef el = elements_.Get(id);
  if (!el) return {ErrorCode::kElementGone, "unknown element"};
  SetTimeoutFor(el, deadline);
  return AfterDelivery(AXUIElementSetAttributeValue(el, CFSTR("AXFocused"), kCFBooleanTrue), "focusing");
}

Error MacBackend::Select(ElementId id, Clock::time_point deadline) {
  AXUIElementRef row = elements_.Get(id);
  if (!row) return {ErrorCode::kElementGone, "unknown element"};
  SetTimeoutFor(row, deadline);
  // The containing list takes the selection: AXSelectedRows on tables and
  // outlines, AXSelectedChildren on lists. A few levels up at most.
  CFRef<AXUIElementRef> el = CFRef<AXUIElementRef>::Retain(row);
  for (int up = 0; up < 4; up++) {
    CFAny parent;
    if (Error err = CopyAttribute(el.get(), CFSTR("AXParent"), parent)) return err;
    if (!IsElement(parent.get())) break;
    el = CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(parent.get()));
    SetTimeoutFor(el.get(), deadline);
    CFAny role;
    if (Error err = CopyAttribute(el.get(), CFSTR("AXRole"), role)) return err;
    const std::string r = Str(role.get());
    if (r != "AXTable" && r != "AXOutline" && r != "AXList") continue;
    CFStringRef attr = r == "AXList" ? CFSTR("AXSelectedChildren") : CFSTR("AXSelectedRows");
    Boolean settable = false;
    if (AXUIElementIsAttributeSettable(el.get(), attr, &settable) != kAXErrorSuccess || !settable) break;
    const void* items[] = {row};
    CFRef<CFArrayRef> selection =
        CFRef<CFArrayRef>::Adopt(CFArrayCreate(kCFAllocatorDefault, items, 1, &kCFTypeArrayCallBacks));
    return AfterDelivery(AXUIElementSetAttributeValue(el.get(), attr, selection.get()), "selecting the row");
  }
  // Lists that do not take a selection array often still take AXSelected on the row.
  Boolean settable = false;
  if (AXUIElementIsAttributeSettable(row, CFSTR("AXSelected"), &settable) != kAXErrorSuccess || !settable)
    return {ErrorCode::kActionNotSupported, "neither the list nor the row takes a selection"};
  return AfterDelivery(AXUIElementSetAttributeValue(row, CFSTR("AXSelected"), kCFBooleanTrue), "selecting the row");
}

Error MacBackend::InsertText(ElementId id, const std::string& text, Clock::time_point deadline) {
  AXUIElementRef el = elements_.Get(id);
  if (!el) return {ErrorCode::kElementGone, "unknown element"};
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed; nothing was sent"};
  SetTimeoutFor(el, deadline);
  // Never into a secure field, asked live (a subrole that cannot be read may be one).
  if (elements_.IsSecure(id)) return {ErrorCode::kNotSettable, "a secure text field: nothing is inserted into it"};
  CFAny subrole;
  const AXError se = AXUIElementCopyAttributeValue(el, CFSTR("AXSubrole"), subrole.OutParam());
  if (se == kAXErrorSuccess && Str(subrole.get()) == "AXSecureTextField")
    return {ErrorCode::kNotSettable, "a secure text field: nothing is inserted into it"};
  if (se == kAXErrorFailure || se == kAXErrorIllegalArgument) {
    // A subrole the app does not implement: no sign either way. The role
    // description and a value read decide, as when the element was read.
    CFAny description, value;
    const AXError de = AXUIElementCopyAttributeValue(el, CFSTR("AXRoleDescription"), description.OutParam());
    if (Fatal(de)) return AXFailure(de, "reading the role description");
    if (de == kAXErrorSuccess && Str(description.get()) == "secure text field")
      return {ErrorCode::kNotSettable, "a secure text field: nothing is inserted into it"};
    const AXError ve = AXUIElementCopyAttributeValue(el, CFSTR("AXValue"), value.OutParam());
    if (Fatal(ve)) return AXFailure(ve, "reading the value");
    if (ve != kAXErrorSuccess && ve != kAXErrorNoValue)
      return {ErrorCode::kNotSettable,
              "the element's subrole cannot be read and its value is refused (it may be a secure field)"};
  } else if (se != kAXErrorSuccess && se != kAXErrorNoValue && se != kAXErrorAttributeUnsupported) {
    if (Fatal(se)) return AXFailure(se, "reading the subrole");
    return {ErrorCode::kNotSettable, "the element's subrole could not be read (it may be a secure field)"};
  }
  // The caret goes to the end, then the text goes in at the caret: the value
  // itself is never written back (it may not have been read whole).
  for (CFStringRef attr : {CFSTR("AXSelectedTextRange"), CFSTR("AXSelectedText")}) {
    Boolean settable = false;
    const AXError e = AXUIElementIsAttributeSettable(el, attr, &settable);
    if (e != kAXErrorSuccess && Fatal(e)) return AXFailure(e, "checking " + Str(attr));
    if (e != kAXErrorSuccess || !settable)
      return {ErrorCode::kNotSettable, "the element's " + Str(attr) + " cannot be set, so text cannot be inserted"};
  }
  CFAny count;
  const AXError ce = AXUIElementCopyAttributeValue(el, CFSTR("AXNumberOfCharacters"), count.OutParam());
  if (ce != kAXErrorSuccess && Fatal(ce)) return AXFailure(ce, "reading the text length");
  const std::optional<double> length = ce == kAXErrorSuccess ? CFToNumber(count.get()) : std::nullopt;
  if (!length || *length < 0)
    return {ErrorCode::kActionNotSupported, "the element does not report its text length (AXNumberOfCharacters)"};
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed; nothing was sent"};
  const CFRange end = CFRangeMake(static_cast<CFIndex>(*length), 0);
  CFRef<AXValueRef> range = CFRef<AXValueRef>::Adopt(AXValueCreate(kAXValueTypeCFRange, &end));
  if (!range) return {ErrorCode::kActionFailed, "could not make the text range"};
  // From here on the app has been asked to change something.
  if (Error err = AfterDelivery(AXUIElementSetAttributeValue(el, CFSTR("AXSelectedTextRange"), range.get()),
                                "moving the caret"))
    return err.code == ErrorCode::kDeliveryUncertain ? Error{err.code, err.message + "; the text was not inserted"}
                                                     : err;
  // A selection the app did not put where asked would be replaced: the text
  // goes in only when the caret is at the end, with nothing selected. Apps
  // may apply a selection later than they answer the set (Chromium sends it
  // to the renderer and reads back the browser's copy), so the read-back is
  // polled, briefly. A caret that never arrives means only the selection
  // moved: the text was not inserted, and typing with key events may go on.
  constexpr int kCaretPolls = 8;
  constexpr auto kCaretPoll = std::chrono::milliseconds(25);
  auto caretAtEnd = [&] {
    CFAny now;
    CFRange at{};
    return AXUIElementCopyAttributeValue(el, CFSTR("AXSelectedTextRange"), now.OutParam()) == kAXErrorSuccess && now &&
           CFGetTypeID(now.get()) == AXValueGetTypeID() &&
           AXValueGetValue(static_cast<AXValueRef>(now.get()), kAXValueTypeCFRange, &at) &&
           at.location == end.location && at.length == 0;
  };
  bool arrived = caretAtEnd();
  for (int i = 0; !arrived && i < kCaretPolls && Clock::now() + kCaretPoll < deadline; ++i) {
    system_->Sleep(kCaretPoll);
    arrived = caretAtEnd();
  }
  if (!arrived)
    return {ErrorCode::kActionFailed,
            "the caret did not arrive at the end of the text (the app answered the move but its selection is "
            "elsewhere); only the selection may have moved, the text was not inserted"};
  CFRef<CFStringRef> value = MakeCFString(text);
  return AfterDelivery(AXUIElementSetAttributeValue(el, CFSTR("AXSelectedText"), value.get()), "inserting the text");
}

}  // namespace axsnap
