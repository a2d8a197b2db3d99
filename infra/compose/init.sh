#!/usr/bin/env bash
# Prepares docker-compose.yml's secrets on a new machine: writes .env (from .env.example, with random passwords,
# keys and tokens; mode 0600) unless it exists, and a private CA with the Temporal frontend's server certificate and
# docent's client certificate under infra/compose/certs/ unless they exist. Needs openssl.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CERTS="$ROOT/infra/compose/certs"
say() { printf '[compose-init] %s\n' "$*" >&2; }
# URL-safe: the MongoDB password goes into DOCENT_MONGO_URL.
token() { openssl rand -base64 32 | tr '+/' '-_' | tr -d '='; }

if [ -e "$ROOT/.env" ]; then
  say ".env exists: left as it is"
else
  (umask 077 && sed \
    -e "s|^DOCENT_MONGO_PASSWORD=.*|DOCENT_MONGO_PASSWORD=$(token)|" \
    -e "s|^DOCENT_ES_PASSWORD=.*|DOCENT_ES_PASSWORD=$(token)|" \
    -e "s|^DOCENT_SECRET_KEY=.*|DOCENT_SECRET_KEY=$(openssl rand -base64 32)|" \
    -e "s|^DOCENT_METRICS_TOKEN=.*|DOCENT_METRICS_TOKEN=$(token)|" \
    -e "s|^DOCENT_PAYLOAD_KEYS=.*|DOCENT_PAYLOAD_KEYS=k1:$(openssl rand -base64 32)|" \
    "$ROOT/.env.example" >"$ROOT/.env")
  say "wrote .env (mode 0600): keep it; losing DOCENT_SECRET_KEY or DOCENT_PAYLOAD_KEYS loses what they encrypt"
fi

if [ -e "$CERTS/ca.crt" ]; then
  say "$CERTS exists: left as it is"
  exit 0
fi
mkdir -p "$CERTS" && chmod 700 "$CERTS"
cd "$CERTS"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.crt -subj "/CN=docent compose CA" -days 825 2>/dev/null
issue() { # name, subject, extensions
  printf '%s\n' "$3" >"$1.ext"
  openssl req "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 825 -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
issue temporal-server "/CN=temporal-tls" "subjectAltName=DNS:temporal-tls,DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth"
issue docent-client "/CN=docent" "extendedKeyUsage=clientAuth"
# The containers read the keys as other users than the one running this script.
chmod 644 ./*.crt ./*.key && chmod 600 ca.key
say "wrote a CA and certificates to $CERTS (ca.key signs more clients; keep it off the servers)"
