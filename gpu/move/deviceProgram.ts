import { Input } from '../runtime/gpujs/gpuJs';
import type { GPU, IGPUKernelSettings, IKernelRunShortcut, IPipelineRunShortcut } from 'gpu.js';
import { forwardGradients, imageRows, type CostImage } from '../../data/costImage';
import { bandHeightOf, pairwise, type MrfEnergy, type PairSource } from '../../data/energy';
import type { GpuContext } from '../runtime/context';
import { canRefillSharedLiterals, fillSharedLiteralOnDevice, refillSharedLiteral, releaseSharedLiterals, shareLiterals, sharedLiterals } from '../runtime/gpujs/sharedLiterals';
import { deviceFlagsKey } from '../runtime/deviceFlags';
import { warmUpPipelineGroup } from '../runtime/gpujs/kernelBuildCache';
import type { CensusWindow } from '../../costs/census';
import { censusPlanesOnBackend, createCensusKernel, greyPlanes, hostCensusPlanes, type DeviceResult } from '../costs/censusKernel';
import { createPairKernel, pairArguments, pairFits, PairUpload } from '../costs/pairKernel';
import type { ProgramStore } from './keptPrograms';
import { gatedKernel, globalRelabelPasses, iterationPasses, type GlobalRelabel, type StatePass } from '../maxflow/pushRelabelKernels';
import { kernelFamiliesOf } from '../maxflow/kernelFamilies';
import { BLOCK_CHECK_SPAN, blockCheck } from '../maxflow/blockCheckKernel';
import { STATE_PLANES } from '../maxflow/pushRelabelLayout';
import { applyCutSource, capacitySource, flowPlanesSource, initStateSource } from './moveKernels';
import {
  changedTilesSource, checkTilesSource, MOVE_DONE_GATE, MOVE_START_TALLY, orTilesSource, reductionLevels, sumTilesSource, tallySource,
} from './reductionKernels';
import { blockTally, changedSquares } from './moveBlockKernels';
import type { DataSourceKind, ImageCostSpec } from '../costs/costKernels';
import type { ResolvedGpuMoveOptions } from './moveSettings';

/**
 * The device program of the GPU moves: the kernels built for an energy's
 * shape and the device options, the compiled plans (one per call shape),
 * the auxiliary pipelines (device WTA, energy) and the constant inputs they
 * all bind. A program depends on the energy's shape, not its values, so a
 * disposed solver keeps it for the next solver of the same shape
 * (keptPrograms.ts), which refills the constant inputs with its energy.
 */

export interface Plan {
  pipe: IPipelineRunShortcut;
  rounds: number;
  bfs: number;
  verify: boolean;
  /** calls made with it so far (the first one compiles it) */
  calls: number;
}

export interface Kernels {
  caps: IKernelRunShortcut;
  /** the init from zero flow (plans without flows in and out), and the one from given flows (resume or warmStart) */
  init: IKernelRunShortcut;
  initFromFlows: IKernelRunShortcut;
  /** the flow planes of a state, [W, H, 2] */
  flows: IKernelRunShortcut;
  steps: StatePass[];
  relabel: GlobalRelabel;
  /** gated like the state passes: the gate's input last */
  checkTiles: (...a: unknown[]) => unknown;
  /** levels of the check's reduction: ORs of its codes down to at most 8×8 (none with the block check, whose tally reads every code) */
  orTiles: IKernelRunShortcut[];
  /** (codes, T) → T': a round's check into the move's tally, and the check after its first global relabel */
  tally: (RB: unknown, T: unknown) => unknown;
  tallyFirst: (RB: unknown, T: unknown) => unknown;
  apply: IKernelRunShortcut;
  /** (next labels, labels) → the changed pixels per region, which the host adds up (readChanged) */
  changedCounts: (A: unknown, B: unknown) => unknown;
}

/**
 * What a solver builds on the device, which depends on the energy's shape
 * and the device options only: kept for the next solver of the same shape
 * (keptPrograms.ts), which refills the constant inputs with its energy.
 */
