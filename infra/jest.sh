#!/usr/bin/env bash
# `npm run test:unit` and `npm run jest -- <args>`: jest with the project's Node and the flags infra/test.sh gives it,
# without building or starting the stack (integration files need `npm run stack -- start`, e2e files `npm run build`).
set -euo pipefail
DOCENT_SKIP_BUILD=1 source "$(dirname "$0")/node-env.sh"
# Jest 30 on Node 24 loads ESM-only packages (ai, @octokit/rest) through require(esm) with vm modules on.
export NODE_OPTIONS="--experimental-vm-modules --disable-warning=ExperimentalWarning ${NODE_OPTIONS:-}"
exec jest "$@"
