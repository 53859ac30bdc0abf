// Node reads: the attributes of many elements at once (ReadNodes, pipelined
// in two phases: role, states and interfaces first, then what depends on
// them), their extents alone (ReadFrames), and the secure-field decision that
// keeps a password's text unread.
//
// Calls per node (live): GetRole, GetState, GetInterfaces and
// Properties.GetAll(Accessible) (name, description, accessible id, help
// text, attributes, child count); then, by interface, Component.GetExtents,
// Action.GetActions (one call, all names), Value.CurrentValue, Text.CharacterCount (+
// GetText, + GetSelection on the focused element), Document.GetAttributes,
// Hyperlink.GetURI. A node whose ChildCount was 0 in a read moments ago is
// not asked for its children again. With the bulk cache (atspi_cache.cc), the
// first phase comes from GetItems.
//
// Follows at-spi2-core xml/: Accessible.xml (GetRole, GetState,
// GetInterfaces, GetAttributes, GetRelationSet and the Accessible
// properties), Component.xml, Action.xml, Value.xml, Text.xml, Document.xml,
// Hyperlink.xml; relation and state numbers from atspi-constants.h.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/secret_names.h"
#include "atspi_internal.h"

namespace axsnap {

// ---------------------------------------------------------------------------
// Node reads.

namespace {

constexpr int64_t kMaxTextChars = 10000;

// Object attributes that mark a field as a password: HTML autocomplete tokens
// current-password / new-password (Chromium exposes the attribute as
// "autocomplete"), or an input type of password ("text-input-type",
// "input-type"). `attrs` is an a{ss}.
bool AttributesSayPassword(GVariant* attrs) {
  if (!attrs || !g_variant_is_of_type(attrs, G_VARIANT_TYPE("a{ss}"))) return false;
  GVariantIter it;
  g_variant_iter_init(&it, attrs);
  const gchar* key = nullptr;
  const gchar* value = nullptr;
  while (g_variant_iter_next(&it, "{&s&s}", &key, &value)) {
    std::string k = key ? key : "", v = value ? value : "";
    for (auto& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((k == "autocomplete" || k == "html-autocomplete") &&
        (v.find("current-password") != std::string::npos || v.find("new-password") != std::string::npos))
      return true;
    if ((k == "text-input-type" || k == "input-type" || k == "type") && v == "password") return true;
  }
  return false;
}

struct NodeJob {
  ElementId id = 0;
  const ObjRef* ref = nullptr;
  const Dialect* dialect = nullptr;  // its app's (atspi_dialect.cc)
  NodeAttributes* out = nullptr;
  Error* err = nullptr;
  bool failed = false;

  int phase1Pending = 0;
  uint32_t role = 0;
  StateSet states;
  uint32_t ifaces = 0;
  bool haveRole = false, haveStates = false, haveIfaces = false;
  std::string name;
  VariantPtr attributes;        // a{ss} from the Accessible properties (GetAll), when given
  VariantPtr objectAttributes;  // GetAttributes, asked of text entries: wins over the properties' copy
  // What the text decision (issueText) still waits for: phase 2's own step, and
  // the properties' GetAll when it runs beside phase 2 (their Attributes may
  // make the field secure).
  int textWaits = 1;

  bool secure = false;  // decided in phase 2 (role, attributes, name), before any text is read

  GVariant* Attributes() const { return objectAttributes ? objectAttributes.get() : attributes.get(); }

  // Value sources, resolved at the end.
  std::optional<double> number;
  std::optional<double> step;         // Value.MinimumIncrement, when above 0
  std::optional<std::string> chosen;  // a list's or select's selected option (ChosenOption)
  std::optional<std::string> text;
  int64_t childCount = -1;  // from the Accessible properties, when given

  // Relations of a nameless control: the names of its LABELLED_BY and
  // DESCRIBED_BY targets (by slot, in the app's order), the labels' objects.
  // These are interned only when their names became the title (FinishNode):
  // a handle the result does not carry would never be released.
  std::vector<std::string> labelNames, describerNames;
  std::vector<ObjRef> labels;
  bool namedByLabels = false;
};

// GTK names a combo box by its chosen item when the app gave it no name (its
// accessible's get_name), so the name changes with every choice: a label
// beside it no longer names it (zenity's forms), and its identity changes.
// Such a name is the box's value, not its name (ChosenOption read it).
bool NamedByChoice(const NodeJob& job) {
  return job.chosen && !job.name.empty() && *job.chosen == job.name && RoleName(job.role) == "combo box";
}

// AtspiRelationType (atspi-constants.h).
constexpr uint32_t kRelationLabelledBy = 2;
constexpr uint32_t kRelationDescribedBy = 18;
constexpr size_t kMaxRelationTargets = 4;

// A control an agent must tell apart by name: without one it prints as a bare
// role, so its label is looked up through its relations (as screen readers do).
bool WantsRelationName(const NodeJob& job) {
  if (!job.name.empty()) return false;
  if (IsTextEntryRole(job.role) || IsCheckableRole(job.role)) return true;
  if (job.ifaces & (kHasEditableText | kHasValue)) return true;
  const std::string r = RoleName(job.role);
  return r == "combo box" || r == "slider" || r == "push button" || r == "list box" || r == "spin button" ||
         r == "table" || r == "tree table" || r == "tree" || r == "list";
}

// Names joined by a space, blank ones skipped.
std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (n.find_first_not_of(" \t\n") == std::string::npos) continue;
    if (!out.empty()) out.push_back(' ');
    out += n;
  }
  return out;
}

bool Fail(NodeJob& job, const Reply& r, int perCallMs) {
  if (r.outcome == Outcome::kOk || r.outcome == Outcome::kFailed) return false;
  if (!job.failed) {
    job.failed = true;
    *job.err = OutcomeError(r.outcome, job.ref->bus, r.message, perCallMs);
  }
  return true;
}

// Whether an HTML id names a password field: a word (split at - _ and case
// changes) password, passwd, pwd, passcode or pin. Pages hide autocomplete
// from AT-SPI (Chromium exposes only the id), so the id stands in for it.
bool IdSaysPassword(const std::string& id) {
  std::string spaced;
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    if (i > 0 && std::isupper(static_cast<unsigned char>(c)) && std::islower(static_cast<unsigned char>(id[i - 1])))
      spaced.push_back(' ');
    spaced.push_back(c == '-' || c == '_' || c == '.' ? ' ' : c);
  }
  if (NameSaysPassword(spaced)) return true;
  std::string word;
  for (size_t i = 0; i <= spaced.size(); ++i) {
    const char c = i < spaced.size() ? spaced[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      continue;
    }
    if (word == "passwd" || word == "pwd") return true;
    word.clear();
  }
  return false;
}

