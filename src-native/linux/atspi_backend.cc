// AT-SPI over GDBus. See atspi_backend.h for the contract.
//
// Being split into one file per job (atspi_internal.h lists them); the parts
// still here are marked with the file they move to.

#include <algorithm>
#include <string>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {

AtspiBackend::AtspiBackend() : impl_(new Impl) {}
AtspiBackend::~AtspiBackend() {
  ContextScope scope(impl_->ctx.get());
  impl_->Disconnect();
}

bool AtspiBackend::Connected() const { return impl_->bus && !g_dbus_connection_is_closed(impl_->bus.get()); }
void AtspiBackend::SetCallTimeout(std::chrono::milliseconds timeout) {
  impl_->callTimeout = std::max(timeout, std::chrono::milliseconds(1));
}
void AtspiBackend::SetUseBulkCache(bool on) { impl_->useBulk = on; }
void AtspiBackend::InvalidateBulkCache() { impl_->ForgetReadState(); }
size_t AtspiBackend::HandleCount() const { return impl_->refById.size(); }
uint64_t AtspiBackend::CallCount() const { return impl_->stats.calls; }
void AtspiBackend::ResetReadStats() { impl_->stats.kinds.clear(); }
std::vector<ReadStat> AtspiBackend::TakeReadStats() {
  std::vector<ReadStat> out;
  for (auto& e : impl_->stats.kinds) out.push_back(std::move(e.second));
  impl_->stats.kinds.clear();
  std::sort(out.begin(), out.end(), [](const ReadStat& a, const ReadStat& b) { return a.ms > b.ms; });
  return out;
}

bool AtspiBackend::Describe(ElementId id, std::string& busName, std::string& objectPath) const {
  const ObjRef* ref = impl_->Lookup(id);
  if (!ref) return false;
  busName = ref->bus;
  objectPath = ref->path;
  return true;
}

ElementId AtspiBackend::InternForeign(const std::string& busName, const std::string& path) {
  return impl_->Intern(busName, path);
}

double AtspiBackend::Scale(const WindowInfo&) { return 1.0; }

namespace {
Error NotHere() {
  return MakeError(ErrorCode::kInternal, "not implemented in AtspiBackend; the X11 layer provides it");
}
}  // namespace

Error AtspiBackend::Capture(const WindowInfo&, std::vector<uint8_t>&, int&, int&, Rect&, Clock::time_point) {
  return NotHere();
}
Error AtspiBackend::Pointer(const WindowInfo&, const PointerEvent&, Clock::time_point) { return NotHere(); }
Error AtspiBackend::Keys(const WindowInfo&, const std::string&, Clock::time_point) { return NotHere(); }
Error AtspiBackend::TypeText(const WindowInfo&, const std::string&, Clock::time_point, size_t& typed) {
  typed = 0;
  return NotHere();
}

void AtspiBackend::SetLiveReads(bool live) { impl_->live = live; }
void AtspiBackend::SetSecureNameHeuristic(bool on) { impl_->secureNames = on; }

void AtspiBackend::Release(const std::vector<ElementId>& ids) {
  Impl& im = *impl_;
  for (ElementId id : ids) {
    auto it = im.refById.find(id);
    if (it == im.refById.end()) continue;
    std::string key = it->second.bus;
    key.push_back('\n');
    key += it->second.path;
    im.idByKey.erase(key);
    im.refById.erase(it);
    im.countSeen.erase(id);
    im.managesCells.erase(id);
  }
}

// ---------------------------------------------------------------------------
// Change events (atspi_events.h): Watch / WaitEvents / Unwatch.

Error AtspiBackend::Watch(const AppInfo& app, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  if (im.events.Watching(app.pid, im.bus.get())) {
    im.events.Relearn(app.pid, deadline);
    return {};
  }
  // The app's unique name on the bus: from its element, else where a listing last found its pid.
  std::string busName;
  if (const ObjRef* ref = im.Lookup(app.element)) {
    busName = ref->bus;
  } else if (auto it = im.appByPid.find(app.pid); it != im.appByPid.end()) {
    busName = it->second.first;
  }
  if (busName.empty())
    return MakeError(ErrorCode::kAppNotFound,
                     "app pid " + std::to_string(app.pid) + " is not known on the accessibility bus (list apps first)");
  return im.events.Watch(im.bus.get(), im.ctx.get(), app.pid, busName, deadline);
}

