/**
 * Engine images persisted beside the index as immutable segment files named by small manifests
 * (docs/architecture.md#persisted-engine-segments). Only the writer publishes: the segment file under a temporary
 * name, synced and renamed, then the manifest the same way, so a reader sees a whole segment or none. A manifest
 * names a base image and the delta segments (engine-delta.ts) written after it, in order: the manifest is the unit of
 * visibility. A reader loads the newest manifest it can use and checks each file's length and SHA-256 before
 * trusting a byte of it.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { LoopBudget } from '../../../event-loop.js';
import { writeDurably } from './durable-file.js';
import { readDeltaHeader, type EngineDelta } from './engine-delta.js';
import { IMAGE_FORMAT, readHeader, type EngineImage, type ImageIdentity } from './engine-image.js';

/** The folder under the index location's root. */
export const SEGMENTS_FOLDER = 'engine-segments';

/**
 * Where segment files live: each written whole or not at all, listed with the time it was written. A folder beside a
 * local index (`FolderFiles`), or a table in the index's own object store (engine-segment-table.ts).
 */
export interface SegmentFiles {
  /** What logs may name (a folder, or the index's label: never a credential). */
  readonly label: string;
  list(): Promise<{ readonly name: string; readonly mtimeMs: number }[]>;
  /**
   * The file's bytes, alone in a shared buffer (what a loaded image is read from in place by every thread); throws
   * when it is absent. `onChunk` is given the bytes in order as they arrive, each once (the checksum is computed while
   * the rest is read).
   */
  read(name: string, onChunk?: (chunk: Uint8Array) => void): Promise<Uint8Array<SharedArrayBuffer>>;
  write(name: string, data: Uint8Array | string): Promise<void>;
  remove(names: readonly string[]): Promise<void>;
}

/** Segment files in a local folder (durable-file.ts: temporary name, fsync, rename, folder sync). */
export class FolderFiles implements SegmentFiles {
  constructor(readonly label: string) {}

  async list(): Promise<{ name: string; mtimeMs: number }[]> {
    let names: string[];
    try {
      names = await readdir(this.label);
    } catch {
      return [];
    }
    const out: { name: string; mtimeMs: number }[] = [];
    for (const name of names) {
      const s = await stat(join(this.label, name)).catch(() => null);
      if (s) out.push({ name, mtimeMs: s.mtimeMs });
    }
    return out;
  }

  /** Read straight into shared memory: a large base is not first read into the heap and then copied. */
  async read(name: string, onChunk?: (chunk: Uint8Array) => void): Promise<Uint8Array<SharedArrayBuffer>> {
    const fh = await open(join(this.label, name), 'r');
    try {
      const size = (await fh.stat()).size;
      const bytes = new Uint8Array(new SharedArrayBuffer(size));
      // In chunks, each handed to `onChunk` while the next one is read (the read runs on libuv's pool, the hash here).
      let last: Uint8Array | null = null;
      for (let at = 0; at < size; ) {
        const reading = fh.read(bytes, at, onChunk ? Math.min(READ_CHUNK, size - at) : size - at, at);
        if (last) onChunk!(last);
        const { bytesRead } = await reading;
        if (bytesRead === 0) throw new Error(`${name}: shorter than its length`);
        last = bytes.subarray(at, at + bytesRead);
        at += bytesRead;
      }
      if (last && onChunk) onChunk(last);
      return bytes;
    } finally {
      await fh.close();
    }
  }

  async write(name: string, data: Uint8Array | string): Promise<void> {
    await mkdir(this.label, { recursive: true });
    await writeDurably(join(this.label, name), data);
  }

  async remove(names: readonly string[]): Promise<void> {
    for (const n of names) await unlink(join(this.label, n)).catch(() => undefined);
  }
}

export interface SegmentManifest extends ImageIdentity {
  readonly format: number;
  /** The header id of the newest file named (engine-image.ts, engine-delta.ts): the file must carry the same. */
  readonly id: string;
  /** The base image, then the delta segments to apply to it in order. */
  readonly files: readonly SegmentFile[];
}

export interface SegmentFile {
  readonly name: string;
  readonly bytes: number;
  readonly sha256: string;
}

/** A manifest's files loaded and checked: the base image and the deltas to apply to it in order. */
export interface LoadedSegments {
  readonly image: EngineImage;
  readonly deltas: readonly EngineDelta[];
  readonly manifest: SegmentManifest;
}

type Log = { info(o: object, msg: string): void; warn(o: object, msg: string): void } | undefined;

/** Bytes hashed between two looks at the event loop's budget. */
const HASH_CHUNK = 1 << 20;
/** Bytes of a segment file read at a time while the bytes before them are hashed (`FolderFiles.read`). */
const READ_CHUNK = 8 << 20;

