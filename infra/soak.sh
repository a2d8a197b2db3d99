#!/usr/bin/env bash
# `npm run soak -- --minutes N [--seed S] [--faults kind,kind] [--fault-count K]`: the project's Node 24, a build, then
# soak/run.ts (docs/reliability.md). The soak starts its own stack on other ports (17233/18233/27117/9280) in its run
# folder and never touches the shared one; whatever happens, that private stack is stopped at the end.
set -euo pipefail
source "$(dirname "$0")/node-env.sh"
# The soak's processes must reach its private stack only: no shared-stack setting comes through from the caller.
unset DOCENT_MONGO_URL DOCENT_ES_URL DOCENT_ES_USERNAME DOCENT_ES_PASSWORD DOCENT_TEMPORAL_ADDRESS DOCENT_WORKFLOW_BUNDLE
bash infra/compile.sh tsconfig.soak.json
node dist/soak/run.js "$@" && status=0 || status=$?
# soak/run.ts stops its stack itself; this catches a harness that died before it could.
for dir in soak-runs/*/stack; do
  [ -d "$dir" ] || continue
  for part in temporal ferretdb elasticsearch; do
    if [ -f "$dir/$part.pid" ]; then
      DOCENT_RUN_DIR="$dir" DOCENT_TEMPORAL_PORT=17233 DOCENT_TEMPORAL_UI_PORT=18233 DOCENT_MONGO_PORT=27117 DOCENT_ES_PORT=9280 \
        bash infra/stack.sh stop "$part" || true
    fi
  done
done
exit "$status"
