"""The bounds every environment runs under, whatever its language: the same numbers as src/environments/bounds.ts
(and MAX_VERDICT_CHARS of src/environments/step-result.ts), which the workflow enforces; change them there and here
together (python/tests/test_environment_bounds.py compares them). docs/environments.md, "Bounds", explains them."""

#: Attempts a reset or step gets: a crash, a raise or a deadline passed is retried until this many have failed.
ENVIRONMENT_ATTEMPTS = 5
#: One step's observations (a reset's messages), in characters all together.
MAX_OBSERVATION_CHARS = 512 * 1024
#: The state a step hands to the next, in bytes of JSON (UTF-8, as JavaScript's JSON.stringify writes it).
MAX_STATE_BYTES = 64 * 1024
#: A verdict is a label for the UI and metrics, not a text.
MAX_VERDICT_CHARS = 64
