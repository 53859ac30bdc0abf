// Acting through AT-SPI rather than input: a named action (Action.DoAction),
// text (EditableText.SetTextContents, and InsertText at the end), a number
// (Value.CurrentValue) and focus (Component.GrabFocus); selecting a row is in
// atspi_selection.cc. Each drops what earlier reads let later ones skip
// (Impl::ForgetReadState).
//
// Follows at-spi2-core xml/Action.xml, xml/EditableText.xml, xml/Text.xml,
// xml/Value.xml and xml/Component.xml;
// state numbers (EDITABLE, READ_ONLY) from atspi-constants.h.

#include <algorithm>
#include <string>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {

namespace {

std::string Lower(const std::string& s) {
  CharPtr folded(g_utf8_casefold(s.c_str(), static_cast<gssize>(s.size())));
  return folded ? std::string(folded.get()) : s;
}

}  // namespace

Error AtspiBackend::DoAction(ElementId id, const std::string& name, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const ObjRef target = *ref;
  im.ForgetReadState();
  const int perCall = static_cast<int>(im.callTimeout.count());
  Outcome o;
  std::string msg;
  // Raw names (NActions + GetName), then the localized ones (GetActions).
  std::vector<std::string> names;
  VariantPtr nv = im.CallSync(target.bus, target.path, kIfProperties, "Get",
                              g_variant_new("(ss)", kIfAction, "NActions"), "(v)", deadline, o, msg);
  if (o == Outcome::kFailed) return MakeError(ErrorCode::kActionNotSupported, "the element has no actions");
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  {
    VariantPtr inner = UnwrapV(nv.get());
    int64_t count = 0;
    VariantToInt(inner.get(), count);
    for (int64_t i = 0; i < std::min<int64_t>(count, 64); ++i) {
      VariantPtr gn = im.CallSync(target.bus, target.path, kIfAction, "GetName", g_variant_new("(i)", gint32(i)), "(s)",
                                  deadline, o, msg);
      if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
      const gchar* s = nullptr;
      g_variant_get(gn.get(), "(&s)", &s);
      names.emplace_back(ActionNameOf(s ? s : ""));
    }
  }
  const std::string wanted = Lower(name);
  int index = -1;
  for (size_t i = 0; i < names.size() && index < 0; ++i)
    if (!names[i].empty() && Lower(names[i]) == wanted) index = static_cast<int>(i);
  if (index < 0 && !names.empty()) {
    VariantPtr r = im.CallSync(target.bus, target.path, kIfAction, "GetActions", nullptr, "(a(sss))", deadline, o, msg);
    if (o == Outcome::kOk) {
      VariantPtr arr = AdoptVariant(g_variant_get_child_value(r.get(), 0));
      GVariantIter it;
      g_variant_iter_init(&it, arr.get());
      const gchar *n = nullptr, *d = nullptr, *k = nullptr;
      for (int i = 0; index < 0 && g_variant_iter_next(&it, "(&s&s&s)", &n, &d, &k); ++i)
        if (n && *n && Lower(ActionNameOf(n)) == wanted && static_cast<size_t>(i) < names.size()) index = i;
    }
  }
  if (index < 0) {
    std::string have;
    for (const auto& n : names)
      if (!n.empty()) have += (have.empty() ? "" : ", ") + n;
    return MakeError(ErrorCode::kActionNotSupported,
                     "no action \"" + name + "\" on this element" + (have.empty() ? "" : " (has: " + have + ")"));
  }
  VariantPtr done =
      im.CallSync(target.bus, target.path, kIfAction, "DoAction", g_variant_new("(i)", index), "(b)", deadline, o, msg);
  if (o != Outcome::kOk)
    return o == Outcome::kFailed ? MakeError(ErrorCode::kActionFailed, "DoAction failed: " + msg)
                                 : OutcomeError(o, target.bus, msg, perCall);
  gboolean success = FALSE;
  g_variant_get(done.get(), "(b)", &success);
  if (!success) return MakeError(ErrorCode::kActionFailed, "the application refused action \"" + names[index] + "\"");
  return {};
}

Error AtspiBackend::Toolkit(ElementId id, std::string& name, std::string& version, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const Dialect& d = DialectOf(im, ref->bus, deadline);
  if (!d.known) return MakeError(ErrorCode::kActionNotSupported, "the app did not name its toolkit in time");
  name = d.toolkit;
  version = d.version;
  return {};
}

// What SetText and InsertText both check first: the bus, the element, valid UTF-8; the reads that
// follow must not reuse what the snapshot read.
Error AtspiBackend::EditTarget(ElementId id, const std::string& text, Clock::time_point deadline, std::string& bus,
                               std::string& path) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  bus = ref->bus;
  path = ref->path;
  im.ForgetReadState();
  if (!g_utf8_validate(text.c_str(), static_cast<gssize>(text.size()), nullptr))
    return MakeError(ErrorCode::kInvalidArgument, "the text is not valid UTF-8");
  return {};
}

