// Reading `echod serve`'s banner, for the browser test and the memory-list benchmark.

import { createInterface } from 'node:readline';

/**
 * The address `echod serve` prints for a browser (with its one-time pairing code, `#pair=`),
 * the server's origin, and the code. `child.stderrText()` says what it logged.
 */
export function serveAddress(child, what, timeoutMs = 20_000) {
  return new Promise((resolveAddress, reject) => {
    const seen = [];
    const timer = setTimeout(
      () => reject(new Error(`${what} printed no address to open within ${timeoutMs / 1000} s: ${JSON.stringify(seen)}\n${child.stderrText()}`)),
      timeoutMs,
    );
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      seen.push(line);
      const m = /^open: ((http:\/\/127\.0\.0\.1:\d+)\/#pair=([0-9a-f]+))$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolveAddress({ open: m[1], origin: m[2], code: m[3] });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before printing its address\n${child.stderrText()}`));
    });
  });
}
