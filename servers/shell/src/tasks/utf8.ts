/**
 * Where a UTF-8 byte run can be cut without splitting a character: the end of the last complete
 * character. Bytes that are not UTF-8 text (no lead byte in the last four) are cut where asked.
 */
export function completeCharactersEnd(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if (isContinuationByte(byte)) continue;
    return sequenceLength(byte) > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** How many bytes at the start belong to a character that began before them (at most three). */
export function leadingContinuationBytes(bytes: Uint8Array): number {
  let count = 0;
  while (count < 3 && count < bytes.length && isContinuationByte(bytes[count]!)) count++;
  return count;
}

function isContinuationByte(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

function sequenceLength(leadByte: number): number {
  if (leadByte >= 0xf0) return 4;
  if (leadByte >= 0xe0) return 3;
  if (leadByte >= 0xc0) return 2;
  return 1;
}
