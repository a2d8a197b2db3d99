#!/usr/bin/env bash
# `npm run docent -- <command>`: the docent CLI against the local stack `npm start` runs, with the same credentials
# (infra/stack.sh env) and the secret key `npm start` made, unless the environment sets them. The installed `docent`
# command (dist/src/cli/main.js) reads the environment only.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
while IFS='=' read -r name value; do [ -n "${!name:-}" ] || export "$name=$value"; done < <(bash "$HERE/stack.sh" env)
key="${DOCENT_CACHE:-$HOME/.cache/docent}/secret-key"
if [ -z "${DOCENT_SECRET_KEY:-}" ] && [ -s "$key" ]; then DOCENT_SECRET_KEY="$(bash "$HERE/local-secret.sh" secret-key)"; export DOCENT_SECRET_KEY; fi
exec node "$HERE/../dist/src/cli/main.js" "$@"
