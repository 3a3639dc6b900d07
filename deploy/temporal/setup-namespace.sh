#!/bin/sh
# One-shot (temporal-namespace-setup): once the server answers, create the namespace Ratchet
# runs in and register the custom search attributes its workflows upsert. Idempotent: the
# namespace and each attribute are created only when missing.
set -eu

: "${TEMPORAL_ADDRESS:=temporal:7233}"
: "${TEMPORAL_NAMESPACE:=default}"
: "${TEMPORAL_NAMESPACE_RETENTION:=168h}"
: "${RATCHET_SEARCH_ATTRIBUTES:?name=type list of search attributes to register}"

# The frontend port opens before the namespace registry and search-attribute cache are
# ready, so each call is retried rather than failed on the first refusal.
retry() {
  attempt=1
  until "$@"; do
    if [ "$attempt" -ge 30 ]; then
      echo "giving up after $attempt attempts: $*" >&2
      return 1
    fi
    attempt=$((attempt + 1))
    sleep 2
  done
}

namespace_exists() {
  temporal operator namespace describe --namespace "$TEMPORAL_NAMESPACE" \
    --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1
}

# A create that timed out may still have landed, so a failed create counts as done when
# the namespace (or attribute) is there afterwards.
create_namespace() {
  namespace_exists || temporal operator namespace create --namespace "$TEMPORAL_NAMESPACE" \
    --retention "$TEMPORAL_NAMESPACE_RETENTION" --address "$TEMPORAL_ADDRESS" || namespace_exists
}

attribute_exists() {
  temporal operator search-attribute list --namespace "$TEMPORAL_NAMESPACE" \
    --address "$TEMPORAL_ADDRESS" 2>/dev/null | grep -qw "$1"
}

create_attribute() {
  attribute_exists "$1" || temporal operator search-attribute create --namespace "$TEMPORAL_NAMESPACE" \
    --address "$TEMPORAL_ADDRESS" --name "$1" --type "$2" || attribute_exists "$1"
}

retry temporal operator cluster health --address "$TEMPORAL_ADDRESS"
retry create_namespace

for attribute in $(echo "$RATCHET_SEARCH_ATTRIBUTES" | tr ',' ' '); do
  name=${attribute%%=*}
  type=${attribute#*=}
  retry create_attribute "$name" "$type"
  echo "Search attribute $name ($type) registered"
done
echo "Namespace $TEMPORAL_NAMESPACE is ready"
