/** Edit distance (insertions, deletions, substitutions), for "did you mean" on a mistyped name. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  }
  return d[a.length][b.length];
}

/**
 * The name of `names` closest to `name` when it is close enough to be a
 * slip (within a third of its length, at least 1; a prefix counts as 1;
 * case ignored), else undefined.
 */
export function closestName(name: string, names: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const near = names.map((c) => ({ c, d: Math.min(editDistance(lower, c.toLowerCase()), c.toLowerCase().startsWith(lower) ? 1 : Infinity) }))
    .filter((x) => x.d <= Math.max(1, Math.floor(x.c.length / 3)))
    .sort((x, y) => x.d - y.d);
  return near[0]?.c;
}