// A secure field: its text is never read, only its length.
bool IsSecureField(const NodeJob& job, bool nameHeuristic) {
  if (job.role == kRolePasswordText) return true;
  if (AttributesSayPassword(job.Attributes())) return true;
  if (!(IsTextEntryRole(job.role) || (job.ifaces & kHasEditableText))) return false;
  // The HTML id is markup, like autocomplete: not switched off with the name heuristic.
  std::string id;
  if (AttrString(job.Attributes(), "id", id) && IdSaysPassword(id)) return true;
  return nameHeuristic && NameSaysPassword(job.name);
}

// A table that creates its cells on demand and reaches them through Table
// (GTK3's tree view): ReadChildren may read only its rows on screen.
bool ManagesCells(const NodeJob& job) {
  if (!job.states.Has(kStateManagesDescendants)) return false;
  if ((job.ifaces & (kHasTable | kHasComponent)) != (kHasTable | kHasComponent)) return false;
  const std::string r = RoleName(job.role);
  return r == "table" || r == "tree table";
}

// A number as short as it can print and still be the app's number: Chromium
// keeps values as 32-bit floats (a 0.2 reads back as 0.20000000298023224), so
// the shortest decimal that is the same float is what the app holds; a step
// (MinimumIncrement) above 0 rounds to its own decimals, as the app shows it.
double ShownNumber(double v, std::optional<double> step) {
  if (!std::isfinite(v)) return v;
  auto shortest = [](double x) {
    const bool single = static_cast<double>(static_cast<float>(x)) == x;
    for (int digits = 1; digits <= 17; ++digits) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.*g", digits, x);
      const double back = std::strtod(buf, nullptr);
      if (back == x || (single && static_cast<float>(back) == static_cast<float>(x))) return back;
    }
    return x;
  };
  v = shortest(v);
  if (step && *step > 0 && std::isfinite(*step)) {
    const double s = shortest(*step);
    int decimals = 0;
    while (decimals < 10 && std::fabs(s * std::pow(10.0, decimals) - std::round(s * std::pow(10.0, decimals))) > 1e-9)
      ++decimals;
    const double scale = std::pow(10.0, decimals);
    v = std::round(v * scale) / scale;
  }
  return v;
}

// Whether text says the number (aria-valuetext "0.2" beside a value of 0.2): then it adds nothing.
bool SaysNumber(const std::string& text, double v) {
  char* end = nullptr;
  const double parsed = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return false;
  while (*end == ' ') ++end;
  return *end == '\0' && std::fabs(parsed - v) <= 1e-9 * std::max(1.0, std::fabs(v));
}

// A text field Chromium exposes without EditableText: EDITABLE on an entry's
// role or on a single- or multi-line element (contenteditable). The static
// texts inside a contenteditable are EDITABLE too, but neither line state.
bool EditableField(const NodeJob& job) {
  if (!job.states.Has(kStateEditable)) return false;
  return IsTextEntryRole(job.role) || job.states.Has(kStateSingleLine) || job.states.Has(kStateMultiLine);
}