export interface DeviceProgram {
  /** the context whose gpu.js instance made the kernels and plans (a destroyed one takes them with it) */
  ctx: GpuContext;
  kernels: Kernels;
  plans: Map<string, Plan>;
  /** the constant inputs the plans bind: data term (volume or images), smoothness weights, V table, the tally a move starts from */
  literals: [Input, Input, Input, Input];
  /**
   * Pipelines besides the moves' plans, by what they compile: the device
   * WTA's (window and chunk) and the energy's (its chunk of columns). They
   * bind the same literals, so a kept program keeps them too; at most
   * MAX_AUX_PIPELINES, the least recently used dropped first.
   */
  aux: Map<string, IPipelineRunShortcut>;
  /** WebGPU census costs: the kernel that computes the codes and its output on the device, the data literal's source */
  census?: { kernel: IKernelRunShortcut; result?: DeviceResult };
  /** WebGPU with the energy's pair (PairSource): the kernel that makes its grey images and weights, its output (the weights literal's source), and its images' device buffers once a call has shown the device */
  pair?: { kernel: IKernelRunShortcut; result?: DeviceResult; upload?: PairUpload };
  /** Host arrays of the program's grid (programHostArrays), made by its first solver and used by each solver that takes it in turn. */
  host?: ProgramHostArrays;
}

/** Host arrays a solver fills or reads for its calls: the labels as f32 (an argument of every call) and all-zero flows ([W, H, 2]; empty when the plans take no flows). */
export interface ProgramHostArrays { labelsF: Float32Array; zeroFlows: Float32Array }

/**
 * The program's host arrays, made once per program rather than per solver:
 * a sequence's frames, or a run's pairs of one size, each make a solver,
 * and fresh arrays of the grid's size for each would only feed the garbage
 * collector. A program serves one solver at a time (keptPrograms.ts takes
 * it out of its store), which fills labelsF before each call (the call
 * copies it) and never writes the zeros.
 */
export function programHostArrays(program: DeviceProgram, n: number, flowsInOut: boolean): ProgramHostArrays {
  const zeros = flowsInOut ? 2 * n : 0;
  if (program.host?.labelsF.length !== n || program.host.zeroFlows.length !== zeros) program.host = { labelsF: new Float32Array(n), zeroFlows: new Float32Array(zeros) };
  return program.host;
}

/**
 * Backends whose compiled plans see a refilled constant input: WebGPU binds
 * the literal's device buffer (refilled by a queue write) and gpu.js's cpu
 * backend reads the Input at every call. Its webasm backend copies each
 * literal into the plan's WebAssembly memory when the plan compiles, so a
 * kept webasm plan would run on the last energy's values: it keeps none.
 */
export const REFILLABLE_MODES: ReadonlySet<string> = new Set(['webgpu', 'cpu']);

/** Largest grid whose program is kept after its solver: a program holds the buffers of all its plans, several gigabytes at 3000×2000. */
export const MAX_KEPT_PROGRAM_PIXELS = 1 << 20;

