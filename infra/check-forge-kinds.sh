#!/usr/bin/env bash
# `npm run lint`: a forge's kind is tested only inside the forge modules (src/forges/). Everywhere else asks the
# forge interface (src/forges/forge.ts), so a new kind is a new module, not a hunt for `kind === 'github'`
# (docs/decisions/2026-12-02-forge-kinds.md).
set -euo pipefail
cd "$(dirname "$0")/.."
kinds='github|gitea|gitlab'
pattern="[!=]==?[[:space:]]*['\"]($kinds)['\"]|['\"]($kinds)['\"][[:space:]]*[!=]==?|case[[:space:]]+['\"]($kinds)['\"]"
if found=$(grep -rnE "$pattern" src activities workflows --include='*.ts' --include='*.tsx' | grep -vE '^src/(forges|gen)/'); then
  echo "[lint] a forge kind is tested outside src/forges/ (ask the forge interface, src/forges/forge.ts, instead):" >&2
  echo "$found" >&2
  exit 1
fi
