import { seededRandom } from '../data/random';

/**
 * The order in which a cycle visits the labels.
 *  - 'frequent': most frequent current label first (Choi & Park §3.4),
 *    recomputed from the labeling at the start of every cycle (or taken from
 *    `counts`, the pixels of each label in it, when the caller has them);
 *    ties go to the smaller label so the order is deterministic.
 *  - 'sequential': 0, 1, …, L−1.
 *  - 'random': a seeded shuffle, a different one every cycle.
 */
export type LabelOrder = 'frequent' | 'sequential' | 'random';

export const LABEL_ORDERS: readonly LabelOrder[] = ['frequent', 'sequential', 'random'];

export function labelOrderForCycle(
  order: LabelOrder,
  labels: ArrayLike<number>,
  labelCount: number,
  cycle: number,
  seed: number,
  counts?: ArrayLike<number>,
): number[] {
  const all = Array.from({ length: labelCount }, (_, i) => i);
  if (order === 'sequential') return all;
  if (order === 'random') {
    const rand = seededRandom((seed ^ Math.imul(cycle + 1, 0x9e3779b1)) >>> 0);
    for (let i = all.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      const t = all[i]; all[i] = all[j]; all[j] = t;
    }
    return all;
  }
  const hist = counts ?? histogram(labels, labelCount);
  if (hist.length !== labelCount) throw new Error(`label order: ${hist.length} label counts for ${labelCount} labels`);
  return all.sort((a, b) => hist[b] - hist[a] || a - b);
}

/** Pixels of each label. */
function histogram(labels: ArrayLike<number>, labelCount: number): Float64Array {
  const hist = new Float64Array(labelCount);
  for (let p = 0; p < labels.length; p++) hist[labels[p]]++;
  return hist;
}
