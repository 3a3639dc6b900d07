/** True when the turn ended without EOS (seq_no_eos_mask). */
export function stoppedWithoutEos(reason) {
    return reason !== 'stop';
}
/** A turn succeeds exactly when its verdict is `correct` (the math verifier's and the code judge's alike). */
export function verdictSucceeded(verdict) {
    return verdict === 'correct';
}
//# sourceMappingURL=turn.js.map