Error AtspiBackend::WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) {
  return impl_->events.Wait(impl_->ctx.get(), pid, sinceStamp, until, out);
}

void AtspiBackend::Unwatch(int64_t pid) {
  ContextScope scope(impl_->ctx.get());
  impl_->events.Unwatch(pid);
}
}  // namespace axsnap

// ===== to move to atspi_nodes.cc

#include <algorithm>
#include <cctype>
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

void FinishNode(NodeJob& job) {
  NodeAttributes& a = *job.out;
  a.role = RoleName(job.role);
  a.title = job.name;  // the accessible name, empty included (the renderer decides)
  if (job.name.empty()) a.title.reset();
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
  if (s.Has(kStateIndeterminate) && (s.Has(kStateCheckable) || IsCheckableRole(job.role)))
    st.checked = 2;
  else if (s.Has(kStateCheckable) || s.Has(kStateChecked) || IsCheckableRole(job.role))
    st.checked = s.Has(kStateChecked) ? 1 : 0;
  if (s.Has(kStateIconified)) st.minimized = true;
  if (job.secure) st.secure = true;
  if (s.Has(kStateRequired)) st.required = true;
  if (s.Has(kStateReadOnly)) st.readonly = true;
  if (s.Has(kStateMultiLine)) st.multiline = true;
  if (s.Has(kStateEditable)) st.editable = true;
  if (s.Has(kStateModal)) st.modal = true;
  st.visible = s.Has(kStateShowing) && s.Has(kStateVisible);
  if (s.Has(kStateHorizontal))
    a.orientation = "horizontal";
  else if (s.Has(kStateVertical))
    a.orientation = "vertical";

  if (job.ifaces & kHasValue) {
    // GTK sets Value through AT-SPI; progress and level bars only display one.
    a.settable = job.role != kRoleProgressBar && job.role != kRoleLevelBar && !s.Has(kStateReadOnly);
    a.valueType = "number";
    if (job.number) a.value = *job.number;
  } else if (job.ifaces & kHasEditableText) {
    a.settable = !s.Has(kStateReadOnly);
    a.valueType = "string";
    if (!job.secure && job.text) a.value = *job.text;
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
    const bool wantText = !secure && !(j->ifaces & kHasValue) && (editable || (j->name.empty() && textRole));
    const bool wantSelection = !secure && j->states.Has(kStateFocused);
    // The count alone matters only for a secure field (whether it holds anything); Chromium
    // implements Text on every element, so asking everywhere would cost a call per element.
    if (!wantText && !wantSelection && !secure) return;
    b.GetProperty(j->ref->bus, j->ref->path, kIfText, "CharacterCount",
                  [j, perCall, wantText, wantSelection, editable, &b](const Reply& r) {
                    if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
                    int64_t count = 0;
                    if (!VariantToInt(r.value, count) || count < 0) return;
                    j->out->charCount = count;
                    if (wantText) {
                      if (count == 0) {
                        if (editable) j->text = std::string();
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
      b.Call(busName, path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
             [j, perCall](const Reply& r) {
               if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
               j->out->frame = RectOf(r.value);
             });
    }
    if (job.ifaces & kHasAction) {
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
    if (job.ifaces & kHasValue) {
      b.GetProperty(busName, path, kIfValue, "CurrentValue", [j, perCall](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        double d = 0;
        if (VariantToDouble(r.value, d)) j->number = d;
      });
    }
    const bool entry = IsTextEntryRole(job.role) || (job.ifaces & kHasEditableText);
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
  auto issueGetAll = [&](NodeJob& job, bool needBasics) {
    NodeJob* j = &job;
    b.Call(
        job.ref->bus, job.ref->path, kIfProperties, "GetAll", g_variant_new("(s)", kIfAccessible), "(a{sv})",
        [j, perCall, needBasics, &b, &phase1Done, &textStep, &im](const Reply& r) {
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
            VariantPtr attrs = AdoptVariant(g_variant_lookup_value(dict.get(), "Attributes", G_VARIANT_TYPE("a{ss}")));
            if (attrs) j->attributes = std::move(attrs);
            return done();
          }
          // No GetAll: the two properties that matter, one by one.
          if (!needBasics) return done();
          j->phase1Pending += 2;
          b.GetProperty(j->ref->bus, j->ref->path, kIfAccessible, "Name", [j, perCall, &phase1Done](const Reply& nr) {
            if (!Fail(*j, nr, perCall) && nr.outcome == Outcome::kOk &&
                g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING))
              j->name = g_variant_get_string(nr.value, nullptr);
            phase1Done(*j);
          });
          b.GetProperty(j->ref->bus, j->ref->path, kIfAccessible, "Description",
                        [j, perCall, &phase1Done](const Reply& dr) {
                          if (!Fail(*j, dr, perCall) && dr.outcome == Outcome::kOk &&
                              g_variant_is_of_type(dr.value, G_VARIANT_TYPE_STRING)) {
                            std::string s = g_variant_get_string(dr.value, nullptr);
                            if (!s.empty()) j->out->description = s;
                          }
                          phase1Done(*j);
                        });
          phase1Done(*j);
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
      if (kept != im.bulk.end() && Clock::now() - kept->second.taken < im.bulkMaxAge)
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
    b.Call(ref->bus, ref->path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
           [&out, i](const Reply& r) {
             if (r.outcome == Outcome::kOk) out[i] = RectOf(r.value);
           });
  }
  b.Run();
  if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  return {};
}
}  // namespace axsnap

// ===== to move to atspi_tables.cc

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {

namespace {

constexpr int64_t kTableCutCells = 256;
constexpr int64_t kTableCutRows = 20;  // the walk's and the renderer's cap on rows shown
constexpr int64_t kTableMaxColumns = 64;

struct TableRead {
  ObjRef ref;
  int64_t rows = -1, cols = -1;
  std::optional<Rect> frame;
  std::vector<std::string> headers;  // object paths by column; "" = none
  std::optional<Rect> headerFrame;   // the first column's header
  std::vector<std::string> probes;   // cells found below the headers, top first
  std::string probe;                 // the first of them
  std::optional<Rect> probeFrame;    // its place: a row is no taller than the distance to the next
  bool probeIsCell = false;          // a table cell (a table with row objects is read whole)
  int64_t position = -1, rowAtIndex = -1;
  int64_t first = -1;                           // the first row on screen
  std::vector<std::vector<std::string>> cells;  // rows first.., columns
  std::vector<std::optional<Rect>> rowFrames;   // each row's first cell
  bool fallback = false;                        // the app refused a Table call: GetChildren
  Error err;
  bool Live() const { return !fallback && !err; }
};

bool OnScreen(const Rect& r) { return r.x != kHiddenCoordinate && r.y != kHiddenCoordinate && r.w > 0 && r.h > 0; }

// The object of a "((so))" reply; "" for the null reference.
std::string RefPath(GVariant* reply) {
  const gchar* bus = nullptr;
  const gchar* path = nullptr;
  g_variant_get(reply, "((&s&o))", &bus, &path);
  if (!bus || !*bus || !path || std::strcmp(path, kNullPath) == 0) return {};
  return path;
}

}  // namespace

std::vector<bool> AtspiBackend::ReadVisibleTableRows(const std::vector<ElementId>& ids, std::vector<ChildList>& out,
                                                     std::vector<Error>& errs, Clock::time_point deadline) {
  Impl& im = *impl_;
  std::vector<bool> handled(ids.size(), false);
  std::vector<std::pair<size_t, TableRead>> tables;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!im.managesCells.count(ids[i])) continue;
    if (const ObjRef* ref = im.Lookup(ids[i])) {
      tables.emplace_back(i, TableRead{});
      tables.back().second.ref = *ref;
    }
  }
  if (tables.empty()) return handled;
  const int perCall = static_cast<int>(im.PerCall(deadline).count());
  // True when the reply cannot be used; a refusal sends the table to GetChildren, any other failure is its error.
  auto unusable = [perCall](TableRead& t, const Reply& r) {
    if (r.outcome == Outcome::kOk) return false;
    if (t.Live()) {
      if (r.outcome == Outcome::kFailed)
        t.fallback = true;
      else
        t.err = OutcomeError(r.outcome, t.ref.bus, r.message, perCall);
    }
    return true;
  };
  // One dependent step: `issue` queues a table's calls in a batch. False when the bus closed (GetChildren says so).
  auto step = [&](const std::function<void(Batch&, TableRead&)>& issue) {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.UsePeers(&im.peers);
    for (auto& entry : tables)
      if (entry.second.Live()) issue(b, entry.second);
    b.Run();
    if (b.Abandoned())
      for (auto& entry : tables)
        if (entry.second.Live()) entry.second.err = MakeError(ErrorCode::kTimeout, "the deadline passed");
    return !b.BusClosed();
  };

  // 1. Size and place.
  bool open = step([&](Batch& b, TableRead& t) {
    TableRead* tp = &t;
    b.Call(t.ref.bus, t.ref.path, kIfProperties, "GetAll", g_variant_new("(s)", kIfTable), "(a{sv})",
           [tp, &unusable](const Reply& r) {
             if (unusable(*tp, r)) return;
             VariantPtr dict = AdoptVariant(g_variant_get_child_value(r.value, 0));
             VariantPtr rows = AdoptVariant(g_variant_lookup_value(dict.get(), "NRows", nullptr));
             VariantPtr cols = AdoptVariant(g_variant_lookup_value(dict.get(), "NColumns", nullptr));
             if (!rows || !cols || !VariantToInt(rows.get(), tp->rows) || !VariantToInt(cols.get(), tp->cols))
               tp->fallback = true;
           });
    b.Call(t.ref.bus, t.ref.path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
           [tp, &unusable](const Reply& r) {
             if (!unusable(*tp, r)) tp->frame = RectOf(r.value);
           });
  });
  for (auto& entry : tables) {
    TableRead& t = entry.second;
    // A small table is read whole, as any other list.
    if (t.Live() && (t.rows < 0 || t.cols <= 0 || t.rows * t.cols <= kTableCutCells)) t.fallback = true;
  }

  // 2. Column headers.
  open = open && step([&](Batch& b, TableRead& t) {
           TableRead* tp = &t;
           const int64_t cols = std::min(t.cols, kTableMaxColumns);
           t.headers.assign(static_cast<size_t>(cols), std::string());
           for (int64_t c = 0; c < cols; ++c) {
             b.Call(t.ref.bus, t.ref.path, kIfTable, "GetColumnHeader", g_variant_new("(i)", gint32(c)), "((so))",
                    [tp, c, &b, &unusable](const Reply& r) {
                      if (unusable(*tp, r)) return;
                      std::string path = RefPath(r.value);
                      if (c == 0 && !path.empty())
                        b.Call(tp->ref.bus, path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
                               [tp](const Reply& er) {
                                 if (er.outcome == Outcome::kOk) tp->headerFrame = RectOf(er.value);
                               });
                      tp->headers[static_cast<size_t>(c)] = std::move(path);
                    });
           }
         });

  // 3. The cell just below the headers: a few points down, past a gap between rows.
  constexpr int kProbeDy[] = {1, 4, 8};
  open = open && step([&](Batch& b, TableRead& t) {
           if (!t.frame || !OnScreen(*t.frame) || t.rows == 0) return;
           const Rect& f = *t.frame;
           double top = f.y, x = f.x + f.w / 2;
           if (t.headerFrame && OnScreen(*t.headerFrame)) {
             const Rect& h = *t.headerFrame;
             top = std::max(top, std::min(h.y + h.h, f.y + f.h));
             x = std::clamp(h.x + h.w / 2, f.x + 1, f.x + f.w - 1);  // a header scrolled half out
           }
           TableRead* tp = &t;
           t.probes.assign(std::size(kProbeDy), std::string());
           for (size_t k = 0; k < std::size(kProbeDy); ++k) {
             const double y = top + kProbeDy[k];
             if (y >= f.y + f.h) break;
             b.Call(t.ref.bus, t.ref.path, kIfComponent, "GetAccessibleAtPoint",
                    g_variant_new("(iiu)", gint32(x), gint32(y), 0u), "((so))", [tp, k, &unusable](const Reply& r) {
                      if (!unusable(*tp, r)) tp->probes[k] = RefPath(r.value);
                    });
           }
         });
  for (auto& entry : tables)
    for (const std::string& p : entry.second.probes)
      if (!p.empty()) {
        entry.second.probe = p;
        break;
      }

  // 4. Its row: TableCell.Position, else the table's row of its index; and its height.
  open = open && step([&](Batch& b, TableRead& t) {
           if (t.probe.empty()) return;
           TableRead* tp = &t;
           b.Call(t.ref.bus, t.probe, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
                  [tp](const Reply& r) {
                    if (r.outcome == Outcome::kOk) tp->probeFrame = RectOf(r.value);
                  });
           b.Call(t.ref.bus, t.probe, kIfAccessible, "GetRole", nullptr, "(u)", [tp](const Reply& r) {
             guint32 role = 0;
             if (r.outcome == Outcome::kOk) g_variant_get(r.value, "(u)", &role);
             tp->probeIsCell = RoleName(role) == "table cell";
           });
           b.GetProperty(t.ref.bus, t.probe, kIfTableCell, "Position", [tp](const Reply& r) {
             if (r.outcome != Outcome::kOk || !g_variant_is_of_type(r.value, G_VARIANT_TYPE("(ii)"))) return;
             gint32 row = -1, col = -1;
             g_variant_get(r.value, "(ii)", &row, &col);
             tp->position = row;
           });
           b.Call(t.ref.bus, t.probe, kIfAccessible, "GetIndexInParent", nullptr, "(i)",
                  [tp, &b, &unusable](const Reply& r) {
                    // Only needed without Position: a refusal here is not the table's.
                    if (r.outcome == Outcome::kFailed || unusable(*tp, r)) return;
                    gint32 index = -1;
                    g_variant_get(r.value, "(i)", &index);
                    if (index < 0) return;
                    b.Call(tp->ref.bus, tp->ref.path, kIfTable, "GetRowAtIndex", g_variant_new("(i)", index), "(i)",
                           [tp, &unusable](const Reply& rr) {
                             if (rr.outcome == Outcome::kFailed || unusable(*tp, rr)) return;
                             gint32 row = -1;
                             g_variant_get(rr.value, "(i)", &row);
                             tp->rowAtIndex = row;
                           });
                  });
         });
  for (auto& entry : tables) {
    TableRead& t = entry.second;
    if (!t.Live()) continue;
    if (t.probe.empty()) {
      // Nothing below the headers: off screen, only headers are shown; else the table cannot say, read it whole.
      if (t.frame && OnScreen(*t.frame)) t.fallback = true;
    } else {
      t.first = t.position >= 0 ? t.position : t.rowAtIndex;
      // Not a cell the table can place (or a table of rows, which the renderer lists as rows): read it whole.
      if (!t.probeIsCell || t.first < 0 || t.first >= t.rows) t.fallback = true;
    }
  }

  // 5. The cells of the rows from there, and each row's place.
  open = open && step([&](Batch& b, TableRead& t) {
           if (t.first < 0) return;
           const int64_t cols = static_cast<int64_t>(t.headers.size());
           int64_t n = std::min(t.rows - t.first, kTableCutRows);
           if (t.probeFrame && OnScreen(*t.probeFrame) && t.frame) {
             // Rows are at least a cell high: no more than this many fit between the first and the bottom.
             const double below = t.frame->y + t.frame->h - t.probeFrame->y;
             n = std::min<int64_t>(n, static_cast<int64_t>(std::ceil(below / t.probeFrame->h)) + 1);
           }
           t.cells.assign(static_cast<size_t>(n), std::vector<std::string>(static_cast<size_t>(cols)));
           t.rowFrames.assign(static_cast<size_t>(n), std::nullopt);
           TableRead* tp = &t;
           for (int64_t k = 0; k < n; ++k) {
             for (int64_t c = 0; c < cols; ++c) {
               b.Call(t.ref.bus, t.ref.path, kIfTable, "GetAccessibleAt",
                      g_variant_new("(ii)", gint32(t.first + k), gint32(c)), "((so))",
                      [tp, k, c, &b, &unusable](const Reply& r) {
                        if (unusable(*tp, r)) return;
                        std::string path = RefPath(r.value);
                        if (c == 0 && !path.empty())
                          b.Call(tp->ref.bus, path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
                                 [tp, k](const Reply& er) {
                                   if (er.outcome == Outcome::kOk) tp->rowFrames[size_t(k)] = RectOf(er.value);
                                 });
                        tp->cells[size_t(k)][size_t(c)] = std::move(path);
                      });
             }
           }
         });
  if (!open) return handled;  // the bus closed: GetChildren reports it

  for (auto& entry : tables) {
    const size_t i = entry.first;
    TableRead& t = entry.second;
    if (t.fallback) continue;
    handled[i] = true;
    if (t.err) {
      errs[i] = t.err;
      continue;
    }
    ChildList& list = out[i];
    list.total = t.rows;
    auto add = [&](const std::string& path, const char* via, int64_t row) {
      if (path.empty()) return;
      list.ids.push_back(im.Intern(t.ref.bus, path));
      list.via.emplace_back(via);
      list.rowIndex.push_back(row);
    };
    for (const std::string& h : t.headers) add(h, "", -1);
    // The rows on screen: below the headers, above the bottom; they follow one another.
    const Rect f = t.frame.value_or(Rect{});
    const double top = t.headerFrame && OnScreen(*t.headerFrame) ? t.headerFrame->y + t.headerFrame->h : f.y;
    bool started = false;
    for (size_t k = 0; k < t.cells.size(); ++k) {
      const std::optional<Rect>& rf = t.rowFrames[k];
      const bool visible = rf && OnScreen(*rf) && rf->y < f.y + f.h && rf->y + rf->h > top;
      if (!visible) {
        if (started) break;
        continue;
      }
      started = true;
      for (const std::string& cell : t.cells[k]) add(cell, "visibleRows", t.first + static_cast<int64_t>(k));
    }
  }
  return handled;
}
}  // namespace axsnap

// ===== to move to atspi_children.cc

#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/walk.h"
#include "atspi_internal.h"

namespace axsnap {

Error AtspiBackend::ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out,
                                 std::vector<Error>& errs, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.assign(ids.size(), ChildList{});
  errs.assign(ids.size(), Error{});
  if (Error e = Ready(deadline)) return e;
  ContextScope scope(im.ctx.get());
  EnsurePeersFor(im, ids, deadline);
  // Big tree views: their rows on screen only (ReadVisibleTableRows).
  const std::vector<bool> tableRead = ReadVisibleTableRows(ids, out, errs, deadline);

  // Child references are collected first and interned after the batch, so
  // the handle table does not change while handlers hold ObjRef pointers.
  std::vector<std::vector<std::pair<std::string, std::string>>> found(ids.size());
  std::vector<bool> ok(ids.size(), false);
  // From the bulk snapshot: the parent's children when it holds them all. A
  // child it knows to be hidden (not SHOWING and VISIBLE) is left out here,
  // before it costs a handle, a read or a place in the walk's node budget: a
  // hidden element never prints, and a long list's off-screen rows are most
  // of a big page (ChildList::positions keeps the others' places).
  std::vector<bool> fromBulk(ids.size(), false);
  if (!im.live && im.useBulk) {
    std::vector<std::string_view> kids;
    for (size_t i = 0; i < ids.size(); ++i) {
      const ObjRef* ref = tableRead[i] ? nullptr : im.Lookup(ids[i]);
      if (!ref) continue;
      const BulkSnapshot* snap = FreshBulk(im, ref->bus, deadline);
      if (!snap || !BulkChildren(*snap, ref->path, kids) || NearDocument(*snap, ref->path, kids)) continue;
      fromBulk[i] = ok[i] = true;
      ChildList& list = out[i];
      bool rows = false;
      for (size_t k = 0; k < kids.size(); ++k) {
        const CacheItem& c = snap->items.at(kids[k]);
        // Every child's role is known here, listed or not: the list's header or caption is counted out of
        // its rows by index (ChildList::nonRows), even when it is off screen and left out.
        if (IsRowRoleId(c.role))
          rows = true;
        else
          list.nonRows.push_back(static_cast<int64_t>(k));
        if (!(c.states.Has(kStateShowing) && c.states.Has(kStateVisible))) {
          list.hiddenLeftOut++;
          continue;
        }
        found[i].emplace_back(ref->bus, std::string(kids[k]));
        list.positions.push_back(static_cast<int64_t>(k));
      }
      if (list.hiddenLeftOut == 0) list.positions.clear();
      // Not a list of rows: nothing to count out.
      if (!rows) list.nonRows.clear();
    }
  }
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.UsePeers(&im.peers);
    const int perCall = b.PerCallMs();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (tableRead[i]) {
        ok[i] = !errs[i];
        continue;
      }
      if (fromBulk[i]) continue;
      const ObjRef* ref = im.Lookup(ids[i]);
      if (!ref) {
        errs[i] = im.Unknown(ids[i]);
        continue;
      }
      auto seen = im.live ? im.countSeen.end() : im.countSeen.find(ids[i]);
      if (seen != im.countSeen.end()) {
        const bool fresh = Clock::now() - seen->second.at < im.countHintMaxAge;
        const int64_t count = seen->second.count;
        im.countSeen.erase(seen);  // one use: a later ReadChildren asks the app
        if (fresh && count == 0) {
          ok[i] = true;  // no children, read moments ago
          continue;
        }
        if (fresh && count >= static_cast<int64_t>(kLongChildList)) {
          ok[i] = true;
          out[i].unlisted = count;
          continue;
        }
      }
      b.Call(ref->bus, ref->path, kIfAccessible, "GetChildren", nullptr, "(a(so))",
             [&, i, perCall, busName = ref->bus](const Reply& r) {
               if (r.outcome != Outcome::kOk) {
                 errs[i] = OutcomeError(r.outcome, busName, r.message, perCall);
                 return;
               }
               ok[i] = true;
               for (ObjRef& child : RefsIn(r.value)) found[i].emplace_back(std::move(child.bus), std::move(child.path));
             });
    }
    b.Run();
    if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  }
  size_t okCount = 0;
  Error firstError;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!ok[i]) {
      if (!errs[i]) errs[i] = MakeError(ErrorCode::kTimeout, "the deadline passed before the children were read");
      if (!firstError) firstError = errs[i];
      continue;
    }
    ++okCount;
    out[i].ids.reserve(found[i].size());
    for (auto& c : found[i]) {
      out[i].ids.push_back(im.Intern(c.first, c.second));
      out[i].via.emplace_back();
    }
  }
  if (okCount == 0 && !ids.empty() && firstError.code == ErrorCode::kTimeout) return firstError;
  return {};
}

