import type { Raster } from '../data/raster';
import { buildStereoEnergy, defaultTau, mirroredSwappedEnergy, stackEnergies, type StereoEnergy, type StereoEnergyOptions } from '../costs';
import { computeEnergy, costsOnDemand, isMetricSmoothness, type MrfEnergy } from '../data/energy';
import { alphaExpansion, type ExpansionResult } from '../expansion/alphaExpansion';
import { warmUpGpuClocks, type ClockWarmupReport } from '../gpu/runtime/clockWarmup';
import { DEFAULT_DEVICE_FLAGS, resolveDeviceFlags, type DeviceFlags } from '../gpu/runtime/deviceFlags';
import { mayUseWebGpu, placedOnWebGpu, type BackendPlacement } from '../gpu/runtime/backends';
import { createMoveSolver, type BackendOptions } from './backends';
import { chooseStart, type WarmStartRecord } from './warmStart';
import { checkNdisp, MAX_VOLUME_ENTRIES, type BackendName, type MatchParams } from './params';
import { startingLabelsOfViews } from './startingLabels';
import type { InitRecord, MatchEvent, MatchOptions, MatchPlan, MatchResult } from './matchTypes';

/* The energy of a level's views from the parameters, and where its data costs are computed (host volume, on demand, on the device). */

/** Whether the W·H·ndisp cost volumes of `views` views of a pair (2 with the left–right check: stacked, one volume) are beyond what is ever built (MAX_VOLUME_ENTRIES). */
export function volumeTooLarge(left: Raster, ndisp: number, views = 1): boolean {
  return left.width * left.height * ndisp * views > MAX_VOLUME_ENTRIES;
}

/**
 * Builds the energy of a pair (data costs and smoothness weights) with
 * resolved parameters. The cost volume is left out with --costs on-demand,
 * and with --costs auto when it is too large (with `views` views matched
 * together: their volumes are one) or `costsOnDevice` says the device
 * computes the costs (costsLeftToDevice).
 */
export function stereoEnergy(left: Raster, right: Raster, ndisp: number, p: MatchParams, costsOnDevice = false, minDisp = 0, views = 1): StereoEnergy {
  if (left.width !== right.width || left.height !== right.height) {
    throw new Error(`left image is ${left.width}×${left.height} but right image is ${right.width}×${right.height}`);
  }
  checkNdisp(ndisp, left.width, minDisp);
  return buildStereoEnergy(left, right, energyOptions(left, ndisp, p, costsOnDevice, minDisp, views));
}

/** The options of a view's energy when `views` views are matched together (the cost volume left out as stereoEnergy says, for all the views' volumes). */
export function energyOptions(left: Raster, ndisp: number, p: MatchParams, costsOnDevice: boolean, minDisp: number, views: number): StereoEnergyOptions {
  const onDemand = p.costs === 'on-demand' || (p.costs === 'auto' && (costsOnDevice || volumeTooLarge(left, ndisp, views)));
  return {
    ndisp, minDisp, kind: p.cost, tau: p.tau, border: p.border, censusWindow: p.censusWindow, lambda: p.lambda,
    cueThreshold: p.cueThreshold, cueFactor: p.cueFactor, smoothness: p.smoothness, truncation: p.truncation, onDemand, pairOnDevice: costsOnDevice,
  };
}

/**
 * Whether --costs auto leaves the data costs to the device: when the moves
 * run there (`place`: backend gpu, or auto with a WebGPU adapter) on a metric
 * smoothness term, and without --verify (which rebuilds every graph on the
 * host from the volume). The device moves and the device WTA then compute
 * each cost from the images when they need it, which is faster than
 * building, checking and uploading a volume (the host spends tenths of a
 * second a run on it, the device milliseconds). A host solver that takes over later (a fallback) builds
 * the volume then (BackendOptions.buildVolume).
 */
export function costsLeftToDevice(p: MatchParams, ndisp: number, place: BackendPlacement, verify: boolean): boolean {
  if (p.costs !== 'auto' || verify || !placedOnWebGpu(place)) return false;
  // Last: for a truncated quadratic term this walks all label triples.
  return isMetricSmoothness(p.smoothness, p.truncation, ndisp);
}

