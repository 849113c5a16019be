import { Writable } from 'node:stream';

/** ZIP bytes are stored in rows of this size (the last one smaller): 1 MiB. */
export const EXPORT_CHUNK_BYTES = 1024 * 1024;

export interface ChunkWriter extends Writable {
  /** Bytes accepted so far. */
  bytes(): number;
  /** Chunks stored so far. */
  chunks(): number;
}

/**
 * Cuts a byte stream into chunks of `chunkBytes` and hands each to `store` with its position (0, 1, …),
 * one at a time: the stream is not asked for more until the chunk is stored. Every chunk is assembled in
 * the same buffer, which `store` must not keep once its promise settles (the database drivers copy what
 * they bind). Allocating a fresh megabyte per chunk instead made the process's footprint grow with the
 * size of the export: those buffers outlive the young generation (they wait for the insert) and are only
 * freed by a full collection, which external memory alone does not trigger soon.
 */
export function createChunkWriter(store: (position: number, data: Buffer) => Promise<void>, chunkBytes = EXPORT_CHUNK_BYTES): ChunkWriter {
  const chunk = Buffer.allocUnsafeSlow(chunkBytes);
  let filled = 0;
  let position = 0;
  let total = 0;

  async function storeChunk(length: number): Promise<void> {
    await store(position, length === chunkBytes ? chunk : chunk.subarray(0, length));
    position += 1;
    filled = 0;
  }

  async function take(data: Buffer): Promise<void> {
    let offset = 0;
    while (offset < data.length) {
      const copied = data.copy(chunk, filled, offset, Math.min(data.length, offset + chunkBytes - filled));
      filled += copied;
      offset += copied;
      if (filled === chunkBytes) await storeChunk(filled);
    }
  }

  const writer = new Writable({
    // Small: the chunk is the writer's buffer; the stream's own just smooths the hand-over.
    highWaterMark: 64 * 1024,
    write(data: Buffer, _encoding, callback) {
      total += data.length;
      if (filled + data.length < chunkBytes) {
        data.copy(chunk, filled);
        filled += data.length;
        return callback();
      }
      take(data).then(() => callback(), callback);
    },
    final(callback) {
      if (filled === 0) return callback();
      storeChunk(filled).then(() => callback(), callback);
    },
  }) as ChunkWriter;
  writer.bytes = () => total;
  writer.chunks = () => position;
  return writer;
}