Error AtspiBackend::ChildrenAt(ElementId parent, const std::vector<int64_t>& indices, std::vector<ElementId>& out,
                               std::vector<Error>& errs, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.assign(indices.size(), 0);
  errs.assign(indices.size(), Error{});
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(parent);
  if (!ref) return im.Unknown(parent);
  ContextScope scope(im.ctx.get());
  EnsurePeer(im, ref->bus, deadline);
  std::vector<std::pair<std::string, std::string>> found(indices.size());
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.UsePeers(&im.peers);
    const int perCall = b.PerCallMs();
    for (size_t i = 0; i < indices.size(); ++i) {
      b.Call(ref->bus, ref->path, kIfAccessible, "GetChildAtIndex", g_variant_new("(i)", gint32(indices[i])), "((so))",
             [&, i, perCall, busName = ref->bus](const Reply& r) {
               if (r.outcome != Outcome::kOk) {
                 errs[i] = OutcomeError(r.outcome, busName, r.message, perCall);
                 return;
               }
               const gchar *childBus = nullptr, *childPath = nullptr;
               g_variant_get(r.value, "((&s&o))", &childBus, &childPath);
               if (childBus && *childBus && std::strcmp(childPath, kNullPath) != 0) found[i] = {childBus, childPath};
             });
    }
    b.Run();
    if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!errs[i] && found[i].first.empty()) errs[i] = MakeError(ErrorCode::kElementGone, "no child at that index");
    if (!errs[i]) out[i] = im.Intern(found[i].first, found[i].second);
  }
  return {};
}
}  // namespace axsnap

