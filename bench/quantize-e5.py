"""multilingual-e5-small, 4-bit (Q4_0 packed in the graph) -> int8 dynamic quantisation, and how well it agrees.

    python bench/quantize-e5.py SRC_MODEL_FOLDER OUT_MODEL_FOLDER [--check-only] [--passages N]

The shared model_q4.onnx keeps its weights as 4-bit nibbles expanded by constant subgraphs; onnxruntime folds them
to fp32 when a session starts, so every MatMul runs in fp32. Here the folding is done once (a BASIC-level session
writes the folded graph), then onnxruntime's quantize_dynamic turns the MatMul weights into uint8 (per channel, full
range, as the shared all-MiniLM-L6-v2 int8 file). The word-embedding table stays 4-bit: it is a Gather, not a MatMul.
uint8 weights rather than int8: with uint8 activations, int8 weights use an AVX2 instruction that can saturate.

OUT gets onnx/model_quantized.onnx (the file transformers.js loads for dtype q8), onnx/SHA256SUMS, and symlinks to
SRC's tokenizer and config files, so svc loads it as SVC_MODEL=<OUT's folder name>.

Then the check: cosine similarity of each text's sentence embedding (mean pooling over the mask, L2 norm, the
model's 512-token window ending in </s>, E5's prefixes) between the q4 and int8 files, on the first N SciFact
passages (English) and on French passages of trafilatura's evaluation pages.
"""
import argparse, glob, gzip, hashlib, json, os, re, sys, tempfile
import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic
from tokenizers import Tokenizer

ap = argparse.ArgumentParser()
ap.add_argument('src')
ap.add_argument('out')
ap.add_argument('--check-only', action='store_true')
ap.add_argument('--passages', type=int, default=300)
ap.add_argument('--timing-only', action='store_true', help='only time both files, rounds alternating (no agreement check)')
ap.add_argument('--rounds', type=int, default=3)
ap.add_argument('--scifact', default=os.path.join(os.path.dirname(__file__), '../../shared/data/beir/scifact/corpus.jsonl.gz'))
ap.add_argument('--french', default=os.path.join(os.path.dirname(__file__), '../../shared/data/web/trafilatura-eval/html/eval'))
a = ap.parse_args()
src, out = os.path.abspath(a.src), os.path.abspath(a.out)
q4 = os.path.join(src, 'onnx', 'model_q4.onnx')
dst = os.path.join(out, 'onnx', 'model_quantized.onnx')

if not a.check_only:
    os.makedirs(os.path.join(out, 'onnx'), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folded = os.path.join(tmp, 'folded.onnx')
        so = ort.SessionOptions()
        # BASIC: constant folding and redundant-node removal only, standard ONNX ops (no fused contrib ops).
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = folded
        ort.InferenceSession(q4, so, providers=['CPUExecutionProvider'])
        m = onnx.load(folded)
        inits = {i.name for i in m.graph.initializer}
        mm = [n for n in m.graph.node if n.op_type == 'MatMul']
        const_w = sum(1 for n in mm if n.input[1] in inits)
        print(f'folded graph: {len(m.graph.node)} nodes, {const_w}/{len(mm)} MatMuls with constant weights, domains {sorted({n.domain or "ai.onnx" for n in m.graph.node})}')
        quantize_dynamic(folded, dst, weight_type=QuantType.QUInt8, per_channel=True, reduce_range=False, op_types_to_quantize=['MatMul'])
    for f in ('config.json', 'tokenizer.json', 'tokenizer_config.json'):
        link = os.path.join(out, f)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.join(src, f), link)
    h = hashlib.sha256(open(dst, 'rb').read()).hexdigest()
    with open(os.path.join(out, 'onnx', 'SHA256SUMS'), 'w') as f:
        f.write(f'{h}  model_quantized.onnx\n')
    print(f'wrote {dst} ({os.path.getsize(dst):,} bytes, sha256 {h})')

# --- agreement -----------------------------------------------------------------------------------------------------
tok = Tokenizer.from_file(os.path.join(src, 'tokenizer.json'))
tok.no_padding()
WINDOW, EOS, PAD = 512, 2, 1


