#!/bin/sh
# The Temporal server reads its database password from POSTGRES_PWD only: set it from the compose secret here,
# so the password is in no compose file and no `docker inspect` output, then run the image's own entrypoint.
set -eu
POSTGRES_PWD="$(cat /run/secrets/temporal_db_password)"
export POSTGRES_PWD
exec /etc/temporal/entrypoint.sh "$@"
