/** An image thread that stops at its first job without answering (test/report-output-threads.test.ts). */
import { parentPort } from 'worker_threads';

parentPort!.on('message', () => process.exit(3));
