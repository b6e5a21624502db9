#!/usr/bin/env bash
# Install what the site's browser tests need from Debian: chromium (driven by
# Playwright through executable_path, never `playwright install`), fonts for
# text and MathML layout, and a headless Java runtime for the vnu HTML validator.
# Idempotent: when everything is present it only checks and exits.
set -euo pipefail

PACKAGES=(chromium fonts-liberation fonts-texgyre-math default-jre-headless)

missing=()
for pkg in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-browser: all present (${PACKAGES[*]})"
    exit 0
fi

echo "install-browser: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
test -x /usr/bin/chromium
echo "install-browser: done ($(/usr/bin/chromium --version 2>/dev/null || echo chromium))"
