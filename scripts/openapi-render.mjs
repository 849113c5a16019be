// Shared by scripts/openapi.mjs (writes the files) and the test that compares them with the code.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';

/**
 * The server the committed copy names: where `npm start` listens by default (HOST/PORT). Not the default
 * PUBLIC_BASE_URL, http://localhost:3000, which Redocly's recommended rules refuse (no-server-example.com).
 */
export const COMMITTED_BASE_URL = 'http://127.0.0.1:3000';

/** The document as the built app serves it with PUBLIC_BASE_URL=COMMITTED_BASE_URL, pretty-printed. */
export async function renderDocument(root) {
  const { loadConfig, createContainer } = await import(path.join(root, 'dist/index.js'));
  const { buildApp } = await import(path.join(root, 'dist/app.js'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-openapi-'));
  try {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: COMMITTED_BASE_URL });
    const container = await createContainer(config, { migrate: true });
    const app = await buildApp(container);
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    await app.close();
    await container.close();
    return `${JSON.stringify(JSON.parse(res.body), null, 2)}\n`;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// eslint.config.js ignores the file: generated code follows the generator's style, not ours.
const HEADER = '// Generated from docs/openapi.json by openapi-typescript (`npm run openapi`). Do not edit by hand.\n';

/** The client's types for a document (its JSON text). */
export async function renderTypes(documentText) {
  const ast = await openapiTS(JSON.parse(documentText), { alphabetize: false, immutable: false });
  return HEADER + astToString(ast);
}
