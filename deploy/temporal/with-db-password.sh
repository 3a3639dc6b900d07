#!/bin/sh
# Starts the Temporal server on deploy/temporal/server.yaml, the config the test suite's real server runs
# (src/stack/temporal-server.ts), with the database password from the compose secret: it is in no compose file and
# no `docker inspect` output. The server renders the file as a template from the environment (DB_HOST, DB_PASSWORD, ...).
set -eu
DB_PASSWORD="$(cat /run/secrets/temporal_db_password)"
export DB_PASSWORD
exec temporal-server --config-file /etc/temporal/ratchet/server.yaml --allow-no-auth start
