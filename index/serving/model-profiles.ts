/**
 * The embedding models svc knows, one profile each: how its weights are stored, how texts are presented to it, how its
 * output becomes a vector, and where its similarities sit. `SVC_MODEL` names a folder of `SVC_MODEL_DIR`; a folder
 * without a profile here is refused at start (its encoding would be a guess, and a wrong guess embeds silently badly).
 *
 * A folder named `<model>-<variant>` (e.g. `multilingual-e5-small-int8`, the same network re-quantised) is that
 * model's family: same profile, and its weights are whichever of the profile's files its `onnx/` holds.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../config.js';

/** Weight precisions the embedder can load (transformers.js `dtype`; each names its own file in `onnx/`). */
export const EMBEDDER_DTYPES = ['q8', 'fp32', 'q4'] as const;
export type EmbedderDtype = (typeof EMBEDDER_DTYPES)[number];

/** The weights file of each dtype, as transformers.js names it. */
export const WEIGHTS_FILE: Record<EmbedderDtype, string> = { q8: 'model_quantized.onnx', fp32: 'model.onnx', q4: 'model_q4.onnx' };

/** How one model is used. */
export interface ModelProfile {
  /** Weight precisions it may come in, the preferred first; a folder's default is the first its `onnx/` holds. */
  readonly dtypes: readonly [EmbedderDtype, ...EmbedderDtype[]];
  /** Put before a query's text (E5 was trained with `query: ` / `passage: ` markers; without them it ranks worse). */
  readonly queryPrefix: string;
  /** Put before an indexed passage's text. */
  readonly passagePrefix: string;
  /** Token vectors → sentence vector; mean over the attention mask, then L2 normalisation (index/serving/pooling.ts). */
  readonly pooling: 'mean';
  /** Token window, closing token included: the one the model was trained and evaluated with. */
  readonly maxTokens: number;
  /** Vector length; a loaded model that answers another length is refused. */
  readonly dim: number;
  /**
   * Least cosine similarity of a vector-arm candidate: below it, a passage is unrelated to the query in this model's
   * space. Models differ: MiniLM puts unrelated texts near 0, E5 puts everything high and spreads only the top.
   */
  readonly minSimilarity: number;
}

/** The model an unset `SVC_MODEL` means (an index's older model is kept: main.ts chooseModel); docs/api-search.md "Which model" says why. */
export const DEFAULT_MODEL = 'multilingual-e5-small';

/** Every model svc can load, by folder name. */
export const MODEL_PROFILES: Readonly<Record<string, ModelProfile>> = {
  'all-MiniLM-L6-v2': {
    dtypes: ['q8', 'fp32'],
    queryPrefix: '',
    passagePrefix: '',
    pooling: 'mean',
    maxTokens: 256,
    dim: 384,
    minSimilarity: 0.2,
  },
  'multilingual-e5-small': {
    // q4 is the shared file; q8 is it re-quantised by bench/quantize-e5.sh, in a `-int8` folder of its own.
    dtypes: ['q4', 'q8'],
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
    pooling: 'mean',
    maxTokens: 512,
    dim: 384,
    minSimilarity: 0.7,
  },
};

/** The vector-arm floor of the hashing stand-in and of vectors whose model has no profile: unrelated texts sit near 0. */
export const DEFAULT_MIN_SIMILARITY = 0.2;

/**
 * The profile of a model folder name: its own, else the family's when the name is `<known model>-<variant>` (the
 * longest such model). Undefined when svc does not know the model.
 */
export function profileFor(name: string): { family: string; profile: ModelProfile } | undefined {
  if (Object.hasOwn(MODEL_PROFILES, name)) return { family: name, profile: MODEL_PROFILES[name]! };
  const family = Object.keys(MODEL_PROFILES)
    .filter((m) => name.startsWith(`${m}-`))
    .sort((a, b) => b.length - a.length)[0];
  return family === undefined ? undefined : { family, profile: MODEL_PROFILES[family]! };
}

/** Folders of `modelDir` that hold a model svc has a profile for, sorted. */
export function availableModels(modelDir: string): string[] {
  if (!existsSync(modelDir)) return [];
  return readdirSync(modelDir)
    .filter((f) => profileFor(f) !== undefined && statSync(join(modelDir, f)).isDirectory())
    .sort();
}

/**
 * The dtype loaded when none is asked for: the first of the profile's whose weights file `<modelDir>/<name>/onnx/`
 * holds, else the profile's first (so the missing file is what gets reported).
 */
export function defaultDtype(modelDir: string, name: string, profile: ModelProfile): EmbedderDtype {
  const onnx = join(modelDir, name, 'onnx');
  const files = new Set(existsSync(onnx) ? readdirSync(onnx) : []);
  return profile.dtypes.find((d) => files.has(WEIGHTS_FILE[d])) ?? profile.dtypes[0];
}

/**
 * The profile of `name` and the dtype to load, checked against what `modelDir` holds (without `dtype`:
 * `defaultDtype`). Throws a ConfigError naming the available folders when `name` has no profile or no
 * folder, or when the profile has no such dtype.
 */
export function resolveModel(modelDir: string, name: string, dtype?: EmbedderDtype): { profile: ModelProfile; dtype: EmbedderDtype } {
  const known = profileFor(name);
  if (!known || !existsSync(join(modelDir, name))) {
    const found = availableModels(modelDir);
    const why = known ? `no folder ${join(modelDir, name)}` : 'not a model svc knows';
    throw new ConfigError(
      `SVC_MODEL "${name}": ${why}; available in SVC_MODEL_DIR (${modelDir}): ${found.length ? found.join(', ') : 'none'}` +
        ` (known models: ${Object.keys(MODEL_PROFILES).join(', ')}, or <model>-<variant> folders of them)`,
    );
  }
  const { profile } = known;
  if (dtype !== undefined) {
    if (!profile.dtypes.includes(dtype))
      throw new ConfigError(`SVC_EMBED_DTYPE "${dtype}": ${known.family} comes in ${profile.dtypes.join(', ')} only`);
    return { profile, dtype };
  }
  return { profile, dtype: defaultDtype(modelDir, name, profile) };
}

/** The vector-arm floor for vectors of `modelId` (`<folder>/<dtype>`, embedder.ts), whichever thread asks. */
export function minSimilarityFor(modelId: string | undefined): number {
  const slash = modelId?.lastIndexOf('/') ?? -1;
  const name = slash > 0 ? modelId!.slice(0, slash) : '';
  return profileFor(name)?.profile.minSimilarity ?? DEFAULT_MIN_SIMILARITY;
}
