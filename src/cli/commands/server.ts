import { loadConfig } from '../../config.js';
import type { Command } from '../command.js';

// The HTTP stack is loaded only by the commands that serve, so administration commands start quickly.
const loadServer = () => import('../../server.js');

export const serveCommand: Command = {
  name: 'serve',
  summary: 'migrate, then serve the API with the webhook delivery worker in the same process',
  details: [
    'Listens on HOST:PORT, and for Prometheus on METRICS_HOST:METRICS_PORT (127.0.0.1:9464; METRICS_PORT=off',
    'for none), and logs to stdout as JSON (pino). MIGRATE_ON_START=false: never migrate, and refuse to start',
    'on a schema that is behind (run `workspace migrate` first). SIGTERM or SIGINT stops accepting',
    'connections, lets in-flight requests and deliveries finish, closes the database and exits 0 (within',
    'SHUTDOWN_TIMEOUT, default 25s).',
  ].join('\n'),
  noJson: true,
  async run(input) {
    const config = loadConfig(input.env);
    const { startServer, untilSignal } = await loadServer();
    return untilSignal(await startServer(config));
  },
};

export const workerCommand: Command = {
  name: 'worker',
  summary: 'migrate, then run the webhook delivery worker only (no API)',
  details: [
    'Its metrics listener defaults to 127.0.0.1:9465, so it runs beside a `serve` (9464) with default settings.',
    'Logs to stdout as JSON (pino). SIGTERM or SIGINT lets in-flight deliveries finish and exits 0.',
  ].join('\n'),
  noJson: true,
  async run(input) {
    const config = loadConfig(input.env, 'worker');
    const { startWorker, untilSignal } = await loadServer();
    return untilSignal(await startWorker(config));
  },
};
