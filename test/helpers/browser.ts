import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page, type Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

/** Debian's Chromium (apt package `chromium`); never a downloaded browser. */
export const CHROMIUM = '/usr/bin/chromium';

// Background networking off: this machine has no network, and Chromium would retry its own services.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** `ignoreHTTPSErrors`: for a test's own HTTPS servers (an identity provider with a self-signed certificate). */
export interface ContextOptions {
  javaScriptEnabled?: boolean;
  ignoreHTTPSErrors?: boolean;
  /** A phone: its screen, a mobile browser's viewport handling and touch (issue 34's 390 × 844). */
  viewport?: { width: number; height: number };
  isMobile?: boolean;
  hasTouch?: boolean;
}

/** A fresh browser profile (cookies of its own) at the dashboard's test size, with a 10 s default timeout. */
export async function newDashboardContext(browser: Browser, options: ContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  context.setDefaultTimeout(10_000);
  return context;
}

/** A new page whose Content-Security-Policy refusals and uncaught errors are pushed to `problems`. */
export async function openWatchedPage(context: BrowserContext, problems: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (/Content[ -]Security[ -]Policy/i.test(message.text())) problems.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`${page.url()}: uncaught ${error.name}: ${error.message}`));
  return page;
}

const SHOTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/screenshots');

/** Clicks and waits for the page the click loads (a link, or a form that posts then answers 303). */
export async function followClick(page: Page, control: Locator): Promise<Response> {
  const [response] = await Promise.all([page.waitForNavigation(), control.click()]);
  if (!response) throw new Error('the click did not load a page');
  return response;
}

/** With SCREENSHOTS=1, writes docs/screenshots/<file> (the full page); otherwise does nothing. */
export async function screenshotIfAsked(page: Page, file: string): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  fs.mkdirSync(SHOTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS_DIR, file), fullPage: true });
}

/**
 * With SCREENSHOTS=1, writes docs/screenshots/<name>.png at the page's width and <name>-390.png on a phone
 * (390 × 844), then puts the width back: for pages a walk cannot reach (set-up steps, codes shown once).
 */
export async function screenshotBothWidths(page: Page, name: string): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  await screenshotIfAsked(page, `${name}.png`);
  const size = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshotIfAsked(page, `${name}-390.png`);
  if (size) await page.setViewportSize(size);
}

/** Signs in through the dashboard's login form, as a person would. */
export async function signInThroughForm(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await followClick(page, page.getByRole('button', { name: 'Sign in', exact: true }));
}

/** A suite's Chromium: its first page, more profiles on demand, and what the pages reported. */
export interface SuiteBrowser {
  /** One page in its own profile, open for the whole suite (set before the suite's own `beforeAll` runs). */
  readonly page: Page;
  /** Another profile (cookies of its own), closed after the test that opened it. */
  newContext(options?: ContextOptions): Promise<BrowserContext>;
  /** A watched page in a new profile, closed after the test. */
  newPage(options?: ContextOptions): Promise<Page>;
  /** CSP refusals and uncaught page errors of the current test; each test must end with none. */
  readonly problems: string[];
}

/**
 * The hooks every browser suite had: Chromium launched before the suite's own `beforeAll` (call this first
 * in the `describe`), a watched page for the suite, the profiles a test opened closed after it, and a test
 * failed by any Content-Security-Policy refusal or page error it caused.
 */
export function suiteBrowser(): SuiteBrowser {
  let browser: Browser;
  let suiteContext: BrowserContext;
  let page: Page;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
    suiteContext = await newDashboardContext(browser);
    page = await openWatchedPage(suiteContext, problems);
  }, 60_000);
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
    expect(problems.splice(0), 'Content-Security-Policy refusals or page errors').toEqual([]);
  });
  afterAll(async () => {
    await suiteContext?.close();
    await browser?.close();
  });
  const newContext = async (options: ContextOptions = {}) => {
    const context = await newDashboardContext(browser, options);
    contexts.push(context);
    return context;
  };
  return {
    get page() {
      return page;
    },
    newContext,
    newPage: async (options) => openWatchedPage(await newContext(options), problems),
    problems,
  };
}
