// Node reads: one batched attribute read per element (an app that refuses
// the batch is read one attribute at a time for a while), the values the
// model prints, labels through AXTitleUIElement, secure text fields told by
// a positive sign, settable values, actions; and children, from the source
// the role decides (the visible rows of a table, the visible children of a
// list, AXContents of a scroll area). Both reads share one loop that stops
// asking an app once it stopped answering.
//
// Apple: HIServices' AXUIElement.h (AXUIElementCopyMultipleAttributeValues,
// AXUIElementGetAttributeValueCount, AXUIElementCopyAttributeValues,
// AXUIElementCopyParameterizedAttributeValue, AXUIElementIsAttributeSettable,
// AXUIElementCopyActionNames), AXAttributeConstants.h (kAXVisibleRowsAttribute,
// kAXVisibleChildrenAttribute, kAXContentsAttribute, kAXTitleUIElementAttribute,
// kAXNumberOfCharactersAttribute, kAXStringForRangeParameterizedAttribute),
// AXRoleConstants.h (kAXSecureTextFieldSubrole), AXValue.h (kAXValueTypeCFRange).

#include <algorithm>
#include <set>

#include "../core/secret_names.h"
#include "mac_internal.h"

namespace axsnap {

namespace {

constexpr size_t kMaxChildren = 10000;  // per attribute copy; the walk's node limit cuts long before
// An app that refused one batched read is read one attribute at a time, and
// offered the batch again after this many elements or this long, whichever
// comes first: one refusal (a busy moment, one odd element) is not forever.
constexpr int kBatchRetryReads = 50;
constexpr auto kBatchRetryAfter = std::chrono::seconds(10);
constexpr CFIndex kMaxValueChars = 100000;  // UTF-16 units of a text value read; the renderer prints far less

// The attributes of one batched read, in slot order.
enum Slot {
  kRole,
  kSubrole,
  kRoleDescription,
  kTitle,
  kDescription,
  kHelp,
  kIdentifier,
  kURL,
  kPlaceholder,
  kEnabled,
  kFocused,
  kSelected,
  kExpanded,
  kDisclosing,
  kMinimized,
  kModal,
  kRequired,
  kOrientation,
  kPosition,
  kSize,
  kIndex,
  kCharCount,
  kTitleElement,
  kSlotCount
};

CFRef<CFArrayRef> BatchAttributes() {
  const void* names[kSlotCount] = {
      CFSTR("AXRole"),
      CFSTR("AXSubrole"),
      CFSTR("AXRoleDescription"),
      CFSTR("AXTitle"),
      CFSTR("AXDescription"),
      CFSTR("AXHelp"),
      CFSTR("AXIdentifier"),
      CFSTR("AXURL"),
      CFSTR("AXPlaceholderValue"),
      CFSTR("AXEnabled"),
      CFSTR("AXFocused"),
      CFSTR("AXSelected"),
      CFSTR("AXExpanded"),
      CFSTR("AXDisclosing"),
      CFSTR("AXMinimized"),
      CFSTR("AXModal"),
      CFSTR("AXRequired"),
      CFSTR("AXOrientation"),
      CFSTR("AXPosition"),
      CFSTR("AXSize"),
      CFSTR("AXIndex"),
      CFSTR("AXNumberOfCharacters"),
      CFSTR("AXTitleUIElement"),
  };
  return CFRef<CFArrayRef>::Adopt(CFArrayCreate(kCFAllocatorDefault, names, kSlotCount, &kCFTypeArrayCallBacks));
}

// Roles whose AXValue the model prints (a value read is one more IPC, so only these).
bool HasValue(const std::string& role) {
  return In(role, {"AXStaticText",         "AXTextField",      "AXTextArea",
                   "AXComboBox",           "AXCheckBox",       "AXRadioButton",
                   "AXPopUpButton",        "AXMenuButton",     "AXDisclosureTriangle",
                   "AXScrollBar",          "AXValueIndicator", "AXSplitter",
                   "AXRulerMarker",        "AXHeading",        "AXSlider",
                   "AXIncrementor",        "AXLevelIndicator", "AXProgressIndicator",
                   "AXRelevanceIndicator", "AXDateField",      "AXTimeField",
                   "AXColorWell",          "AXToggle",         "AXSwitch"});
}

// Roles whose AXValue may be settable (AXUIElementIsAttributeSettable is one more IPC).
bool MaySetValue(const std::string& role) {
  return In(role, {"AXTextField", "AXTextArea", "AXComboBox", "AXSlider", "AXScrollBar", "AXValueIndicator",
                   "AXSplitter", "AXRulerMarker", "AXIncrementor", "AXDateField", "AXTimeField", "AXColorWell"});
}

bool IsTextRole(const std::string& role) { return In(role, {"AXTextField", "AXTextArea", "AXComboBox"}); }

}  // namespace

Error MacBackend::ReadOne(ElementId id, AXUIElementRef el, int64_t pid, NodeAttributes& a, Clock::time_point deadline) {
  // A walk is one job however long it takes: the observers are dispatched on the way (they only count).
  ServiceObservers();
  // One batched read; a failed slot holds an AXValue wrapping an AXError,
  // not the value. A batch the app refuses as a whole (kAXErrorFailure and
  // the like, from apps that do not implement it) is read one attribute at a
  // time instead.
  Attributes read;
  // An app that refused a batched read is read one attribute at a time for a
  // while (~22 calls per element, instead of a wasted batch call before
  // them), then offered the batch again (kBatchRetryReads, kBatchRetryAfter).
  bool tryBatch = true;
  auto refused = noBatch_.find(pid);
  if (refused != noBatch_.end())
    tryBatch = ++refused->second.skipped > kBatchRetryReads || Clock::now() - refused->second.since >= kBatchRetryAfter;
  if (Error err = ReadAttributes(el, batch_.get(), tryBatch, read)) return err;
  if (read.batchRefused)
    noBatch_[pid] = NoBatch{Clock::now(), 0};
  else if (tryBatch)
    noBatch_.erase(pid);
  const std::vector<AXError>& errors = read.errors;
  if (Fatal(errors[kRole])) return AXFailure(errors[kRole], "reading an element");
  auto slot = [&](int i) -> CFTypeRef { return read.slots[static_cast<size_t>(i)]; };

  a.role = Str(slot(kRole));
  if (a.role.empty()) a.role = "AXUnknown";
  // Empty strings are kept as read: an empty AXRoleDescription is how an
  // element asks not to be announced by role, and the renderer honours it.
  auto opt = [&](int i) -> std::optional<std::string> { return CFToString(slot(i)); };
  a.subrole = opt(kSubrole);
  a.roleDescription = opt(kRoleDescription);
  a.title = opt(kTitle);
  a.description = opt(kDescription);
  a.help = opt(kHelp);
  a.identifier = opt(kIdentifier);
  a.url = opt(kURL);
  a.placeholder = opt(kPlaceholder);
  a.orientation = opt(kOrientation);
  if (a.orientation) {
    // AXVerticalOrientation → vertical, as the model spells it.
    if (*a.orientation == "AXVerticalOrientation")
      a.orientation = "vertical";
    else if (*a.orientation == "AXHorizontalOrientation")
      a.orientation = "horizontal";
    else
      a.orientation.reset();
  }
  if (std::optional<bool> b = CFToBool(slot(kEnabled)); b && !*b) a.states.enabled = false;
  if (std::optional<bool> b = CFToBool(slot(kFocused)); b && *b) a.states.focused = true;
  if (std::optional<bool> b = CFToBool(slot(kSelected)); b && *b) a.states.selected = true;
  if (std::optional<bool> b = CFToBool(slot(kExpanded)))
    a.states.expanded = *b;
  else if (std::optional<bool> d = CFToBool(slot(kDisclosing)); d && a.role == "AXRow")
    a.states.expanded = *d;
  if (std::optional<bool> b = CFToBool(slot(kMinimized)); b && *b) a.states.minimized = true;
  if (std::optional<bool> b = CFToBool(slot(kModal)); b && *b) a.states.modal = true;
  if (std::optional<bool> b = CFToBool(slot(kRequired)); b && *b) a.states.required = true;
  std::optional<CGPoint> pos = CFToPoint(slot(kPosition));
  std::optional<CGSize> size = CFToSize(slot(kSize));
  if (pos && size) a.frame = Rect{pos->x, pos->y, size->width, size->height};
  if (std::optional<double> n = CFToNumber(slot(kIndex)); n && a.role == "AXRow") a.rowIndex = static_cast<int64_t>(*n);
  if (std::optional<double> n = CFToNumber(slot(kCharCount))) a.charCount = static_cast<int64_t>(*n);
  // A control with no title or description of its own is named by the static
  // text its AXTitleUIElement points at (a form's label), as VoiceOver does:
  // the label's text becomes the title, its handle `labelledBy`, so the
  // renderer need not print the label again. In the batch; one more read only
  // for such a control.
  if (IsElement(slot(kTitleElement)) && (!a.title || a.title->empty()) && (!a.description || a.description->empty())) {
    AXUIElementRef label = static_cast<AXUIElementRef>(const_cast<void*>(slot(kTitleElement)));
    SetTimeoutFor(label, deadline);
    // A label that cannot be read leaves the name empty: never the control's error.
    for (CFStringRef attr : {CFSTR("AXValue"), CFSTR("AXTitle")}) {
      CFAny text;
      if (AXUIElementCopyAttributeValue(label, attr, text.OutParam()) != kAXErrorSuccess) continue;
      std::optional<std::string> s = CFToString(text.get());
      if (!s || s->find_first_not_of(" \t\n") == std::string::npos) continue;
      a.title = *s;
      a.labelledBy.push_back(elements_.Intern(label));
      break;
    }
  }

  // Secure text fields. A positive sign makes a field secure: the subrole
  // AXSecureTextField, the role description "secure text field", or (below)
  // a value read the app refuses. A subrole answered with kAXErrorFailure or
  // kAXErrorIllegalArgument is one the app does not implement (many apps
  // answer unimplemented attributes so): absent, no sign either way. A
  // subrole that could not be read for another reason (a slot the app did
  // not answer) proves nothing: that field is kept secure, to be safe.
  const AXError subroleError = slot(kSubrole) ? kAXErrorSuccess : errors[kSubrole];
  const bool textField = a.role == "AXTextField" || a.role == "AXComboBox";
  const bool subroleUnimplemented = subroleError == kAXErrorFailure || subroleError == kAXErrorIllegalArgument;
  const bool subroleUnknown = subroleError != kAXErrorSuccess && subroleError != kAXErrorNoValue &&
                              subroleError != kAXErrorAttributeUnsupported && !subroleUnimplemented;
  bool secure = (a.subrole && *a.subrole == "AXSecureTextField") ||
                (textField && a.roleDescription && *a.roleDescription == "secure text field") ||
                (textField && subroleUnknown);
  // A text entry named like a password - its title (the AXTitleUIElement
  // label's text included), description or placeholder - is secure too
  // unless the snapshot turned the name rule off, as on Linux: apps that draw
  // their own password fields often forget the subrole, and the renderer
  // hiding the value is too late, its plaintext would already be in the result.
  if (!secure && secureNames_ && (textField || a.role == "AXTextArea")) {
    for (const std::optional<std::string>* name : {&a.title, &a.description, &a.placeholder})
      if (*name && NameSaysPassword(**name)) secure = true;
  }
  // Without a subrole, the value read is what tells: a field that refuses it is taken for a secure one.
  const bool valueTells = textField && !secure && subroleUnimplemented;
  if (live_) liveRead_.insert(id);

  // A secure field's value is never read: only its length (AXNumberOfCharacters above).
  if (!secure && HasValue(a.role)) {
    CFAny value;
    if (IsTextRole(a.role) && a.charCount && *a.charCount > kMaxValueChars) {
      // A long document: its head, not megabytes over IPC every snapshot.
      const CFRange head = CFRangeMake(0, kMaxValueChars);
      CFRef<AXValueRef> range = CFRef<AXValueRef>::Adopt(AXValueCreate(kAXValueTypeCFRange, &head));
      const AXError e =
          AXUIElementCopyParameterizedAttributeValue(el, CFSTR("AXStringForRange"), range.get(), value.OutParam());
      if (e != kAXErrorSuccess) {
        if (Fatal(e)) return AXFailure(e, "reading a text range");
        value.reset();
      }
    }
    if (!value) {
      const AXError ve = AXUIElementCopyAttributeValue(el, CFSTR("AXValue"), value.OutParam());
      if (ve != kAXErrorSuccess) {
        value.reset();
        if (Fatal(ve)) return AXFailure(ve, "reading AXValue");
        // A text field with no readable subrole whose value is refused: secure.
        if (valueTells && ve != kAXErrorNoValue) secure = true;
      }
    }
    if (!secure) a.value = CFToValue(value.get(), a.valueType);
    if (!secure && IsTextRole(a.role)) {
      CFAny selected;
      if (Error err = CopyAttribute(el, CFSTR("AXSelectedText"), selected)) return err;
      if (std::optional<std::string> s = CFToString(selected.get()); s && !s->empty()) a.selectedText = s;
    }
  }
  // Marked secure: the safety rules then refuse to set or type into it.
  if (secure) a.states.secure = true;
  elements_.Remember(id, a.role, a.subrole.value_or(""), secure);
  if (MaySetValue(a.role)) {
    Boolean settable = false;
    if (AXUIElementIsAttributeSettable(el, CFSTR("AXValue"), &settable) == kAXErrorSuccess) a.settable = settable;
    // A settable text field with no value yet is still a string field.
    if (a.settable && !a.valueType && (IsTextRole(a.role) || secure)) a.valueType = "string";
  }
  if (a.role == "AXRow") {
    Boolean settable = false;
    if (AXUIElementIsAttributeSettable(el, CFSTR("AXSelected"), &settable) == kAXErrorSuccess && settable)
      a.states.selectable = true;
  }
  CFRef<CFArrayRef> actions;
  const AXError ae = AXUIElementCopyActionNames(el, actions.OutParam());
  if (ae == kAXErrorSuccess && actions) {
    for (CFIndex i = 0; i < CFArrayGetCount(actions.get()); i++)
      if (std::optional<std::string> s = CFToString(CFArrayGetValueAtIndex(actions.get(), i))) a.actions.push_back(*s);
  } else if (Fatal(ae)) {
    return AXFailure(ae, "reading actions");
  }
  return {};
}

namespace {

// The loop both batched reads share: unknown ids, the deadline, and an app
// that stopped answering, which costs one timeout per batch, not one per
// element. `read(i, element)` does the reading.
template <typename Read>
Error EachElement(const ElementTable& table, const std::vector<ElementId>& ids, std::vector<Error>& errs,
                  Clock::time_point deadline, Read read) {
  errs.assign(ids.size(), Error{});
  std::set<int64_t> silent;
  for (size_t i = 0; i < ids.size(); i++) {
    AXUIElementRef el = table.Get(ids[i]);
    if (!el) {
      errs[i] = {ErrorCode::kElementGone, "unknown element"};
      continue;
    }
    if (Clock::now() >= deadline) {
      errs[i] = {ErrorCode::kTimeout, "the deadline passed"};
      continue;
    }
    pid_t pid = 0;
    AXUIElementGetPid(el, &pid);
    if (silent.count(pid)) {
      errs[i] = {ErrorCode::kAppUnresponsive, "the app stopped answering"};
      continue;
    }
    errs[i] = read(i, el, pid);
    if (errs[i].code == ErrorCode::kAppUnresponsive) silent.insert(pid);
    // No permission: nothing else will read either.
    if (errs[i].code == ErrorCode::kPermissionDenied) return errs[i];
  }
  return {};
}

}  // namespace

Error MacBackend::ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out,
                            std::vector<Error>& errs, Clock::time_point deadline) {
  if (!batch_) batch_ = BatchAttributes();
  out.assign(ids.size(), NodeAttributes{});
  return EachElement(elements_, ids, errs, deadline, [&](size_t i, AXUIElementRef el, pid_t pid) {
    SetTimeoutFor(el, deadline);
    return ReadOne(ids[i], el, pid, out[i], deadline);
  });
}

