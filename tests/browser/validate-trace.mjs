// Validates a Trace Event Format file (the JSON Object Format of the
// "Trace Event Format" document that chrome://tracing, Perfetto and
// speedscope follow) against the fields that document requires of each
// phase:
//
//   node validate-trace.mjs FILE [TOTAL]
//
//   - the file is a JSON object with a traceEvents array; displayTimeUnit,
//     when present, is "ms" or "ns"; otherData, when present, an object;
//   - every event has a one-letter ph of a known phase, and pid and tid
//     (numbers);
//   - B, E, X, i, I, C, P, b, e, n, s, t, f, N, O, D: ts, a number (microseconds)
//     >= 0; B, X, i, I, C, M: a name (string); cat, when present, a string;
//     args, when present, an object;
//   - X: dur, a number >= 0;
//   - i/I: s, when present, one of g, p, t;
//   - C: args an object of numbers;
//   - M: name one of process_name, process_labels, process_sort_index,
//     thread_name, thread_sort_index, with args.name (a string) for the
//     names and args.sort_index (a number) for the sort indices;
//   - X events of one thread nest (a child lies within its parent; two
//     events never overlap partly), as a flame chart must;
//   - flow events s, t, f: an id (a number or a string), each id one s
//     and one f (in time order: s first), with the same cat and name;
//     each bound to a complete event of its thread: s and f with "bp":"e"
//     to the one that encloses its ts, f without it to the next one that
//     starts at or after its ts (the Trace Event Format's binding);
//   - with TOTAL: the outermost "cpu" X events' durations add up to
//     TOTAL ns (within the file's microsecond rounding: exactly, since
//     times carry 3 decimals).
//
// Prints "ok - ..." or "not ok - ..." lines; exits 1 on a failure.
import { readFileSync } from 'node:fs';

const [file, totalArg] = process.argv.slice(2);
let fails = 0;
const ok = (cond, what) => {
  console.log(`${cond ? 'ok' : 'not ok'} - ${what}`);
  if (!cond) fails++;
};
const problems = [];
const bad = (i, msg) => {
  if (problems.length < 10) problems.push(`event ${i}: ${msg}`);
};

let doc;
try {
  doc = JSON.parse(readFileSync(file, 'utf8'));
} catch (e) {
  ok(false, `${file} is JSON (${e.message})`);
  process.exit(1);
}
const base = file.split('/').pop();
ok(doc && typeof doc === 'object' && Array.isArray(doc.traceEvents), `${base}: an object with a traceEvents array`);
const evs = doc.traceEvents || [];
if ('displayTimeUnit' in doc) ok(doc.displayTimeUnit === 'ms' || doc.displayTimeUnit === 'ns', `${base}: displayTimeUnit is ms or ns`);
if ('otherData' in doc) ok(doc.otherData && typeof doc.otherData === 'object', `${base}: otherData is an object`);

const timed = new Set('BEXiICPbenstfNODR'.split(''));
const named = new Set('BXiICM'.split(''));
const metaNames = new Set(['process_name', 'process_labels', 'process_sort_index', 'thread_name', 'thread_sort_index']);
const isNum = v => typeof v === 'number' && Number.isFinite(v);
const byThread = new Map();
const counts = {};
evs.forEach((e, i) => {
  if (!e || typeof e !== 'object') return bad(i, 'not an object');
  const ph = e.ph;
  if (typeof ph !== 'string' || ph.length !== 1 || !(timed.has(ph) || ph === 'M')) return bad(i, `phase ${JSON.stringify(ph)}`);
  counts[ph] = (counts[ph] || 0) + 1;
  if (!isNum(e.pid) || !isNum(e.tid)) bad(i, 'pid and tid must be numbers');
  if (timed.has(ph) && !(isNum(e.ts) && e.ts >= 0)) bad(i, `${ph}: ts must be a number >= 0`);
  if (named.has(ph) && typeof e.name !== 'string') bad(i, `${ph}: name must be a string`);
  if ('cat' in e && typeof e.cat !== 'string') bad(i, 'cat must be a string');
  if ('args' in e && (typeof e.args !== 'object' || e.args === null || Array.isArray(e.args))) bad(i, 'args must be an object');
  if (ph === 'X') {
    if (!(isNum(e.dur) && e.dur >= 0)) bad(i, 'X: dur must be a number >= 0');
    const k = `${e.pid}:${e.tid}`;
    if (!byThread.has(k)) byThread.set(k, []);
    byThread.get(k).push(e);
  }
  if ((ph === 'i' || ph === 'I') && 's' in e && !['g', 'p', 't'].includes(e.s)) bad(i, `${ph}: s must be g, p or t`);
  if (ph === 'C' && !(e.args && Object.values(e.args).every(isNum))) bad(i, 'C: args must hold numbers');
  if (ph === 'M') {
    if (!metaNames.has(e.name)) bad(i, `M: unknown metadata ${JSON.stringify(e.name)}`);
    else if (e.name.endsWith('_name') && typeof (e.args && e.args.name) !== 'string') bad(i, 'M: args.name must be a string');
    else if (e.name.endsWith('_sort_index') && !isNum(e.args && e.args.sort_index)) bad(i, 'M: args.sort_index must be a number');
  }
});
ok(!problems.length, `${base}: ${evs.length} events have the fields their phase requires (${JSON.stringify(counts)})${problems.length ? ': ' + problems.join('; ') : ''}`);

