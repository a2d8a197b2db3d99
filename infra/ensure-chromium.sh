#!/usr/bin/env bash
# The browser tests (test/e2e/playground.test.ts, test/e2e/widget.test.ts) and the widget-ttft benchmark drive Debian's
# chromium through playwright-core; nothing downloads a browser. Installs it when missing.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "[setup] /usr/bin/chromium is missing and installing it needs root: sudo apt-get install -y chromium" >&2
  exit 1
fi
echo "[setup] apt-get install chromium (for the browser tests)" >&2
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