Error MacBackend::ChildrenOf(ElementId id, AXUIElementRef el, ChildList& out) {
  // The role decides where children are read from. It was remembered by the
  // read of this element; during live reads only a read made while live
  // counts, anything older is asked again.
  std::string role;
  const std::string* cached = elements_.Role(id);
  if (cached && (!live_ || liveRead_.count(id))) {
    role = *cached;
  } else if (live_) {
    CFAny r;
    if (Error err = CopyAttribute(el, CFSTR("AXRole"), r)) return err;
    role = Str(r.get());
  }

  // Elements are interned only once the whole list was read, so a failure
  // part way leaves the table as it was (other snapshots may hold those ids).
  std::vector<CFRef<AXUIElementRef>> found;
  std::vector<std::string> via;
  auto intern = [&]() {
    for (size_t i = 0; i < found.size(); i++) {
      out.ids.push_back(elements_.Intern(found[i].get()));
      out.via.push_back(via[i]);
    }
  };
  // Copies up to kMaxChildren elements of an array attribute; false when unsupported.
  auto copy = [&](CFStringRef attr, const char* source, bool& supported) -> Error {
    supported = false;
    CFIndex count = 0;
    AXError e = AXUIElementGetAttributeValueCount(el, attr, &count);
    // A source the element does not answer for is skipped: the next one is tried.
    if (e != kAXErrorSuccess) return Fatal(e) ? AXFailure(e, "counting " + Str(attr)) : Error{};
    if (count <= 0) {
      supported = true;
      return {};
    }
    CFRef<CFArrayRef> items;
    e = AXUIElementCopyAttributeValues(el, attr, 0, std::min<CFIndex>(count, kMaxChildren), items.OutParam());
    if (e != kAXErrorSuccess) return Fatal(e) ? AXFailure(e, "reading " + Str(attr)) : Error{};
    supported = true;
    for (CFIndex i = 0; items && i < CFArrayGetCount(items.get()); i++) {
      CFTypeRef item = CFArrayGetValueAtIndex(items.get(), i);
      if (!IsElement(item)) continue;
      found.push_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(item)));
      via.push_back(source);
    }
    return {};
  };
  auto total = [&](CFStringRef attr) {
    CFIndex count = 0;
    if (AXUIElementGetAttributeValueCount(el, attr, &count) == kAXErrorSuccess) out.total = count;
  };

  bool supported = false;
  if (role == "AXTable" || role == "AXOutline") {
    // Only the rows on screen: a table's AXRows can hold 100,000 elements.
    if (Error err = copy(CFSTR("AXVisibleRows"), "visibleRows", supported)) return err;
    if (supported) {
      total(CFSTR("AXRows"));
      intern();
      return {};
    }
    if (Error err = copy(CFSTR("AXRows"), "rows", supported)) return err;
    if (supported) {
      intern();
      return {};
    }
  } else if (role == "AXList") {
    if (Error err = copy(CFSTR("AXVisibleChildren"), "visibleChildren", supported)) return err;
    if (supported) {
      total(CFSTR("AXChildren"));
      intern();
      return {};
    }
  }
  if (role == "AXBrowser" || role == "AXList" || role.empty()) {
    if (Error err = copy(CFSTR("AXChildren"), "", supported)) return err;
  } else {
    // Elements that are not lists: one call for the whole array, not a count
    // and a ranged copy (the walk's node limit cuts a long one anyway).
    CFAny items;
    const AXError e = AXUIElementCopyAttributeValue(el, CFSTR("AXChildren"), items.OutParam());
    if (e != kAXErrorSuccess && Fatal(e)) return AXFailure(e, "reading AXChildren");
    if (e == kAXErrorSuccess && items && CFGetTypeID(items.get()) == CFArrayGetTypeID()) {
      CFArrayRef list = static_cast<CFArrayRef>(items.get());
      const CFIndex n = std::min<CFIndex>(CFArrayGetCount(list), kMaxChildren);
      for (CFIndex i = 0; i < n; i++) {
        CFTypeRef item = CFArrayGetValueAtIndex(list, i);
        if (!IsElement(item)) continue;
        found.push_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(item)));
        via.push_back("");
      }
    }
  }
  // Some scroll areas expose their document only as AXContents.
  if (found.empty() && role == "AXScrollArea") {
    if (Error err = copy(CFSTR("AXContents"), "contents", supported)) return err;
  }
  intern();
  return {};
}

Error MacBackend::ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                               Clock::time_point deadline) {
  out.assign(ids.size(), ChildList{});
  return EachElement(elements_, ids, errs, deadline, [&](size_t i, AXUIElementRef el, pid_t) {
    SetTimeoutFor(el, deadline);
    return ChildrenOf(ids[i], el, out[i]);
  });
}

}  // namespace axsnap
