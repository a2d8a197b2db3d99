#!/usr/bin/env bash
# `npm run bench [-- name ...]`: the project's Node 24, the local stack (started only if it is not running), then
# the benchmarks compiled with tsconfig.bench.json. Prints figures; never fails on timing.
set -euo pipefail
source "$(dirname "$0")/node-env.sh"
bash infra/stack.sh start
tsc -p tsconfig.bench.json
exec node dist/bench/run.js "$@"
