// Selecting the row a printed line names (the AT-SPI way to click a row without
// input), then reading back that it is selected. The list is the nearest
// ancestor with Selection or Table: GTK3 tree views put a column's several
// renderers (the file chooser's icon and name) in a container cell, so the
// clicked cell's parent is that cell, not the list, and the index that names
// the row is the container's. Selection.SelectChild first; Table.GetRowAtIndex
// and AddRowSelection where the list refuses it (GTK3's tree view refuses
// SelectChild when it has more than one column). A row that does not read as
// selected afterwards is an error, never a success (a refusal when the list's
// selection did not change at all); a second selected row (a multiple-selection
// list) is cleared, since a click selects one row.
//
// Follows at-spi2-core xml/Selection.xml, xml/Table.xml and xml/Accessible.xml;
// role and state numbers from atspi-constants.h.

#include <string>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {

namespace {

// Roles a clicked element may sit inside on its way up to its list.
constexpr uint32_t kRoleListItem = 32;
constexpr uint32_t kRoleTableCell = 56;
constexpr uint32_t kRoleTableRow = 90;
constexpr uint32_t kRoleTreeItem = 91;
// How far up a list may be: a cell in a container cell in a row in the list.
constexpr int kMaxClimb = 3;

// Where the row is: the list, the child of the list that holds the clicked element, its index there,
// and which of Selection and Table the list offers.
struct Spot {
  ObjRef list;
  ObjRef child;
  gint32 index = -1;
  bool selection = false;
  bool table = false;
};

template <typename ImplT>
class Selector {
 public:
  Selector(ImplT& im, Clock::time_point deadline) : im_(im), deadline_(deadline) {}

  // Finds the list above `target`; kActionNotSupported when there is none (nothing was sent).
  Error Find(const ObjRef& target, Spot& spot) {
    ObjRef child = target;
    for (int up = 0; up < kMaxClimb; ++up) {
      ObjRef parent;
      if (Error e = ParentOf(child, parent)) return e;
      if (parent.bus.empty())
        return MakeError(ErrorCode::kActionNotSupported, "the element is not inside a list that takes a selection");
      VariantPtr r = Call(parent, kIfAccessible, "GetInterfaces", nullptr, "(as)");
      if (!r) return Failed("its list could not be read");
      VariantPtr as = AdoptVariant(g_variant_get_child_value(r.get(), 0));
      GVariantIter it;
      g_variant_iter_init(&it, as.get());
      const gchar* name = nullptr;
      bool selection = false, table = false;
      while (g_variant_iter_next(&it, "&s", &name)) {
        if (g_strcmp0(name, kIfSelection) == 0) selection = true;
        if (g_strcmp0(name, kIfTable) == 0) table = true;
      }
      if (selection || table) {
        VariantPtr iv = Call(child, kIfAccessible, "GetIndexInParent", nullptr, "(i)");
        if (!iv) return Failed("the row's place in its list could not be read");
        g_variant_get(iv.get(), "(i)", &spot.index);
        if (spot.index < 0) return MakeError(ErrorCode::kActionNotSupported, "the row is no longer in its list");
        spot.list = parent;
        spot.child = child;
        spot.selection = selection;
        spot.table = table;
        return {};
      }
      VariantPtr rv = Call(parent, kIfAccessible, "GetRole", nullptr, "(u)");
      if (!rv) return Failed("its list could not be read");
      guint32 role = 0;
      g_variant_get(rv.get(), "(u)", &role);
      if (role != kRoleTableCell && role != kRoleTableRow && role != kRoleListItem && role != kRoleTreeItem) break;
      child = parent;
    }
    return MakeError(ErrorCode::kActionNotSupported, "the element is not inside a list that takes a selection");
  }

  // Selects the spot's row; true when the list said it did. `row` is the table row where Table was used.
  Error Select(const Spot& spot, bool& done, gint32& row) {
    done = false;
    row = -1;
    if (spot.selection) {
      VariantPtr r = Call(spot.list, kIfSelection, "SelectChild", g_variant_new("(i)", spot.index), "(b)");
      if (!r && outcome_ != Outcome::kFailed) return Uncertain("selecting the row");
      gboolean ok = FALSE;
      if (r) g_variant_get(r.get(), "(b)", &ok);
      done = ok != FALSE;
    }
    if (!done && spot.table) {
      VariantPtr rv = Call(spot.list, kIfTable, "GetRowAtIndex", g_variant_new("(i)", spot.index), "(i)");
      if (!rv) return Failed("its table did not say which row the element is in");
      g_variant_get(rv.get(), "(i)", &row);
      if (row < 0) return MakeError(ErrorCode::kActionNotSupported, "its table does not place the element in a row");
      VariantPtr av = Call(spot.list, kIfTable, "AddRowSelection", g_variant_new("(i)", row), "(b)");
      if (!av && outcome_ != Outcome::kFailed) return Uncertain("selecting the row");
      gboolean ok = FALSE;
      if (av) g_variant_get(av.get(), "(b)", &ok);
      done = ok != FALSE;
    }
    return {};
  }