// A list or select whose line says which option is chosen: a combo box that is
// not a text field, or a list box choosing one (a multi-selection shows on its items).
bool ChoosesOption(const NodeJob& job) {
  if (job.ifaces & (kHasValue | kHasEditableText)) return false;
  if (job.states.Has(kStateEditable) || job.states.Has(kStateMultiSelectable)) return false;
  const std::string r = RoleName(job.role);
  return r == "combo box" || r == "list box";
}

void FinishNode(NodeJob& job) {
  NodeAttributes& a = *job.out;
  a.role = RoleName(job.role);
  a.title = job.name;  // the accessible name, empty included (the renderer decides)
  if (job.name.empty()) a.title.reset();
  if (NamedByChoice(job)) a.title.reset();
  if (job.dialect)  // a GTK 4 label without text (an icon) names its button by its type name
    for (auto* names : {&job.labelNames, &job.describerNames})
      for (std::string& n : *names)
        if (IsTypeNameFallback(*job.dialect, n)) n.clear();
  if (job.name.empty()) {
    std::string label = JoinNames(job.labelNames);
    if (!label.empty()) {
      a.title = std::move(label);
      job.namedByLabels = true;
    }
  }
  if (!a.description) {
    std::string described = JoinNames(job.describerNames);
    if (!described.empty()) a.description = std::move(described);
  }
  const StateSet& s = job.states;
  States& st = a.states;
  st.enabled = s.Has(kStateEnabled);
  if (s.Has(kStateFocused)) st.focused = true;
  if (s.Has(kStateFocusable)) st.focusable = true;
  if (s.Has(kStateSelectable)) {
    st.selectable = true;
    st.selected = s.Has(kStateSelected);
  } else if (s.Has(kStateSelected)) {
    st.selected = true;
  }
  if (s.Has(kStateExpandable)) st.expanded = s.Has(kStateExpanded);
  // A toggle button is on when PRESSED (Chromium's aria-pressed) or CHECKED (GTK's toggle buttons).
  const bool on = s.Has(kStateChecked) || (job.role == kRoleToggleButton && s.Has(kStatePressed));
  if (s.Has(kStateIndeterminate) && (s.Has(kStateCheckable) || IsCheckableRole(job.role)))
    st.checked = 2;
  else if (s.Has(kStateCheckable) || s.Has(kStateChecked) || IsCheckableRole(job.role))
    st.checked = on ? 1 : 0;
  if (s.Has(kStateIconified)) st.minimized = true;
  if (job.secure) st.secure = true;
  if (s.Has(kStateRequired)) st.required = true;
  if (s.Has(kStateInvalidEntry)) st.invalid = true;
  if (s.Has(kStateReadOnly)) st.readonly = true;
  if (s.Has(kStateMultiLine)) st.multiline = true;
  if (s.Has(kStateEditable)) st.editable = true;
  if (s.Has(kStateModal)) st.modal = true;
  st.visible = s.Has(kStateShowing) && s.Has(kStateVisible);
  // GTK 4 presents a stack's pages that are not on screen, with a frame of no size.
  if (job.dialect && job.dialect->gtk4 && a.frame && a.frame->w == 0 && a.frame->h == 0) st.visible = false;
  if (s.Has(kStateHorizontal))
    a.orientation = "horizontal";
  else if (s.Has(kStateVertical))
    a.orientation = "vertical";

  if ((job.ifaces & kHasValue) && job.text && job.role == kRoleTableCell) {
    // A spreadsheet cell: what it shows (a number, a text, a formula's result); it is typed into, not set.
    a.valueType = "string";
    a.value = *job.text;
  } else if (job.ifaces & kHasValue) {
    // GTK sets Value through AT-SPI; progress and level bars only display one.
    a.settable = job.role != kRoleProgressBar && job.role != kRoleLevelBar && !s.Has(kStateReadOnly);
    a.valueType = "number";
    if (job.number) a.value = ShownNumber(*job.number, job.step);
    // What the app shows for the number (aria-valuetext), where it says more than the number.
    std::string shown;
    if (AttrString(job.Attributes(), "valuetext", shown) && !shown.empty() &&
        !(job.number && SaysNumber(shown, *job.number)))
      a.valueText = shown;
  } else if ((job.ifaces & kHasEditableText) || EditableField(job)) {
    // Settable without EditableText too: the value is then set by focus, select all and typing (lib/session/act).
    a.settable = !s.Has(kStateReadOnly);
    a.valueType = "string";
    if (!job.secure && job.text) a.value = *job.text;
  } else if (job.chosen) {
    a.valueType = "string";
    a.value = *job.chosen;
  } else if (job.text && !job.secure) {
    a.valueType = "string";
    a.value = *job.text;
  }

  if (job.Attributes()) {
    std::string placeholder;
    if (AttrString(job.Attributes(), "placeholder-text", placeholder) && !placeholder.empty())
      a.placeholder = placeholder;
  }
}

