import type { GraphVariant } from '../expansion/binaryStep';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { type GpuMoveSettings } from '../gpu/move/moveSettings';
import type { FlowCarry } from '../gpu/move/flowCarry';
import type { ProgramStore } from '../gpu/move/keptPrograms';
import { GraphMoveSolver, type MoveResult, type MoveSolver } from '../expansion/moveSolver';
import { computeEnergy, costsOnDemand, isMetricTable, type EnergyBreakdown, type MrfEnergy } from '../data/energy';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { fallbackFor, placeBackend, type BackendName, type BackendPlacement, type FallbackDecision } from '../gpu/runtime/backends';
import { createGpuContext } from '../gpu/runtime/context';
import { InputError, optionErrorOf, VerificationError } from '../data/errors';
import { GpuPrecisionError } from '../gpu/maxflow/pushRelabel';
import type { MaxFlowSolver } from '../graphcut/maxflow';
import { maxFlowSolverAt } from './maxFlowFactory';
import { VerifyingSolver } from '../graphcut/verifyingSolver';

export interface BackendOptions {
  backend: BackendName;
  /** Where `backend` runs, as placeBackend gave it (a Matcher places its backend once); absent: placed here. */
  place?: BackendPlacement;
  graph: GraphVariant;
  verify: boolean;
  /** Device move settings (K, BFS levels, rounds, moves per call) for the GPU backends, and in `device` the flags their gpu.js context is made with. */
  gpu?: GpuMoveSettings;
  /** Told why 'auto' fell back to BK (no adapter, a lost device, an energy the f32 kernels cannot hold exactly). */
  onFallback?: (reason: string) => void;
  /**
   * Builds the energy's cost volume in place when a host solver needs it
   * (BK, or push-relabel per graph). Given when the costs were left to the
   * device by choice (--costs auto with the moves on a GPU), so that a
   * fallback still runs; without it an energy without a volume runs on the
   * device or not at all (--costs on-demand).
   */
  buildVolume?: () => void;
  /** The device moves' flows from the previous frame of a sequence, and where this solver leaves its own (gpu/move/flowCarry.ts); the host solvers ignore it. */
  flows?: FlowCarry;
  /** Where the device moves take and keep their program between solvers (gpu/move/keptPrograms.ts); without one, each solver's program is released with it. */
  programs?: ProgramStore;
}

/**
 * The move solver for a backend name:
 * - 'bk': graphs built on the CPU, Boykov–Kolmogorov;
 * - 'gpu': moves on the device through WebGPU (GpuMoveSolver); throws when no
 *   adapter answers;
 * - 'gpujs-cpu': the same device moves on gpu.js's webasm backend (CPU);
 * - 'auto': 'gpu' when a WebGPU adapter answers, else BK (the reason goes to onFallback).
 * Energies the device moves cannot take exactly (a non-metric V, values beyond
 * f32's exact range) go to push-relabel per graph with BK fallback ('gpu',
 * 'gpujs-cpu') or to BK ('auto'). --verify re-solves every cut with BK.
 */
