#!/usr/bin/env bash
# `npm start`: installs what is missing, starts the local stack, then runs the gateway and a worker until Ctrl-C.
# The stack keeps running afterwards (`npm run stack -- stop` stops it).
set -euo pipefail
source "$(dirname "$0")/node-env.sh"
bash infra/stack.sh start
# The local forge: started if built, else built in the background and started then; nothing here waits for a build.
bash infra/stack.sh start-later gitea || echo "[run] the local Gitea did not start (log: ${DOCENT_RUN_DIR:-${DOCENT_CACHE:-$HOME/.cache/docent}/run}/logs); docent runs without it" >&2
# The stack's credentials, then the secrets only `npm start` makes up (first run: created in the cache, mode 0600);
# a value already in the environment wins. `npm run gateway` and `npm run worker` do none of this.
while IFS='=' read -r name value; do [ -n "${!name:-}" ] || export "$name=$value"; done < <(bash infra/stack.sh env)
export DOCENT_SECRET_KEY="${DOCENT_SECRET_KEY:-$(bash infra/local-secret.sh secret-key)}"
CACHE="${DOCENT_CACHE:-$HOME/.cache/docent}"
metrics_token='$DOCENT_METRICS_TOKEN'
[ -n "${DOCENT_METRICS_TOKEN:-}" ] || { DOCENT_METRICS_TOKEN="$(bash infra/local-secret.sh metrics-token)"; metrics_token="\$(cat $CACHE/metrics-token)"; }
export DOCENT_METRICS_TOKEN
LOGS="${DOCENT_RUN_DIR:-$CACHE/run}/logs"
mkdir -p "$LOGS"
# A model's key alone, or an OpenAI-compatible server's address alone, is enough: the provider and model id follow
# (src/cli/local-model.ts; a value already in the environment wins).
while IFS='=' read -r name value; do if [ -n "$name" ]; then export "$name=$value"; fi; done < <(node dist/src/cli/main.js local-model 2>>"$LOGS/local-model.log" || true)
model_line="model                     none: agent jobs need DOCENT_MODEL_PROVIDER and DOCENT_MODEL (or DOCENT_MODELS, or only DOCENT_MODEL_API_KEY or DOCENT_MODEL_BASE_URL)"
if [ -n "${DOCENT_MODELS:-}" ]; then model_line="model                     the first of DOCENT_MODELS"
elif [ -n "${DOCENT_MODEL_PROVIDER:-}" ]; then model_line="model                     ${DOCENT_MODEL:-?} ($DOCENT_MODEL_PROVIDER${DOCENT_MODEL_BASE_URL:+ at $DOCENT_MODEL_BASE_URL})"
fi

node dist/src/worker.js >"$LOGS/worker.log" 2>&1 &
worker=$!
node dist/src/main.js >"$LOGS/gateway.log" 2>&1 &
gateway=$!
forge_watch=""
trap 'kill -TERM $gateway $worker $forge_watch 2>/dev/null; wait $gateway $worker 2>/dev/null; echo "[run] gateway and worker stopped"' EXIT INT TERM

http="http://127.0.0.1:${DOCENT_HTTP_PORT:-8080}"
for _ in $(seq 1 120); do
  curl -fsS "$http/readyz" >/dev/null 2>&1 && break
  kill -0 $gateway 2>/dev/null || { echo "[run] FAILED: gateway exited; log: $LOGS/gateway.log" >&2; tail -5 "$LOGS/gateway.log" >&2; exit 1; }
  sleep 0.5
done
curl -fsS "$http/readyz" >/dev/null || { echo "[run] FAILED: gateway not ready; $(curl -s "$http/readyz"); log: $LOGS/gateway.log" >&2; exit 1; }
node dist/src/cli/main.js check || { echo "[run] FAILED: worker self-check; log: $LOGS/worker.log" >&2; exit 1; }
# docent's own docs, served on the domain docent.local: a newcomer's first question about docent is answered and cited
# with nothing typed by hand (src/cli/self-docs.ts). Only changed pages are embedded again on later starts.
playground="$http/playground/"
echo "[run] ingesting docs/ for docent.local (log: $LOGS/self-docs.log)"
if self_key="$(node dist/src/cli/main.js self-docs docs --key-file "$CACHE/self-docs-key" --base-url "$http/docs" 2>"$LOGS/self-docs.log")"; then
  playground="$http/playground/?domain=docent.local&project=docent#assistantKey=$self_key"