// ===== to move to atspi_actions.cc

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

// Selects a row or cell in its list: Selection.SelectChild on the parent, at
// the element's index in it (the AT-SPI way to "click" a row without input).
namespace {

// GTK3's tree view refuses Selection.SelectChild for a cell of a table with
// more than one column; its Table interface selects the cell's row instead
// (Table.GetRowAtIndex, then AddRowSelection). True when the row was selected.
template <typename ImplT>
bool SelectTableRow(ImplT& im, const std::string& bus, const std::string& path, gint32 index,
                    Clock::time_point deadline) {
  Outcome o;
  std::string msg;
  VariantPtr rv =
      im.CallSync(bus, path, kIfTable, "GetRowAtIndex", g_variant_new("(i)", index), "(i)", deadline, o, msg);
  if (o != Outcome::kOk) return false;
  gint32 row = -1;
  g_variant_get(rv.get(), "(i)", &row);
  if (row < 0) return false;
  VariantPtr av =
      im.CallSync(bus, path, kIfTable, "AddRowSelection", g_variant_new("(i)", row), "(b)", deadline, o, msg);
  if (o != Outcome::kOk) return false;
  gboolean ok = FALSE;
  g_variant_get(av.get(), "(b)", &ok);
  return ok != FALSE;
}

}  // namespace