/**
 * The option of createMoveSolver that lets a host solver take over an
 * energy without a volume: the volume's builder, given only when leaving the
 * costs to the device was a choice (the volume fits). `views`: the views
 * the energy stacks (stackEnergies), whose matchers build the volume; the
 * energy alone when it is one view's.
 */
export function costOptions(energy: MrfEnergy, leftToDevice: boolean, views: readonly StereoEnergy[] = [energy as StereoEnergy]): Pick<BackendOptions, 'buildVolume'> {
  if (!costsOnDemand(energy) || !leftToDevice) return {};
  return {
    buildVolume: () => {
      if (!costsOnDemand(energy)) return;
      const volumes = views.map((v): StereoEnergy => ({ ...v, data: { kind: 'volume', costs: v.matcher.volume(v.labels) } }));
      energy.data = volumes.length === 1 ? volumes[0].data : stackEnergies(volumes).data;
    },
  };
}

/** The 'start' event of a match of `left` (the full pair's, also for coarse to fine): the parameters that run (τ filled in) and the initial labeling. */
export function startEvent(left: Raster, options: MatchOptions, resolved: MatchParams): Extract<MatchEvent, { kind: 'start' }> {
  const params = { ...resolved, tau: resolved.tau ?? defaultTau(resolved.cost, left.channels, resolved.censusWindow) };
  const init: InitRecord = options.initialLabels || options.resume ? { kind: 'given', ...options.initSource }
    : params.init === 'wta' ? { kind: 'wta', window: params.window } : { kind: 'zero' };
  return { kind: 'start', width: left.width, height: left.height, ndisp: options.ndisp, minDisp: options.minDisp ?? 0, params, init, backend: options.backend ?? 'auto' };
}

/**
 * match() of the pair (views 1), or of the pair and its mirrored, swapped
 * pair (views 2: the left–right check's right view) stacked as one energy;
 * the pair's result and the other view's disparities. `plan`: the
 * parameters that run and where the backend runs (the options' own are not
 * read again for either).
 */