// The chosen option of a list or select, by name: the element's own Selection
// (a list box, GTK's combo box), else its first child's (Chromium's <select>
// keeps its options in a popup menu under the combo box).
void ReadChosenOption(Batch& b, NodeJob* j) {
  auto nameOf = [&b, j](const std::string& bus, const std::string& path) {
    if (path == kNullPath) return;
    b.GetProperty(bus, path, kIfAccessible, "Name", [j](const Reply& nr) {
      if (nr.outcome != Outcome::kOk || !g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING)) return;
      std::string name = g_variant_get_string(nr.value, nullptr);
      if (!name.empty()) j->chosen = std::move(name);
    });
  };
  auto selectedOf = [&b, nameOf](const std::string& bus, const std::string& path, std::function<void()> otherwise) {
    b.Call(bus, path, kIfSelection, "GetSelectedChild", g_variant_new("(i)", 0), "((so))",
           [nameOf, otherwise](const Reply& r) {
             if (r.outcome != Outcome::kOk) return otherwise ? otherwise() : void();
             const gchar *cb = nullptr, *cp = nullptr;
             g_variant_get(r.value, "((&s&o))", &cb, &cp);
             if (cp && std::string(cp) != kNullPath) return nameOf(cb, cp);
             if (otherwise) otherwise();
           });
  };
  const std::string bus = j->ref->bus, path = j->ref->path;
  auto viaChild = [&b, bus, path, selectedOf]() {
    b.Call(bus, path, kIfAccessible, "GetChildAtIndex", g_variant_new("(i)", 0), "((so))",
           [selectedOf](const Reply& r) {
             // An option that cannot be read leaves the line without a value: never the element's error.
             if (r.outcome != Outcome::kOk) return;
             const gchar *cb = nullptr, *cp = nullptr;
             g_variant_get(r.value, "((&s&o))", &cb, &cp);
             if (cp && std::string(cp) != kNullPath) selectedOf(cb, cp, nullptr);
           });
  };
  if (j->ifaces & kHasSelection)
    selectedOf(bus, path, RoleName(j->role) == "combo box" ? std::function<void()>(viaChild) : nullptr);
  else if (RoleName(j->role) == "combo box")
    viaChild();
}

}  // namespace

