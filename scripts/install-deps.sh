#!/usr/bin/env bash
# Installs the Debian 12 packages axsnap's Linux tests, benchmark, demo and
# macOS compile check need.
#
# Idempotent: when every package is already installed it returns at once
# without touching apt. Runs as root without sudo; uses sudo only when not
# root and sudo exists. Fails loudly on any error.
#
#   scripts/install-deps.sh           install what is missing
#   scripts/install-deps.sh --check   exit 1 (and list them) if any are missing
set -euo pipefail

PACKAGES=(
  # headless desktop: X server, session bus, accessibility bus + registry
  xvfb
  dbus
  at-spi2-core
  # apps driven by the tests
  gtk-3-examples
  zenity
  galculator
  # test/apps/windows-app.py (a GTK3 app of the tests' own: menu bar, combo box, dialog)
  python3-gi
  gir1.2-gtk-3.0
  chromium
  fonts-dejavu-core
  # OCR (issue 20): Tesseract 5 (dlopen'd by the addon) with English and Chinese data; a CJK font and
  # cairo for test/apps/drawn-text.py
  tesseract-ocr
  tesseract-ocr-eng
  tesseract-ocr-chi-sim
  fonts-wqy-zenhei
  python3-gi-cairo
  # the agent's desktop (lib/observe/agent-desktop/): openbox for `axsnap desktop start --wm`; xdotool reads
  # the pointer, focus and stacking of the "user's" desktop in test/linux/agent-desktop.test.ts
  openbox
  xdotool
  # docs/mcp-http.md's curl example, run by test/doors/docs-examples.test.ts
  curl
  # X11 clients with no accessibility tree (test/linux/x11-apps.test.ts), xwininfo
  # for startApp's windowClass mode, libXRes for their pids (loaded at run time)
  xterm
  x11-utils
  tk
  libxres1
  # building the native addon (node-gyp)
  g++
  make
  python3
  pkg-config
  libglib2.0-dev
  libx11-dev
  libxtst-dev
  libxext-dev
  zlib1g-dev
  # PipeWire's headers for the Mutter route's one-frame reader (the library itself is loaded at run time)
  libpipewire-0.3-dev
  # macOS compile check without a Mac (scripts/check-macos.mjs)
  clang-16
  # C/C++/Objective-C++ formatting check (scripts/check-cc-format.mjs, in npm run lint)
  clang-format-16
  # issue 32: real tasks in the apps agents are judged on (OSWorld's set and GNOME's GTK4 apps).
  # LibreOffice exposes AT-SPI only through its GTK3 VCL plugin (SAL_USE_VCLPLUGIN=gtk3).
  mousepad
  gtk-4-examples
  nautilus
  gnome-text-editor
  gnome-calculator
  libreoffice-calc
  libreoffice-writer
  libreoffice-impress
  libreoffice-gtk3
  gimp
  # GTK2's accessibility bridge (GIMP 2.10 is GTK2): loaded with GTK_MODULES=gail:atk-bridge
  libatk-adaptor
  libgail-common
  vlc
  thunderbird
  qtbase5-examples
  # issue 36: the agent's desktop on Wayland (lib/observe/agent-desktop/wayland.ts, startDesktop({ wayland: true }) in
  # scripts/desktop.mjs): headless gnome-shell (pulls mutter), PipeWire with pw-cli (pipewire-bin) and WirePlumber
  # (a ScreenCast stream is never linked without it), libpipewire's headers for the addon's capture. Never
  # xdg-desktop-portal*: installed, every GTK app on the X11 desktops' buses activates the portals.
  gnome-shell
  pipewire
  pipewire-bin
  wireplumber
  libpipewire-0.3-dev
  # issue 36: a Wayland compositor other than GNOME's (test/linux/wayland-sway.test.ts, test/support/sway.ts):
  # sway 1.7 and swaymsg, headless; its install took 15 s here (11 packages, 6 MB, recommends included)
  sway
  # benchmark baseline and leak check
  python3-pyatspi
  valgrind
)

die() {
  echo "install-deps: $*" >&2
  exit 1
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [ "$status" != "installed" ]; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

if [ "${1:-}" = "--check" ]; then
  echo "install-deps: missing: ${missing[*]}" >&2
  exit 1
fi

command -v apt-get >/dev/null 2>&1 || die "apt-get not found; this script supports Debian/Ubuntu only (missing: ${missing[*]})"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and no sudo; run as root (missing: ${missing[*]})"
  SUDO=(sudo)
fi

echo "install-deps: installing: ${missing[*]}"
start=$(date +%s)

# Refresh package lists only when they are missing or older than a day.
lists=/var/lib/apt/lists
if [ -z "$(find "$lists" -maxdepth 1 -name '*_Packages*' -mtime -1 -print -quit 2>/dev/null)" ]; then
  echo "install-deps: apt-get update (package lists missing or older than a day)"
  "${SUDO[@]}" apt-get update || die "apt-get update failed"
fi

"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}" ||
  die "apt-get install failed for: ${missing[*]}"

# Verify: apt can exit 0 and still leave a package unconfigured.
for pkg in "${missing[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "installed" ] || die "$pkg is not installed after apt-get install (status: ${status:-none})"
done

echo "install-deps: done in $(($(date +%s) - start)) s"