export async function matchViews(left: Raster, right: Raster, views: 1 | 2, options: MatchOptions, plan: MatchPlan): Promise<{ result: MatchResult; others: Uint16Array[] }> {
  const resolved = plan.params;
  const t0 = performance.now();
  const backend = options.backend ?? 'auto';
  const verify = options.verify ?? false;
  const emit = options.onEvent ?? (() => undefined);
  const minDisp = options.minDisp ?? 0;
  const start = startEvent(left, options, resolved);
  const { params, init } = start;
  emit(start);
  const leftToDevice = costsLeftToDevice(params, options.ndisp, plan.place, verify);
  const clockWarmup = await warmUpForBackend(backend, options.warmUpClocks, leftToDevice, resolveDeviceFlags(options.gpu?.device, 'match: gpu.device'));
  // The energy is built from the parameters as given (τ undefined = the matcher's default); `params` records the value that ran.
  // The check's right view (the mirrored, swapped pair) from the left view's samples, rows reversed: nothing converted twice.
  const first = stereoEnergy(left, right, options.ndisp, resolved, leftToDevice, minDisp, views);
  const energies = views === 1 ? [first] : [first, mirroredSwappedEnergy(first, energyOptions(left, options.ndisp, resolved, leftToDevice, minDisp, views))];
  const energy: MrfEnergy = energies.length === 1 ? energies[0] : stackEnergies(energies);
  const n = left.width * left.height;
  const t1 = performance.now();
  emit({ kind: 'costs', ms: t1 - t0 });
  const fallbacks: string[] = [];
  const volumeFits = !volumeTooLarge(left, options.ndisp, views);
  const solver = await createMoveSolver(energy, {
    backend, place: plan.place, graph: params.graph, verify, gpu: options.gpu, onFallback: (reason) => fallbacks.push(reason), flows: options.warmStart?.flows, programs: options.programs,
    ...costOptions(energy, leftToDevice && volumeFits, energies),
  });
  let result: ExpansionResult;
  let warmRecord: Omit<WarmStartRecord, 'labels'> | undefined;
  let t2 = NaN;
  let t3 = NaN;
  try {
    t2 = performance.now();
    emit({ kind: 'solver', backend: solver.backend, device: solver.device, ms: t2 - t1, fallbacks: fallbacks.slice() });
    const resume = options.resume;
    if (resume && resume.labels.length !== n * views) throw new Error(`resume: ${resume.labels.length} labels, the run's ${views} view(s) of ${left.width}×${left.height} have ${n * views}`);
    const fresh = (): Promise<Uint16Array> => startingLabelsOfViews(energies, params, solver, options.initialLabels);
    const chosen = resume ? undefined : await chooseStart(options.warmStart, { width: left.width, height: left.height, views }, fresh, (l) => solver.energyOf?.(l) ?? Promise.resolve(computeEnergy(energy, l)), left);
    const initial = resume ? resume.labels : chosen!.initial;
    if (chosen && options.warmStart) warmRecord = { ...chosen.record, cycles: chosen.record.start === 'warm' ? options.warmStart.cycles ?? params.cycles : params.cycles };
    t3 = performance.now();
    emit({ kind: 'init', ms: t3 - t2 });
    const onCycle = options.onCycle;
    result = await alphaExpansion(energy, initial, solver, {
      order: params.order, cycles: warmRecord?.cycles ?? params.cycles, seed: params.seed, skipUnchanged: params.skipUnchanged, onMove: options.onMove,
      resume: resume ? { cycle: resume.cycle, unchanged: resume.unchanged } : undefined,
      onStart: (e) => emit({ kind: 'initialEnergy', energy: e }),
      onCycle: async (report, labels, unchanged) => {
        emit({ kind: 'cycle', report, of: warmRecord?.cycles ?? params.cycles });
        await onCycle?.(report, labels.length === n ? labels : labels.subarray(0, n), { cycle: report.cycle, unchanged, labels });
      },
    });
  } finally {
    solver.dispose?.();
  }
  const t4 = performance.now();
  const buildMs = result.cycles.reduce((s, c) => s + c.buildMs, 0);
  const flowMs = result.cycles.reduce((s, c) => s + c.flowMs, 0);
  const { labels, ...report } = result;
  const viewLabels = energies.map((_, i) => labels.subarray(i * n, (i + 1) * n));
  return {
    result: {
      ...report,
      width: left.width,
      height: left.height,
      ndisp: energy.labels,
      minDisp,
      disparity: labelsToDisparity(viewLabels[0].slice(), minDisp),
      params,
      init,
      costScale: energies[0].scale,
      times: { costsMs: t1 - t0, setupMs: t2 - t1, initMs: t3 - t2, buildMs, flowMs, expansionMs: t4 - t3, totalMs: t4 - t0 },
      fallbacks,
      ...(clockWarmup ? { clockWarmup } : {}),
      ...(warmRecord ? { warmStart: { ...warmRecord, labels } } : {}),
    },
    others: viewLabels.slice(1).map((l) => labelsToDisparity(l.slice(), minDisp)),
  };
}

/**
 * The clock warm-up of a run whose moves may go to the device (backends gpu
 * and auto; validated later by createMoveSolver), queued before the host
 * computes the costs; undefined for the CPU backends or when turned off.
 * By default (`enabled` undefined) it is skipped, and says why, when the
 * costs are left to the device (`costsOnDevice`): the spin was meant to run
 * while the host computes the costs and the WTA, and the device's WTA would
 * wait behind it instead. `flags`: the run's device flags (MatchOptions
 * gpu.device), whose clockWarmupDispatches and clockWarmupRecentMs size it.
 */
export async function warmUpForBackend(backend: BackendName, enabled: boolean | undefined, costsOnDevice = false, flags: DeviceFlags = DEFAULT_DEVICE_FLAGS): Promise<ClockWarmupReport | undefined> {
  if (enabled !== undefined && typeof enabled !== 'boolean') throw new Error(`warmUpClocks: expected true or false, got ${String(enabled)}`);
  if (enabled === false || !mayUseWebGpu(backend)) return undefined;
  if (enabled === undefined && costsOnDevice) return { dispatches: 0, skipped: 'the costs and the WTA are left to the device, which would wait behind it' };
  return warmUpGpuClocks(flags);
}

/** Disparities minDisp + label (the labels themselves when minDisp is 0). */
export function labelsToDisparity(labels: Uint16Array, minDisp: number): Uint16Array {
  if (minDisp === 0) return labels;
  const out = new Uint16Array(labels.length);
  for (let i = 0; i < labels.length; i++) out[i] = labels[i] + minDisp;
  return out;
}
