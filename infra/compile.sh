#!/usr/bin/env bash
# `bash infra/compile.sh <tsconfig> [tsc flags]`: tsc with that config, then every bin of package.json made runnable. tsc writes each
# file 0644, so after a build from an empty dist/ `npx docent` answered "Permission denied" (issue 56); every build of
# dist/ (npm run build, infra/node-env.sh, the benchmarks' and the soak's) goes through here.
set -euo pipefail
cd "$(dirname "$0")/.."
tsc -p "$@"
node -e 'for (const bin of Object.values(require("./package.json").bin ?? {})) require("node:fs").chmodSync(bin, 0o755)'
