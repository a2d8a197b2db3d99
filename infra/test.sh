#!/usr/bin/env bash
# `npm test`: installs what is missing, starts the local stack, type-checks and runs every jest suite.
set -euo pipefail
source "$(dirname "$0")/node-env.sh"
echo "[test] $(node --version), $(buf --version 2>/dev/null | head -1 | sed 's/^/buf /')" >&2
bash infra/stack.sh start
tsc -p tsconfig.json --noEmit
buf lint
exec jest "$@"