/** The kernels of a program on `gpu`, for a W×H×L energy whose data term reaches the kernels as `sourceKind`. */
export function createKernels(gpu: GPU, shape: { W: number; H: number; L: number; sourceKind: DataSourceKind; costSpec: ImageCostSpec | null }, o: ResolvedGpuMoveOptions): Kernels {
const { W, H, L, sourceKind, costSpec } = shape;
const constants = { W, H, INF: W * H + 1, L, REACH: o.reach };
  const grid = (planes: number): IGPUKernelSettings => kernelSettings(planes > 1 ? [W, H, planes] : [W, H], constants);
  const line = (len: number): IGPUKernelSettings => kernelSettings([len], constants);
  const reversed = o.variant === 'reversed';
  const side = o.tileSide;
  const tiles = reductionLevels(W, H, side);
  // With the block BFS (WebGPU) a check is one launch per 32×32 pixels (blockCheck) and its tally one workgroup over all its codes; the changed pixels are counted per 32×32 square likewise.
  const blockChecks = o.bfs === 'block';
  const squares = [Math.ceil(W / BLOCK_CHECK_SPAN), Math.ceil(H / BLOCK_CHECK_SPAN)];
  const checks = blockChecks ? [squares] : tiles;
  const checkFinal = { FW: checks[checks.length - 1][0], FH: checks[checks.length - 1][1] };
  // Without WGSL, the changed pixels per side×side tile, then sums of 8×8 blocks down to at most 8×8 values.
  const changedTiles = blockChecks ? undefined : gpu.createKernel(changedTilesSource(side), kernelSettings(tiles[0], constants));
  const sumTiles = blockChecks ? [] : tiles.slice(1).map((out, i) => gpu.createKernel(sumTilesSource(), kernelSettings(out, { AW: tiles[i][0], AH: tiles[i][1] })));
  // Without the gate the kernels are compiled ungated and drop the tally the plans pass them.
  const gate = o.gate ? MOVE_DONE_GATE : undefined;
  const families = kernelFamiliesOf('gpu expansion', o);
  return {
    caps: gpu.createKernel(capacitySource(), grid(4)),
    init: gpu.createKernel(initStateSource(sourceKind, costSpec, reversed), grid(STATE_PLANES)),
    initFromFlows: gpu.createKernel(initStateSource(sourceKind, costSpec, reversed, true), grid(STATE_PLANES)),
    flows: gpu.createKernel(flowPlanesSource(), grid(2)),
    steps: iterationPasses(gpu, families.push, grid, gate, o.block),
    relabel: globalRelabelPasses(gpu, families.bfs, grid, gate, o.block),
    // A gated check reports the tile as converged (code 0), which keeps the tally as it is.
    checkTiles: blockChecks
      ? blockCheck(gpu, W, H, kernelSettings(checks[0], constants), gate ?? null)
      : gatedKernel(gpu, checkTilesSource(side), kernelSettings(tiles[0], constants), gate, '0.0'),
    orTiles: checks.slice(1).map((out, i) => gpu.createKernel(orTilesSource(), kernelSettings(out, { AW: checks[i][0], AH: checks[i][1] }))),
    tally: blockChecks ? blockTally(gpu, squares[0], squares[1], true, line(4)) : gpu.createKernel(tallySource(), kernelSettings([4], checkFinal)),
    tallyFirst: blockChecks ? blockTally(gpu, squares[0], squares[1], false, line(4)) : gpu.createKernel(tallySource(false), kernelSettings([4], checkFinal)),
    apply: gpu.createKernel(applyCutSource(reversed), grid(1)),
    changedCounts: changedTiles
      ? (A: unknown, B: unknown) => sumTiles.reduce((r: unknown, f) => f(r), changedTiles(A, B))
      : changedSquares(gpu, W, H, kernelSettings(squares, constants)),
  };
}

/** Destroys a program's plans, then the device buffers of its literals (once no plan can run again: a destroy waits for the call in flight). */
export function releaseProgram(program: DeviceProgram): void {
  const released = [...program.plans.values()].map((p) => p.pipe.destroy());
  released.push(...[...program.aux.values()].map((pipe) => pipe.destroy()));
  program.plans.clear();
  program.aux.clear();
  const literals = program.literals;
  const { census, pair } = program;
  program.census = undefined;
  program.pair = undefined;
  void Promise.allSettled(released).then(() => {
    releaseSharedLiterals(literals);
    for (const made of [census, pair]) {
      made?.result?.delete();
      made?.kernel.destroy();
    }
    pair?.upload?.destroy();
  });
}

