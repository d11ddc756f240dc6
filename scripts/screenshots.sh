#!/usr/bin/env bash
# Build the site and screenshot four pages in headless Chromium, to look at them: the
# index, one op page, the TensorDictModule entry and the persistence guide. The PNGs go
# to docs/_build/screenshots/ (or $1). Needs `chromium` (apt-get install chromium) or
# CHROMIUM=/path/to/chrome.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-docs/_build/screenshots}"
CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome)}"
bash scripts/docs.sh
mkdir -p "$OUT"
SITE="$(pwd)/docs/_build/html"
shot() {  # name, page (relative to the site), height
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1280,"$3" --screenshot="$OUT/$1.png" "file://$SITE/$2" 2>/dev/null
  echo "$OUT/$1.png"
}
shot index index.html 1400
shot op-page reference/pointwise.html 1600
shot tensordictmodule api/class-TensorDictModule.html 1600
shot persistence persistence.html 1600
