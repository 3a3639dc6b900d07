import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
/** Custom search attributes every trajectory upserts, so Temporal UI can filter on them. */
export const QID = defineSearchAttributeKey('RatchetQid', SearchAttributeType.KEYWORD);
export const TURN = defineSearchAttributeKey('RatchetTurn', SearchAttributeType.INT);
export const SUCCESSES = defineSearchAttributeKey('RatchetSuccesses', SearchAttributeType.INT);
export const POLICY_VERSION = defineSearchAttributeKey('RatchetPolicyVersion', SearchAttributeType.INT);
export const STATUS = defineSearchAttributeKey('RatchetStatus', SearchAttributeType.KEYWORD);
export const RATCHET_SEARCH_ATTRIBUTES = [QID, TURN, SUCCESSES, POLICY_VERSION, STATUS];
//# sourceMappingURL=search-attributes.js.map