/** The image planes the image-source kernels read: left, right, then for sad+sgrad the forward gradients ∂x, ∂y of each (IM), band by band (MrfEnergy.bandHeight). */
export function imagePlanes(left: CostImage, right: CostImage, spec: ImageCostSpec, bandHeight = left.height): Float32Array {
  const C = spec.channels;
  const n = left.width * left.height;
  const planes = new Float32Array(6 * n * C);
  planes.set(left.data, 0);
  planes.set(right.data, n * C);
  if (spec.kind === 'sad+sgrad') {
    // Band by band (each an image of its own: a band's last row has no row below).
    for (let y0 = 0; y0 < left.height; y0 += bandHeight) {
      const o = y0 * left.width * C;
      const [gxL, gyL] = forwardGradients(imageRows(left, y0, bandHeight));
      const [gxR, gyR] = forwardGradients(imageRows(right, y0, bandHeight));
      planes.set(gxL, 2 * n * C + o);
      planes.set(gyL, 3 * n * C + o);
      planes.set(gxR, 4 * n * C + o);
      planes.set(gyR, 5 * n * C + o);
    }
  }
  return planes;
}


/** A [W, H, planes] kernel output as read back: planes of rows. */
export type Planes = ArrayLike<ArrayLike<ArrayLike<number>>>;

/** The plan cache's key: one compiled plan per shape. */
export function planKey(rounds: number, bfs: number, verify: boolean): string {
  return `${rounds}:${bfs}:${verify ? 1 : 0}`;
}

/** Kernel settings; loopMaxIterations (a real gpu.js setting missing from its typings) lifts the cap on the row loops. */
export function kernelSettings(output: number[], constants: Record<string, number>): IGPUKernelSettings {
  return { output, constants, precision: 'single', loopMaxIterations: 1 << 20 } as IGPUKernelSettings;
}


/** A solver's program: taken from a kept one of the same shape (refilled with this energy) or built; `key` is what it is kept under after the solver (null: released then). */
export interface AcquiredProgram {
  program: DeviceProgram;
  key: string | null;
  /** whether the program was taken from an earlier solver (it came with compiled plans) */
  tookKeptPlans: boolean;
  /** WebGPU census costs: settles once the codes the device computes are in the data literal; no call may be made before */
  dataReady?: Promise<void>;
}

/**
 * The program for `energy` on `ctx`: the constant inputs (data term as a
 * volume or as image planes, smoothness weights, V table, start tally) are
 * captured by the plans as literals, so each is uploaded once per device,
 * never per call. A program kept by an earlier solver of the same shape
 * and options (keepPlans) is taken and refilled with this energy's values.
 */
