/** True when the turn ended without EOS (seq_no_eos_mask). */
export function stoppedWithoutEos(reason) {
    return reason !== 'stop';
}
