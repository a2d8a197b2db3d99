#!/usr/bin/env bash
# `npm test`: installs what is missing, starts the local stack, type-checks and runs every jest suite.
set -euo pipefail
# The build emits without its own type check (3 s of wall, 6 s of CPU): the check of tsconfig.json below covers it.
build_unchecked=1
source "$(dirname "$0")/node-env.sh"
# Gitea's first build takes about 20 minutes on a new machine: it starts first, in the background, and the tests that
# need Gitea wait for it (test/support/gitea.ts); a build already in the cache makes this return at once.
bash infra/stack.sh install gitea >/dev/null 2>&1 &
echo "[test] $(node --version), $(buf --version 2>/dev/null | head -1 | sed 's/^/buf /')" >&2
# The suite runs its workflows on a Temporal dev server of its own, in memory (test/support/global-setup.js): the CLI
# is installed, the stack's own Temporal is neither needed nor filled with test jobs.
bash infra/stack.sh install temporal
# Before the stack starts beside the checks: both may need apt-get, which takes one lock.
bash infra/ensure-chromium.sh
# An Elasticsearch node this run starts compiles with C1 only: a cold node's C2 compiling cost more CPU during the
# suite than its faster code saved (docs/decisions/2026-11-24-test-suite-time.md, "Elasticsearch on C1 for `npm test`"). A node already running is kept as it is.
# The stack starts while the checks below run: a stopped Elasticsearch takes about 9 s to answer, the checks about 7 s.
DOCENT_ES_JAVA_OPTS="${DOCENT_ES_JAVA_OPTS--XX:TieredStopAtLevel=1}" bash infra/stack.sh start ferretdb elasticsearch model &
stack=$!
# The type check starts from the last run's results (tsc --incremental, its state kept in the machine's cache): tsc
# rechecks only files whose text, or whose dependencies' declarations, differ. A fresh clone of a commit one edit away
# checked in about 2 s of wall instead of 6 (docs/decisions/2026-12-02-suite-under-420.md). The state is copied in and
# out, since tsc records paths relative to its file: the same place in every checkout.
check_state="${DOCENT_CACHE:-$HOME/.cache/docent}/tsc-check.tsbuildinfo"
mkdir -p "$(dirname "$check_state")"
[ -f "$check_state" ] && cp "$check_state" dist/.tsc-check.tsbuildinfo
tsc -p tsconfig.json --noEmit --incremental --tsBuildInfoFile dist/.tsc-check.tsbuildinfo
cp dist/.tsc-check.tsbuildinfo "$check_state.$$" && mv "$check_state.$$" "$check_state"
tsc -p playground/tsconfig.json
tsc -p widget/tsconfig.json
buf lint
npm run lint
wait "$stack" || { echo "[test] the local stack did not start (above: which part and its log)" >&2; exit 1; }
# Jest 30 on Node 24 loads ESM-only packages (ai, @octokit/rest) through require(esm) with vm modules on.
export NODE_OPTIONS="--experimental-vm-modules --disable-warning=ExperimentalWarning ${NODE_OPTIONS:-}"
exec jest "$@"
