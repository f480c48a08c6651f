import type { MrfEnergy } from '../expansion/energy';
import type { GraphVariant } from '../expansion/binaryStep';
import { GraphMoveSolver, type MoveSolver } from '../expansion/moveSolver';
import { createMaxFlowSolver } from '../graphcut/solverFactory';
import { VerifyingSolver } from '../graphcut/verifyingSolver';
import { BACKENDS, type BackendName } from './params';

export interface BackendOptions {
  backend: BackendName;
  graph: GraphVariant;
  verify: boolean;
}

/** The move solver for a backend name ('auto': WebGPU push-relabel when an adapter answers, else BK). */
export async function createMoveSolver(energy: MrfEnergy, o: BackendOptions): Promise<MoveSolver> {
  if (!BACKENDS.includes(o.backend)) throw new Error(`--backend: unknown value '${String(o.backend)}' (expected ${BACKENDS.join(', ')})`);
  let solver = await createMaxFlowSolver(o.backend);
  if (o.verify) solver = new VerifyingSolver(solver);
  return new GraphMoveSolver(energy, solver, o.graph);
}
