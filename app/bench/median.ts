/** The median of `v` (the mean of the middle two for an even count); `v` is left as it is. */
export function median(v: readonly number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
