#!/usr/bin/env bash
# `npm run bench [-- name ...]`: the project's Node 24, the local stack (started only if it is not running), then
# the benchmarks compiled with tsconfig.bench.json. Prints figures; never fails on timing.
set -euo pipefail
source "$(dirname "$0")/node-env.sh"
bash infra/stack.sh start
bash infra/ensure-chromium.sh
# The stack's credentials, as `npm start` takes them; a value already in the environment wins.
while IFS='=' read -r name value; do [ -n "${!name:-}" ] || export "$name=$value"; done < <(bash infra/stack.sh env)
bash infra/compile.sh tsconfig.bench.json
exec node dist/bench/run.js "$@"
