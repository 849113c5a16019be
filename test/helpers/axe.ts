import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { ImpactValue } from 'axe-core';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);

/** axe-core's browser bundle, read once; the dev dependency is the only copy (nothing is fetched). */
let axeSource: string | null = null;
function source(): string {
  axeSource ??= fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  return axeSource;
}

/** One rule's failure, as much as a person needs to find and fix it. */
export interface AxeViolation {
  id: string;
  impact: ImpactValue | null;
  help: string;
  helpUrl: string;
  nodes: { target: string; html: string; summary: string }[];
}

/** The shape of `window.axe` that the page function below uses (the page has no DOM types in this project). */
interface AxeInPage {
  run(options: { resultTypes: string[] }): Promise<{
    violations: {
      id: string;
      impact?: ImpactValue | null;
      help: string;
      helpUrl: string;
      nodes: { target: unknown[]; html: string; failureSummary?: string }[];
    }[];
  }>;
}

/**
 * Runs axe-core in the page as it is now and returns every violation. The bundle goes in through
 * `page.evaluate` (DevTools protocol), which the page's Content-Security-Policy does not govern; an
 * inline `<script>` would be refused by it, as it should be.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate('typeof window.axe === "object"');
  if (!loaded) await page.evaluate(source());
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: AxeInPage }).axe;
    const results = await axe.run({ resultTypes: ['violations'] });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      helpUrl: v.helpUrl,
      nodes: v.nodes.map((n) => ({ target: n.target.map(String).join(' '), html: n.html, summary: n.failureSummary ?? '' })),
    }));
  });
}

/** Violations as lines a person can act on: rule, impact, what it means, and each element with the reason. */
export function formatViolations(violations: readonly AxeViolation[]): string {
  return violations
    .map((v) => {
      const nodes = v.nodes.map((n) => `    at ${n.target}\n      ${n.html}\n      ${n.summary.replace(/\n/g, '\n      ')}`).join('\n');
      return `  [${v.impact ?? 'unknown'}] ${v.id}: ${v.help} (${v.helpUrl})\n${nodes}`;
    })
    .join('\n');
}

const BLOCKING: readonly (ImpactValue | null)[] = ['serious', 'critical'];

/** Throws, listing them, when the page has any serious or critical violation. `label` names the page in the message. */
export async function assertAccessible(page: Page, label: string): Promise<AxeViolation[]> {
  const violations = await axeViolations(page);
  const blocking = violations.filter((v) => BLOCKING.includes(v.impact));
  if (blocking.length > 0) {
    throw new Error(`axe found ${blocking.length} serious or critical violation(s) on ${label} (${page.url()}):\n${formatViolations(blocking)}`);
  }
  return violations;
}
