// The AT-SPI vocabulary: interface names and the bits this backend keeps of
// them, state numbers and state sets, role numbers and their names, the role
// groups the reads decide by, and action names as toolkits should give them.
//
// Follows at-spi2-core: atspi/atspi-constants.h (AtspiRole, AtspiStateType;
// names as atspi_role_get_name() gives them) and the interface names of its
// xml/ directory. A state set travels as two 32-bit words ("au").

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "../core/walk.h"
#include "atspi_internal.h"

namespace axsnap {
namespace atspi {

uint32_t IfaceBitOf(const char* name) {
  static const std::pair<const char*, uint32_t> kMap[] = {
      {kIfAction, kHasAction},       {kIfComponent, kHasComponent},
      {kIfDocument, kHasDocument},   {kIfEditableText, kHasEditableText},
      {kIfHyperlink, kHasHyperlink}, {kIfText, kHasText},
      {kIfValue, kHasValue},         {kIfTable, kHasTable},
      {kIfSelection, kHasSelection},
  };
  for (const auto& e : kMap)
    if (std::strcmp(e.first, name) == 0) return e.second;
  return 0;
}

uint32_t IfaceBits(GVariant* as) {  // "as"
  uint32_t bits = 0;
  GVariantIter it;
  g_variant_iter_init(&it, as);
  const gchar* name = nullptr;
  while (g_variant_iter_next(&it, "&s", &name)) bits |= IfaceBitOf(name);
  return bits;
}

StateSet StatesFrom(GVariant* au) {  // "au"
  StateSet set;
  gsize n = g_variant_n_children(au);
  for (gsize i = 0; i < n && i < 2; ++i) {
    VariantPtr w = AdoptVariant(g_variant_get_child_value(au, i));
    set.words[i] = g_variant_get_uint32(w.get());
  }
  return set;
}

namespace {

// AtspiRole values, named as atspi_role_get_name() names them.
constexpr const char* kRoleNames[] = {
    "invalid",                // 0
    "accelerator label",      // 1
    "alert",                  // 2
    "animation",              // 3
    "arrow",                  // 4
    "calendar",               // 5
    "canvas",                 // 6
    "check box",              // 7
    "check menu item",        // 8
    "color chooser",          // 9
    "column header",          // 10
    "combo box",              // 11
    "date editor",            // 12
    "desktop icon",           // 13
    "desktop frame",          // 14
    "dial",                   // 15
    "dialog",                 // 16
    "directory pane",         // 17
    "drawing area",           // 18
    "file chooser",           // 19
    "filler",                 // 20
    "focus traversable",      // 21
    "font chooser",           // 22
    "frame",                  // 23
    "glass pane",             // 24
    "html container",         // 25
    "icon",                   // 26
    "image",                  // 27
    "internal frame",         // 28
    "label",                  // 29
    "layered pane",           // 30
    "list",                   // 31
    "list item",              // 32
    "menu",                   // 33
    "menu bar",               // 34
    "menu item",              // 35
    "option pane",            // 36
    "page tab",               // 37
    "page tab list",          // 38
    "panel",                  // 39
    "password text",          // 40
    "popup menu",             // 41
    "progress bar",           // 42
    "push button",            // 43
    "radio button",           // 44
    "radio menu item",        // 45
    "root pane",              // 46
    "row header",             // 47
    "scroll bar",             // 48
    "scroll pane",            // 49
    "separator",              // 50
    "slider",                 // 51
    "spin button",            // 52
    "split pane",             // 53
    "status bar",             // 54
    "table",                  // 55
    "table cell",             // 56
    "table column header",    // 57
    "table row header",       // 58
    "tearoff menu item",      // 59
    "terminal",               // 60
    "text",                   // 61
    "toggle button",          // 62
    "tool bar",               // 63
    "tool tip",               // 64
    "tree",                   // 65
    "tree table",             // 66
    "unknown",                // 67
    "viewport",               // 68
    "window",                 // 69
    "extended",               // 70
    "header",                 // 71
    "footer",                 // 72
    "paragraph",              // 73
    "ruler",                  // 74
    "application",            // 75
    "autocomplete",           // 76
    "editbar",                // 77
    "embedded",               // 78
    "entry",                  // 79
    "chart",                  // 80
    "caption",                // 81
    "document frame",         // 82
    "heading",                // 83
    "page",                   // 84
    "section",                // 85
    "redundant object",       // 86
    "form",                   // 87
    "link",                   // 88
    "input method window",    // 89
    "table row",              // 90
    "tree item",              // 91
    "document spreadsheet",   // 92
    "document presentation",  // 93
    "document text",          // 94
    "document web",           // 95
    "document email",         // 96
    "comment",                // 97
    "list box",               // 98
    "grouping",               // 99
    "image map",              // 100
    "notification",           // 101
    "info bar",               // 102
    "level bar",              // 103
    "title bar",              // 104
    "block quote",            // 105
    "audio",                  // 106
    "video",                  // 107
    "definition",             // 108
    "article",                // 109
    "landmark",               // 110
    "log",                    // 111
    "marquee",                // 112
    "math",                   // 113
    "rating",                 // 114
    "timer",                  // 115
    "static",                 // 116
    "math fraction",          // 117
    "math root",              // 118
    "subscript",              // 119
    "superscript",            // 120
    "description list",       // 121
    "description term",       // 122
    "description value",      // 123
    "footnote",               // 124
    "content deletion",       // 125
    "content insertion",      // 126
    "mark",                   // 127
    "suggestion",             // 128
    "push button menu",       // 129
};
constexpr uint32_t kRoleCount = sizeof(kRoleNames) / sizeof(kRoleNames[0]);
static_assert(kRoleCount == 130, "AtspiRole table out of step with atspi-constants.h (ATSPI_ROLE_COUNT)");

}  // namespace

std::string RoleName(uint32_t role) {
  if (role < kRoleCount) return kRoleNames[role];
  return "unknown";
}

// The walk's row roles (IsRowRole) by role number, for the bulk cache's every child without a string each.
bool IsRowRoleId(uint32_t role) {
  static const std::vector<bool> rows = [] {
    std::vector<bool> v(kRoleCount);
    for (uint32_t r = 0; r < kRoleCount; ++r) v[r] = IsRowRole(kRoleNames[r]);
    return v;
  }();
  return role < kRoleCount && rows[role];
}

bool IsWindowRole(uint32_t role) {
  switch (role) {
    case kRoleFrame:
    case kRoleWindow:
    case kRoleDialog:
    case kRoleAlert:
    case kRoleFileChooser:
    case kRoleColorChooser:
    case kRoleFontChooser: return true;
    default: return false;
  }
}

bool IsCheckableRole(uint32_t role) {
  return role == kRoleCheckBox || role == kRoleCheckMenuItem || role == kRoleRadioButton ||
         role == kRoleRadioMenuItem || role == kRoleToggleButton;
}

// Text-entry roles: the only ones the password name heuristic applies to.
// Containers that carry no meaning of their own (the renderer's generic containers).
bool IsWrapperRole(uint32_t role) {
  const std::string r = role < kRoleCount ? kRoleNames[role] : "";
  return r == "filler" || r == "panel" || r == "section" || r == "unknown" || r == "invalid";
}

bool IsTextEntryRole(uint32_t role) {
  const std::string r = role < kRoleCount ? kRoleNames[role] : "";
  return r == "entry" || r == "text" || r == "password text" || r == "spin button" || r == "editbar";
}

bool IsDocumentRole(uint32_t role) { return role < kRoleCount && std::strncmp(kRoleNames[role], "document", 8) == 0; }

// GTK3's toggle cells (GtkBooleanCellAccessible) return the descriptions of
// their inherited cell actions as both names and localized names ("Expands or
// contracts the row in the tree view containing this cell"). An action is
// named by its name, never its description: these map back to GTK's names.
std::string ActionNameOf(const std::string& name) {
  static const std::pair<const char*, const char*> kGtkDescriptions[] = {
      {"Expands or contracts the row in the tree view containing this cell", "expand or contract"},
      {"Creates a widget in which the contents of the cell can be edited", "edit"},
      {"Activates the cell", "activate"},
      {"Toggles the cell", "toggle"},
  };
  for (const auto& [description, short_name] : kGtkDescriptions)
    if (name == description) return short_name;
  return name;
}

}  // namespace atspi
}  // namespace axsnap
