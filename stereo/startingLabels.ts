import { wtaFromMatcher, wtaInit, type StereoEnergy } from '../costs';
import { costsOnDemand, volumeOf } from '../data/energy';
import type { MoveSolver } from '../expansion/moveSolver';
import type { MatchParams } from './params';
import { optionError } from '../data/errors';

/** The initial labeling of a match: the WTA over a window (on the device where the solver offers it), zeros, or a given map. */

/** Initial labeling on the host: WTA over a window, all zero, or a given map. */
export function initialLabeling(energy: StereoEnergy, p: MatchParams, given?: Uint16Array): Uint16Array {
  const n = energy.width * energy.height;
  if (given) {
    const m = energy.matcher.options.minDisp;
    if (given.length !== n) throw optionError('range', 'match', 'initialLabels', given, `one disparity per pixel of the ${energy.width}×${energy.height} images (${n})`);
    const labels = new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      const l = given[i] - m;
      if (l < 0 || l >= energy.labels) throw optionError('range', 'match', 'initialLabels', given, `disparities in ${m}..${m + energy.labels - 1} (pixel ${i} holds ${given[i]})`);
      labels[i] = l;
    }
    return labels;
  }
  if (p.init === 'zero') return new Uint16Array(n);
  if (costsOnDemand(energy)) return wtaFromMatcher(energy.matcher, energy.labels, p.window);
  return wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, p.window, energy.matcher.options.threads);
}

/** The initial labeling of a run: the solver's WTA where it offers one (on the device), else initialLabeling's. */
export async function startingLabels(energy: StereoEnergy, p: MatchParams, solver: MoveSolver, given?: Uint16Array): Promise<Uint16Array> {
  if (!given && p.init === 'wta' && solver.initialWta) {
    const labels = await solver.initialWta(p.window);
    if (labels) return labels;
  }
  return initialLabeling(energy, p, given);
}

/** The starting labels of the views stacked: a given map for the first view, the WTA (on the device when the solver offers it) or zeros elsewhere. */
export async function startingLabelsOfViews(views: StereoEnergy[], p: MatchParams, solver: MoveSolver, given?: Uint16Array): Promise<Uint16Array> {
  if (views.length === 1) return startingLabels(views[0], p, solver, given);
  const n = views[0].width * views[0].height;
  const device = p.init === 'wta' && solver.initialWta ? await solver.initialWta(p.window) : undefined;
  const labels = new Uint16Array(n * views.length);
  views.forEach((v, i) => labels.set(i === 0 && given ? initialLabeling(v, p, given) : device ? device.subarray(i * n, (i + 1) * n) : initialLabeling(v, p), i * n));
  return labels;
}