Error AtspiBackend::SetText(ElementId id, const std::string& text, Clock::time_point deadline) {
  Impl& im = *impl_;
  ObjRef target;
  if (Error e = EditTarget(id, text, deadline, target.bus, target.path)) return e;
  uint32_t bits = 0;
  Error err;
  if (!im.InterfacesOf(target, deadline, bits, err)) return err;
  if (!(bits & kHasEditableText))
    return MakeError(ErrorCode::kNotSettable, "the element has no editable text (AT-SPI EditableText)");
  Outcome o;
  std::string msg;
  VariantPtr r = im.CallSync(target.bus, target.path, kIfEditableText, "SetTextContents",
                             g_variant_new("(s)", text.c_str()), "(b)", deadline, o, msg);
  if (o != Outcome::kOk)
    return o == Outcome::kFailed ? MakeError(ErrorCode::kNotSettable, "SetTextContents failed: " + msg)
                                 : OutcomeError(o, target.bus, msg, static_cast<int>(im.callTimeout.count()));
  gboolean success = FALSE;
  g_variant_get(r.get(), "(b)", &success);
  if (!success) return MakeError(ErrorCode::kNotSettable, "the application refused the text (read-only field?)");
  return {};
}

Error AtspiBackend::SetNumber(ElementId id, double value, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const ObjRef target = *ref;
  im.ForgetReadState();
  uint32_t bits = 0;
  Error err;
  if (!im.InterfacesOf(target, deadline, bits, err)) return err;
  if (!(bits & kHasValue)) return MakeError(ErrorCode::kNotSettable, "the element has no value (AT-SPI Value)");
  Outcome o;
  std::string msg;
  VariantPtr r = im.CallSync(target.bus, target.path, kIfProperties, "Set",
                             g_variant_new("(ssv)", kIfValue, "CurrentValue", g_variant_new_double(value)), nullptr,
                             deadline, o, msg);
  if (o != Outcome::kOk)
    return o == Outcome::kFailed ? MakeError(ErrorCode::kNotSettable, "setting CurrentValue failed: " + msg)
                                 : OutcomeError(o, target.bus, msg, static_cast<int>(im.callTimeout.count()));
  return {};
}

Error AtspiBackend::Focus(ElementId id, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const ObjRef target = *ref;
  im.ForgetReadState();
  Outcome o;
  std::string msg;
  VariantPtr r = im.CallSync(target.bus, target.path, kIfComponent, "GrabFocus", nullptr, "(b)", deadline, o, msg);
  if (o != Outcome::kOk)
    return o == Outcome::kFailed ? MakeError(ErrorCode::kActionNotSupported, "the element cannot take focus: " + msg)
                                 : OutcomeError(o, target.bus, msg, static_cast<int>(im.callTimeout.count()));
  gboolean success = FALSE;
  g_variant_get(r.get(), "(b)", &success);
  if (!success) return MakeError(ErrorCode::kActionFailed, "the application refused to focus the element");
  return {};
}

Error AtspiBackend::InsertText(ElementId id, const std::string& text, Clock::time_point deadline) {
  Impl& im = *impl_;
  ObjRef target;
  if (Error e = EditTarget(id, text, deadline, target.bus, target.path)) return e;
  const int perCall = static_cast<int>(im.PerCall(deadline).count());
  uint32_t bits = 0;
  Error err;
  if (!im.InterfacesOf(target, deadline, bits, err)) return err;
  if (!(bits & kHasEditableText) || !(bits & kHasText))
    return MakeError(ErrorCode::kActionNotSupported,
                     "the element cannot insert text (no AT-SPI EditableText); type into it instead");
  StateSet st;
  if (!im.StatesOf(target, deadline, st, err)) return err;
  if (!st.Has(kStateEditable) || st.Has(kStateReadOnly))
    return MakeError(ErrorCode::kNotSettable, "the element is not editable (read-only)");
  Outcome o;
  std::string msg;
  VariantPtr cv = im.CallSync(target.bus, target.path, kIfProperties, "Get",
                              g_variant_new("(ss)", kIfText, "CharacterCount"), "(v)", deadline, o, msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  int64_t count = 0;
  {
    VariantPtr inner = UnwrapV(cv.get());
    if (!VariantToInt(inner.get(), count) || count < 0)
      return MakeError(ErrorCode::kActionFailed, "the element did not say how long its text is");
  }
  // The length is in bytes: atk-bridge hands it to atk_editable_text_insert_text, which GTK reads as
  // bytes (a character count cuts a multi-byte character off the end). Toolkits that count characters
  // take the whole string, since bytes >= characters.
  VariantPtr r =
      im.CallSync(target.bus, target.path, kIfEditableText, "InsertText",
                  g_variant_new("(isi)", gint32(count), text.c_str(), gint32(text.size())), "(b)", deadline, o, msg);
  if (o == Outcome::kFailed) return MakeError(ErrorCode::kDeliveryUncertain, "InsertText failed: " + msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  gboolean success = FALSE;
  g_variant_get(r.get(), "(b)", &success);
  if (!success) return MakeError(ErrorCode::kNotSettable, "the application refused to insert the text");
  return {};
}

Error AtspiBackend::WindowState(ElementId window, bool& active, Rect& extents, Clock::time_point deadline) {
  Impl& im = *impl_;
  active = false;
  extents = Rect{};
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(window);
  if (!ref) return im.Unknown(window);
  const ObjRef target = *ref;
  const int perCall = static_cast<int>(im.PerCall(deadline).count());
  StateSet st;
  Error err;
  if (!im.StatesOf(target, deadline, st, err)) return err;
  active = st.Has(kStateActive);
  Outcome o;
  std::string msg;
  // WINDOW coordinates (1): on Wayland the window's own size at (0,0) (Chromium adds a bogus offset to SCREEN).
  VariantPtr ev = im.CallSync(target.bus, target.path, kIfComponent, "GetExtents", g_variant_new("(u)", 1u), "((iiii))",
                              deadline, o, msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  extents = RectOf(ev.get());
  return {};
}

}  // namespace axsnap