Error AtspiBackend::Select(ElementId id, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const ObjRef target = *ref;
  im.ForgetReadState();
  const int perCall = static_cast<int>(im.callTimeout.count());
  Outcome o;
  std::string msg;
  VariantPtr pv = im.CallSync(target.bus, target.path, kIfProperties, "Get",
                              g_variant_new("(ss)", kIfAccessible, "Parent"), "(v)", deadline, o, msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  VariantPtr parent = UnwrapV(pv.get());
  if (!parent || !g_variant_is_of_type(parent.get(), G_VARIANT_TYPE("(so)")))
    return MakeError(ErrorCode::kActionNotSupported, "the element has no parent to select it in");
  const gchar* parentBus = nullptr;
  const gchar* parentPath = nullptr;
  g_variant_get(parent.get(), "(&s&o)", &parentBus, &parentPath);
  const std::string pBus = parentBus ? parentBus : "";
  const std::string pPath = parentPath ? parentPath : "";
  VariantPtr iv =
      im.CallSync(target.bus, target.path, kIfAccessible, "GetIndexInParent", nullptr, "(i)", deadline, o, msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  gint32 index = -1;
  g_variant_get(iv.get(), "(i)", &index);
  if (index < 0) return MakeError(ErrorCode::kActionNotSupported, "the element is not a child of its parent");
  VariantPtr sv = im.CallSync(pBus, pPath, "org.a11y.atspi.Selection", "SelectChild", g_variant_new("(i)", index),
                              "(b)", deadline, o, msg);
  if (o == Outcome::kFailed)
    return MakeError(ErrorCode::kActionNotSupported, "its list does not support selection: " + msg);
  if (o != Outcome::kOk) return OutcomeError(o, pBus, msg, perCall);
  gboolean ok = FALSE;
  g_variant_get(sv.get(), "(b)", &ok);
  if (!ok && SelectTableRow(im, pBus, pPath, index, deadline)) return {};
  if (!ok) return MakeError(ErrorCode::kActionFailed, "the list refused to select the element");
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
  Outcome o;
  std::string msg;
  VariantPtr sv = im.CallSync(target.bus, target.path, kIfAccessible, "GetState", nullptr, "(au)", deadline, o, msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  {
    VariantPtr au = AdoptVariant(g_variant_get_child_value(sv.get(), 0));
    const StateSet st = StatesFrom(au.get());
    if (!st.Has(kStateEditable) || st.Has(kStateReadOnly))
      return MakeError(ErrorCode::kNotSettable, "the element is not editable (read-only)");
  }
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
}  // namespace axsnap
