// Toolkit dialects: what an app's toolkit means by the states and names it
// reports, learnt once per app from its root (Application.ToolkitName and
// Version) and applied where a read takes states and names in, so the rest of
// the backend reads every toolkit the same way.
//
// GTK 4 (gtk/a11y/gtkatspicontext.c, collect_states and the Name property,
// as of 4.8; seen the same on 4.8.3's widget factory, Files, Text Editor and
// Calculator): every widget it presents is VISIBLE, and one it hides is not
// presented at all (not a child); SHOWING is set on windows only; SENSITIVE
// means "not disabled" and ENABLED is never set; a stack's pages that are not
// on screen are presented with a frame of no size; a widget without an
// accessible label is named by its type name (G_OBJECT_TYPE_NAME:
// "GtkImage", "AdwGizmo", "NautilusGridCell"). GTK 3 (atk-bridge) and
// Chromium set ENABLED and SHOWING themselves and are read as they are.
//
// Follows at-spi2-core xml/Application.xml (ToolkitName, Version) and
// atspi-constants.h (state numbers).

#include <cctype>
#include <string>

#include "atspi_internal.h"

namespace axsnap {
namespace atspi {

namespace {

int MajorVersion(const std::string& version) {
  int major = 0;
  size_t i = 0;
  for (; i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])); ++i)
    major = major * 10 + (version[i] - '0');
  return i == 0 ? -1 : major;
}

bool SameLetters(const std::string& a, const char* b) {
  size_t i = 0;
  for (; i < a.size() && b[i]; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return i == a.size() && !b[i];
}

}  // namespace

Dialect DialectFrom(const std::string& toolkitName, const std::string& version) {
  Dialect d;
  d.known = true;
  d.gtk4 = SameLetters(toolkitName, "GTK") && MajorVersion(version) >= 4;
  d.qt = SameLetters(toolkitName, "Qt");
  d.toolkit = toolkitName;
  d.version = version;
  return d;
}

const Dialect& DialectOf(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline) {
  auto it = im.dialects.find(busName);
  if (it != im.dialects.end()) return it->second;
  static const Dialect kUnknown;
  // Two Gets, never GetAll: Qt 5's bridge crashes the app on Properties.GetAll (Impl::GetAllUnsafe).
  std::string got[2];
  const char* props[2] = {"ToolkitName", "Version"};
  for (int i = 0; i < 2; i++) {
    Outcome o;
    std::string msg;
    VariantPtr r = im.CallSync(busName, kRootPath, kIfProperties, "Get",
                               g_variant_new("(ss)", kIfApplication, props[i]), "(v)", deadline, o, msg);
    // No answer in time: unknown for this read, asked again by the next one. An error reply is an answer.
    if (o == Outcome::kNoReply || o == Outcome::kDeadline || o == Outcome::kBusClosed) return kUnknown;
    if (o != Outcome::kOk) continue;
    VariantPtr inner = UnwrapV(r.get());
    if (inner && g_variant_is_of_type(inner.get(), G_VARIANT_TYPE_STRING))
      got[i] = g_variant_get_string(inner.get(), nullptr);
  }
  const std::string& name = got[0];
  const std::string& version = got[1];
  return im.dialects.emplace(busName, DialectFrom(name, version)).first->second;
}

void AdaptStates(StateSet& s, const Dialect& d) {
  if (!d.gtk4) return;
  if (s.Has(kStateSensitive)) s.Set(kStateEnabled);
  if (s.Has(kStateVisible)) s.Set(kStateShowing);
}

bool IsTypeNameFallback(const Dialect& d, const std::string& name) {
  if (!d.gtk4 || name.size() < 4) return false;
  // A GType name: one identifier, a capital first and at least one more ("GtkImage"); a label's text with
  // a space, a digit first or no second capital is kept ("Sidebar", "Content View", "checkbutton").
  if (!std::isupper(static_cast<unsigned char>(name[0]))) return false;
  int capitals = 0;
  bool lower = false;
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (!std::isalnum(c) && ch != '_') return false;
    if (std::isupper(c)) ++capitals;
    if (std::islower(c)) lower = true;
  }
  return capitals >= 2 && lower;
}

}  // namespace atspi
}  // namespace axsnap