/** How long a file no manifest names is kept by default (a reader may be loading it). */
export const SEGMENT_GRACE_MS = 60_000;

/** Manifests kept besides the newest (a reader may be loading one of them). */
const KEEP_MANIFESTS = 2;
const MANIFEST = /^manifest-(\d{12})-([0-9a-f]+)\.json$/;
const SEGMENT = /^(segment|delta)-\d{12}-[0-9a-f]+\.bin$/;
const TEMP = /^\..*\.tmp-/;

const pad = (v: number) => String(v).padStart(12, '0');

export class EngineSegments {
  /** Where the files are, as logs may name it (the folder of a local index). */
  readonly dir: string;
  readonly #files: SegmentFiles;
  /** How long a file no manifest names (or a temporary file) is left before it is deleted: a reader may be loading it. */
  readonly #graceMs: number;
  readonly #log: Log;

  /** `where`: a local index's folder (the segments go in its `SEGMENTS_FOLDER`), or where else they live. */
  constructor(where: string | SegmentFiles, opts: { graceMs?: number; log?: Log } = {}) {
    this.#files = typeof where === 'string' ? new FolderFiles(join(where, SEGMENTS_FOLDER)) : where;
    this.dir = this.#files.label;
    this.#graceMs = opts.graceMs ?? SEGMENT_GRACE_MS;
    this.#log = opts.log;
  }

  /** The files of the newest manifest this writer published or loaded: what a delta is appended to. */
  #chain: { readonly files: SegmentFile[]; readonly base: string; id: string; version: number } | null = null;

  /** Writes an image as a new base segment and publishes it by its manifest's rename (writer only). */
  async publish(image: EngineImage): Promise<SegmentManifest> {
    const h = image.header;
    const file = await this.#write(`segment-${pad(h.version)}-${h.id}.bin`, new Uint8Array(image.buffer));
    const manifest = await this.#publishManifest([file], h);
    this.#chain = { files: [file], base: h.id, id: h.id, version: h.version };
    return manifest;
  }

  /**
   * Writes a delta segment and publishes a manifest naming the chain it extends plus it (writer only). Refused when it
   * does not follow the newest file this writer published (a failed or superseded publication): a base is due then.
   */
  async publishDelta(delta: EngineDelta): Promise<SegmentManifest> {
    const h = delta.header;
    const chain = this.#chain;
    if (!chain || chain.base !== h.base || chain.id !== h.prev || chain.version !== h.from)
      throw new Error('engine segments: the delta does not follow the newest published segment');
    const file = await this.#write(`delta-${pad(h.version)}-${h.id}.bin`, new Uint8Array(delta.buffer));
    const manifest = await this.#publishManifest([...chain.files, file], h);
    chain.files.push(file);
    chain.id = h.id;
    chain.version = h.version;
    return manifest;
  }

  /** The chain a published delta follows (the base image's id, the newest file's id and version), null before any. */
  get chain(): { readonly base: string; readonly id: string; readonly version: number; readonly files: number } | null {
    const c = this.#chain;
    return c ? { base: c.base, id: c.id, version: c.version, files: c.files.length } : null;
  }