export function acquireProgram(ctx: GpuContext, energy: MrfEnergy, costSpec: ImageCostSpec | null, o: ResolvedGpuMoveOptions, flowsInOut: boolean, programs?: ProgramStore): AcquiredProgram {
  const source = energy.data;
  if (source.kind === 'banded') throw new Error('gpu expansion: a banded data term has no device program');
  const { width: W, height: H, labels: L } = energy;
  const n = W * H;
  const band = bandHeightOf(energy);
  let dataDims: [number, number, number];
  let dataValues: () => Float32Array;
  let censusOnDevice = false;
  // WebGPU: an 8-bit pair's weights (and census images) are made on the device (gpu/costs/pairKernel.ts); the host's are then never made.
  const pair = ctx.mode === 'webgpu' && sharedLiterals.installed && ctx.flags.sharedLiterals && energy.pairSource && pairFits(energy.pairSource, W, H, band) ? energy.pairSource : undefined;
  if (source.kind === 'volume') {
    const costs = source.costs;
    if (costs.length !== n * L) throw new Error(`gpu expansion: data term has ${costs.length} entries, expected ${n * L} (${W}×${H}×${L})`);
    dataDims = [L, W, H];
    dataValues = () => Float32Array.from(costs);
  } else {
    const spec = costSpec!;
    const C = spec.channels;
    // Census: the images are the grey pair (one channel) and the planes hold their codes, C halves per pixel. Made from the pair on the device, they are not made on the host.
    const imageChannels = spec.kind === 'census' ? 1 : C;
    const imagesFromPair = pair !== undefined && spec.kind === 'census';
    for (const [name, im] of imagesFromPair ? [] : [['left', source.left], ['right', source.right]] as const) {
      if (im.width !== W || im.height !== H || im.channels !== imageChannels) throw new Error(`gpu expansion: ${name} image is ${im.width}×${im.height}×${im.channels}, the energy ${W}×${H}×${imageChannels}`);
    }
    dataDims = [W * C, H, 6];
    if (spec.kind !== 'census') dataValues = () => imagePlanes(source.left, source.right, spec, band);
    else {
      const window = spec.censusWindow!;
      // WebGPU: zeros on the host, the codes copied in on the device (fillCensusOnDevice); the CPU backends run the kernel here.
      censusOnDevice = ctx.mode === 'webgpu' && sharedLiterals.installed && ctx.flags.sharedLiterals;
      dataValues = censusOnDevice ? () => new Float32Array(6 * n * C)
        : ctx.mode === 'webgpu' ? () => hostCensusPlanes(source.left, source.right, window, band)
          : () => censusPlanesOnBackend(ctx.gpu, source.left, source.right, window, band);
    }
  }
  // The weights as the plans read them: wH then wV, [W, H, 2].
  const weightPlanes = (into: Float32Array = new Float32Array(2 * n)): Float32Array => {
    into.set(energy.wH, 0);
    into.set(energy.wV, n);
    return into;
  };
  const vt = new Float32Array(L * L);
  for (let a = 0; a < L; a++) for (let b = 0; b < L; b++) vt[a * L + b] = pairwise(energy.smoothness, energy.truncation, a, b);

  // Everything the kernels and plans depend on besides the energy's values; with the context's flags, so that programs (and recorded pipelines) are shared only between contexts of equal flags.
  const shapeKey = JSON.stringify([deviceFlagsKey(ctx.flags), ctx.mode, W, H, L, band, source.kind, costSpec, dataDims, pair ? [pair.views, pair.left.channels] : null, o.variant, o.push, o.bfs, o.block, o.reach, o.gate, o.tileSide, o.iterationsPerRound, o.finalBfsFactor, o.initialBfsPasses, flowsInOut, o.maxCachedPlans]);
  const key = programs && o.keepPlans && n <= MAX_KEPT_PROGRAM_PIXELS && REFILLABLE_MODES.has(ctx.mode) ? shapeKey : null;
  // The pipelines a program of this shape built in an earlier process are asked for now, all at once (gpu/runtime/gpujs/pipelineStore.ts).
  if (ctx.mode === 'webgpu') warmUpPipelineGroup(shapeKey, ctx.flags);
  let program = key === null ? undefined : programs!.take<DeviceProgram>(key, ctx.flags);
  if (program && (program.ctx.destroyed || !canRefillSharedLiterals(program.literals))) {
    releaseProgram(program);
    program = undefined;
  }
  if (program) {
    // The new energy's values replace the last solver's, on the host and in the device buffers the plans bind.
    const [data, weights, vTable] = program.literals;
    if (!censusOnDevice) refillSharedLiteral(data, source.kind === 'volume' ? source.costs : dataValues());
    // Into the literal's own array (no second 8·W·H-byte array: fresh memory costs the host more than the copy).
    const own = weights.value as unknown;
    if (!pair) refillSharedLiteral(weights, weightPlanes(own instanceof Float32Array && own.length === 2 * n ? own : undefined));
    refillSharedLiteral(vTable, vt);
  } else {
    const literals: DeviceProgram['literals'] = [
      new Input(dataValues() as unknown as number[], dataDims),
      // From the pair: zeros on the host, the weights copied in on the device (fillFromPair).
      new Input((pair ? new Float32Array(2 * n) : weightPlanes()) as unknown as number[], [W, H, 2]),
      new Input(vt as unknown as number[], [L, L]),
      new Input(Float32Array.from(MOVE_START_TALLY) as unknown as number[], [4]),
    ];
    // Changed only between solvers (refillSharedLiteral): every plan binds and uploads them once per device, not once per plan and seat (gpu/runtime/gpujs/sharedLiterals.ts); with the context's sharing off, gpu.js copies them as it does.
    if (ctx.flags.sharedLiterals) shareLiterals(literals);
    program = { ctx, kernels: createKernels(ctx.gpu, { W, H, L, sourceKind: source.kind, costSpec }, o), plans: new Map(), literals, aux: new Map() };
  }
  const census = censusOnDevice && source.kind === 'images' ? costSpec!.censusWindow! : undefined;
  const fill = pair ? fillFromPair(program, pair, census, band)
    : census && source.kind === 'images' ? fillCensusOnDevice(program, () => new Input(greyPlanes(source.left, source.right) as unknown as number[], [W, H, 2]), census, band) : undefined;
  return { program, key, tookKeptPlans: program.plans.size > 0, dataReady: fill };
}

