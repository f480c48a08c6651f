import type { GPU } from 'gpu.js';
import { returnFlatResults } from '../runtime/gpujs/onePassCalls';
import { bindSharedLiterals } from '../runtime/gpujs/sharedLiterals';
import type { GpuMoveCounters } from './callLog';
import { planKey, type DeviceProgram, type Kernels, type Plan } from './deviceProgram';
import { initialBfs, type ResolvedGpuMoveOptions } from './moveSettings';

/**
 * The compiled plans of a solver's program: one move per pipeline call,
 * one plan per shape (rounds, BFS passes, --verify), the least recently
 * used dropped beyond maxCachedPlans. A plan with resident calls in flight
 * (hold/release) is never dropped: a look-ahead call copies the labels out
 * of its buffers.
 */
export class PlanCache {
  private readonly gpu: GPU;
  private readonly kernels: Kernels;
  private readonly plans: Map<string, Plan>;
  private readonly literals: DeviceProgram['literals'];
  /** Resident calls in flight per plan. */
  private readonly busy = new Map<Plan, number>();

  /** With `flowsInOut` every plan takes its move's starting flows and returns its final ones. */
  constructor(
    program: DeviceProgram,
    private readonly o: ResolvedGpuMoveOptions,
    private readonly flowsInOut: boolean,
    private readonly counters: GpuMoveCounters,
  ) {
    this.gpu = program.ctx.gpu;
    this.kernels = program.kernels;
    this.plans = program.plans;
    this.literals = program.literals;
  }

  /** Whether the plan of this shape is compiled. */
  has(rounds: number, bfs: number, verify: boolean): boolean {
    return this.plans.has(planKey(rounds, bfs, verify));
  }

  /** The compiled plan of this shape, if any; never compiles, and leaves the cache's order alone. */
  peek(rounds: number, bfs: number, verify: boolean): Plan | undefined {
    return this.plans.get(planKey(rounds, bfs, verify));
  }

  /** Plans compiled and not yet dropped (at most the option maxCachedPlans). */
  get size(): number {
    return this.plans.size;
  }

  /** Executor kinds of the compiled plans (e.g. 'fused-encoder'), for reports. */
  executorKinds(): string[] {
    const kinds = new Set<string>();
    for (const p of this.plans.values()) if (p.pipe.executorKind) kinds.add(p.pipe.executorKind);
    return [...kinds];
  }

  /** One more resident call of `plan` in flight. */
  hold(plan: Plan): void {
    this.busy.set(plan, (this.busy.get(plan) ?? 0) + 1);
  }

  /** One resident call of `plan` fewer in flight. */
  release(plan: Plan): void {
    const left = (this.busy.get(plan) ?? 1) - 1;
    if (left > 0) this.busy.set(plan, left);
    else this.busy.delete(plan);
  }

  /** No resident call is looked at any more (the resident loop gave up). */
  releaseAll(): void {
    this.busy.clear();
  }

  /**
   * The compiled plan (cached per shape): one move of `rounds` rounds; with
   * flowsInOut the move's starting flows are the third argument and its
   * final flows come back after the labels and tallies.
   */
  get(rounds: number, bfs: number, verify: boolean): Plan {
    const fromFlows = this.flowsInOut;
    const key = planKey(rounds, bfs, verify);
    const cached = this.plans.get(key);
    if (cached) {
      // Most recently used last: the cache evicts from the front.
      this.plans.delete(key);
      this.plans.set(key, cached);
      return cached;
    }
    const k = this.kernels;
    const K = this.o.iterationsPerRound;
    const finalBfs = this.o.finalBfsFactor * bfs;
    const [data, wt, vt, startTally] = this.literals;
    const or = (tiles: unknown): unknown => k.orTiles.reduce((r, f) => f(r), tiles);
    // State passes and checks take the move's tally last (the gate's input; dropped when ungated).
    const check = (S: unknown, C: unknown, T: unknown): unknown => or(k.checkTiles(S, C, T));
    const rounds_ = (S0: unknown, C: unknown, T0: unknown): [unknown, unknown] => {
      let S = S0;
      let T = T0;
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < K; i++) for (const step of k.steps) S = step(S, C, T);
        S = k.relabel(S, C, r === rounds - 1 ? finalBfs : bfs, true, T);
        T = k.tally(check(S, C, T), T);
      }
      return [S, T];
    };
    // After the labels and tallies: the move's final flows (flowsInOut), then its state and capacities (--verify).
    const tail = (S: unknown, C: unknown): unknown[] => [...(fromFlows ? [k.flows(S)] : []), ...(verify ? [S, C] : [])];
    // The move of AL[0] from the labels LB (F: its starting flows, flowsInOut plans only); the kernels take the index of α in AL.
    const literals = this.literals;
    const move_ = (LB: unknown, AL: unknown, F: unknown): unknown[] => {
      bindSharedLiterals(literals);
      let T: unknown = startTally;
      const C = k.caps(LB, AL, wt, vt, 0);
      const S0 = fromFlows ? k.initFromFlows(LB, AL, data, wt, vt, 0, C, F) : k.init(LB, AL, data, wt, vt, 0);
      let S = k.relabel(S0, C, initialBfs(bfs, this.o.initialBfsPasses), true, T);
      T = k.tallyFirst(check(S, C, T), T);
      [S, T] = rounds_(S, C, T);
      const next = k.apply(LB, S, AL, T, 0);
      return [next, T, k.changedCounts(next, LB), ...tail(S, C)];
    };
    const pipe = fromFlows
      ? this.gpu.createPipeline(function (LB: unknown, AL: unknown, F: unknown) { return move_(LB, AL, F); })
      : this.gpu.createPipeline(function (LB: unknown, AL: unknown) { return move_(LB, AL, null); });
    // --verify reads the state and capacities as planes of rows; other plans take flat results.
    if (!verify) returnFlatResults(pipe);
    const p: Plan = { pipe, rounds, bfs, verify, calls: 0 };
    this.plans.set(key, p);
    if (this.plans.size > this.o.maxCachedPlans) {
      const evicted = [...this.plans.entries()].find(([, q]) => !this.busy.has(q));
      if (evicted) {
        this.plans.delete(evicted[0]);
        void evicted[1].pipe.destroy();
      }
    }
    this.counters.plans++;
    return p;
  }
}
