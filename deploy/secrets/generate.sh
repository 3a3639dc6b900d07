#!/bin/sh
# Makes the compose stack's secrets, once: random database passwords and the policy server's API key, one file
# each in this folder (git ignores them). Run it before the first `docker compose up`; it never overwrites a
# secret that exists (the database roles keep the passwords they were created with). To bring your own, write
# the file yourself instead.
#
# Compose bind-mounts each file into /run/secrets/<name> with the file's own mode, and the containers read them
# as different users (postgres, temporal, node), so the files are 0644 and this folder, 0700, is what keeps
# other users of the host out.
set -eu
cd "$(dirname "$0")"
chmod 700 .
for name in postgres_password temporal_db_password ratchet_db_password policy_api_key; do
  [ -s "$name" ] && continue
  # Hex: safe inside a URL and a shell word, 256 bits.
  od -An -N32 -tx1 /dev/urandom | tr -d ' \n' > "$name"
  chmod 644 "$name"
  echo "made $name"
done
