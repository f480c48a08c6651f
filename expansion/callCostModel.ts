/**
 * What a device call costs, measured from the calls themselves: a fixed
 * cost per call, a cost per round that ran in full, one per round gated
 * shut after its move converged, and the extra cost of a call that
 * compiles its plan. The rounds choice weighs these against each other,
 * and they differ a lot between devices and image sizes: per-call fits
 * on an H100 gave, in units of a full round, a call 1.9 (teddy) and 4.4
 * (Adirondack) and a gated round 0.34 and 0.08, and a plan compile about
 * 100 on both (2026-11-21, BENCHMARKS.md).
 *
 * The call, full and gated costs are a least-squares fit of the calls'
 * times to their full and gated rounds. While every call has the same
 * rounds (full + gated constant) that fit is singular, and the prior
 * ratios (call = callRounds·full, gated = gatedRounds·full), with the
 * weight of a few calls, settle what the calls leave open. A compile costs
 * what first calls of new plans took beyond the fit, averaged.
 */
export interface CallCosts {
  /** fixed cost of a call, of a gated round, and of a plan compile, in full rounds */
  call: number;
  gated: number;
  compile: number;
}

export interface CallCostPrior extends CallCosts {
  /** calls' worth of weight of the prior ratios where the calls leave the fit undetermined */
  weight: number;
}

/** Calls measured before the fit replaces the prior. */
const MIN_CALLS = 8;

export class CallCostModel {
  /** normal equations of the fit over (1, full, gated) → ms */
  private readonly ata = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  private readonly aty = [0, 0, 0];
  private calls = 0;
  private readonly pending: Array<{ full: number; gated: number; ms: number }> = [];
  private compileMs = 0;
  private compiles = 0;

  constructor(readonly prior: CallCostPrior) {
    for (const [k, v] of Object.entries(prior)) {
      if (!(v >= 0) || !Number.isFinite(v)) throw new Error(`call cost prior ${k}: expected a finite number ≥ 0, got ${String(v)}`);
    }
  }

  /**
   * One call: its rounds that ran in full and gated, its time, and whether
   * it compiled its plan (then only its excess over the fit is used).
   */
  observe(full: number, gated: number, ms: number, compiled: boolean): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) return;
    if (compiled) {
      this.pending.push({ full, gated, ms });
      return;
    }
    const row = [1, full, gated];
    for (let i = 0; i < 3; i++) {
      this.aty[i] += row[i] * ms;
      for (let j = 0; j < 3; j++) this.ata[3 * i + j] += row[i] * row[j];
    }
    this.calls++;
  }

  /** Costs in full rounds: the prior until MIN_CALLS calls are measured, then the fit. */
  costs(): CallCosts {
    const fit = this.calls >= MIN_CALLS ? this.fit() : null;
    if (!fit) return { call: this.prior.call, gated: this.prior.gated, compile: this.prior.compile };
    const [a, b, c] = fit;
    // Compiles measured so far (first calls beyond the fit's prediction), each once.
    for (const p of this.pending.splice(0)) {
      this.compileMs += Math.max(p.ms - (a + b * p.full + c * p.gated), 0);
      this.compiles++;
    }
    return {
      call: a / b,
      gated: c / b,
      compile: this.compiles > 0 ? this.compileMs / this.compiles / b : this.prior.compile,
    };
  }

  /**
   * [call, full, gated] in ms: the least-squares fit of the calls, or, where
   * the calls leave it undetermined (all of the same rounds), the fit with
   * the prior ratios added; null when the calls contradict the model (a
   * full round costing nothing or less, a negative cost).
   */
  private fit(): [number, number, number] | null {
    let x = solve3(this.ata, this.aty);
    if (!x) {
      // Prior rows, weight w each: (call − callRounds·full) = 0 and (gated − gatedRounds·full) = 0.
      const m = this.ata.slice();
      const w = this.prior.weight;
      const priorRows = [[1, -this.prior.call, 0], [0, -this.prior.gated, 1]];
      for (const r of priorRows) for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) m[3 * i + j] += w * r[i] * r[j];
      x = solve3(m, this.aty);
    }
    if (!x) return null;
    const [a, b, c] = x;
    if (!(b > 0) || a < 0 || c < 0) return null;
    return [a, b, c];
  }
}

/** Solves the 3×3 system m·x = y (row-major m) by Cramer's rule; null when singular. */
function solve3(m: number[], y: number[]): [number, number, number] | null {
  const det = (q: number[]): number =>
    q[0] * (q[4] * q[8] - q[5] * q[7]) - q[1] * (q[3] * q[8] - q[5] * q[6]) + q[2] * (q[3] * q[7] - q[4] * q[6]);
  const d = det(m);
  const scale = Math.max(...m.map(Math.abs));
  if (!(Math.abs(d) > 1e-12 * scale * scale * scale)) return null;
  const col = (k: number): number[] => m.map((v, i) => (i % 3 === k ? y[Math.floor(i / 3)] : v));
  return [det(col(0)) / d, det(col(1)) / d, det(col(2)) / d];
}