  // The rows a table reports selected; false when it cannot say.
  bool SelectedRows(const Spot& spot, std::vector<gint32>& rows) {
    rows.clear();
    VariantPtr r = Call(spot.list, kIfTable, "GetSelectedRows", nullptr, "(ai)");
    if (!r) return false;
    VariantPtr arr = AdoptVariant(g_variant_get_child_value(r.get(), 0));
    GVariantIter it;
    g_variant_iter_init(&it, arr.get());
    gint32 v = 0;
    while (g_variant_iter_next(&it, "i", &v)) rows.push_back(v);
    return true;
  }

  bool ClearSelection(const Spot& spot) {
    VariantPtr r = Call(spot.list, kIfSelection, "ClearSelection", nullptr, "(b)");
    gboolean ok = FALSE;
    if (r) g_variant_get(r.get(), "(b)", &ok);
    return ok != FALSE;
  }

  // The element's live SELECTED state: 1 selected, 0 not, -1 unreadable.
  int IsSelected(const ObjRef& ref) {
    VariantPtr r = Call(ref, kIfAccessible, "GetState", nullptr, "(au)");
    if (!r) return -1;
    VariantPtr au = AdoptVariant(g_variant_get_child_value(r.get(), 0));
    return StatesFrom(au.get()).Has(kStateSelected) ? 1 : 0;
  }

  const std::string& message() const { return msg_; }

 private:
  VariantPtr Call(const ObjRef& ref, const char* iface, const char* method, GVariant* params, const char* type) {
    return im_.CallSync(ref.bus, ref.path, iface, method, params, type, deadline_, outcome_, msg_);
  }

  Error ParentOf(const ObjRef& ref, ObjRef& parent) {
    VariantPtr pv = Call(ref, kIfProperties, "Get", g_variant_new("(ss)", kIfAccessible, "Parent"), "(v)");
    if (!pv) return Failed("the element's list could not be found");
    VariantPtr p = UnwrapV(pv.get());
    if (!p || !g_variant_is_of_type(p.get(), G_VARIANT_TYPE("(so)"))) return {};
    const gchar* bus = nullptr;
    const gchar* path = nullptr;
    g_variant_get(p.get(), "(&s&o)", &bus, &path);
    if (bus && *bus && path && g_strcmp0(path, kNullPath) != 0) parent = ObjRef{bus, path};
    return {};
  }

  // A read that failed before anything was sent to select: the app's own refusal, or why it did not answer.
  Error Failed(const std::string& what) {
    if (outcome_ == Outcome::kFailed) return MakeError(ErrorCode::kActionNotSupported, what + ": " + msg_);
    return OutcomeError(outcome_, "the app", msg_, static_cast<int>(im_.callTimeout.count()));
  }

  // The selecting call itself got no answer: it may have happened.
  Error Uncertain(const std::string& what) { return MakeError(ErrorCode::kDeliveryUncertain, what + ": " + msg_); }

  ImplT& im_;
  Clock::time_point deadline_;
  Outcome outcome_ = Outcome::kOk;
  std::string msg_;
};

}  // namespace

Error AtspiBackend::Select(ElementId id, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const ObjRef target = *ref;
  im.ForgetReadState();
  Selector<Impl> sel(im, deadline);
  Spot spot;
  if (Error e = sel.Find(target, spot)) return e;
  // What was selected before: a list that answers yes but changes nothing has refused (nothing was delivered).
  std::vector<gint32> before;
  const bool knewBefore = spot.table && sel.SelectedRows(spot, before);
  bool done = false;
  gint32 row = -1;
  if (Error e = sel.Select(spot, done, row)) return e;
  if (!done) return MakeError(ErrorCode::kActionFailed, "the list refused to select the row");
  // A click leaves one row selected: a multiple-selection list keeps the others, so they are cleared.
  std::vector<gint32> rows;
  if (row >= 0 && spot.selection && sel.SelectedRows(spot, rows) && (rows.size() != 1 || rows[0] != row)) {
    if (!sel.ClearSelection(spot))
      return MakeError(ErrorCode::kDeliveryUncertain, "the row was added to the selection, which still holds others");
    if (Error e = sel.Select(spot, done, row)) return e;
    if (!done) return MakeError(ErrorCode::kDeliveryUncertain, "the list cleared its selection but refused the row");
  }
  // The clicked element itself must read as selected (or, in a table, its row).
  int selected = sel.IsSelected(target);
  if (selected != 1 && row >= 0 && sel.SelectedRows(spot, rows)) selected = rows.size() == 1 && rows[0] == row ? 1 : 0;
  if (selected == 1) return {};
  if (selected == 0 && knewBefore && sel.SelectedRows(spot, rows) && rows == before)
    return MakeError(ErrorCode::kActionFailed, "the list refused to select the row");
  return MakeError(ErrorCode::kDeliveryUncertain, selected == 0
                                                      ? "the list answered, but the row does not read as selected"
                                                      : "the list answered, but whether the row is selected "
                                                        "could not be read: " +
                                                            sel.message());
}

}  // namespace axsnap