/**
 * WebGPU, an energy with a pair: its weights made on the device from the
 * pair and copied there into the weights literal, and with census costs
 * its grey images, from which the census kernel makes the codes for the
 * data literal (fillCensusOnDevice). The program keeps the pair kernel's
 * output (the weights' source) until it is released or filled again.
 */
async function fillFromPair(program: DeviceProgram, pair: PairSource, censusWindow: CensusWindow | undefined, bandHeight: number): Promise<void> {
  const { W, H } = programSize(program);
  const made = program.pair ?? (program.pair = { kernel: createPairKernel(program.ctx.gpu, W, H, pair, true) });
  // The first call shows the device (its result's context); later pairs go through the kept buffers (a program's pairs share one size: its key).
  const upload = made.upload;
  const planes = await (made.kernel(...(upload ? upload.arguments(pair) : pairArguments(pair))) as unknown as Promise<DeviceResult>);
  if (program.pair !== made) {
    // Released meanwhile (its solver disposed before any call).
    planes.delete();
    return;
  }
  made.upload ??= new PairUpload(planes.context, pair.left.width, pair.left.height);
  const previous = made.result;
  made.result = planes;
  fillSharedLiteralOnDevice(program.literals[1], planes.context.device, { buffer: planes.buffer, bytes: 8 * W * H, offset: 8 * W * H });
  if (censusWindow) await fillCensusOnDevice(program, () => planes, censusWindow, bandHeight);
  // The earlier output is let go only now that the new one is the weights literal's source (the kernel writes one buffer: a result is a reference to it).
  previous?.delete();
}

/** The grid of a program (its weights literal is [W, H, 2]). */
function programSize(program: DeviceProgram): { W: number; H: number } {
  const [W, H] = (program.literals[1] as unknown as { size: number[] }).size;
  return { W, H };
}

/**
 * WebGPU, census costs: the codes computed on the device from the grey
 * planes `greys` makes (what the census kernel reads as G: the host's grey
 * images uploaded, or the pair kernel's output) and copied there into the
 * data literal, which holds zeros on the host (gpu/runtime/gpujs/sharedLiterals.ts
 * fillSharedLiteralOnDevice). The program keeps the kernel and its output
 * (the source of every copy) until it is released.
 */
async function fillCensusOnDevice(program: DeviceProgram, greys: () => unknown, window: CensusWindow, bandHeight: number): Promise<void> {
  const { W, H } = programSize(program);
  const census = program.census ?? (program.census = { kernel: createCensusKernel(program.ctx.gpu, W, H, window, true, bandHeight) });
  const result = await (census.kernel(greys()) as unknown as Promise<DeviceResult>);
  if (program.census !== census) {
    // Released meanwhile (its solver disposed before any call): nothing reads the codes.
    result.delete();
    return;
  }
  // The kernel writes one buffer on every run: the last result is the same buffer, one reference less.
  census.result?.delete();
  census.result = result;
  const data = program.literals[0];
  fillSharedLiteralOnDevice(data, result.context.device, { buffer: result.buffer, bytes: 4 * (data.value as unknown as Float32Array).length });
}
