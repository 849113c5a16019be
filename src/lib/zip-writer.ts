import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ZipFile } from 'yazl';

/** One file of the archive; `open` is called only when the file's turn comes, so nothing is read ahead. */
export interface ZipEntry {
  name: string;
  open(): Readable;
}

/**
 * Writes the entries, in order, as one streamed ZIP into `out` (deflated, sizes in data descriptors, ZIP64
 * when needed: yazl). Backpressure runs end to end: an entry's source is read only as fast as `out` accepts
 * the compressed bytes, so memory stays flat whatever the size of the data. yazl does not forward an
 * entry's stream error, so each source is watched here: the first failure (a source's, yazl's or `out`'s)
 * tears the pipeline down and rejects.
 */
export async function writeZip(entries: readonly ZipEntry[], out: Writable, options: { mtime: Date }): Promise<void> {
  const zip = new ZipFile();
  const output = zip.outputStream as Readable;
  const fail = (err: unknown) => output.destroy(err instanceof Error ? err : new Error(String(err)));
  zip.on('error', fail);
  for (const entry of entries) {
    zip.addReadStreamLazy(entry.name, { mtime: options.mtime }, (callback) => {
      let source: Readable;
      try {
        source = entry.open();
      } catch (err) {
        fail(err);
        return;
      }
      source.once('error', fail);
      callback(null, source);
    });
  }
  zip.end();
  await pipeline(output, out);
}

/** A source of text pieces (NDJSON lines, gathered by page) as a byte stream that yields only when read. */
export function textSource(pieces: () => AsyncIterable<string>): Readable {
  async function* bytes(): AsyncGenerator<Buffer> {
    for await (const piece of pieces()) if (piece.length > 0) yield Buffer.from(piece, 'utf8');
  }
  return Readable.from(bytes(), { objectMode: false });
}
