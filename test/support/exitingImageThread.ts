/** An image thread that stops at its first job without answering (test/report-output-threads.test.ts). */
export default function stop(): never {
  process.exit(3);
}
