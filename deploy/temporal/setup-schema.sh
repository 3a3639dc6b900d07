#!/bin/sh
# One-shot (temporal-schema-setup): create Temporal's default and visibility stores on
# Postgres and migrate them to the schema this admin-tools release ships. Safe to re-run on
# every `up`: `create` accepts an existing database, `setup-schema -v 0.0` only adds the
# version table, and `update-schema` applies only versions newer than the stored one.
# The password comes from the temporal_db_password compose secret, passed to the tool as SQL_PASSWORD in the
# environment, not on the command line.
set -eu
SQL_PASSWORD="$(cat /run/secrets/temporal_db_password)"
export SQL_PASSWORD

SCHEMA_DIR=/etc/temporal/schema/postgresql/v12

sql_tool() {
  temporal-sql-tool --plugin postgres12 --ep "$DB_HOST" -p "$DB_PORT" -u "$DB_USER" "$@"
}

setup_store() {
  db=$1
  schema=$2
  echo "Setting up $db from $schema"
  sql_tool --db "$db" create
  sql_tool --db "$db" setup-schema -v 0.0
  sql_tool --db "$db" update-schema -d "$schema"
}

# The database names deploy/temporal/server.yaml uses.
setup_store temporal "$SCHEMA_DIR/temporal/versioned"
setup_store temporal_visibility "$SCHEMA_DIR/visibility/versioned"
echo "Temporal schema is up to date"
