// A line diff of two prompt versions: the longest common subsequence of their lines.

const MAX_CELLS = 4_000_000;

/** `[{kind: 'same' | 'removed' | 'added', text}]`, or null when the versions are too large to compare here. */
export function diffLines(before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  if (midA.length * midB.length > MAX_CELLS) return null;
  // lengths[i][j]: the LCS of midA[i..] and midB[j..].
  const width = midB.length + 1;
  const lengths = new Uint32Array((midA.length + 1) * width);
  for (let i = midA.length - 1; i >= 0; i--) {
    for (let j = midB.length - 1; j >= 0; j--) {
      lengths[i * width + j] = midA[i] === midB[j] ? lengths[(i + 1) * width + j + 1] + 1 : Math.max(lengths[(i + 1) * width + j], lengths[i * width + j + 1]);
    }
  }
  const lines = a.slice(0, start).map((text) => ({ kind: 'same', text }));
  let i = 0;
  let j = 0;
  while (i < midA.length || j < midB.length) {
    if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
      lines.push({ kind: 'same', text: midA[i] });
      i++;
      j++;
    } else if (i < midA.length && (j === midB.length || lengths[(i + 1) * width + j] >= lengths[i * width + j + 1])) {
      // Removed lines before the lines that replace them, as diff tools show them.
      lines.push({ kind: 'removed', text: midA[i++] });
    } else {
      lines.push({ kind: 'added', text: midB[j++] });
    }
  }
  for (const text of a.slice(endA)) lines.push({ kind: 'same', text });
  return lines;
}
