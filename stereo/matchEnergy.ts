import type { Raster } from '../data/raster';
import { buildStereoEnergy, stackEnergies, type StereoEnergy, type StereoEnergyOptions } from '../costs';
import { isMetricSmoothness, type MrfEnergy } from '../data/energy';
import { placedOnWebGpu, type BackendPlacement } from '../gpu/runtime/backends';
import type { BackendOptions } from './backends';
import { checkNdisp, MAX_VOLUME_ENTRIES, type MatchParams } from './params';

/** The energy of a match's pair from its parameters, and where its data costs are computed (host volume, on demand, on the device). */

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

/** True when the energy carries no cost volume (costs are computed per label when needed). */
export const costsOnDemand = (e: MrfEnergy): boolean => e.data.kind === 'images';

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