// nesting per thread, in integer nanoseconds (3 decimals of microseconds)
const ns = v => Math.round(v * 1000);
let nest = [];
let cpuRoots = 0;
for (const [k, list] of byThread) {
  list.sort((a, b) => ns(a.ts) - ns(b.ts) || ns(b.dur) - ns(a.dur));
  const stack = [];
  for (const e of list) {
    const s = ns(e.ts), end = s + ns(e.dur);
    while (stack.length && stack[stack.length - 1] <= s) stack.pop();
    if (stack.length && end > stack[stack.length - 1] && nest.length < 5)
      nest.push(`${k}: '${e.name}' at ${e.ts} overlaps its parent's end`);
    if (!stack.length && e.cat === 'cpu') cpuRoots += ns(e.dur);
    stack.push(end);
  }
}
ok(!nest.length, `${base}: the complete events of each thread nest${nest.length ? ': ' + nest.join('; ') : ''}`);
// flows: paired by id, bound to the complete events of their threads
const flows = new Map();
const fbad = [];
evs.forEach((e, i) => {
  if (!e || !['s', 't', 'f'].includes(e.ph)) return;
  if (!(isNum(e.id) || typeof e.id === 'string')) return fbad.length < 5 && fbad.push(`event ${i}: ${e.ph} without an id`);
  const k = `${e.cat}\u0000${e.id}`;
  if (!flows.has(k)) flows.set(k, []);
  flows.get(k).push(e);
});
const bound = (e) => {
  const list = byThread.get(`${e.pid}:${e.tid}`) || [];
  const t = ns(e.ts);
  if (e.ph === 'f' && e.bp !== 'e') return list.some((x) => ns(x.ts) >= t);
  return list.some((x) => ns(x.ts) <= t && t <= ns(x.ts) + ns(x.dur));
};
let nflows = 0;
for (const [k, list] of flows) {
  const s = list.filter((e) => e.ph === 's'), f = list.filter((e) => e.ph === 'f');
  if (s.length !== 1 || f.length !== 1) { fbad.length < 5 && fbad.push(`flow ${k.replace('\u0000', ' ')}: ${s.length} s and ${f.length} f`); continue; }
  if (s[0].name !== f[0].name) fbad.length < 5 && fbad.push(`flow ${s[0].id}: s and f named differently`);
  if (ns(f[0].ts) < ns(s[0].ts)) fbad.length < 5 && fbad.push(`flow ${s[0].id}: f before s`);
  for (const e of list) if (!bound(e)) fbad.length < 5 && fbad.push(`flow ${e.id}: ${e.ph} at ${e.ts} on ${e.pid}:${e.tid} binds to no complete event`);
  nflows++;
}
if (flows.size) ok(!fbad.length, `${base}: ${nflows} flows, each one s and one f bound to complete events${fbad.length ? ': ' + fbad.join('; ') : ''}`);
if (totalArg !== undefined)
  ok(cpuRoots === Number(totalArg), `${base}: the outermost cpu events last ${cpuRoots} ns in all (want ${totalArg})`);
process.exit(fails ? 1 : 0);
