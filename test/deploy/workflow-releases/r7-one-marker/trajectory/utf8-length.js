/**
 * The number of bytes `text` takes as UTF-8, which is what Temporal's id and payload limits count. Written
 * out rather than using TextEncoder so the workflow bundle can call it without encoding a 2 MB copy.
 */
export function utf8Length(text) {
    let bytes = 0;
    for (let i = 0; i < text.length; i++) {
        const unit = text.charCodeAt(i);
        if (unit < 0x80)
            bytes += 1;
        else if (unit < 0x800)
            bytes += 2;
        else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
            bytes += 4;
            i++;
        }
        else
            bytes += 3; // the rest of the BMP, and a lone surrogate (encoded as U+FFFD)
    }
    return bytes;
}
function isLowSurrogate(unit) {
    return unit >= 0xdc00 && unit <= 0xdfff;
}
/**
 * The size of `value` as JSON in UTF-8 bytes when that is over `limit`, else undefined. A UTF-16 unit is at
 * most 3 bytes, so JSON too short to be over skips counting bytes one by one (most requests do).
 */
export function jsonBytesOver(value, limit) {
    const json = JSON.stringify(value);
    if (json.length * 3 <= limit)
        return undefined;
    const bytes = utf8Length(json);
    return bytes > limit ? bytes : undefined;
}
//# sourceMappingURL=utf8-length.js.map