else
  echo "[run] docent's own docs could not be ingested (the playground still works with your own domain): $(tail -1 "$LOGS/self-docs.log")" >&2
fi
# The first operator key (operator API under /v2/admin), kept in the cache; DOCENT_OPERATOR_KEY in the environment wins.
operator_key='$DOCENT_OPERATOR_KEY'
if [ -z "${DOCENT_OPERATOR_KEY:-}" ]; then
  if node dist/src/cli/main.js operator key ensure --key-file "$CACHE/operator-key" >>"$LOGS/self-docs.log" 2>&1; then
    operator_key="\$(cat $CACHE/operator-key)"
  else
    echo "[run] no operator key could be made: $(tail -1 "$LOGS/self-docs.log")" >&2
  fi
fi

# The local forge (src/cli/local-forge.ts): the repository local/docent-demo on the local Gitea, a project demo on it and
# its admin key in the cache (mode 0600), so a first job opens a pull request on this machine. A Gitea still being built
# joins in the background once it is up, and says so; the token stays in the stack's file.
demo_key_file="$CACHE/demo-admin-key"
gitea_setting() { bash infra/stack.sh env | sed -n "s/^$1=//p"; }
# Prints the repository's page; 3: the local Gitea is not up (yet).
local_forge() {
  local url token_file
  url=$(gitea_setting DOCENT_LOCAL_GITEA_URL) && token_file=$(gitea_setting DOCENT_LOCAL_GITEA_TOKEN_FILE)
  [ -n "$url" ] && [ -n "$token_file" ] && curl -fsS -o /dev/null "$url/api/healthz" 2>/dev/null || return 3
  DOCENT_PUBLIC_URL="${DOCENT_PUBLIC_URL:-$http}" node dist/src/cli/main.js local-forge --gitea-url "$url" --token-file "$token_file" \
    --sample infra/docent-demo --key-file "$demo_key_file" 2>>"$LOGS/local-forge.log"
}
forge_line="local forge               joins once the local Gitea is built and up (log: $LOGS/gitea-later.log)"
rc=0; demo_repo=$(local_forge) || rc=$?
if [ "$rc" = 0 ]; then
  forge_line="local forge               $demo_repo   (project demo; pull requests: $demo_repo/pulls)"
elif [ "$rc" = 3 ]; then
  (
    for _ in $(seq 1 720); do
      sleep 5
      rc=0; demo_repo=$(local_forge) || rc=$?
      [ "$rc" = 0 ] && { echo "[run] the local forge joined: $demo_repo (project demo, admin key: $demo_key_file; the first job printed above now works)"; exit 0; }
      [ "$rc" = 3 ] || { echo "[run] the local forge could not be connected: $(tail -1 "$LOGS/local-forge.log")" >&2; exit 1; }
    done
  ) &
  forge_watch=$!
else
  forge_line="local forge               could not be connected: $(tail -1 "$LOGS/local-forge.log")"
fi

cat <<TXT
docent is running
  REST, Connect, gRPC-web   $http        (readiness: $http/readyz)
  gRPC (h2c)                127.0.0.1:${DOCENT_GRPC_PORT:-8081}
  console                   $http/console/   (sign in with the operator key below)
  playground                $playground
  metrics                   curl -H "Authorization: Bearer $metrics_token" $http/metrics
  secret key                $CACHE/secret-key (webhooks, project secrets; DOCENT_SECRET_KEY)
  operator key              export DOCENT_OPERATOR_KEY="$operator_key"   (operator API, /v2/admin)
  $forge_line
  first job                 curl -s -X POST $http/v2/agent/demo/job -H "authorization: Bearer \$(cat $demo_key_file)" \\
                              -H 'content-type: application/json' -d '{"prompt":"Fix the typo in the README"}'
  $model_line
  Temporal Web UI           ${DOCENT_TEMPORAL_UI_URL:-http://127.0.0.1:8233}
  logs                      $LOGS
Ask the playground about docent itself (docs/ on the domain docent.local), or about your own docs.
Ctrl-C stops the gateway and the worker.
TXT
wait -n $gateway $worker
