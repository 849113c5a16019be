import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

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

/** A fresh browser profile (cookies of its own) at the dashboard's test size, with a 10 s default timeout. */
export async function newDashboardContext(browser: Browser, options: { javaScriptEnabled?: boolean } = {}): Promise<BrowserContext> {
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
