// The Node stack a user would assemble instead of the PatchBench runtime
// (docs/development.md), run by scripts/bench-peers.sh on the runtime's
// own inputs (scripts/loadbench write): every step copies the state
// (structuredClone: rfc6902 changes its argument, and a rejected step must
// leave the state as it was), applies the patch with rfc6902, validates
// the whole copy with ajv (JSON Schema 2020-12; the output schema at its
// path) and evaluates the same CEL invariants with cel-js over pre and
// post; the step commits when all pass.
//
//   node --expose-gc peer.mjs -dir DIR -size 6MB -steps 20 -out FINAL.json
//
// prints one JSON line with the figures scripts/loadbench prints
// (nanoseconds, peak RSS in KiB) and writes the last committed state as
// JSON.stringify writes it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyPatch } from 'rfc6902';
import Ajv2020 from 'ajv/dist/2020.js';
import { parse as celParse } from '@marcbachmann/cel-js';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('-')) acc.push([a.replace(/^-+/, ''), all[i + 1]]);
  return acc;
}, []));
const dir = args.dir, size = args.size ?? '6MB', steps = Number(args.steps ?? 20), out = args.out;
if (!dir || !out || !(steps >= 2)) {
  console.error('peer.mjs: needs -dir, -out and -steps of 2 or more');
  process.exit(2);
}

const text = readFileSync(join(dir, `state-${size}.json`), 'utf8');
const patch = JSON.parse(readFileSync(join(dir, 'chain.json'), 'utf8'));
const contract = JSON.parse(readFileSync(join(dir, 'contract.json'), 'utf8'));
const ajv = new Ajv2020({ allErrors: false });
const validate = ajv.compile(contract.schema);
const validateOutput = ajv.compile(contract.output_schema);
const outPath = contract.output_path.split('/').slice(1);
const rules = contract.invariants.map((inv) => ({ name: inv.name, run: celParse(inv.rule) }));

const now = () => process.hrtime.bigint();
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) * 1000; }; // ns, all threads
const fig = { stack: 'node', size, text_bytes: Buffer.byteLength(text), steps };
let t0 = now(), c0 = cpu();
let state = JSON.parse(text);
fig.parse_ns = Number(now() - t0);
fig.parse_cpu_ns = cpu() - c0;

function step() {
  const post = structuredClone(state);
  const results = applyPatch(post, patch);
  const failed = results.find((r) => r !== null);
  if (failed) throw new Error(`patch does not apply: ${failed}`);
  if (!validate(post)) throw new Error(`schema: ${JSON.stringify(validate.errors)}`);
  let v = post;
  for (const t of outPath) v = v === undefined || v === null ? undefined : v[t];
  if (v !== undefined && !validateOutput(v)) throw new Error('output schema');
  for (const r of rules) {
    if (r.run({ pre: state, post }) !== true) throw new Error(`invariant ${r.name} does not hold`);
  }
  state = post; // commit
}

const times = [];
for (let i = 0; i < steps; i++) {
  t0 = now();
  const c = cpu();
  if (i === 1) c0 = c;
  step();
  const ns = Number(now() - t0);
  if (i === 0) {
    fig.first_ns = ns;
    fig.first_cpu_ns = cpu() - c;
    globalThis.gc(); // the steps after start clean (every stack does this; node --expose-gc)
  } else times.push(ns);
}
fig.step_cpu_ns = Math.round((cpu() - c0) / (steps - 1));
times.sort((a, b) => a - b);
const m = times.length >> 1;
fig.step_ns = times.length % 2 ? times[m] : Math.round((times[m - 1] + times[m]) / 2);
const final = JSON.stringify(state);
fig.final_bytes = Buffer.byteLength(final);
fig.max_rss_kib = process.resourceUsage().maxRSS;
writeFileSync(out, final);
console.log(JSON.stringify(fig));
