import { chromium, type Browser } from 'playwright-core';

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
