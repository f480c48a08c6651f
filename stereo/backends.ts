import { BoykovKolmogorovSolver } from '../graphcut/bk';
import type { MrfEnergy } from '../expansion/energy';
import type { GraphVariant } from '../expansion/binaryStep';
import { GraphMoveSolver, type MoveSolver } from '../expansion/moveSolver';
import { BACKENDS, type BackendName } from './params';

export interface BackendOptions {
  backend: BackendName;
  graph: GraphVariant;
  verify: boolean;
}

/** The move solver for a backend name. */
export async function createMoveSolver(energy: MrfEnergy, o: BackendOptions): Promise<MoveSolver> {
  if (!BACKENDS.includes(o.backend)) throw new Error(`--backend: unknown value '${String(o.backend)}' (expected ${BACKENDS.join(', ')})`);
  return new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), o.graph);
}