def encode(texts):
    ids = []
    for t in texts:
        e = tok.encode(t).ids
        if len(e) > WINDOW:
            e = e[: WINDOW - 1] + [EOS]
        ids.append(e)
    return ids


def embed(sess, texts, batch=16):
    out = []
    enc = encode(texts)
    for s in range(0, len(enc), batch):
        part = enc[s : s + batch]
        L = max(map(len, part))
        ids = np.array([e + [PAD] * (L - len(e)) for e in part], np.int64)
        mask = np.array([[1] * len(e) + [0] * (L - len(e)) for e in part], np.int64)
        hs = sess.run(None, {'input_ids': ids, 'attention_mask': mask, 'token_type_ids': np.zeros_like(ids)})[0]
        v = (hs * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        out.append(v / np.linalg.norm(v, axis=1, keepdims=True))
    return np.concatenate(out)


en = []
with gzip.open(a.scifact, 'rt') as f:
    for line in f:
        d = json.loads(line)
        en.append('passage: ' + (d['title'] + '\n' if d.get('title') else '') + d['text'])
        if len(en) >= a.passages:
            break
fr = []
for path in sorted(glob.glob(os.path.join(a.french, '*.fr.*.html.gz'))) + sorted(glob.glob(os.path.join(a.french, 'ledevoir.com.*'))):
    html = gzip.open(path, 'rt', errors='replace').read()
    for p in re.findall(r'<p[^>]*>(.*?)</p>', html, re.S):
        text = re.sub(r'\s+', ' ', re.sub(r'<[^>]+>', ' ', p)).strip()
        if len(text) >= 200:
            fr.append('passage: ' + text)
fr = list(dict.fromkeys(fr))[: a.passages]
queries = ['query: ' + q for q in [
    'Why did Montreal stop allowing shared electric scooters?',
    'Combien de masques chirurgicaux ont été volés dans un hôpital de Kobe ?',
    'archives du diocèse anglican de Montréal',
    'Vitamin D deficiency is associated with tuberculosis.',
]]

opts = ort.SessionOptions()
opts.intra_op_num_threads = 2
s4 = ort.InferenceSession(q4, opts, providers=['CPUExecutionProvider'])
s8 = ort.InferenceSession(dst, opts, providers=['CPUExecutionProvider'])
if a.timing_only:
    # Alternating rounds on the same batches: a machine shared with other work slows both files alike.
    import time
    texts = sorted(en, key=len)[: a.passages]
    best = {'q4': 0.0, 'int8': 0.0}
    for r in range(a.rounds):
        for name, sess in (('q4', s4), ('int8', s8)):
            t0 = time.perf_counter()
            embed(sess, texts, batch=32)
            best[name] = max(best[name], len(texts) / (time.perf_counter() - t0))
    print(f'{len(texts)} SciFact passages, 2 threads, best of {a.rounds} alternating rounds: q4 {best["q4"]:.2f}, int8 {best["int8"]:.2f} passages/s (int8 / q4 = {best["int8"] / best["q4"]:.2f})')
    sys.exit(0)
kept = {}
for name, texts in (('SciFact passages (en)', en), ('trafilatura-eval paragraphs (fr)', fr), ('queries (en, fr)', queries)):
    kept[name] = (embed(s4, texts), embed(s8, texts))
    c = (kept[name][0] * kept[name][1]).sum(1)
    print(f'{name}: {len(texts)} texts, cosine q4 vs int8 mean {c.mean():.5f}, min {c.min():.5f}, 5th percentile {np.percentile(c, 5):.5f}')
# Ranking agreement: for each English passage as a query against the others, is the nearest neighbour the same?
e4, e8 = kept['SciFact passages (en)']
s4m, s8m = e4 @ e4.T, e8 @ e8.T
np.fill_diagonal(s4m, -1)
np.fill_diagonal(s8m, -1)
print(f'nearest SciFact neighbour identical under q4 and int8: {(s4m.argmax(1) == s8m.argmax(1)).mean():.3f}')
sys.stdout.flush()