Error AtspiBackend::ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out,
                              std::vector<Error>& errs, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.assign(ids.size(), NodeAttributes{});
  errs.assign(ids.size(), Error{});
  if (Error e = Ready(deadline)) return e;
  ContextScope scope(im.ctx.get());

  std::vector<NodeJob> jobs(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    jobs[i].id = ids[i];
    jobs[i].out = &out[i];
    jobs[i].err = &errs[i];
    jobs[i].ref = im.Lookup(ids[i]);
    if (!jobs[i].ref) {
      jobs[i].failed = true;
      errs[i] = im.Unknown(ids[i]);
    }
  }
  EnsurePeersFor(im, ids, deadline);
  for (NodeJob& job : jobs)
    if (job.ref) job.dialect = &DialectOf(im, job.ref->bus, deadline);

  Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
  b.UsePeers(&im.peers);
  const int perCall = b.PerCallMs();

  // Text: decided once role, name and object attributes are known, so a
  // secure field's text is never asked for.
  auto issueText = [&b, perCall, secureNames = im.secureNames](NodeJob* j) {
    if (j->failed) return;
    j->secure = IsSecureField(*j, secureNames);
    if (!(j->ifaces & kHasText)) return;
    const bool secure = j->secure;
    const bool editable = (j->ifaces & kHasEditableText) || j->states.Has(kStateEditable);
    // Keep the text where it adds to the name: editable text, or text without a name.
    // Containers (Chromium's panels, sections, lists) also implement Text, as
    // U+FFFC placeholders for their children: only text-bearing roles qualify.
    const std::string roleName = RoleName(j->role);
    const bool textRole = roleName == "static" || roleName == "label" || roleName == "paragraph" ||
                          roleName == "text" || roleName == "heading" || roleName == "caption" ||
                          roleName == "terminal" || roleName == "entry";
    // A spreadsheet cell (LibreOffice) has Value too, 0 for a cell of text: its text is what it shows.
    const bool sheetCell = roleName == "table cell" && (j->ifaces & kHasValue);
    const bool wantText =
        !secure && (sheetCell || (!(j->ifaces & kHasValue) && (editable || (j->name.empty() && textRole))));
    const bool wantSelection = !secure && j->states.Has(kStateFocused);
    // The count alone matters only for a secure field (whether it holds anything); Chromium
    // implements Text on every element, so asking everywhere would cost a call per element.
    if (!wantText && !wantSelection && !secure) return;
    b.GetProperty(j->ref->bus, j->ref->path, kIfText, "CharacterCount",
                  [j, perCall, wantText, wantSelection, editable, sheetCell, &b](const Reply& r) {
                    if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
                    int64_t count = 0;
                    if (!VariantToInt(r.value, count) || count < 0) return;
                    j->out->charCount = count;
                    if (wantText) {
                      if (count == 0) {
                        if (editable || sheetCell) j->text = std::string();
                      } else {
                        b.Call(j->ref->bus, j->ref->path, kIfText, "GetText",
                               g_variant_new("(ii)", 0, gint32(std::min(count, kMaxTextChars))), "(s)",
                               [j, perCall](const Reply& tr) {
                                 if (Fail(*j, tr, perCall) || tr.outcome != Outcome::kOk) return;
                                 const gchar* s = nullptr;
                                 g_variant_get(tr.value, "(&s)", &s);
                                 j->text = s ? s : "";
                               });
                      }
                    }
                    if (wantSelection && count > 0) {
                      b.Call(j->ref->bus, j->ref->path, kIfText, "GetSelection", g_variant_new("(i)", 0), "(ii)",
                             [j, perCall, &b](const Reply& sr) {
                               if (Fail(*j, sr, perCall) || sr.outcome != Outcome::kOk) return;
                               gint32 start = 0, end = 0;
                               g_variant_get(sr.value, "(ii)", &start, &end);
                               if (end <= start || start < 0) return;
                               end = gint32(std::min<int64_t>(end, int64_t(start) + kMaxTextChars));
                               b.Call(j->ref->bus, j->ref->path, kIfText, "GetText", g_variant_new("(ii)", start, end),
                                      "(s)", [j, perCall](const Reply& tr) {
                                        if (Fail(*j, tr, perCall) || tr.outcome != Outcome::kOk) return;
                                        const gchar* s = nullptr;
                                        g_variant_get(tr.value, "(&s)", &s);
                                        if (s && *s) j->out->selectedText = s;
                                      });
                             });
                    }
                  });
  };
  // The text decision runs once everything it reads has come (NodeJob::textWaits).
  auto textStep = [&issueText](NodeJob* j) {
    if (--j->textWaits == 0) issueText(j);
  };

  // Phase 2: what depends on role, states and interfaces.
  auto phase2 = [&](NodeJob& job) {
    if (job.failed) return;
    // Read as every toolkit means them, before anything decides by them.
    if (job.dialect) {
      AdaptStates(job.states, *job.dialect);
      if (IsTypeNameFallback(*job.dialect, job.name)) job.name.clear();
    }
    const std::string& busName = job.ref->bus;
    const std::string& path = job.ref->path;
    NodeJob* j = &job;
    // Extents cost GTK an X round trip each, the largest share of a walk: not
    // asked (outside live reads) where no line can use them: a hidden element
    // never prints, and a nameless wrapper with nothing to act on is elided or
    // printed with its children's union (lib/render/plan.ts).
    const bool hidden = !(job.states.Has(kStateShowing) && job.states.Has(kStateVisible));
    const bool wrapper = IsWrapperRole(job.role) && job.name.empty() && !job.out->description &&
                         !(job.ifaces & (kHasAction | kHasValue | kHasEditableText));
    if ((job.ifaces & kHasComponent) && (im.live || !(hidden || wrapper))) {
      b.Call(busName, path, kIfComponent, "GetExtents", g_variant_new("(u)", im.CoordType(busName)), "((iiii))",
             [j, perCall](const Reply& r) {
               if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
               j->out->frame = RectOf(r.value);
             });
    }
    // A hidden element never prints, so nothing acts on it by its line: its action names and value are
    // not asked either (outside live reads). LibreOffice lists every item of every closed menu, about
    // 700 of Calc's 1,100 elements, each one GetActions and one CurrentValue.
    const bool unprinted = hidden && !im.live;
    if ((job.ifaces & kHasAction) && !unprinted) {
      // One GetActions call for all names (localized, e.g. "Click"; matching is
      // case-insensitive everywhere). NActions + GetName(i) would cost one call
      // per action, the largest share of a walk's calls.
      // Chromium leaves the localized names empty: those few are asked for
      // again by index (GetName gives the raw name, "press").
      b.Call(busName, path, kIfAction, "GetActions", nullptr, "(a(sss))", [j, perCall, &b](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        VariantPtr arr = AdoptVariant(g_variant_get_child_value(r.value, 0));
        auto names = std::make_shared<std::vector<std::string>>();
        std::vector<size_t> missing;
        GVariantIter it;
        g_variant_iter_init(&it, arr.get());
        const gchar *name = nullptr, *desc = nullptr, *keys = nullptr;
        while (g_variant_iter_next(&it, "(&s&s&s)", &name, &desc, &keys)) {
          if (!name || !*name) missing.push_back(names->size());
          names->emplace_back(ActionNameOf(name ? name : ""));
          if (names->size() >= 64) break;
        }
        auto publish = [j, names]() {
          for (auto& s : *names)
            if (!s.empty()) j->out->actions.push_back(std::move(s));
        };
        if (missing.empty()) return publish();
        auto left = std::make_shared<size_t>(missing.size());
        for (size_t k : missing) {
          b.Call(j->ref->bus, j->ref->path, kIfAction, "GetName", g_variant_new("(i)", gint32(k)), "(s)",
                 [j, perCall, names, left, k, publish](const Reply& gr) {
                   if (!Fail(*j, gr, perCall) && gr.outcome == Outcome::kOk) {
                     const gchar* s = nullptr;
                     g_variant_get(gr.value, "(&s)", &s);
                     (*names)[k] = ActionNameOf(s ? s : "");
                   }
                   if (--*left == 0) publish();
                 });
        }
      });
    }
    if ((job.ifaces & kHasValue) && !unprinted) {
      b.GetProperty(busName, path, kIfValue, "CurrentValue", [j, perCall](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        double d = 0;
        if (VariantToDouble(r.value, d)) j->number = d;
      });
      b.GetProperty(busName, path, kIfValue, "MinimumIncrement", [j, perCall](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        double d = 0;
        if (VariantToDouble(r.value, d) && d > 0) j->step = d;
      });
    }
    if (ChoosesOption(job)) ReadChosenOption(b, j);
    // Object attributes of text entries (secure) and of values (aria-valuetext).
    const bool entry = IsTextEntryRole(job.role) || (job.ifaces & (kHasEditableText | kHasValue));
    if (entry) {
      // Object attributes first (autocomplete, input type, id): they may make the field secure. Asked even
      // when GetAll gave an Attributes property: Chromium's is not the object attributes (it lacks the id).
      b.Call(busName, path, kIfAccessible, "GetAttributes", nullptr, "(a{ss})",
             [j, perCall, &textStep](const Reply& r) {
               if (Fail(*j, r, perCall)) return;
               if (r.outcome == Outcome::kOk) j->objectAttributes = AdoptVariant(g_variant_get_child_value(r.value, 0));
               textStep(j);
             });
    } else {
      textStep(j);
    }
    if (WantsRelationName(job)) {
      // LABELLED_BY and DESCRIBED_BY targets; their names from the bulk cache when it has them.
      b.Call(busName, path, kIfAccessible, "GetRelationSet", nullptr, "(a(ua(so)))",
             [j, perCall, &b, &im](const Reply& r) {
               if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
               VariantPtr arr = AdoptVariant(g_variant_get_child_value(r.value, 0));
               GVariantIter it;
               g_variant_iter_init(&it, arr.get());
               guint32 type = 0;
               GVariantIter* targets = nullptr;
               while (g_variant_iter_next(&it, "(ua(so))", &type, &targets)) {
                 const bool label = type == kRelationLabelledBy;
                 const bool describer = type == kRelationDescribedBy;
                 const gchar *tBus = nullptr, *tPath = nullptr;
                 while ((label || describer) && g_variant_iter_next(targets, "(&s&o)", &tBus, &tPath)) {
                   std::vector<std::string>& names = label ? j->labelNames : j->describerNames;
                   if (names.size() >= kMaxRelationTargets) continue;
                   const std::string targetBus = tBus;
                   const std::string targetPath = tPath;
                   if (targetPath == "/org/a11y/atspi/null") continue;
                   const size_t slot = names.size();
                   names.emplace_back();
                   if (label) j->labels.push_back({targetBus, targetPath});
                   auto cached = im.bulk.find(targetBus);
                   if (cached != im.bulk.end()) {
                     auto item = cached->second.items.find(targetPath);
                     if (item != cached->second.items.end()) {
                       names[slot] = item->second.name;
                       continue;
                     }
                   }
                   b.GetProperty(targetBus, targetPath, kIfAccessible, "Name", [j, label, slot](const Reply& nr) {
                     // A label that cannot be read only leaves the name empty: never the control's error.
                     if (nr.outcome != Outcome::kOk || !g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING)) return;
                     (label ? j->labelNames : j->describerNames)[slot] = g_variant_get_string(nr.value, nullptr);
                   });
                 }
                 g_variant_iter_free(targets);
               }
             });
    }
    // Chromium puts Document on every element of a page: only documents carry a URL worth a call.
    if ((job.ifaces & kHasDocument) && IsDocumentRole(job.role)) {
      b.Call(busName, path, kIfDocument, "GetAttributes", nullptr, "(a{ss})", [j, perCall](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        VariantPtr attrs = AdoptVariant(g_variant_get_child_value(r.value, 0));
        std::string url;
        if ((AttrString(attrs.get(), "DocURL", url) || AttrString(attrs.get(), "URI", url)) && !url.empty())
          j->out->url = url;
      });
    }
    if (job.role == kRoleLink && (job.ifaces & kHasHyperlink)) {
      b.Call(busName, path, kIfHyperlink, "GetURI", g_variant_new("(i)", 0), "(s)", [j, perCall](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        const gchar* s = nullptr;
        g_variant_get(r.value, "(&s)", &s);
        if (s && *s) j->out->url = s;
      });
    }
  };

  auto phase1Done = [&](NodeJob& job) {
    if (--job.phase1Pending == 0 && !job.failed) phase2(job);
  };

  // Name, Description, AccessibleId, HelpText (newer bridges), Attributes
  // (atk-bridge) in one call. Mostly asked after every other call of the
  // batch (issuePhase1), so that the app answers first the calls the walk's
  // next steps depend on.
  // No GetAll (refused, or never sent: Impl::getAllUnsafe): the two properties that matter, one by one.
  auto byOne = [&](NodeJob* j) {
    j->phase1Pending += 2;
    b.GetProperty(j->ref->bus, j->ref->path, kIfAccessible, "Name", [j, perCall, &phase1Done](const Reply& nr) {
      if (!Fail(*j, nr, perCall) && nr.outcome == Outcome::kOk && g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING))
        j->name = g_variant_get_string(nr.value, nullptr);
      phase1Done(*j);
    });
    b.GetProperty(j->ref->bus, j->ref->path, kIfAccessible, "Description", [j, perCall, &phase1Done](const Reply& dr) {
      if (!Fail(*j, dr, perCall) && dr.outcome == Outcome::kOk &&
          g_variant_is_of_type(dr.value, G_VARIANT_TYPE_STRING)) {
        std::string s = g_variant_get_string(dr.value, nullptr);
        if (!s.empty()) j->out->description = s;
      }
      phase1Done(*j);
    });
    phase1Done(*j);
  };

  auto issueGetAll = [&](NodeJob& job, bool needBasics) {
    NodeJob* j = &job;
    if (im.GetAllUnsafe(job.ref->bus)) {
      if (needBasics) return byOne(j);
      return textStep(j);
    }
    b.Call(job.ref->bus, job.ref->path, kIfProperties, "GetAll", g_variant_new("(s)", kIfAccessible), "(a{sv})",
           [j, perCall, needBasics, &phase1Done, &textStep, &byOne, &im](const Reply& r) {
             auto done = [&]() { needBasics ? phase1Done(*j) : textStep(j); };
             if (Fail(*j, r, perCall)) return done();
             if (r.outcome == Outcome::kOk) {
               VariantPtr dict = AdoptVariant(g_variant_get_child_value(r.value, 0));
               std::string s;
               if (needBasics && DictString(dict.get(), "Name", s)) j->name = s;
               if (needBasics && DictString(dict.get(), "Description", s) && !s.empty()) j->out->description = s;
               // Ids and help only from an app still probed or known to give them (Impl::idProbe).
               const bool keepIds = im.WantsGetAll(j->ref->bus);
               auto& probe = im.idProbe[j->ref->bus];
               probe.reads++;
               if (DictString(dict.get(), "HelpText", s) && !s.empty()) {
                 probe.seen = true;
                 if (keepIds) j->out->help = s;
               }
               if (DictString(dict.get(), "AccessibleId", s) && !s.empty()) {
                 probe.seen = true;
                 if (keepIds) j->out->identifier = s;
               }
               VariantPtr childCount = AdoptVariant(g_variant_lookup_value(dict.get(), "ChildCount", nullptr));
               int64_t n = -1;
               if (childCount && VariantToInt(childCount.get(), n)) j->childCount = n;
               VariantPtr attrs =
                   AdoptVariant(g_variant_lookup_value(dict.get(), "Attributes", G_VARIANT_TYPE("a{ss}")));
               if (attrs) j->attributes = std::move(attrs);
               return done();
             }
             if (!needBasics) return done();
             byOne(j);
           });
  };

  std::vector<std::pair<NodeJob*, bool>> propertyReads;  // GetAll to ask, after the rest (issueGetAll)
  auto issuePhase1 = [&](NodeJob& job, bool needBasics) {
    NodeJob* j = &job;
    const std::string& busName = job.ref->bus;
    const std::string& path = job.ref->path;
    if (!needBasics && !im.WantsGetAll(busName)) {
      // Role, name, states and interfaces came with the bulk read; nothing else of phase 1 is asked.
      job.phase1Pending = 1;
      return phase1Done(job);
    }
    job.phase1Pending = needBasics ? 4 : 1;
    // Deferred while the probe counts answers (all of them then in the jobs'
    // order) or when only ids and help are wanted; in place otherwise.
    if (!needBasics || im.Probing(busName))
      propertyReads.emplace_back(&job, needBasics);
    else
      issueGetAll(job, needBasics);
    if (!needBasics) {
      // With the basics from the bulk read, GetAll brings only what phase 2
      // does not need (identifier, help, child count), except the Attributes
      // the text decision reads: phase 2 goes out now, and only that decision
      // waits for it.
      job.textWaits = 2;
      return phase2(job);
    }
    {
      b.Call(busName, path, kIfAccessible, "GetRole", nullptr, "(u)", [j, perCall, &phase1Done](const Reply& r) {
        if (!Fail(*j, r, perCall)) {
          if (r.outcome == Outcome::kOk) {
            g_variant_get(r.value, "(u)", &j->role);
            j->haveRole = true;
          } else if (!j->failed) {
            j->failed = true;
            *j->err = MakeError(ErrorCode::kElementGone, "not an accessible object: " + r.message);
          }
        }
        phase1Done(*j);
      });
      b.Call(busName, path, kIfAccessible, "GetState", nullptr, "(au)", [j, perCall, &phase1Done](const Reply& r) {
        if (!Fail(*j, r, perCall) && r.outcome == Outcome::kOk) {
          VariantPtr au = AdoptVariant(g_variant_get_child_value(r.value, 0));
          j->states = StatesFrom(au.get());
          j->haveStates = true;
        }
        phase1Done(*j);
      });
      b.Call(busName, path, kIfAccessible, "GetInterfaces", nullptr, "(as)", [j, perCall, &phase1Done](const Reply& r) {
        if (!Fail(*j, r, perCall) && r.outcome == Outcome::kOk) {
          VariantPtr as = AdoptVariant(g_variant_get_child_value(r.value, 0));
          j->ifaces = IfaceBits(as.get());
          j->haveIfaces = true;
        }
        phase1Done(*j);
      });
    }
  };

  // Bulk: one GetItems per app for role/name/description/states/interfaces.
  std::unordered_map<std::string, std::vector<NodeJob*>> byApp;
  for (NodeJob& job : jobs)
    if (!job.failed) byApp[job.ref->bus].push_back(&job);

  // Role, name, description, states and interfaces from the app's bulk
  // snapshot when it holds the element; read one by one otherwise.
  std::unordered_map<std::string, const BulkSnapshot*> snaps;
  for (auto& [busName, group] : byApp) {
    const BulkSnapshot* snap = nullptr;
    if (im.useBulk && !im.live) {
      auto kept = im.bulk.find(busName);
      if (kept != im.bulk.end() && im.BulkFresh(busName, kept->second))
        snap = &kept->second;
      else if (group.size() >= 4)  // a lone element is cheaper read live than a whole bulk read
        snap = FreshBulk(im, busName, deadline);
    }
    snaps[busName] = snap;
  }
  for (auto& [busName, group] : byApp) {
    const BulkSnapshot* snap = snaps[busName];
    for (NodeJob* j : group) {
      const CacheItem* item = nullptr;
      if (snap)
        if (auto it = snap->items.find(j->ref->path); it != snap->items.end()) item = &it->second;
      if (!item) {
        issuePhase1(*j, true);
        continue;
      }
      const CacheItem& c = *item;
      j->role = c.role;
      j->name = c.name;
      if (*c.description) j->out->description = c.description;
      j->states = c.states;
      j->ifaces = snap->IfacesOf(c);
      j->childCount = c.childCount;
      j->haveRole = j->haveStates = j->haveIfaces = true;
      issuePhase1(*j, false);  // identifier, help, attributes when the app gives them; then phase 2
    }
  }
  for (auto& [job, needBasics] : propertyReads) issueGetAll(*job, needBasics);

  b.Run();
  if (b.Abandoned()) {
    for (NodeJob& job : jobs) {
      if (job.failed) continue;
      job.failed = true;
      *job.err = MakeError(ErrorCode::kTimeout, "the deadline passed before " + job.ref->bus + " answered");
    }
  }

  size_t okCount = 0;
  Error firstError;
  const auto readAt = Clock::now();
  for (NodeJob& job : jobs) {
    if (job.failed) {
      if (!firstError) firstError = *job.err;
      if (job.ref) im.countSeen.erase(job.id);
      continue;
    }
    if (job.childCount >= 0)
      im.countSeen[job.id] = {job.childCount, readAt};
    else
      im.countSeen.erase(job.id);
    if (!job.haveRole) {
      job.failed = true;
      *job.err = MakeError(ErrorCode::kInternal, "the role could not be read");
      continue;
    }
    FinishNode(job);
    if (job.namedByLabels)
      for (const ObjRef& label : job.labels) job.out->labelledBy.push_back(im.Intern(label.bus, label.path));
    if (ManagesCells(job))
      im.managesCells.insert(job.id);
    else
      im.managesCells.erase(job.id);
    ++okCount;
  }
  if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  if (okCount == 0 && !ids.empty() && firstError.code == ErrorCode::kTimeout) return firstError;
  return {};
}

Error AtspiBackend::ReadFrames(const std::vector<ElementId>& ids, std::vector<std::optional<Rect>>& out,
                               Clock::time_point deadline) {
  Impl& im = *impl_;
  out.assign(ids.size(), std::nullopt);
  if (Error e = Ready(deadline)) return e;
  ContextScope scope(im.ctx.get());
  EnsurePeersFor(im, ids, deadline);
  Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
  b.UsePeers(&im.peers);
  for (size_t i = 0; i < ids.size(); ++i) {
    const ObjRef* ref = im.Lookup(ids[i]);
    if (!ref) continue;
    b.Call(ref->bus, ref->path, kIfComponent, "GetExtents", g_variant_new("(u)", im.CoordType(ref->bus)), "((iiii))",
           [&out, i](const Reply& r) {
             if (r.outcome == Outcome::kOk) out[i] = RectOf(r.value);
           });
  }
  b.Run();
  if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  return {};
}
}  // namespace axsnap
