import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ASSETS = path.join(ROOT, 'public/docs');

let assets: { logo: Buffer; css: string; js: string; licence: string } | null = null;
/** Read once per process: every app built (the tests build hundreds) serves the same files. */
function docsAssets(): NonNullable<typeof assets> {
  assets ??= {
    logo: fs.readFileSync(path.join(ASSETS, 'logo.svg')),
    css: fs.readFileSync(path.join(ASSETS, 'docs.css'), 'utf8'),
    js: fs.readFileSync(path.join(ASSETS, 'docs.js'), 'utf8'),
    licence: fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'),
  };
  return assets;
}

export interface DocsUiOptions {
  /** The document's server (its `servers` entry): "Try it out" may call it when it is another origin. */
  publicBaseUrl: string;
}

/**
 * Nothing runs or loads that we did not serve, and nothing inline: no `unsafe-inline` for scripts or
 * styles. Scripts, styles and fonts from our origin; images also as `data:` (Swagger UI's stylesheet draws
 * its icons that way); requests to our origin and the document's server only.
 */
function contentSecurityPolicy(publicBaseUrl: string): string {
  const connect = new Set(["'self'", new URL(publicBaseUrl).origin]);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${[...connect].join(' ')}`,
    "form-action 'self'",
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The API reference at /docs: Swagger UI, served from our own assets and titled as the service.
 *
 * Swagger UI's own top bar is not rendered (`BaseLayout` instead of `StandaloneLayout`): its logo is an
 * inline SVG that carries a `<style>` element, which a strict Content-Security-Policy refuses (one
 * violation on every load), and the bar's spec-URL box does nothing useful here. Our header (name and
 * mark) comes from public/docs/docs.js and docs.css instead; the mark is also the favicon. The spec
 * validator badge is off (`validatorUrl: null`): it would send the document to an external host.
 */
export async function registerDocsUi(app: FastifyInstance, options: DocsUiOptions): Promise<void> {
  const { logo, css, js, licence } = docsAssets();
  const headers = {
    'content-security-policy': contentSecurityPolicy(options.publicBaseUrl),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  };
  // A scope of its own, so these headers cover the page, its assets and the document at /docs/json only.
  await app.register(async (scope) => {
    scope.addHook('onRequest', (_request, reply, done) => {
      reply.headers(headers);
      done();
    });
    // The document's `info.license.url`: the licence from our origin rather than a link to SPDX's site.
    scope.get('/docs/license', { schema: { hide: true } }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(licence));
    await scope.register(swaggerUi, {
      routePrefix: '/docs',
      // Ours above (onRequest); Swagger UI's default policy allows any https: style and an external validator.
      staticCSP: false,
      logLevel: 'warn',
      // Served at /docs/static/theme/<filename>; the logo doubles as the header's image (docs.js).
      theme: {
        title: 'Workspace Service API reference',
        favicon: [{ filename: 'logo.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: logo }],
        css: [{ filename: 'docs.css', content: css }],
        js: [{ filename: 'docs.js', content: js }],
      },
      // Only used by StandaloneLayout; ours rather than Swagger's should anyone switch the layout back.
      logo: { type: 'image/svg+xml', content: logo },
      uiConfig: {
        layout: 'BaseLayout',
        syntaxHighlight: { theme: 'obsidian' },
        validatorUrl: null,
        // Deep linking puts a link inside each operation's toggle button: two tab stops for one control,
        // and a nested-interactive violation per operation for screen readers. The toggle alone remains.
        deepLinking: false,
      },
    });
  });
}
