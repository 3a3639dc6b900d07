/**
 * Migration 016: what each inference server serves (issue 33). A version carries the publisher's probe reference
 * (src/policy/weights-proof.ts); each GPU worker records, per server and version, when the load was asked, when it
 * landed, the probe's figures and its verdict, and which version its server serves now. `ratchet policy status`, the
 * run page and /metrics read these rows; a publisher waits on the NOTIFY.
 */
export const SERVED_WEIGHTS_SQL = `
  ALTER TABLE policy_versions ADD COLUMN probe_reference jsonb;

  -- One row per server and version it was asked to load. verdict: loading (asked, not yet decided), proven (the probe
  -- matched the reference within the bounds), unproven (served without a proof: no reference, or a backend that cannot
  -- score), refused (never served under that tag: the load or the probe failed; error_type and error say why).
  CREATE TABLE served_weights (
    server text NOT NULL,
    version int NOT NULL,
    requested_at timestamptz NOT NULL DEFAULT now(),
    loaded_at timestamptz,
    decided_at timestamptz,
    verdict text NOT NULL CHECK (verdict IN ('loading', 'proven', 'unproven', 'refused')),
    probe_tokens int,
    mean_abs_delta double precision,
    max_abs_delta double precision,
    error_type text,
    error text,
    PRIMARY KEY (server, version)
  );
  -- The version each server serves now (its tokens carry this tag), and since when; NULL version: serving nothing
  -- Ratchet can vouch for (a failed reload that could not be undone), so its worker takes no turn.
  CREATE TABLE server_weights (
    server text PRIMARY KEY,
    version int,
    since timestamptz NOT NULL DEFAULT now(),
    detail text
  );

  CREATE FUNCTION ratchet_publish_policy_version(new_version int, weights text, reference jsonb) RETURNS void
  LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM ratchet_publish_policy_version(new_version, weights);
    UPDATE policy_versions SET probe_reference = reference WHERE version = new_version;
  END $$;
`;
