#!/usr/bin/env bash
# Prints one secret of the local set-up (`npm start`, infra/stack.sh), creating it on first use as
# <DOCENT_CACHE>/<name>: 32 random bytes in base64, mode 0600. The gateway and worker never read these files
# themselves: `npm run gateway`, `npm run worker` and compose take their secrets from the environment only.
# Usage: infra/local-secret.sh secret-key|metrics-token|mongo-password|es-password
set -euo pipefail
name=${1:-}
case "$name" in secret-key | metrics-token | mongo-password | es-password) ;; *)
  echo "usage: $0 secret-key|metrics-token|mongo-password|es-password" >&2
  exit 2
  ;;
esac
CACHE="${DOCENT_CACHE:-$HOME/.cache/docent}"
file="$CACHE/$name"
if [ ! -s "$file" ]; then
  mkdir -p "$CACHE"
  tmp=$(mktemp "$CACHE/.$name.XXXXXX") # mktemp creates the file with mode 0600
  # Passwords go into URLs (mongodb://user:password@…): the URL-safe alphabet needs no escaping there.
  if [ "$name" = secret-key ]; then head -c 32 /dev/urandom | base64 -w0 >"$tmp"; else head -c 32 /dev/urandom | base64 -w0 | tr '+/' '-_' | tr -d '=' >"$tmp"; fi
  # A hard link never replaces an existing file, so two first runs at once agree on one value.
  ln "$tmp" "$file" 2>/dev/null || true
  rm -f "$tmp"
fi
mode=$(stat -c %a "$file")
[ "$mode" = 600 ] || { echo "[secret] $file has mode $mode; it holds a secret: chmod 600 it" >&2; exit 1; }
cat "$file"
