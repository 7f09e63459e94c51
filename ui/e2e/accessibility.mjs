// The accessibility scan of the browser e2e test: axe-core (from npm) run in the page against
// the WCAG 2.0/2.1 A and AA rules, with the check that a control's accessible name contains its
// visible label switched on, in the light and in the dark theme. Every violation found,
// whatever its impact, is kept with the page state it was found in, and
// `accessibilityFailures` lists them all at the end of the run, so one run shows every problem.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const found = [];

/** Scans `page` as it is now, in both themes; `where` names the state in the report. */
export async function scanAccessibility(page, where) {
  // Evaluated through the debugging protocol, so the page's content security policy, which
  // forbids inline scripts, does not apply to the scanner.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  // The theme the toggle chose, put back after the scans.
  const chosen = await page.evaluate(() => document.documentElement.dataset.theme ?? null);
  for (const theme of ['light', 'dark']) {
    await page.evaluate((t) => { document.documentElement.dataset.theme = t; }, theme);
    await scanOnce(page, `${where} (${theme})`);
  }
  await page.evaluate((t) => {
    if (t === null) delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = t;
  }, chosen);
}

async function scanOnce(page, where) {
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      rules: { 'label-content-name-mismatch': { enabled: true } },
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${(n.failureSummary || '').replace(/\s+/g, ' ')}`),
    }));
  });
  for (const v of violations) {
    found.push(`${where}: ${v.id} (${v.impact}) ${v.help}\n    ${v.nodes.join('\n    ')}`);
  }
}

/** Every violation found so far, one entry each. */
export function accessibilityFailures() {
  return [...found];
}
