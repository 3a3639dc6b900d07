/**
 * Migration 020: the order in which groups became visible as finished, for `RolloutClient.completions`.
 *
 * A group's finished_at is the clock inside the transaction that stores its last member, and that transaction commits
 * later. A reader that walks finished_at with a cursor can pass a group whose transaction was still open when it read
 * (an earlier finished_at, committed after a later one), and never yield it: seen in CI as a stream that waited for
 * ever on one group of five. The cursor is now the id of the transaction that finished the group (finished_xid), and
 * a reader only takes groups whose transaction is older than every one still open (`pg_snapshot_xmin`): any group
 * that becomes visible later has a larger id than every group yielded before it. A long open transaction anywhere in
 * the cluster holds the stream back for as long as it stays open; it never loses a group.
 *
 * Groups finished before this migration share the id 1 (they are all visible) and follow in group id order.
 *
 * Shipped: never edit, add a migration.
 */
export const FINISHED_ORDER_SQL = `
  ALTER TABLE rollout_groups ADD COLUMN finished_xid xid8;
  UPDATE rollout_groups SET finished_xid = '1'::xid8 WHERE finished_at IS NOT NULL;
  CREATE INDEX rollout_groups_finished_order ON rollout_groups (run_id, finished_xid, group_id) WHERE finished_xid IS NOT NULL;
`;