export async function createMoveSolver(energy: MrfEnergy, o: BackendOptions): Promise<MoveSolver> {
  // Host solvers read the volume: built here when the costs were left to the device by choice.
  const hostSolver = (solver: MaxFlowSolver): MoveSolver => {
    o.buildVolume?.();
    return new GraphMoveSolver(energy, o.verify ? new VerifyingSolver(solver) : solver, o.graph);
  };
  const bkSolver = (): MoveSolver => hostSolver(new BoykovKolmogorovSolver());
  const onDemand = costsOnDemand(energy);
  // Checked and placed once: a fallback to graphs built on the host runs their push-relabel where this placed the kernels.
  const place = o.place ?? await placeBackend(o.backend);
  if (place.runs === 'bk') {
    if (onDemand && !o.buildVolume) {
      throw new InputError(`createMoveSolver: the ${energy.width}×${energy.height}×${energy.labels} energy has no cost volume (its costs are computed per label), and backend '${o.backend}' solves here on the host, which reads a volume; use backend 'gpu' on a machine with a GPU, build the energy with its volume (costs 'volume'), or give buildVolume`);
    }
    if (place.fallback) o.onFallback?.(place.fallback);
    return bkSolver();
  }
  const { device: flags, ...knobs } = o.gpu ?? {};
  // The rule's decision (gpu/runtime/backends.ts fallbackFor): BK for the run, or the move graphs on the host, each solved by push-relabel (BK, reported in the stats, where one is beyond f32).
  const fallBack = async (d: FallbackDecision): Promise<MoveSolver> => {
    o.onFallback?.(d.reason);
    return d.to === 'bk' ? bkSolver() : hostSolver(await maxFlowSolverAt(place, o.backend, { device: flags }));
  };
  const ctx = await createGpuContext(place.mode, flags);
  if (!isMetricTable(energy)) {
    // Truncated graphs need the per-move energy check of the driver: build them on the CPU.
    ctx.destroy();
    return fallBack(fallbackFor(o.backend, { kind: 'not-metric', smoothness: energy.smoothness }));
  }
  try {
    const device = new GpuMoveSolver(ctx, energy, { ...knobs, variant: o.graph, verify: o.verify }, { flows: o.flows, programs: o.programs });
    // Where the rule hands a failing device's run to BK ('auto'), BK needs the host volume: without it (and without buildVolume) the device cannot be replaced.
    const continues = fallbackFor(o.backend, { kind: 'device-failed', during: '', message: '' }).to === 'bk';
    return continues && (!onDemand || o.buildVolume) ? new FallbackMoveSolver(energy, device, bkSolver, o.onFallback) : device;
  } catch (e) {
    ctx.destroy();
    if (!(e instanceof GpuPrecisionError)) throw e;
    return fallBack(fallbackFor(o.backend, { kind: 'f32-energy', message: e.message }));
  }
}

/**
 * 'auto' on a GPU: moves run on the device until it fails (a lost device, a
 * driver error), then every later move runs on BK from the labels the last
 * completed move left — the run goes on and says why. A --verify difference
 * is a wrong result, not a lost device: it is never papered over. Exposes
 * single moves only, so the driver can skip moves per label.
 */
export class FallbackMoveSolver implements MoveSolver {
  private active: MoveSolver;
  private fellBack = false;

  constructor(
    private readonly energy: MrfEnergy,
    device: MoveSolver,
    private readonly makeBk: () => MoveSolver,
    private readonly onFallback?: (reason: string) => void,
  ) {
    this.active = device;
  }

  get backend(): string { return this.fellBack ? `${this.active.backend} (after a device failure)` : this.active.backend; }
  get device(): string { return this.active.device; }

  async move(alpha: number, labels: Uint16Array): Promise<MoveResult> {
    if (this.fellBack) return this.active.move(alpha, labels);
    const before = labels.slice();
    try {
      return await this.active.move(alpha, labels);
    } catch (e) {
      if (e instanceof VerificationError || e instanceof InputError || optionErrorOf(e)) throw e;
      const message = e instanceof Error ? e.message : String(e);
      labels.set(before);
      this.switchToBk(`during α=${alpha}`, message);
      return this.active.move(alpha, labels);
    }
  }

  /** The device's WTA until the device fails; then undefined, and the host computes it. */
  async initialWta(window: number): Promise<Uint16Array | undefined> {
    if (this.fellBack || !this.active.initialWta) return undefined;
    try {
      return await this.active.initialWta(window);
    } catch (e) {
      if (e instanceof InputError || optionErrorOf(e)) throw e;
      const message = e instanceof Error ? e.message : String(e);
      this.switchToBk('during the WTA initial labeling', message);
      return undefined;
    }
  }

  async energyOf(labels: Uint16Array): Promise<EnergyBreakdown> {
    if (this.active.energyOf && !this.fellBack) {
      try {
        return await this.active.energyOf(labels);
      } catch (e) {
        this.switchToBk('while summing the energy', e instanceof Error ? e.message : String(e));
      }
    }
    return computeEnergy(this.energy, labels);
  }

  /** The rest of the run on BK, for the reason fallbackFor gives a device failure of 'auto' (what this solver wraps). */
  private switchToBk(during: string, message: string): void {
    try { this.active.dispose?.(); } catch { /* the device is already gone */ }
    this.active = this.makeBk();
    this.fellBack = true;
    this.onFallback?.(fallbackFor('auto', { kind: 'device-failed', during, message }).reason);
  }

  dispose(): void { this.active.dispose?.(); }
}