  async #write(name: string, bytes: Uint8Array): Promise<SegmentFile> {
    await this.#files.write(name, bytes);
    return { name, bytes: bytes.length, sha256: await sha256InSlices(bytes) };
  }

  async #publishManifest(files: SegmentFile[], h: ImageIdentity & { readonly id: string }): Promise<SegmentManifest> {
    const manifest: SegmentManifest = {
      format: IMAGE_FORMAT,
      version: h.version,
      analysis: h.analysis,
      maxTermLength: h.maxTermLength,
      id: h.id,
      files,
    };
    // Written last: the manifest is what makes the files it names visible.
    await this.#files.write(`manifest-${pad(h.version)}-${h.id}.json`, JSON.stringify(manifest));
    await this.collect().catch((err: unknown) => this.#log?.warn({ err: String(err) }, 'engine segments: clean-up failed'));
    return manifest;
  }

  /**
   * The manifests present, newest table version first; of one version, the latest written first (a new image format or
   * analysis republishes at the version the table is at: its random id must not rank it below the older ones).
   */
  async manifests(): Promise<string[]> {
    const found = (await this.#files.list()).filter((f) => MANIFEST.test(f.name));
    const version = (n: string) => Number(MANIFEST.exec(n)![1]);
    return found
      .sort((a, b) => version(b.name) - version(a.name) || b.mtimeMs - a.mtimeMs || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0))
      .map((f) => f.name);
  }

  /**
   * The newest manifest of this format that reads as one (its files not checked) and when it was written; null: none. What an operator
   * compares with the table's version (`svc status`).
   */
  async newest(): Promise<{ readonly manifest: SegmentManifest; readonly writtenMs: number } | null> {
    const times = new Map((await this.#files.list()).map((f) => [f.name, f.mtimeMs]));
    for (const name of await this.manifests())
      try {
        const manifest = this.#manifest(await this.#files.read(name));
        // A segment of another format is never loaded (`loadNewest`): reporting it would tell an operator that a
        // restart loads when it scans.
        if (manifest.format !== IMAGE_FORMAT) continue;
        return { manifest, writtenMs: times.get(name) ?? 0 };
      } catch {
        // deleted meanwhile, or unreadable: the next older one
      }
    return null;
  }

  /**
   * The newest segments a reader can use: same format, analysis and term length as `want`, at a table version ≤
   * `maxVersion`, every file whole (length and SHA-256) and each delta following the file before it. Loaded into
   * shared memory. Null when there are none (the reader then scans the table); a damaged one is skipped with a
   * warning. `chain`: the writer continues this manifest's chain with its next delta.
   */
  async loadNewest(want: Omit<ImageIdentity, 'version'>, maxVersion = Infinity, chain = false): Promise<LoadedSegments | null> {
    for (const name of await this.manifests()) {
      const version = Number(MANIFEST.exec(name)![1]);
      if (version > maxVersion) continue;
      try {
        const m = this.#manifest(await this.#files.read(name));
        if (m.format !== IMAGE_FORMAT || m.analysis !== want.analysis || m.maxTermLength !== want.maxTermLength) continue;
        const loaded = await this.#load(m);
        if (chain) {
          const last = loaded.deltas.at(-1)?.header ?? loaded.image.header;
          this.#chain = { files: [...m.files], base: loaded.image.header.id, id: last.id, version: last.version };
        }
        return loaded;
      } catch (err) {
        // Deleted meanwhile (past its grace) or damaged: the next older one may do.
        this.#log?.warn({ manifest: name, err: err instanceof Error ? err.message : String(err) }, 'engine segments: skipped');
      }
    }
    return null;
  }

  async #load(m: SegmentManifest): Promise<LoadedSegments> {
    const [first, ...rest] = m.files;
    if (!first) throw new Error('manifest names no segment');
    const buffer = await this.#read(first);
    const header = readHeader(buffer);
    const image: EngineImage = { buffer, header };
    const deltas: EngineDelta[] = [];
    let prev: { id: string; version: number } = header;
    for (const f of rest) {
      const b = await this.#read(f);
      const h = readDeltaHeader(b);
      if (h.base !== header.id || h.prev !== prev.id || h.from !== prev.version) throw new Error(`${f.name}: does not follow ${prev.id}`);
      deltas.push({ buffer: b, header: h });
      prev = h;
    }
    if (prev.id !== m.id || prev.version !== m.version) throw new Error(`${m.files.at(-1)!.name}: not the file the manifest names`);
    return { image, deltas, manifest: m };
  }

  /** A file's bytes in shared memory, checked against the manifest's length and SHA-256. */
  async #read(f: SegmentFile): Promise<SharedArrayBuffer> {
    const hash = createHash('sha256');
    const bytes = await this.#files.read(f.name, (chunk) => hash.update(chunk));
    if (bytes.length !== f.bytes) throw new Error(`${f.name}: length differs from the manifest`);
    if (hash.digest('hex') !== f.sha256) throw new Error(`${f.name}: checksum differs`);
    return bytes.buffer;
  }

  /**
   * Deletes manifests older than the newest `KEEP_MANIFESTS`, then segment and temporary files no kept manifest names
   * once they are older than the grace period (writer only).
   */
  async collect(now = Date.now()): Promise<void> {
    const manifests = await this.manifests();
    const kept = manifests.slice(0, KEEP_MANIFESTS);
    const named = new Set<string>();
    for (const name of kept) {
      try {
        for (const f of this.#manifest(await this.#files.read(name)).files) named.add(f.name);
      } catch {
        // unreadable: names nothing
      }
    }
    const gone = [...manifests.slice(KEEP_MANIFESTS)];
    for (const { name, mtimeMs } of await this.#files.list())
      if (!named.has(name) && (SEGMENT.test(name) || TEMP.test(name)) && now - mtimeMs >= this.#graceMs) gone.push(name);
    if (gone.length > 0) await this.#files.remove(gone);
  }

  #manifest(data: Uint8Array): SegmentManifest {
    return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as SegmentManifest;
  }
}

/** SHA-256 of a large buffer, yielding to the event loop between chunks (a base image may be large). */
async function sha256InSlices(bytes: Uint8Array): Promise<string> {
  const hash = createHash('sha256');
  const budget = new LoopBudget();
  for (let at = 0; at < bytes.length; at += HASH_CHUNK) {
    hash.update(bytes.subarray(at, Math.min(bytes.length, at + HASH_CHUNK)));
    await budget.tick();
  }
  return hash.digest('hex');
}
