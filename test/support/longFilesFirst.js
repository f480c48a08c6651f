/**
 * jest's order of test files, but for a checkout jest has not timed yet (a
 * fresh clone, as CI runs): jest then starts the largest files first, and a
 * short file of long examples (docs-examples.test.ts under
 * STEREOCUT_FULL_TESTS=1) starts late and runs alone at the end. The files
 * listed here, longest first, start before the others until jest has
 * timings of its own, which it then follows.
 */
const path = require('path');
const Sequencer = require('@jest/test-sequencer').default;

/** The longest files of the full run (`bash .ci/run` on two cores), longest first. */
const LONGEST = [
  'docs-examples.test.ts',
  'middlebury-accuracy.test.ts',
  'gpu-expansion.test.ts',
  'gpu-expansion-tsukuba.test.ts',
  'gpu-browser-webgpu.test.ts',
  'graphcut-pushrelabel.test.ts',
];

class LongFilesFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    if (sorted.some((t) => t.duration != null)) return sorted;
    const rank = (t) => {
      const k = LONGEST.indexOf(path.basename(t.path));
      return k < 0 ? LONGEST.length : k;
    };
    // Array.prototype.sort is stable: the unlisted files keep jest's order (largest first).
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = LongFilesFirst;
