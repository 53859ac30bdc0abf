#!/usr/bin/env bash
# The Debian packages an axsnap container needs at run time (deploy/Dockerfile):
# the desktop's programs and the libraries the prebuilt addon links. Only
# what is missing is installed, so on a machine that has them (the test
# machine) it touches nothing.
set -euo pipefail

PACKAGES=(
  xvfb          # the X server
  dbus          # the session bus, which starts the AT-SPI bus on demand
  at-spi2-core  # the accessibility bus and registry
  libglib2.0-0  # GDBus, used by the addon
  libx11-6 libxext6 libxtst6 zlib1g
  libxres1      # pids of X-only windows (loaded at run time)
  fonts-dejavu-core
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)" = installed ] || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-runtime: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi
echo "install-runtime: installing ${missing[*]}"
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
apt-get clean
