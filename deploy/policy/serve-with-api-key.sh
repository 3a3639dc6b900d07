#!/bin/sh
# Starts the inference server command given (sglang.launch_server …) with --api-key from the compose secret:
# every request must then carry `Authorization: Bearer <key>`, which the GPU worker sends from
# RATCHET_POLICY_API_KEY_FILE. The key stays out of the compose file.
set -eu
exec "$@" --api-key "$(cat /run/secrets/policy_api_key)"
