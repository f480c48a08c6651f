/**
 * WebGPU for tests on a machine without a GPU: a headless Chromium's WebGPU
 * (SwiftShader, Vulkan on the CPU) handed to Node as a `navigator.gpu`.
 *
 * Node's Dawn binding (the `webgpu` package) needs a newer glibc than CI
 * has, but Debian's `chromium` exposes WebGPU in headless mode with
 * --enable-unsafe-webgpu. openBrowserWebGpu starts it with puppeteer-core,
 * opens a page on a secure origin (WebGPU needs one; every request is
 * answered here, nothing goes to the network), installs the page runtime
 * (browserWebGpuPage.ts) and returns a provider for installWebGpuProvider
 * (gpu/runtime/context.ts): the project's own context set-up, gpu.js's
 * webgpu mode and every adaptation in gpu/runtime/gpujs/ then run unchanged,
 * their WGSL compiled and run by the page's WebGPU through the proxies of
 * browserWebGpuObjects.ts. Chromium's Dawn runs with the features the
 * project gives Node's Dawn (context.ts dawnFlags: no bounds checks and no
 * zeroing of workgroup memory, unless STEREOCUT_GPU_BOUNDS_CHECKS=1), so
 * the kernels run here as they run on a GPU.
 */
import { execFileSync } from 'child_process';
import puppeteer, { type Browser } from 'puppeteer-core';
import { dawnFlags, type WebGpuProvider } from '../../gpu/runtime/context';
import { PageChannel } from './browserWebGpuChannel';
import { BridgeGpu } from './browserWebGpuObjects';
import { installPageRuntime, RUNTIME_KEY } from './browserWebGpuPage';

/** The Chromium on PATH (Debian's package is `chromium`), or undefined. */
export function findChromium(): string | undefined {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const found = execFileSync('sh', ['-c', `command -v ${name}`]).toString().trim();
      if (found) return found;
    } catch { /* not on PATH */ }
  }
  return undefined;
}

export interface BrowserWebGpu {
  /** For installWebGpuProvider. */
  readonly provider: WebGpuProvider;
  /** The browser's version line, for messages. */
  readonly version: string;
  /**
   * Waits until `condition` holds, asking the page between checks for the
   * uncaptured errors and losses its devices reported (the browser reports
   * them asynchronously, so one round trip may come too early); false if
   * it still does not hold after `tries` round trips.
   */
  until(condition: () => boolean, tries?: number): Promise<boolean>;
  /** One round trip to the page: what its devices reported so far reaches them. */
  settle(): Promise<void>;
  /** Closes the browser (idempotent); every later WebGPU call fails, naming the bridge. */
  close(): Promise<void>;
}

/** The origin the page is opened on: localhost is a secure context, and every request to it is answered here. */
const PAGE_URL = 'http://localhost/stereocut-webgpu';

/**
 * Starts `executable` headless with WebGPU and returns its WebGPU as a
 * provider. The browser is closed again if anything here fails; the caller
 * closes it otherwise (puppeteer also kills it when the Node process exits).
 */
export async function openBrowserWebGpu(executable: string): Promise<BrowserWebGpu> {
  const browser: Browser = await puppeteer.launch({
    executablePath: executable,
    headless: true,
    args: ['--no-sandbox', '--enable-unsafe-webgpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', ...dawnFlags(undefined).map((f) => `--${f}`)],
  });
  try {
    const page = await browser.newPage();
    await page.setRequestInterception(true);
    page.on('request', (request) => void request.respond({ status: 200, contentType: 'text/html', body: '<!doctype html><title>stereocut WebGPU</title>' }));
    await page.goto(PAGE_URL);
    const hasGpu = await page.evaluate(() => 'gpu' in (globalThis as unknown as { navigator: object }).navigator);
    if (!hasGpu) throw new Error('the page has no navigator.gpu (chromium without WebGPU?)');
    await page.evaluate(installPageRuntime, RUNTIME_KEY);
    const channel = new PageChannel(page);
    const version = await browser.version();
    let closed = false;
    return {
      provider: { name: `headless ${version}`, gpu: new BridgeGpu(channel) },
      version,
      until: async (condition, tries = 20) => {
        for (let i = 0; i < tries && !condition(); i++) {
          await channel.ping();
          if (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return condition();
      },
      settle: () => channel.ping(),
      close: async () => {
        if (closed) return;
        closed = true;
        channel.close('the browser was closed');
        await browser.close();
      },
    };
  } catch (e) {
    await browser.close();
    throw e;
  }
}
