/**
 * The round schedule of the device moves: how many push-relabel rounds the
 * next pipeline call of a move gets, and how many BFS passes its global
 * relabels run. Pure host arithmetic over the rounds recent moves needed (no
 * device): the device solver reports each call's outcome here and asks for
 * the next call's shape.
 *
 * The cost model: each call costs the rounds its move needed, its rounds
 * beyond that at GATED_ROUND_COST (gated rounds after convergence are
 * copies) or in full (ungated), plus a fixed cost per call; a move that
 * needs more than a call gave it gets another (continued from its flows, or
 * redone from scratch with twice the rounds). A plan shape not compiled yet
 * also costs its compile.
 */

/** How a move starts: from zero flow, or from its α's stored flows (warm start). */
export type StartKind = 'cold' | 'warm';

/** Moves whose needs choose the next rounds. */
export const ADAPT_WINDOW = 32;
/** The fixed cost of a call, in rounds. */
export const CALL_COST_IN_ROUNDS = 2;
/** The extra cost of uploading and reading back a move's flows (resume, warm start), in rounds. */
export const FLOWS_COST_IN_ROUNDS = 1;
/**
 * Cost of a gated round (after its move converged) relative to a full
 * round: its passes are copies, which at the Middlebury sizes cost about
 * what dispatching a pass costs (least-squares fits of per-call device
 * times give 0.4 to 0.7).
 */
export const GATED_ROUND_COST = 0.5;
/** The most rounds a plan gets. */
export const MAX_ROUNDS = 1 << 12;

/**
 * Rounds a plan may get: powers of two and their halfway points (a plan is
 * compiled once per shape, so the choices are few; halfway points halve
 * the rounds a move gets beyond its need).
 */
export const ROUND_CHOICES: readonly number[] = (() => {
  const out: number[] = [1];
  for (let r = 2; r <= MAX_ROUNDS; r *= 2) out.push(r, (3 * r) / 2);
  return out.filter((r) => r <= MAX_ROUNDS);
})();

export interface RoundScheduleOptions {
  /** Rounds of the first calls. */
  initialRounds: number;
  /** B: BFS passes of a global relabel, restored after every finished move. */
  bfsPasses: number;
  /** The most BFS passes a relabel can need (W·H + 1). */
  maxBfsPasses: number;
  /** Keep the rounds fixed instead of adapting them (ablation). */
  fixedRounds: boolean;
  /** Rounds after convergence are gated (cheap copies). */
  gate: boolean;
  /** A call uploads and reads back the move's flows. */
  flowsInOut: boolean;
  /** A move that did not converge continues from its flows (else it is redone from scratch). */
  resume: boolean;
  /** A compile of an R-round plan is priced planCompileRounds + planCompileRoundsPerRound·R rounds. */
  planCompileRounds: number;
  planCompileRoundsPerRound: number;
}

/** Whether the plan of `rounds` rounds and `bfs` BFS passes is compiled already. */
export type PlanCompiled = (rounds: number, bfs: number) => boolean;

export class RoundSchedule {
  private readonly next: Record<StartKind, number>;
  private readonly history: Record<StartKind, number[]> = { cold: [], warm: [] };
  private bfsNow: number;

  constructor(private readonly o: RoundScheduleOptions, private readonly compiled: PlanCompiled) {
    this.next = { cold: o.initialRounds, warm: o.initialRounds };
    this.bfsNow = o.bfsPasses;
  }

  /** Rounds of the next call of a fresh move of this kind. */
  rounds(kind: StartKind): number {
    return this.next[kind];
  }

  /** BFS passes of the next call's global relabels. */
  get bfs(): number {
    return this.bfsNow;
  }

  /**
   * Moves finished, having needed `needed` rounds each: the BFS passes go
   * back to B (raised passes served the move that fell short; keeping them
   * doubled the BFS work), and the rounds adapt (unless fixed).
   */
  movesDone(needed: readonly number[], kind: StartKind): void {
    this.bfsNow = this.o.bfsPasses;
    if (!this.o.fixedRounds) this.adapt(needed, kind);
  }

  /** The last call's final BFS did not reach its fixed point: the relabel restarts from scratch each round, so only more passes help. */
  bfsFellShort(): void {
    this.bfsNow = Math.min(2 * this.bfsNow, this.o.maxBfsPasses);
  }

  /** A move redone from scratch (no resume) gets twice the rounds. */
  doubleRounds(kind: StartKind): void {
    this.next[kind] = Math.min(2 * this.next[kind], MAX_ROUNDS);
  }

  /**
   * Rounds of the call that continues a move which has run `spent` rounds:
   * the choice that would have cost least for the recent moves that needed
   * more than that, counted from there (twice the last call's rounds when
   * none did; always doubling overshoots).
   */
  continuation(spent: number, last: number, kind: StartKind): number {
    const rest = this.history[kind].filter((need) => need > spent).map((need) => need - spent);
    return rest.length > 0 ? this.cheapestRounds(rest, true) : Math.min(2 * last, MAX_ROUNDS);
  }

  /**
   * Rounds for the next plans, from the rounds the last ADAPT_WINDOW moves
   * needed: the choice that would have cost them the least. Provisioning
   * for the slowest move makes every move pay for it; provisioning for the
   * last move alone (moves vary a lot) redoes too many.
   */
  private adapt(needed: readonly number[], kind: StartKind): void {
    const history = this.history[kind];
    history.push(...needed);
    if (history.length > ADAPT_WINDOW) history.splice(0, history.length - ADAPT_WINDOW);
    this.next[kind] = this.cheapestRounds(history, this.o.resume && this.o.flowsInOut);
  }

  /** The rounds R among ROUND_CHOICES that would have cost `needs` least (the cost model above). */
  cheapestRounds(needs: readonly number[], resume: boolean): number {
    const perCall = CALL_COST_IN_ROUNDS + (this.o.flowsInOut ? FLOWS_COST_IN_ROUNDS : 0);
    const overshoot = this.o.gate ? GATED_ROUND_COST : 1;
    let maxNeed = 0;
    let sumNeed = 0;
    for (const need of needs) {
      maxNeed = Math.max(maxNeed, need);
      sumNeed += need;
    }
    let best = 1;
    let bestCost = Infinity;
    for (const R of ROUND_CHOICES) {
      // From R ≥ every need on, one call serves each move and the cost is at least this bound, which grows with R: no later choice can win.
      if (R >= maxNeed && needs.length * perCall + sumNeed + overshoot * (needs.length * R - sumNeed) >= bestCost) break;
      let cost = this.compiled(R, this.bfsNow) ? 0 : this.o.planCompileRounds + this.o.planCompileRoundsPerRound * R;
      for (const need of needs) {
        let covered = 0;
        for (let r = R; ; r = Math.min(2 * r, MAX_ROUNDS)) {
          // Rounds after convergence are gated copies.
          const rest = Math.max(need - (resume ? covered : 0), 0);
          cost += Math.min(r, rest) + overshoot * Math.max(r - rest, 0) + perCall;
          covered = resume ? covered + r : r;
          if (need <= covered || (!resume && r === MAX_ROUNDS)) break;
        }
      }
      if (cost < bestCost) { bestCost = cost; best = R; }
    }
    return best;
  }
}
