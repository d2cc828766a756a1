/**
 * Engine images persisted beside the index as immutable segment files named by small manifests
 * (docs/architecture.md#persisted-engine-segments). Only the writer publishes: the segment file under a temporary
 * name, synced and renamed, then the manifest the same way, so a reader sees a whole segment or none. A reader loads
 * the newest manifest it can use and checks the file's length and SHA-256 before trusting a byte of it.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeDurably } from './durable-file.js';
import { IMAGE_FORMAT, readHeader, type EngineImage, type ImageIdentity } from './engine-image.js';

/** The folder under the index location's root. */
export const SEGMENTS_FOLDER = 'engine-segments';

export interface SegmentManifest extends ImageIdentity {
  readonly format: number;
  /** The image's header id (engine-image.ts): the file named must carry the same. */
  readonly id: string;
  readonly files: readonly { readonly name: string; readonly bytes: number; readonly sha256: string }[];
}

type Log = { info(o: object, msg: string): void; warn(o: object, msg: string): void } | undefined;

/** Manifests kept besides the newest (a reader may be loading one of them). */
const KEEP_MANIFESTS = 2;
const MANIFEST = /^manifest-(\d{12})-([0-9a-f]+)\.json$/;
const SEGMENT = /^segment-\d{12}-[0-9a-f]+\.bin$/;
const TEMP = /^\..*\.tmp-/;

const pad = (v: number) => String(v).padStart(12, '0');

export class EngineSegments {
  readonly dir: string;
  /** How long a file no manifest names (or a temporary file) is left before it is deleted: a reader may be loading it. */
  readonly #graceMs: number;
  readonly #log: Log;

  constructor(indexDir: string, opts: { graceMs?: number; log?: Log } = {}) {
    this.dir = join(indexDir, SEGMENTS_FOLDER);
    this.#graceMs = opts.graceMs ?? 60_000;
    this.#log = opts.log;
  }

  /** Writes an image as a new segment and publishes it by its manifest's rename (writer only). */
  async publish(image: EngineImage): Promise<SegmentManifest> {
    await mkdir(this.dir, { recursive: true });
    const h = image.header;
    const bytes = new Uint8Array(image.buffer);
    const name = `segment-${pad(h.version)}-${h.id}.bin`;
    await writeDurably(join(this.dir, name), bytes);
    const manifest: SegmentManifest = {
      format: IMAGE_FORMAT,
      version: h.version,
      analysis: h.analysis,
      maxTermLength: h.maxTermLength,
      id: h.id,
      files: [{ name, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }],
    };
    await writeDurably(join(this.dir, `manifest-${pad(h.version)}-${h.id}.json`), JSON.stringify(manifest));
    await this.collect().catch((err: unknown) => this.#log?.warn({ err: String(err) }, 'engine segments: clean-up failed'));
    return manifest;
  }

  /** The manifests present, newest table version first. */
  async manifests(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    return names.filter((n) => MANIFEST.test(n)).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  }

  /**
   * The newest image a reader can use: same format, analysis and term length as `want`, at a table version ≤
   * `maxVersion`, its file whole (length and SHA-256). Loaded into shared memory. Null when there is none (the reader
   * then scans the table); a damaged one is skipped with a warning.
   */
  async loadNewest(
    want: Omit<ImageIdentity, 'version'>,
    maxVersion = Infinity,
  ): Promise<{ image: EngineImage; manifest: SegmentManifest } | null> {
    for (const name of await this.manifests()) {
      const version = Number(MANIFEST.exec(name)![1]);
      if (version > maxVersion) continue;
      try {
        const m = JSON.parse(await readFile(join(this.dir, name), 'utf8')) as SegmentManifest;
        if (m.format !== IMAGE_FORMAT || m.analysis !== want.analysis || m.maxTermLength !== want.maxTermLength) continue;
        const image = await this.#load(m);
        return { image, manifest: m };
      } catch (err) {
        // Deleted meanwhile (past its grace) or damaged: the next older one may do.
        this.#log?.warn({ manifest: name, err: err instanceof Error ? err.message : String(err) }, 'engine segments: skipped');
      }
    }
    return null;
  }

  async #load(m: SegmentManifest): Promise<EngineImage> {
    const f = m.files[0];
    if (!f || m.files.length !== 1) throw new Error('manifest names no single segment');
    const buffer = new SharedArrayBuffer(f.bytes);
    const bytes = new Uint8Array(buffer);
    const fh = await open(join(this.dir, f.name), 'r');
    try {
      if ((await fh.stat()).size !== f.bytes) throw new Error(`${f.name}: length differs from the manifest`);
      let at = 0;
      while (at < f.bytes) {
        const { bytesRead } = await fh.read(bytes, at, f.bytes - at, at);
        if (bytesRead === 0) throw new Error(`${f.name}: shorter than the manifest says`);
        at += bytesRead;
      }
    } finally {
      await fh.close();
    }
    if (createHash('sha256').update(bytes).digest('hex') !== f.sha256) throw new Error(`${f.name}: checksum differs`);
    const header = readHeader(buffer);
    if (header.id !== m.id || header.version !== m.version) throw new Error(`${f.name}: not the image the manifest names`);
    return { buffer, header };
  }

  /**
   * Deletes manifests older than the newest `KEEP_MANIFESTS`, then segment and temporary files no kept manifest names
   * once they are older than the grace period (writer only).
   */
  async collect(now = Date.now()): Promise<void> {
    const manifests = await this.manifests();
    const kept = manifests.slice(0, KEEP_MANIFESTS);
    for (const name of manifests.slice(KEEP_MANIFESTS)) await unlink(join(this.dir, name)).catch(() => undefined);
    const named = new Set<string>();
    for (const name of kept) {
      try {
        const m = JSON.parse(await readFile(join(this.dir, name), 'utf8')) as SegmentManifest;
        for (const f of m.files) named.add(f.name);
      } catch {
        // unreadable: names nothing
      }
    }
    for (const name of await readdir(this.dir)) {
      if (named.has(name) || !(SEGMENT.test(name) || TEMP.test(name))) continue;
      const path = join(this.dir, name);
      const s = await stat(path).catch(() => null);
      if (s && now - s.mtimeMs >= this.#graceMs) await unlink(path).catch(() => undefined);
    }
  }
}
