#!/bin/sh
# Runs once, when the postgres container starts on an empty data volume
# (docker-entrypoint-initdb.d). Temporal owns its two stores; Ratchet owns its own database
# and applies its own migrations there on start.
# The roles' passwords are the compose secrets (deploy/secrets/generate.sh makes them), read here from
# /run/secrets and handed to psql as variables, so they are never written in the compose file or an env var.
# No `set -u`: the entrypoint sources this file when it is not executable.
set -e

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v temporal_password="$(cat /run/secrets/temporal_db_password)" \
  -v ratchet_password="$(cat /run/secrets/ratchet_db_password)" <<'SQL'
-- CREATEDB: temporal-sql-tool's `create` needs it even when the database already exists.
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'temporal_password';
CREATE ROLE ratchet LOGIN PASSWORD :'ratchet_password';

CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
CREATE DATABASE ratchet OWNER ratchet;
SQL
