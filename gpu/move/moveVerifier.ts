import type { MrfEnergy } from '../../data/energy';
import { VerificationError } from '../../data/errors';
import { BoykovKolmogorovSolver } from '../../graphcut/bk';
import { cutCapacity } from '../../graphcut/gridGraph';
import { sinkResidualOf } from '../maxflow/pushRelabel';
import { PLANE } from '../maxflow/pushRelabelLayout';
import { BinaryStepBuilder, type GraphVariant } from '../../expansion/binaryStep';
import type { Planes } from './deviceProgram';

/**
 * --verify for the device moves: each cut is rebuilt on the CPU, solved
 * with BK and compared with the device's graph, flow and canonical cut.
 * Any difference is a VerificationError naming the cut and α.
 */
export class MoveVerifier {
  private readonly builder: BinaryStepBuilder;
  private readonly bk = new BoykovKolmogorovSolver();
  private cuts = 0;

  constructor(private readonly energy: MrfEnergy, private readonly variant: GraphVariant) {
    this.builder = new BinaryStepBuilder(energy.width, energy.height);
  }

  /**
   * Checks the move of `alpha` from the labels `before`, whose final state
   * and capacities the device read back as S and C. Returns the energy the
   * cut predicts (flow + constant).
   */
  verifyCut(alpha: number, before: Uint16Array, S: Planes, C: Planes): number {
    this.cuts++;
    const { width: W, height: H } = this.energy;
    const n = W * H;
    const step = this.builder.build(this.energy, before, alpha, this.variant);
    const g = step.graph;
    for (let y = 0, p = 0; y < H; y++) {
      for (let x = 0; x < W; x++, p++) {
        if (C[0][y][x] !== g.right[p] || C[2][y][x] !== g.down[p] || C[1][y][x] !== g.rightRev[p] || C[3][y][x] !== g.downRev[p]) {
          throw new VerificationError(`verify: cut ${this.cuts} (α=${alpha}): the device graph differs from the CPU construction at pixel ${p}`);
        }
      }
    }
    const ref = this.bk.solveSync(g);
    const sinkSide = new Uint8Array(n);
    let flow = 0;
    for (let y = 0, p = 0; y < H; y++) {
      for (let x = 0; x < W; x++, p++) {
        sinkSide[p] = S[PLANE.height][y][x] < n + 1 ? 1 : 0;
        // Builder graphs have c(s→p)·c(p→t) = 0, so the flow into the sink is Σ c(p→t) − final sink residual.
        flow += g.sink[p] - sinkResidualOf(S[PLANE.net][y][x]);
      }
    }
    if (flow !== ref.flow) throw new VerificationError(`verify: cut ${this.cuts} (α=${alpha}): the device found max-flow ${flow}, the CPU solver ${ref.flow}`);
    let differing = 0;
    for (let p = 0; p < n; p++) if (sinkSide[p] !== ref.sinkSide[p]) differing++;
    if (differing > 0) throw new VerificationError(`verify: cut ${this.cuts} (α=${alpha}): device and CPU agree on the flow ${flow} but ${differing} pixels are on different sides of the canonical cut`);
    if (cutCapacity(g, sinkSide) !== flow) throw new VerificationError(`verify: cut ${this.cuts} (α=${alpha}): the device cut's capacity differs from its flow`);
    return flow + step.constant;
  }
}
