/*
 * The script of `sonde report` (doc/sonde-report.md).  It reads the JSON
 * document sonde wrote into the page (lib/views/report.c says what is in
 * it), computes every view from the distinct call stacks, and draws the
 * graphs on canvases.  Plain browser JavaScript, no library, no network.
 *
 * Numbers: the data holds the model's exact integers (nanoseconds, bytes,
 * counts); every sum here is of integers below 2^53, so exact.  A time
 * range sums the stacks' time cells over the buckets it covers, and every
 * view is computed again from those sums as the model computes them
 * (exclusive: the leaf's function; inclusive: once per stack; attributed:
 * the callers and callees of a function's lowest invocation).
 *
 * window.sondeReport is the page's interface for tests (tests/browser/).
 */
'use strict';

(function () {
	const $ = (id) => document.getElementById(id);
	const t0 = performance.now();
	/* The page of an OpenMP program holds a document per view mode: the
	 * first in sonde-data, the others in sonde-data-MODE.  The address's
	 * #viewmode=MODE (set by the View mode menu) names the one read. */
	const MODES = ['user', 'expert', 'machine'];
	const wanted = (/(?:^#|&)viewmode=(\w+)/.exec(location.hash) || [])[1];
	let D = null;
	try {
		D = JSON.parse(((MODES.includes(wanted) && $('sonde-data-' + wanted)) || $('sonde-data')).textContent);
	} catch (e) {
		D = null;
	}
	if (!D || D.format !== 1) {
		$('nodata').classList.remove('hidden');
		window.sondeReport = { ready: true, nodata: true };
		return;
	}

	// ---- formatting ---------------------------------------------------------------

	const NM = D.metrics.length;
	const unitOf = (m) => D.metrics[m].unit;

	function fmtNum(v) {
		return Math.round(v).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	}
	/* A metric's value as sonde print shows it: seconds with three
	 * decimals, else the integer. */
	function fmtVal(v, m) {
		if (unitOf(m) === 'ns') return (v / 1e9).toFixed(3);
		return fmtNum(v);
	}
	function fmtValU(v, m) {
		if (unitOf(m) === 'ns') return (v / 1e9).toFixed(3) + ' s';
		if (unitOf(m) === 'bytes') return fmtBytes(v);
		return fmtNum(v);
	}
	function fmtBytes(v) {
		if (Math.abs(v) < 1024) return fmtNum(v) + ' B';
		const u = ['KiB', 'MiB', 'GiB', 'TiB'];
		let x = v, i = -1;
		while (Math.abs(x) >= 1024 && i < 3) { x /= 1024; i++; }
		return x.toFixed(1) + ' ' + u[i];
	}
	function pct(v, tot) {
		if (!tot) return '0.00';
		return (100 * v / tot).toFixed(2);
	}
	function fmtSec(ns) {
		const s = ns / 1e9;
		if (s === 0) return '0 s';
		if (Math.abs(s) < 0.01) return (s * 1000).toFixed(3) + ' ms';
		return s.toFixed(3) + ' s';
	}
	/* Bytes that were not UTF-8 come as U+F7XY (sonde/utf8.h): shown as
	 * \xXY, marked. */
	const ESC_RE = /[\uf700-\uf7ff]/g;
	function plainName(s) {
		return String(s).replace(ESC_RE, (c) => '\\x' + (c.charCodeAt(0) - 0xf700).toString(16).padStart(2, '0'));
	}
	function nameNode(s) {
		s = String(s);
		const frag = document.createDocumentFragment();
		let last = 0;
		s.replace(ESC_RE, (c, at) => {
			if (at > last) frag.appendChild(document.createTextNode(s.slice(last, at)));
			const sp = document.createElement('span');
			sp.className = 'esc';
			sp.title = 'a byte that is not UTF-8';
			sp.textContent = '\\x' + (c.charCodeAt(0) - 0xf700).toString(16).padStart(2, '0');
			frag.appendChild(sp);
			last = at + 1;
			return c;
		});
		if (last < s.length) frag.appendChild(document.createTextNode(s.slice(last)));
		return frag;
	}
	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);
		if (attrs) for (const k in attrs) {
			if (k === 'class') e.className = attrs[k];
			else if (k === 'text') e.textContent = attrs[k];
			else if (k.startsWith('on')) e.addEventListener(k.slice(2), attrs[k]);
			else e.setAttribute(k, attrs[k]);
		}
		for (const c of kids) if (c != null) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
		return e;
	}
	function show(id) { $(id).classList.remove('hidden'); }

	// ---- the model ----------------------------------------------------------------

	const F = D.funcs, NF = F.name.length;
	const funcName = (f) => f < 0 ? '<Total>' : F.name[f];
	const funcObj = (f) => f < 0 ? '' : D.objects[F.obj[f]];
	const NODEF = D.nodes.f, NODEP = D.nodes.p, NN = NODEF.length;
	const SN = D.stacks.n, NS = SN.length;
	const T = D.time;
	const NG = D.groups.length;
	/* Each stack's functions, leaf first, from its node's path. */
	const SF = new Array(NS);
	for (let s = 0; s < NS; s++) {
		const fr = [];
		for (let n = SN[s]; n >= 0; n = NODEP[n]) fr.push(NODEF[n]);
		SF[s] = fr;
	}
	/* Each stack's distinct functions (for inclusive values). */
	const SU = new Array(NS);
	{
		const mark = new Int32Array(NF).fill(-1);
		for (let s = 0; s < NS; s++) {
			const u = [];
			for (const f of SF[s]) if (mark[f] !== s) { mark[f] = s; u.push(f); }
			SU[s] = u;
		}
	}
	const FULL = { lo: 0, hi: Infinity };

	/* The stacks' values over a bucket range [lo, hi) of group g (-1:
	 * all): an array per metric.  The whole run of every group is the
	 * model's own values. */
	function stackValues(range, g) {
		if (range === FULL && g < 0) return D.stacks.v;
		const out = [];
		for (let m = 0; m < NM; m++) out.push(new Float64Array(NS));
		for (let s = 0; s < NS; s++) {
			const b = T.sb[s];
			const gs = T.sg ? T.sg[s] : null;
			let bk = 0;
			for (let i = 0; i < b.length; i++) {
				bk += b[i];
				if (bk < range.lo || bk >= range.hi) continue;
				if (g >= 0 && (gs ? gs[i] : 0) !== g) continue;
				for (let m = 0; m < NM; m++) {
					const a = T.sv[m][s];
					if (a) out[m][s] += a[i] * T.q[m];
				}
			}
		}
		return out;
	}
	function totals(sv) {
		const t = new Array(NM).fill(0);
		for (let m = 0; m < NM; m++) for (let s = 0; s < NS; s++) t[m] += sv[m][s];
		return t;
	}
	/* Exclusive and inclusive values of every function. */
	function funcValues(sv) {
		if (sv === D.stacks.v) return { e: F.e, i: F.i, tot: D.total };
		const e = [], inc = [];
		for (let m = 0; m < NM; m++) { e.push(new Float64Array(NF)); inc.push(new Float64Array(NF)); }
		for (let s = 0; s < NS; s++) {
			const leaf = SF[s][0], u = SU[s];
			for (let m = 0; m < NM; m++) {
				const v = sv[m][s];
				if (!v) continue;
				e[m][leaf] += v;
				for (let k = 0; k < u.length; k++) inc[m][u[k]] += v;
			}
		}
		return { e, i: inc, tot: totals(sv) };
	}
	/* Callers and callees of f: attributed values per metric, keyed by
	 * function (-1: <Total>, for the stacks whose root is f's lowest
	 * invocation). */
	function callersCallees(sv, f) {
		const callers = new Map(), callees = new Map();
		const add = (map, k, s) => {
			let a = map.get(k);
			if (!a) { a = new Array(NM).fill(0); map.set(k, a); }
			for (let m = 0; m < NM; m++) a[m] += sv[m][s];
		};
		for (let s = 0; s < NS; s++) {
			const fr = SF[s];
			const i = fr.indexOf(f);
			if (i < 0) continue;
			let any = false;
			for (let m = 0; m < NM && !any; m++) any = sv[m][s] !== 0;
			if (!any) continue;
			add(callers, i + 1 < fr.length ? fr[i + 1] : -1, s);
			if (i > 0) add(callees, fr[i - 1], s);
		}
		return { callers, callees };
	}

	// ---- state --------------------------------------------------------------------

	const state = {
		metric: D.first || 0,
		range: FULL,
		sv: D.stacks.v,
		fv: null,
		sel: -1,         // the selected function
		sort: { m: D.first || 0, flav: 'e', asc: false },
		filter: '',
		showAll: false,
		flameMode: 'flame',
		search: '',
	};
	const listeners = [];
	function onChange(fn) { listeners.push(fn); }
	function recompute() {
		state.sv = stackValues(state.range, -1);
		state.fv = funcValues(state.sv);
		for (const fn of listeners) fn();
	}

	// ---- top bar and navigation ---------------------------------------------------

	document.title = 'sonde report: ' + plainName(D.groups.join(' vs '));
	$('top-title').textContent = D.groups.map(plainName).join(', ');
	for (let m = 0; m < NM; m++)
		$('metric').appendChild(el('option', { value: String(m), text: D.metrics[m].title }));
	$('metric').value = String(state.metric);
	$('metric').addEventListener('change', () => {
		state.metric = +$('metric').value;
		state.sort = { m: state.metric, flav: state.sort.flav === 'name' ? 'name' : state.sort.flav, asc: false };
		for (const fn of listeners) fn();
	});
	/* the modes as sonde print -viewmode has them: the page is opened
	 * again in the one chosen (each has its own document) */
	if (D.filters.viewmode) {
		for (const m of MODES) $('viewmode').appendChild(el('option', { value: m, text: m }));
		$('viewmode').value = D.filters.viewmode;
		$('mode-box').classList.remove('hidden');
		$('viewmode').addEventListener('change', () => {
			location.hash = 'viewmode=' + $('viewmode').value;
			location.reload();
		});
	}
	const navItems = [];
	function navAdd(id, text) { navItems.push([id, text]); }

	function rangeText(r) {
		return fmtSec(r.lo * T.w) + ' \u2013 ' + fmtSec(r.hi * T.w);
	}
	function setRange(lo, hi) {
		lo = Math.max(0, Math.floor(lo));
		hi = Math.min(T.nb, Math.ceil(hi));
		state.range = hi > lo && !(lo === 0 && hi >= T.nb) ? { lo, hi } : FULL;
		const rs = $('range-status');
		rs.textContent = '';
		if (state.range !== FULL) {
			rs.appendChild(document.createTextNode('Time range ' + rangeText(state.range)));
			rs.appendChild(el('button', { text: 'Whole run', onclick: () => setRange(0, 0) }));
		}
		$('tl-clear').classList.toggle('hidden', state.range === FULL);
		recompute();
	}

	// ---- the header ----------------------------------------------------------------

	function headerSection() {
		const body = $('header-body');
		const H = D.headers || [];
		$('header-sub').textContent = D.exps.length > 1 ? D.exps.length + ' experiments' : '';
		H.forEach((h, i) => {
			const j = h.json || {};
			const box = el('div');
			if (H.length > 1) box.appendChild(el('h3', null, nameNode(D.exps[i].name)));
			const cards = el('div', { class: 'cards' });
			const stat = (k, v, small) => cards.appendChild(el('div', { class: 'stat' }, el('div', { class: 'k', text: k }),
				el('div', { class: 'v' }, v, small ? el('small', { text: ' ' + small }) : null)));
			stat('Duration', fmtSec(j.duration_ns || 0), j.end_source ? '(until the ' + j.end_source + ')' : '');
			if (j.recorded_cpu_ns != null) stat('Recorded CPU time', fmtSec(j.recorded_cpu_ns));
			if (j.samples != null) stat('Samples', fmtNum(j.samples));
			stat('Threads', fmtNum((j.threads || []).length));
			if (j.exit) stat('Exit', j.exit.status != null ? 'status ' + j.exit.status : (j.exit.signame || ('signal ' + j.exit.signal)));
			else stat('Exit', j.log_complete === false ? 'not recorded' : 'unknown', j.log_complete === false ? '(killed?)' : '');
			stat('Lost samples', fmtNum(j.lost_samples || 0), j.lost_stacks ? '(' + fmtNum(j.lost_stacks) + ' stacks)' : '');
			if (j.heap) stat('Heap', fmtNum(j.heap.allocations != null ? j.heap.allocations : 0), 'allocations');
			box.appendChild(cards);
			const kv = el('dl', { class: 'kv' });
			const row = (k, v) => { if (v != null && v !== '') kv.appendChild(el('dt', { text: k })), kv.appendChild(el('dd', null, nameNode(v))); };
			const t = j.target || {};
			row('Target', t.command || t.exe);
			row('Process', t.pid != null ? 'pid ' + t.pid + (t.ppid != null ? ', parent ' + t.ppid : '') : null);
			const hs = j.host || {};
			row('Host', [hs.name, hs.os, hs.release, hs.arch].filter(Boolean).join(' ') + (hs.cpus ? ', ' + hs.cpus + ' CPUs' : ''));
			const st = j.settings || {};
			if (st.clock_interval_ns)
				row('Clock profiling', (st.clock_source || '') + ', interval ' + (st.clock_interval_ns / 1e6).toFixed(3) + ' ms, depth limit ' + st.depth_limit);
			else row('Clock profiling', 'off');
			for (const k of ['sync', 'heap', 'io']) if (j[k]) row(k === 'io' ? 'I/O tracing' : k === 'heap' ? 'Heap tracing' : 'Sync tracing', summarize(j[k]));
			row('Collector', j.collector);
			row('Log', j.log_complete ? 'complete' : 'incomplete: the target was killed or is still running');
			box.appendChild(kv);
			for (const w of j.warnings || []) box.appendChild(el('div', { class: 'note warn' }, nameNode('Collector warning: ' + (w.text || JSON.stringify(w)))));
			for (const w of j.errors || []) box.appendChild(el('div', { class: 'note err' }, nameNode('Collector error: ' + (w.text || JSON.stringify(w)))));
			for (const p of j.problems || []) box.appendChild(el('div', { class: 'note ' + (p.severity === 'error' ? 'err' : 'warn') }, nameNode('Read problem: ' + (p.message || p.msg || JSON.stringify(p)))));
			if (j.lost_samples) box.appendChild(el('div', { class: 'note warn', text: fmtNum(j.lost_samples) + ' samples were lost: the profile misses them.' }));
			const det = el('details', null, el('summary', { text: 'Everything sonde print -header says' }), el('pre', { class: 'text' }, nameNode(h.text || '')));
			box.appendChild(det);
			body.appendChild(box);
		});
		if (D.filters && (D.filters.threads !== 'all' || D.filters.objects !== 'all' || D.filters.samples !== 'all' || D.filters.start_ns || D.filters.end_ns)) {
			const f = D.filters, parts = [];
			if (f.threads !== 'all') parts.push('threads ' + f.threads);
			if (f.objects !== 'all') parts.push('objects ' + f.objects);
			if (f.samples !== 'all') parts.push('samples ' + f.samples);
			if (f.start_ns || f.end_ns) parts.push('time ' + fmtSec(f.start_ns) + ' \u2013 ' + (f.end_ns ? fmtSec(f.end_ns) : 'end'));
			body.appendChild(el('div', { class: 'note info' }, nameNode('Filtered when written: ' + parts.join('; ') + '.')));
		}
		if (!NS) body.appendChild(el('div', { class: 'note warn', text: 'No samples or traced events were recorded (or all were filtered out): the views are empty.' }));
		show('sec-header');
		navAdd('sec-header', 'Experiment');
	}
	function summarize(o) {
		if (typeof o !== 'object' || !o) return String(o);
		return Object.keys(o).filter((k) => typeof o[k] !== 'object').map((k) => k.replace(/_/g, ' ') + ' ' + o[k]).join(', ');
	}

	// ---- canvases -------------------------------------------------------------------

	function sizeCanvas(cv, w, h) {
		const r = window.devicePixelRatio || 1;
		cv.width = Math.max(1, Math.round(w * r));
		cv.height = Math.max(1, Math.round(h * r));
		cv.style.width = w + 'px';
		cv.style.height = h + 'px';
		const ctx = cv.getContext('2d');
		ctx.setTransform(r, 0, 0, r, 0, 0);
		return ctx;
	}
	const tip = $('tip');
	function showTip(ev, lines) {
		tip.textContent = '';
		lines.forEach((l, i) => { if (i) tip.appendChild(el('br')); tip.appendChild(nameNode(l)); });
		tip.classList.remove('hidden');
		const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
		const y = ev.clientY + 16 + tip.offsetHeight > window.innerHeight ? ev.clientY - tip.offsetHeight - 10 : ev.clientY + 16;
		tip.style.left = x + 'px';
		tip.style.top = y + 'px';
	}
	function hideTip() { tip.classList.add('hidden'); }
	function hashStr(s) {
		let h = 2166136261;
		for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
		return h >>> 0;
	}
	/* flamegraph.pl's warm palette, by name, so a function keeps its
	 * colour in every graph. */
	function warm(name) {
		const h = hashStr(name);
		const r = 205 + (h % 50), g = 80 + ((h >>> 8) % 140), b = 40 + ((h >>> 16) % 45);
		return 'rgb(' + r + ',' + g + ',' + b + ')';
	}
	function fitText(ctx, s, w) {
		if (w < 18) return '';
		if (ctx.measureText(s).width <= w) return s;
		let lo = 0, hi = s.length;
		while (lo < hi) {
			const mid = (lo + hi + 1) >> 1;
			if (ctx.measureText(s.slice(0, mid) + '\u2026').width <= w) lo = mid; else hi = mid - 1;
		}
		return lo > 1 ? s.slice(0, lo) + '\u2026' : '';
	}

	// ---- the timeline -----------------------------------------------------------------

	const TL = { rows: [], ctx: null, width: 0, lab: 190, top: 22, drag: null };
	function timelineSection() {
		if (!T.nb) return;
		/* per thread and metric, its buckets' values */
		const nt = D.threads.length;
		TL.threads = [];
		for (let t = 0; t < nt; t++) {
			const b = T.tb[t];
			if (!b || !b.length) continue;
			const vals = [];
			let tot = new Array(NM).fill(0);
			for (let m = 0; m < NM; m++) {
				const a = T.tv[m][t];
				const arr = new Float64Array(T.nb);
				let bk = 0;
				for (let i = 0; i < b.length; i++) {
					bk += b[i];
					if (a) { arr[bk] += a[i] * T.q[m]; tot[m] += a[i] * T.q[m]; }
				}
				vals.push(arr);
			}
			TL.threads.push({ t, vals, tot });
		}
		const cv = $('tl-canvas');
		cv.addEventListener('mousedown', (ev) => {
			const b = tlBucket(ev);
			if (b == null) return;
			TL.drag = { a: b, b: b, moved: false };
			ev.preventDefault();
		});
		window.addEventListener('mousemove', (ev) => {
			if (TL.drag) {
				const b = tlBucket(ev, true);
				if (b !== TL.drag.b) { TL.drag.b = b; TL.drag.moved = true; drawTimeline(); }
				return;
			}
		});
		cv.addEventListener('mousemove', (ev) => { if (!TL.drag) tlHover(ev); });
		cv.addEventListener('mouseleave', hideTip);
		window.addEventListener('mouseup', () => {
			if (!TL.drag) return;
			const d = TL.drag;
			TL.drag = null;
			if (!d.moved || d.a === d.b) {
				if (state.range !== FULL) setRange(0, 0); else drawTimeline();
				return;
			}
			setRange(Math.min(d.a, d.b), Math.max(d.a, d.b) + 1);
		});
		$('tl-clear').addEventListener('click', () => setRange(0, 0));
		onChange(drawTimeline);
		window.addEventListener('resize', drawTimeline);
		show('sec-timeline');
		navAdd('sec-timeline', 'Timeline');
	}
	function tlBucket(ev, clamp) {
		const r = $('tl-canvas').getBoundingClientRect();
		const x = ev.clientX - r.left - TL.lab;
		const w = TL.width - TL.lab - 8;
		if (!clamp && (x < 0 || x > w)) return null;
		return Math.max(0, Math.min(T.nb - 1, Math.floor(x / w * T.nb)));
	}
	function drawTimeline() {
		if (!TL.threads) return;
		const m = state.metric;
		const wrap = $('tl-canvas').parentElement;
		const W = Math.max(400, wrap.clientWidth);
		const maxRows = 48;
		const rows = TL.threads.slice().sort((a, b) => b.tot[m] - a.tot[m]);
		const shown = rows.filter((r) => r.tot[m] > 0).slice(0, maxRows);
		const multi = D.exps.length > 1;
		/* the aggregate row, then one per thread in the order of tid */
		shown.sort((a, b) => D.threads[a.t].exp - D.threads[b.t].exp || D.threads[a.t].tid - D.threads[b.t].tid);
		const agg = new Float64Array(T.nb);
		for (const r of TL.threads) for (let i = 0; i < T.nb; i++) agg[i] += r.vals[m][i];
		const rowsAll = [{ label: 'All threads', vals: agg, h: 46, agg: true }].concat(shown.map((r) => {
			const th = D.threads[r.t];
			return { label: (multi ? plainName(D.exps[th.exp].name) + ' ' : '') + 'tid ' + th.tid + (th.name ? ' ' + th.name : ''), vals: r.vals[m], h: 22, t: r.t };
		}));
		let H = TL.top + 6;
		for (const r of rowsAll) H += r.h + 4;
		const ctx = sizeCanvas($('tl-canvas'), W, H);
		TL.ctx = ctx;
		TL.width = W;
		TL.rows = rowsAll;
		const x0 = TL.lab, w = W - TL.lab - 8, bw = w / T.nb;
		ctx.fillStyle = '#fff';
		ctx.fillRect(0, 0, W, H);
		/* the axis: seconds */
		ctx.fillStyle = '#5d6875';
		ctx.font = '11px system-ui, sans-serif';
		const span = T.nb * T.w / 1e9;
		const step = niceStep(span / Math.max(2, Math.floor(w / 90)));
		ctx.strokeStyle = '#edf0f3';
		for (let s = 0; s <= span + 1e-12; s += step) {
			const x = x0 + s / span * w;
			ctx.fillText(fmtTick(s, step), x + 2, 13);
			ctx.beginPath(); ctx.moveTo(x + 0.5, 16); ctx.lineTo(x + 0.5, H); ctx.stroke();
		}
		const unitNs = unitOf(m) === 'ns';
		let y = TL.top;
		for (const r of rowsAll) {
			ctx.fillStyle = '#1d232b';
			ctx.font = (r.agg ? '600 ' : '') + '12px system-ui, sans-serif';
			ctx.fillText(fitText(ctx, r.label, TL.lab - 12), 8, y + r.h / 2 + 4);
			ctx.fillStyle = r.agg ? '#f1f4f8' : '#f7f8fa';
			ctx.fillRect(x0, y, w, r.h);
			/* CPU time: the share of one CPU (the aggregate: of the
			 * busiest bucket); other metrics: of the row's largest */
			let max = 0;
			for (let i = 0; i < T.nb; i++) if (r.vals[i] > max) max = r.vals[i];
			if (unitNs && !r.agg) max = Math.max(max, T.w);
			ctx.fillStyle = r.agg ? '#3f73d6' : '#6c93df';
			if (max > 0) for (let i = 0; i < T.nb; i++) {
				const v = r.vals[i];
				if (!v) continue;
				const bh = Math.max(1, Math.min(1, v / max) * (r.h - 2));
				/* whole pixels: no seams between neighbours */
				const xa = Math.floor(x0 + i * bw), xb = Math.max(xa + 1, Math.floor(x0 + (i + 1) * bw) - (bw > 4 ? 1 : 0));
				ctx.fillRect(xa, y + r.h - bh, xb - xa, bh);
			}
			y += r.h + 4;
		}
		const more = TL.threads.length - shown.length;
		/* the selection */
		let sel = null;
		if (TL.drag && TL.drag.moved) sel = { lo: Math.min(TL.drag.a, TL.drag.b), hi: Math.max(TL.drag.a, TL.drag.b) + 1 };
		else if (state.range !== FULL) sel = state.range;
		if (sel) {
			ctx.fillStyle = 'rgba(255, 190, 60, 0.28)';
			ctx.fillRect(x0 + sel.lo * bw, TL.top - 4, (sel.hi - sel.lo) * bw, H - TL.top + 4);
			ctx.strokeStyle = '#d08a00';
			ctx.lineWidth = 1.5;
			ctx.strokeRect(x0 + sel.lo * bw, TL.top - 4, (sel.hi - sel.lo) * bw, H - TL.top + 2);
			ctx.lineWidth = 1;
		}
		$('tl-info').textContent = D.metrics[m].title + ' per ' + fmtSec(T.w) + ' bucket, ' + TL.threads.length + ' thread' +
			(TL.threads.length === 1 ? '' : 's') + (more > 0 ? ' (the ' + shown.length + ' busiest shown)' : '') +
			(sel ? '; selected ' + rangeText(sel) : '');
	}
	function tlHover(ev) {
		const b = tlBucket(ev);
		const r = $('tl-canvas').getBoundingClientRect();
		const yy = ev.clientY - r.top;
		let y = TL.top, row = null;
		for (const rr of TL.rows) { if (yy >= y && yy < y + rr.h + 4) { row = rr; break; } y += rr.h + 4; }
		if (b == null || !row) { hideTip(); return; }
		const m = state.metric, v = row.vals[b];
		const lines = [row.label, fmtSec(b * T.w) + ' \u2013 ' + fmtSec((b + 1) * T.w), D.metrics[m].title + ': ' + fmtValU(v, m)];
		if (unitOf(m) === 'ns') lines.push((100 * v / T.w).toFixed(1) + '% of one CPU');
		showTip(ev, lines);
	}
	function niceStep(x) {
		const p = Math.pow(10, Math.floor(Math.log10(x)));
		for (const k of [1, 2, 5, 10]) if (k * p >= x) return k * p;
		return 10 * p;
	}
	function fmtTick(s, step) {
		const d = Math.max(0, -Math.floor(Math.log10(step)));
		return s.toFixed(Math.min(d, 6)) + ' s';
	}

	// ---- the function table ---------------------------------------------------------

	const ROWS = 200;
	function functionsSection() {
		$('fn-filter').addEventListener('input', () => { state.filter = $('fn-filter').value; state.showAll = false; drawFunctions(); });
		onChange(drawFunctions);
		onChange(drawCallers);
		show('sec-functions');
		navAdd('sec-functions', 'Functions');
	}
	function sortedFuncs(fv) {
		const { m, flav, asc } = state.sort;
		const ids = [];
		const flt = state.filter.toLowerCase();
		for (let f = 0; f < NF; f++) {
			let any = false;
			for (let k = 0; k < NM && !any; k++) any = fv.i[k][f] !== 0;
			if (!any) continue;
			if (flt && !plainName(F.name[f]).toLowerCase().includes(flt)) continue;
			ids.push(f);
		}
		const key = flav === 'name' ? null : flav === 'e' ? fv.e[m] : fv.i[m];
		ids.sort((a, b) => {
			if (key && key[a] !== key[b]) return (asc ? 1 : -1) * (key[a] < key[b] ? -1 : 1);
			const c = F.name[a] < F.name[b] ? -1 : F.name[a] > F.name[b] ? 1 : 0;
			return (flav === 'name' && asc === false ? -c : c) || a - b;
		});
		return ids;
	}
	function numCell(v, tot, m, bar) {
		const td = el('td', { class: 'num' + (bar ? ' bar' : '') + (v ? '' : ' z'), 'data-v': String(v) });
		if (bar && tot > 0 && v > 0) {
			const i = el('i');
			i.style.width = Math.min(100, 100 * v / tot).toFixed(1) + '%';
			td.appendChild(i);
		}
		td.appendChild(el('span', null, fmtVal(v, m), el('span', { class: 'p', text: pct(v, tot) })));
		return td;
	}
	function metricHeader(thead, cols, flavs) {
		const r1 = el('tr'), r2 = el('tr');
		for (const m of cols) {
			const d = D.metrics[m];
			r1.appendChild(el('th', { colspan: String(flavs.length), title: d.title, text: d.abbr + (unitOf(m) === 'ns' ? ' (s)' : unitOf(m) === 'bytes' ? ' (bytes)' : '') }));
			for (const fl of flavs) {
				const th = el('th', { class: 'sortable', text: fl === 'e' ? 'Excl.' : fl === 'i' ? 'Incl.' : 'Attr.', 'data-m': String(m), 'data-flav': fl });
				if (state.sort.flav === fl && state.sort.m === m) th.classList.add('sorted'), state.sort.asc && th.classList.add('asc');
				r2.appendChild(th);
			}
		}
		return [r1, r2];
	}
	function metricOrder() {
		/* the metric chosen first, then the others */
		const cols = [state.metric];
		for (let m = 0; m < NM; m++) if (m !== state.metric) cols.push(m);
		return cols;
	}
	function drawFunctions() {
		const fv = state.fv;
		const tb = $('fn-table');
		tb.textContent = '';
		const cols = metricOrder();
		const thead = el('thead');
		const [r1, r2] = metricHeader(thead, cols, ['e', 'i']);
		const nameTh = el('th', { class: 'name sortable', rowspan: '2', text: 'Name', 'data-flav': 'name' });
		if (state.sort.flav === 'name') nameTh.classList.add('sorted'), state.sort.asc && nameTh.classList.add('asc');
		r1.appendChild(nameTh);
		thead.appendChild(r1);
		thead.appendChild(r2);
		thead.addEventListener('click', (ev) => {
			const th = ev.target.closest('th.sortable');
			if (!th) return;
			const flav = th.dataset.flav, m = th.dataset.m != null ? +th.dataset.m : state.sort.m;
			if (state.sort.flav === flav && state.sort.m === m) state.sort.asc = !state.sort.asc;
			else state.sort = { m, flav, asc: flav === 'name' };
			drawFunctions();
		});
		tb.appendChild(thead);
		const body = el('tbody');
		const tr0 = el('tr', { class: 'total', 'data-func': '-1' });
		for (const m of cols) { tr0.appendChild(numCell(fv.tot[m], fv.tot[m], m)); tr0.appendChild(numCell(fv.tot[m], fv.tot[m], m)); }
		tr0.appendChild(el('td', { class: 'name', text: '<Total>' }));
		body.appendChild(tr0);
		const ids = sortedFuncs(fv);
		const n = state.showAll ? ids.length : Math.min(ids.length, ROWS);
		for (let k = 0; k < n; k++) {
			const f = ids[k];
			const tr = el('tr', { class: 'click' + (f === state.sel ? ' sel' : ''), 'data-func': String(f) });
			for (const m of cols) {
				tr.appendChild(numCell(fv.e[m][f], fv.tot[m], m, m === cols[0]));
				tr.appendChild(numCell(fv.i[m][f], fv.tot[m], m));
			}
			tr.appendChild(el('td', { class: 'name' }, nameNode(F.name[f]), el('span', { class: 'obj' }, nameNode(funcObj(f)))));
			body.appendChild(tr);
		}
		body.addEventListener('click', (ev) => {
			const tr = ev.target.closest('tr.click');
			if (tr) selectFunc(+tr.dataset.func);
		});
		tb.appendChild(body);
		$('fn-count').textContent = ids.length + ' function' + (ids.length === 1 ? '' : 's') + (state.filter ? ' match' : '') +
			(n < ids.length ? ', the first ' + n + ' shown' : '');
		const more = $('fn-more');
		more.textContent = '';
		if (n < ids.length)
			more.appendChild(el('div', { class: 'morebar' }, el('button', { text: 'Show all ' + ids.length, onclick: () => { state.showAll = true; drawFunctions(); } })));
		$('fn-sub').textContent = (state.range === FULL ? 'whole run' : rangeText(state.range)) + '; click a column to sort, a row for its callers and callees';
	}
	function selectFunc(f) {
		state.sel = f;
		for (const tr of $('fn-table').querySelectorAll('tr.sel')) tr.classList.remove('sel');
		const tr = $('fn-table').querySelector('tr[data-func="' + f + '"]');
		if (tr) tr.classList.add('sel');
		drawCallers();
		if (state.flameMode === 'sandwich') drawFlame();
	}
	function drawCallers() {
		const f = state.sel, body = $('callers-body');
		if (f < 0) return;
		const m = state.metric, fv = state.fv;
		const cc = callersCallees(state.sv, f);
		body.textContent = '';
		body.classList.remove('muted');
		$('callers-title').textContent = '';
		$('callers-title').appendChild(nameNode('Callers and callees of ' + F.name[f]));
		const incl = fv.i[m][f];
		const tb = el('table', { class: 'grid', id: 'cc-table' });
		const thead = el('thead');
		const r1 = el('tr');
		r1.appendChild(el('th', { text: 'Attr. ' + D.metrics[m].abbr, title: 'attributed: the part of the function\'s inclusive value through this caller or callee' }));
		r1.appendChild(el('th', { text: 'Excl.' }));
		r1.appendChild(el('th', { text: 'Incl.' }));
		r1.appendChild(el('th', { class: 'name', text: 'Name' }));
		thead.appendChild(r1);
		tb.appendChild(thead);
		const tbody = el('tbody');
		const byAttr = (map) => [...map.entries()].sort((a, b) => b[1][m] - a[1][m] || (funcName(a[0]) < funcName(b[0]) ? -1 : 1));
		const addRows = (role, list) => {
			tbody.appendChild(el('tr', { class: 'cc-role' }, el('td', { colspan: '4', class: 'cc-role', text: role + (list.length ? '' : ': none') })));
			for (const [g, v] of list) {
				const tr = el('tr', { class: g >= 0 ? 'click' : '', 'data-role': role === 'Callers' ? 'caller' : 'callee', 'data-func': String(g) });
				tr.appendChild(numCell(v[m], incl, m, true));
				tr.appendChild(numCell(g >= 0 ? fv.e[m][g] : 0, fv.tot[m], m));
				tr.appendChild(numCell(g >= 0 ? fv.i[m][g] : fv.tot[m], fv.tot[m], m));
				tr.appendChild(el('td', { class: 'name' }, nameNode(funcName(g)), el('span', { class: 'obj' }, nameNode(funcObj(g)))));
				tbody.appendChild(tr);
			}
		};
		addRows('Callers', byAttr(cc.callers));
		const self = el('tr', { class: 'self', 'data-role': 'function', 'data-func': String(f) });
		self.appendChild(numCell(fv.e[m][f], incl, m, true));
		self.appendChild(numCell(fv.e[m][f], fv.tot[m], m));
		self.appendChild(numCell(incl, fv.tot[m], m));
		self.appendChild(el('td', { class: 'name' }, nameNode(F.name[f]), el('span', { class: 'obj' }, nameNode(funcObj(f)))));
		tbody.appendChild(el('tr', { class: 'cc-role' }, el('td', { colspan: '4', class: 'cc-role', text: 'The function (its attributed value: its exclusive value)' })));
		tbody.appendChild(self);
		addRows('Callees', byAttr(cc.callees));
		tbody.addEventListener('click', (ev) => {
			const tr = ev.target.closest('tr.click');
			if (tr && +tr.dataset.func >= 0) selectFunc(+tr.dataset.func);
		});
		tb.appendChild(tbody);
		body.appendChild(el('div', { class: 'tablewrap' }, tb));
		body.appendChild(el('div', { class: 'muted', style: 'font-size:12px;margin-top:4px', text: 'Attributed percentages are of the function\'s inclusive value; ' + D.metrics[m].title + (state.range === FULL ? ', whole run.' : ', ' + rangeText(state.range) + '.') }));
	}

	// ---- flame graphs -------------------------------------------------------------

	/* A tree for drawing: nodes with func, value per metric, children. */
	function makeNode(func) { return { f: func, v: new Float64Array(NM), self: new Float64Array(NM), kids: null }; }
	function addPath(root, fr, from, to, step, s, sv) {
		let n = root;
		for (let m = 0; m < NM; m++) n.v[m] += sv[m][s];
		for (let i = from; i !== to; i += step) {
			const f = fr[i];
			if (!n.kids) n.kids = new Map();
			let c = n.kids.get(f);
			if (!c) { c = makeNode(f); n.kids.set(f, c); }
			for (let m = 0; m < NM; m++) c.v[m] += sv[m][s];
			n = c;
		}
		for (let m = 0; m < NM; m++) n.self[m] += sv[m][s];
	}
	/* Top down (root: <Total>), bottom up (roots: the leaves), and the
	 * two halves of a function's sandwich. */
	function buildTree(kind, sv, f) {
		const root = makeNode(-1);
		for (let s = 0; s < NS; s++) {
			let any = false;
			for (let m = 0; m < NM && !any; m++) any = sv[m][s] !== 0;
			if (!any) continue;
			const fr = SF[s];
			if (kind === 'flame') addPath(root, fr, fr.length - 1, -1, -1, s, sv);
			else if (kind === 'inverted') addPath(root, fr, 0, fr.length, 1, s, sv);
			else {
				const j = fr.lastIndexOf(f); // the outermost invocation
				if (j < 0) continue;
				if (kind === 'callees') addPath(root, fr, j, -1, -1, s, sv);
				else addPath(root, fr, j, fr.length, 1, s, sv);
			}
		}
		if (kind === 'callees' || kind === 'callers') {
			/* the root is f itself */
			const c = root.kids && root.kids.get(f);
			return c || makeNode(f);
		}
		return root;
	}
	/* Lays a tree out: rects {node, depth, x, w} (x and w in [0, 1] of the
	 * zoomed node's value), children left-heavy. */
	function layout(root, m, zoom, minFrac) {
		const out = [];
		const base = zoom || root;
		const total = base.v[m];
		if (!(total > 0)) return { rects: out, total: 0 };
		/* the zoomed node's ancestors, full width */
		const path = [];
		if (zoom) {
			let n = zoom;
			while (n) { path.unshift(n); n = n.parent; }
		} else path.push(root);
		path.forEach((n, d) => out.push({ node: n, depth: d, x: 0, w: 1, anc: d < path.length - 1 }));
		const rec = (n, depth, x) => {
			if (!n.kids) return;
			const kids = [...n.kids.values()].filter((c) => c.v[m] > 0).sort((a, b) => b.v[m] - a.v[m] || (funcName(a.f) < funcName(b.f) ? -1 : 1));
			let cx = x;
			for (const c of kids) {
				const w = c.v[m] / total;
				if (w >= minFrac) {
					out.push({ node: c, depth, x: cx, w });
					rec(c, depth + 1, cx);
				}
				cx += w;
			}
		};
		rec(base, path.length, 0);
		return { rects: out, total };
	}
	function setParents(n) {
		if (!n.kids) return;
		for (const c of n.kids.values()) { c.parent = n; setParents(c); }
	}
	function searchRe() {
		const q = state.search.trim();
		if (!q) return null;
		if (q.length > 2 && q[0] === '/' && q[q.length - 1] === '/') {
			try { return new RegExp(q.slice(1, -1)); } catch (e) { return null; }
		}
		const lq = q.toLowerCase();
		return { test: (s) => s.toLowerCase().includes(lq) };
	}

	const FG = { canvas: null, trees: {}, zoom: null, rects: [], rowH: 18 };
	function flameSection() {
		const cv = $('flame-canvas');
		FG.canvas = cv;
		for (const b of $('flame-mode').querySelectorAll('button'))
			b.addEventListener('click', () => {
				state.flameMode = b.dataset.mode;
				for (const x of $('flame-mode').querySelectorAll('button')) x.classList.toggle('on', x === b);
				FG.zoom = null;
				drawFlame();
			});
		$('flame-search').addEventListener('input', () => { state.search = $('flame-search').value; drawFlame(); });
		$('flame-reset').addEventListener('click', () => { FG.zoom = null; drawFlame(); });
		cv.addEventListener('mousemove', (ev) => flameHover(FG, ev));
		cv.addEventListener('mouseleave', () => { hideTip(); });
		cv.addEventListener('click', (ev) => {
			const r = hitRect(FG, ev);
			if (!r) return;
			if (r.node.f >= 0) selectFunc(r.node.f);
			FG.zoom = r.node === FG.root || (r.node.f < 0) ? null : r.node;
			if (r.sandwichPart) FG.zoom = null;
			drawFlame();
			flameDetail(FG, r, $('flame-detail'));
		});
		onChange(() => { FG.zoom = null; drawFlame(); });
		window.addEventListener('resize', drawFlame);
		show('sec-flame');
		navAdd('sec-flame', 'Flame graph');
	}
	/* Draws rects on ctx: depth grows down from y0 (icicle), or up from
	 * y0 (flame: y0 is the bottom). */
	function paint(ctx, L, W, y0, up, rowH, colour, match, x0) {
		ctx.font = '12px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		const drawn = [];
		for (const r of L.rects) {
			const px = x0 + r.x * W, pw = r.w * W;
			if (pw < 0.4) continue;
			const y = up ? y0 - (r.depth + 1) * rowH : y0 + r.depth * rowH;
			const name = plainName(funcName(r.node.f));
			let c = colour(r.node, name);
			const hit = match && r.node.f >= 0 && match.test(name);
			if (match && !hit) c = dim(c);
			if (hit) c = 'rgb(186, 96, 214)';
			if (r.anc) c = '#d9dee5';
			ctx.fillStyle = c;
			ctx.fillRect(px, y, Math.max(pw - 0.6, 0.4), rowH - 1);
			if (pw > 24) {
				ctx.fillStyle = '#1d232b';
				ctx.fillText(fitText(ctx, name, pw - 6), px + 3, y + rowH / 2);
			}
			drawn.push({ r, px, y, pw, h: rowH - 1 });
		}
		return drawn;
	}
	function dim(c) {
		const m = /rgb\((\d+), ?(\d+), ?(\d+)\)/.exec(c);
		if (!m) return '#e8ebef';
		const f = (x) => Math.round(+x * 0.35 + 255 * 0.65);
		return 'rgb(' + f(m[1]) + ',' + f(m[2]) + ',' + f(m[3]) + ')';
	}
	const colourWarm = (n, name) => n.f < 0 ? 'rgb(228, 106, 66)' : warm(name);
	function drawFlame() {
		const cv = FG.canvas;
		if (!cv) return;
		const m = state.metric, mode = state.flameMode;
		const W = Math.max(400, cv.parentElement.clientWidth);
		const rowH = FG.rowH;
		const match = searchRe();
		let drawn = [];
		FG.root = null;
		if (mode === 'sandwich' && state.sel < 0) {
			const ctx = sizeCanvas(cv, W, 60);
			ctx.fillStyle = '#5d6875';
			ctx.font = '13px system-ui, sans-serif';
			ctx.fillText('Pick a function (in the table, or click it in the flame graph) to see its callers above it and its callees below.', 12, 34);
			FG.drawn = [];
			$('flame-sub').textContent = 'a function\'s callers (above) and callees (below)';
			return;
		}
		if (mode === 'sandwich') {
			const up = buildTree('callers', state.sv, state.sel), down = buildTree('callees', state.sv, state.sel);
			setParents(up); setParents(down);
			const minFrac = 0.3 / W;
			const LU = layout(up, m, null, minFrac), LD = layout(down, m, null, minFrac);
			let du = 0, dd = 0;
			for (const r of LU.rects) du = Math.max(du, r.depth + 1);
			for (const r of LD.rects) dd = Math.max(dd, r.depth + 1);
			const H = Math.max(2, du + dd) * rowH + 30;
			const ctx = sizeCanvas(cv, W, H);
			ctx.fillStyle = '#fff';
			ctx.fillRect(0, 0, W, H);
			const mid = 10 + du * rowH;
			const a = paint(ctx, LU, W, mid, true, rowH, colourWarm, match, 0);
			/* the function's own row is drawn twice: once is enough */
			LD.rects = LD.rects.filter((r) => r.depth > 0).map((r) => Object.assign({}, r, { depth: r.depth - 1 }));
			const b = paint(ctx, LD, W, mid + 2, false, rowH, colourWarm, match, 0);
			for (const x of a.concat(b)) x.r.sandwichPart = true;
			drawn = a.concat(b);
			FG.root = up;
			$('flame-sub').textContent = 'callers of ' + plainName(F.name[state.sel]) + ' above it, its callees below; its outermost call in each stack';
		} else {
			const key = mode;
			if (!FG.trees[key] || FG.trees[key].sv !== state.sv) {
				const t = buildTree(mode, state.sv);
				setParents(t);
				FG.trees[key] = { sv: state.sv, root: t };
			}
			const root = FG.trees[key].root;
			FG.root = root;
			const L = layout(root, m, FG.zoom, 0.3 / W);
			if (!(L.total > 0)) {
				const ctx = sizeCanvas(cv, W, 50);
				ctx.fillStyle = '#5d6875';
				ctx.font = '13px system-ui, sans-serif';
				ctx.fillText('Nothing to draw: no ' + D.metrics[m].title + (state.range === FULL ? '' : ' in this range') + '.', 12, 30);
				FG.drawn = [];
				return;
			}
			let depth = 0;
			for (const r of L.rects) depth = Math.max(depth, r.depth + 1);
			const H = Math.max(1, depth) * rowH + 8;
			const ctx = sizeCanvas(cv, W, H);
			ctx.fillStyle = '#fff';
			ctx.fillRect(0, 0, W, H);
			drawn = mode === 'flame' ? paint(ctx, L, W, H - 4, true, rowH, colourWarm, match, 0)
				: paint(ctx, L, W, 4, false, rowH, colourWarm, match, 0);
			/* a graph taller than its box: the root in view */
			const box = cv.parentElement;
			box.scrollTop = mode === 'flame' ? box.scrollHeight : 0;
			$('flame-sub').textContent = (mode === 'flame' ? 'call paths from the root (bottom) up; width: inclusive ' : 'the leaves (top) and, under each, its callers; width: ') +
				D.metrics[m].title + (state.range === FULL ? '' : ', ' + rangeText(state.range)) + '; click a frame to zoom into it';
		}
		FG.drawn = drawn;
		/* what the search matched: the share of the total, each stack once */
		const mt = $('flame-match');
		if (match) {
			let v = 0;
			for (let s = 0; s < NS; s++) if (SU[s].some((f) => match.test(plainName(F.name[f])))) v += state.sv[m][s];
			mt.textContent = 'matched ' + fmtValU(v, m) + ' (' + pct(v, state.fv.tot[m]) + '% of the total)';
		} else mt.textContent = '';
		if (!FG.zoom && state.sel < 0) flameDetail(FG, null, $('flame-detail'));
	}
	function hitRect(G, ev) {
		const r = G.canvas.getBoundingClientRect();
		const x = ev.clientX - r.left, y = ev.clientY - r.top;
		for (let i = (G.drawn || []).length - 1; i >= 0; i--) {
			const d = G.drawn[i];
			if (x >= d.px && x < d.px + Math.max(d.pw, 1) && y >= d.y && y < d.y + d.h) return d.r;
		}
		return null;
	}
	function frameLines(r, m) {
		const n = r.node, f = n.f, fv = state.fv;
		const tot = fv.tot[m];
		const lines = [funcName(f) + (f >= 0 ? '  (' + funcObj(f) + ')' : '')];
		lines.push('this frame: ' + fmtValU(n.v[m], m) + ' (' + pct(n.v[m], tot) + '%), self ' + fmtValU(n.self[m], m));
		if (f >= 0) lines.push('the function: exclusive ' + fmtValU(fv.e[m][f], m) + ', inclusive ' + fmtValU(fv.i[m][f], m) + ' (' + pct(fv.i[m][f], tot) + '%)');
		return lines;
	}
	function flameHover(G, ev) {
		const r = hitRect(G, ev);
		if (!r) { hideTip(); return; }
		showTip(ev, G.lines ? G.lines(r) : frameLines(r, state.metric));
	}
	/* The line under a graph: the frame and its function's numbers, exact
	 * values in data attributes. */
	function flameDetail(G, r, box) {
		const m = state.metric, fv = state.fv;
		box.textContent = '';
		if (!r) {
			box.appendChild(el('span', { class: 'muted', text: 'Root: ' }));
			box.appendChild(el('b', { 'data-role': 'root', 'data-v': String(fv.tot[m]), text: '<Total> ' + fmtValU(fv.tot[m], m) }));
			box.appendChild(el('span', { class: 'muted', text: '. Hover a frame for its numbers; click one to zoom and to see its callers and callees.' }));
			return;
		}
		const f = r.node.f;
		box.appendChild(el('b', null, nameNode(funcName(f))));
		box.appendChild(document.createTextNode(' \u2014 this frame '));
		box.appendChild(el('span', { 'data-role': 'frame', 'data-v': String(r.node.v[m]), text: fmtValU(r.node.v[m], m) + ' (' + pct(r.node.v[m], fv.tot[m]) + '%)' }));
		if (f >= 0) {
			box.appendChild(document.createTextNode('; the function: exclusive '));
			box.appendChild(el('span', { 'data-role': 'excl', 'data-v': String(fv.e[m][f]), text: fmtValU(fv.e[m][f], m) }));
			box.appendChild(document.createTextNode(', inclusive '));
			box.appendChild(el('span', { 'data-role': 'incl', 'data-v': String(fv.i[m][f]), text: fmtValU(fv.i[m][f], m) + ' (' + pct(fv.i[m][f], fv.tot[m]) + '%)' }));
		}
	}

	// ---- annotated source --------------------------------------------------------------

	function sourceSection() {
		const S = (D.sources || []).filter((s) => s.doc);
		const missing = (D.sources || []).filter((s) => !s.doc);
		if (!S.length && !missing.length) return;
		const pick = $('src-pick');
		const items = [];
		for (const s of S) for (const f of s.funcs) items.push({ f, s });
		items.sort((a, b) => F.e[D.first][b.f] - F.e[D.first][a.f]);
		items.forEach((it, k) => {
			const b = el('button', { 'data-func': String(it.f) }, nameNode(F.name[it.f]));
			b.addEventListener('click', () => { for (const x of pick.children) x.classList.toggle('on', x === b); drawSource(it); });
			pick.appendChild(b);
			if (!k) b.classList.add('on');
		});
		show('sec-source');
		if (items.length) drawSource(items[0]);
		else $('src-head').textContent = 'No source file of the hottest functions could be read.';
		if (missing.length) {
			const det = el('details', null, el('summary', { text: 'Hot functions without readable source (' + missing.length + ')' }));
			for (const s of missing) det.appendChild(el('div', { class: 'note warn' }, nameNode(s.funcs.map((f) => F.name[f]).join(', ') + ': ' + s.error)));
			$('src-missing').appendChild(det);
		}
		show('sec-source');
		navAdd('sec-source', 'Source');
	}
	function drawSource(it) {
		const doc = it.s.doc;
		const head = $('src-head');
		head.textContent = '';
		head.appendChild(nameNode('Source file ' + doc.source_file + (doc.read_from && doc.read_from !== doc.source_file ? ' (read from ' + doc.read_from + ')' : '') + (doc.load_object ? ', in ' + doc.load_object : '')));
		const keys = doc.metrics.split(':').filter((k) => k !== 'name');
		const g = $('src-grid');
		g.textContent = '';
		const thead = el('thead');
		const tr = el('tr');
		const mt = (k) => D.metrics.findIndex((d) => d.name === k.slice(2));
		for (const k of keys) {
			const mi = mt(k);
			tr.appendChild(el('th', { text: (k[0] === 'e' ? 'Excl. ' : 'Incl. ') + (mi >= 0 ? D.metrics[mi].abbr : k.slice(2)) }));
		}
		tr.appendChild(el('th', { text: 'Line' }));
		tr.appendChild(el('th', { class: 'name', text: 'Source' }));
		thead.appendChild(tr);
		g.appendChild(thead);
		const body = el('tbody');
		let target = null;
		const fname = F.name[it.f];
		for (const r of doc.rows) {
			const cls = r.kind === 'function' ? 'fmark' : r.kind === 'inlined' ? 'imark' : r.hot ? 'hot' : '';
			const row = el('tr', { class: cls });
			if (r.kind === 'line') {
				for (const k of keys) {
					const mi = mt(k), v = r[k.replace('+', '.')] != null ? r[k.replace('+', '.')] : r[k];
					row.appendChild(el('td', { class: 'num', 'data-v': String(v || 0), text: v ? (mi >= 0 ? fmtVal(v, mi) : String(v)) : '' }));
				}
				row.appendChild(el('td', { class: 'ln', text: String(r.line) }));
				row.appendChild(el('td', { class: 'src' }, nameNode(r.text)));
			} else {
				row.appendChild(el('td', { colspan: String(keys.length + 2), class: 'src' }, nameNode((r.kind === 'function' ? '<Function: ' : '<inlined: ') + r.text + '>')));
				if (r.kind === 'function' && !target && (r.text === fname || fname.startsWith(r.text + '.') || fname.startsWith(r.text + '('))) target = row;
			}
			body.appendChild(row);
		}
		g.appendChild(body);
		const box = $('src-table');
		if (!target) target = body.querySelector('tr.hot');
		box.scrollTop = 0;
		if (target) box.scrollTop = Math.max(0, target.getBoundingClientRect().top - box.getBoundingClientRect().top - 60);
	}

	// ---- trace views ---------------------------------------------------------------------

	/* A stack on one line, the leaf first and bold: leaf \u2190 caller ... */
	function stackList(stack) {
		if (!Array.isArray(stack)) return el('span', null, nameNode(String(stack)));
		const sp = el('span', { class: 'stack', title: 'the leaf first, then each caller' });
		stack.forEach((s, i) => {
			if (i) sp.appendChild(el('span', { class: 'arr', text: '\u2190' }));
			sp.appendChild(i ? el('span', null, nameNode(s)) : el('b', null, nameNode(s)));
		});
		return sp;
	}
	/* A table of rows with columns [key, title, kind] (kind: 'n' number,
	 * 'ns' a time, 'b' bytes, 's' text, 'stack'). */
	function simpleTable(rows, cols, max) {
		const t = el('table', { class: 'grid' });
		const h = el('tr');
		for (const c of cols) h.appendChild(el('th', { class: c[2] === 's' || c[2] === 'stack' ? 'name' : '', text: c[1] }));
		t.appendChild(el('thead', null, h));
		const b = el('tbody');
		for (const r of rows.slice(0, max || rows.length)) {
			const tr = el('tr', { class: r.stack === '<Total>' || r.object === '<Total>' || r.file === '<Total>' ? 'total' : '' });
			for (const c of cols) {
				const v = r[c[0]];
				if (c[2] === 's') tr.appendChild(el('td', { class: 'name' }, nameNode(v == null ? '' : v)));
				else if (c[2] === 'stack') tr.appendChild(el('td', { class: 'name' }, stackList(v)));
				else tr.appendChild(el('td', { class: 'num', 'data-v': String(v), text: c[2] === 'ns' ? (v / 1e9).toFixed(6) : c[2] === 'p' ? String(v) : fmtNum(v || 0) }));
			}
			b.appendChild(tr);
		}
		t.appendChild(b);
		return el('div', { class: 'tablewrap', style: 'max-height:460px' }, t);
	}
	function viewError(v) { return v && v.error ? el('div', { class: 'note err' }, nameNode(v.error)) : null; }
	function traceSections() {
		const V = D.views || {};
		if (V.heapstat || V.leaks || V.allocs) {
			const body = $('heap-body');
			const hs = V.heapstat;
			if (hs && !hs.error) {
				const cards = el('div', { class: 'cards' });
				const stat = (k, v, s) => cards.appendChild(el('div', { class: 'stat' }, el('div', { class: 'k', text: k }), el('div', { class: 'v' }, v, s ? el('small', { text: ' ' + s }) : null)));
				stat('Allocations', fmtNum(hs.allocations), fmtBytes(hs.bytes));
				stat('Leaks', fmtNum(hs.leaks), fmtBytes(hs.leaked_bytes));
				stat('Frees', fmtNum(hs.frees), hs.unmatched_frees ? fmtNum(hs.unmatched_frees) + ' of blocks from before tracing' : '');
				stat('Peak live', fmtBytes(hs.peak_bytes), hs.peak_ns != null ? 'at ' + fmtSec(hs.peak_ns) : '');
				stat('Largest block', fmtBytes(hs.largest), 'the smallest ' + fmtBytes(hs.smallest || 0));
				if (hs.failed) stat('Failed', fmtNum(hs.failed));
				body.appendChild(cards);
				if (hs.histogram && hs.histogram.length) {
					body.appendChild(el('h3', { text: 'Allocation sizes' }));
					const hist = el('div', { class: 'hist' });
					let max = 0;
					for (const b of hs.histogram) max = Math.max(max, b.allocations);
					for (const b of hs.histogram) {
						hist.appendChild(el('span', { class: 'mono', text: fmtNum(b.size_lo) + ' \u2013 ' + fmtNum(b.size_hi) }));
						const bar = el('div', null, el('div', { class: 'b' }));
						bar.firstChild.style.width = (max ? 100 * b.allocations / max : 0).toFixed(1) + '%';
						hist.appendChild(bar);
						hist.appendChild(el('span', { class: 'mono', text: fmtNum(b.allocations) + ' (' + fmtBytes(b.bytes) + ')' }));
					}
					body.appendChild(hist);
				}
			} else if (hs) body.appendChild(viewError(hs));
			if (V.leaks) {
				body.appendChild(el('h3', { text: 'Leaks by allocation stack: ' + (V.leaks.error ? '' : fmtNum(V.leaks.leaks) + ' leaks, ' + fmtNum(V.leaks.bytes) + ' bytes') }));
				for (const r of V.leaks.rows || []) r.pct = V.leaks.bytes ? (100 * r.bytes / V.leaks.bytes).toFixed(2) : '0.00';
				body.appendChild(viewError(V.leaks) || (V.leaks.rows && V.leaks.rows.length ? simpleTable(V.leaks.rows, [['leaks', 'Leaks', 'n'], ['bytes', 'Bytes', 'n'], ['pct', '% of bytes', 'p'], ['stack', 'Stack (the allocating function first)', 'stack']]) : el('div', { class: 'muted', text: 'No leaks.' })));
			}
			if (V.allocs) {
				body.appendChild(el('h3', { text: 'Allocations by stack: ' + (V.allocs.error ? '' : fmtNum(V.allocs.allocations) + ' allocations, ' + fmtNum(V.allocs.bytes) + ' bytes') }));
				body.appendChild(viewError(V.allocs) || simpleTable(V.allocs.rows || [], [['allocations', 'Allocations', 'n'], ['bytes', 'Bytes', 'n'], ['stack', 'Stack (the allocating function first)', 'stack']]));
			}
			show('sec-heap');
			navAdd('sec-heap', 'Heap');
		}
		if (V.sync) {
			const body = $('sync-body');
			body.appendChild(viewError(V.sync) || simpleTable(V.sync.rows || [], [['sync', 'Wait (s)', 'ns'], ['syncn', 'Waits', 'n'], ['max', 'Longest (s)', 'ns'], ['object', 'Object', 's'], ['functions', 'Functions', 's']]));
			show('sec-sync');
			navAdd('sec-sync', 'Sync');
		}
		if (V.io || V.iostacks) {
			const body = $('io-body');
			if (V.io) {
				body.appendChild(el('h3', { text: 'By file' }));
				body.appendChild(viewError(V.io) || simpleTable(V.io.rows || [], [['ioreadbytes', 'Read bytes', 'n'], ['ioreadcnt', 'Reads', 'n'], ['ioreadtime', 'Read (s)', 'ns'],
					['iowritebytes', 'Write bytes', 'n'], ['iowritecnt', 'Writes', 'n'], ['iowritetime', 'Write (s)', 'ns'], ['ioothercnt', 'Other', 'n'], ['ioothertime', 'Other (s)', 'ns'],
					['ioerrorcnt', 'Errors', 'n'], ['file', 'File', 's']]));
			}
			if (V.iostacks) {
				body.appendChild(el('h3', { text: 'By call stack' }));
				body.appendChild(viewError(V.iostacks) || simpleTable(V.iostacks.rows || [], [['calls', 'Calls', 'n'], ['bytes', 'Bytes', 'n'], ['time', 'Time (s)', 'ns'], ['reads', 'Reads', 'n'],
					['writes', 'Writes', 'n'], ['other', 'Other', 'n'], ['errors', 'Errors', 'n'], ['stack', 'Stack (the calling function first)', 'stack']]));
			}
			show('sec-io');
			navAdd('sec-io', 'I/O');
		}
	}

	// ---- comparison ---------------------------------------------------------------------

	const CG = { canvas: null, drawn: [], a: 0, b: 1 };
	function compareSection() {
		if (NG < 2 || !T.sg) {
			if (NG > 1) {
				$('notes-body').appendChild(el('div', { class: 'note info', text: 'More than 8 experiments: they are added together but not compared.' }));
				show('sec-notes');
			}
			return;
		}
		for (const id of ['cmp-a', 'cmp-b'])
			D.groups.forEach((g, i) => $(id).appendChild(el('option', { value: String(i) }, nameNode(g))));
		$('cmp-a').value = '0';
		$('cmp-b').value = '1';
		const upd = () => { CG.a = +$('cmp-a').value; CG.b = +$('cmp-b').value; drawCompare(); };
		$('cmp-a').addEventListener('change', upd);
		$('cmp-b').addEventListener('change', upd);
		CG.canvas = $('diff-canvas');
		CG.lines = diffLines;
		CG.canvas.addEventListener('mousemove', (ev) => flameHover(CG, ev));
		CG.canvas.addEventListener('mouseleave', hideTip);
		CG.canvas.addEventListener('click', (ev) => {
			const r = hitRect(CG, ev);
			if (!r) return;
			CG.zoom = r.node.f < 0 ? null : r.node;
			drawCompare();
		});
		onChange(() => { CG.zoom = null; drawCompare(); });
		window.addEventListener('resize', drawCompare);
		show('sec-compare');
		navAdd('sec-compare', 'Compare');
	}
	/* Each node of the New tree knows its Base value (same path). */
	function diffTrees() {
		const sa = stackValues(state.range, CG.a), sb = stackValues(state.range, CG.b);
		const ta = buildTree('flame', sa), tb = buildTree('flame', sb);
		const link = (nb, na) => {
			nb.base = na;
			if (!nb.kids) return;
			for (const [f, c] of nb.kids) link(c, na && na.kids ? na.kids.get(f) : null);
		};
		link(tb, ta);
		setParents(tb);
		return { ta, tb, sa, sb, totA: totals(sa), totB: totals(sb) };
	}
	function diffLines(r) {
		const m = state.metric, n = r.node, a = n.base ? n.base.v[m] : 0, b = n.v[m];
		const X = CG.cur;
		return [funcName(n.f) + (n.f >= 0 ? '  (' + funcObj(n.f) + ')' : ''),
			'Base ' + fmtValU(a, m) + ' (' + pct(a, X.totA[m]) + '%), New ' + fmtValU(b, m) + ' (' + pct(b, X.totB[m]) + '%)',
			'change ' + (b - a >= 0 ? '+' : '') + fmtValU(b - a, m) + ', share ' + ((100 * b / (X.totB[m] || 1)) - (100 * a / (X.totA[m] || 1)) >= 0 ? '+' : '') +
			((100 * b / (X.totB[m] || 1)) - (100 * a / (X.totA[m] || 1))).toFixed(2) + ' points'];
	}
	function drawCompare() {
		if (!CG.canvas) return;
		const m = state.metric;
		const X = diffTrees();
		CG.cur = X;
		const W = Math.max(400, CG.canvas.parentElement.clientWidth), rowH = 18;
		const L = layout(X.tb, m, CG.zoom, 0.3 / W);
		let depth = 0;
		for (const r of L.rects) depth = Math.max(depth, r.depth + 1);
		const H = Math.max(1, depth) * rowH + 8;
		const ctx = sizeCanvas(CG.canvas, W, H);
		ctx.fillStyle = '#fff';
		ctx.fillRect(0, 0, W, H);
		/* colour: the change of the frame's share of its run's total */
		let maxd = 0;
		const share = (n) => {
			const a = n.base ? n.base.v[m] / (X.totA[m] || 1) : 0, b = n.v[m] / (X.totB[m] || 1);
			return b - a;
		};
		for (const r of L.rects) maxd = Math.max(maxd, Math.abs(share(r.node)));
		/* full colour at the largest change (at least 5 points of the
		 * total); below a fifth of a point: no change */
		const scale = Math.max(maxd, 0.05);
		const colour = (n) => {
			const d = share(n);
			if (Math.abs(d) < 0.002) return 'rgb(228, 228, 228)';
			const k = Math.min(1, Math.abs(d) / scale);
			const mix = (c) => Math.round(228 + (c - 228) * (0.15 + 0.85 * k));
			return d > 0 ? 'rgb(' + mix(224) + ',' + mix(85) + ',' + mix(75) + ')' : 'rgb(' + mix(75) + ',' + mix(127) + ',' + mix(224) + ')';
		};
		CG.drawn = paint(ctx, L, W, H - 4, true, rowH, colour, searchRe(), 0);
		CG.canvas.parentElement.scrollTop = CG.canvas.parentElement.scrollHeight;
		const ga = plainName(D.groups[CG.a]), gb = plainName(D.groups[CG.b]);
		$('cmp-sub').textContent = 'New ' + gb + ' against Base ' + ga + ': the flame graph of New, coloured by the change of each frame\'s share' + (state.range === FULL ? '' : ', ' + rangeText(state.range));
		const det = $('diff-detail');
		det.textContent = 'Total: Base ' + fmtValU(X.totA[m], m) + ', New ' + fmtValU(X.totB[m], m) + '. Hover a frame for both values; click to zoom.';
		compareTable(X);
	}
	/* The -compare table: each function's exclusive and inclusive values
	 * in each run, sorted by the Base run's exclusive value. */
	function compareTable(X) {
		const m = state.metric;
		const A = funcValues(X.sa), B = funcValues(X.sb);
		const ids = [];
		for (let f = 0; f < NF; f++) if (A.i[m][f] || B.i[m][f]) ids.push(f);
		ids.sort((x, y) => A.e[m][y] - A.e[m][x] || B.e[m][y] - B.e[m][x] || (F.name[x] < F.name[y] ? -1 : 1));
		const t = $('cmp-table');
		t.textContent = '';
		const ga = plainName(D.groups[CG.a]), gb = plainName(D.groups[CG.b]);
		const h1 = el('tr'), h2 = el('tr');
		h1.appendChild(el('th', { colspan: '3', text: 'Excl. ' + D.metrics[m].abbr }));
		h1.appendChild(el('th', { colspan: '3', text: 'Incl. ' + D.metrics[m].abbr }));
		h1.appendChild(el('th', { class: 'name', rowspan: '2', text: 'Name' }));
		for (let k = 0; k < 2; k++) for (const s of [ga, gb, 'change']) h2.appendChild(el('th', { text: s }));
		t.appendChild(el('thead', null, h1, h2));
		const b = el('tbody');
		const delta = (v, m2) => {
			const td = el('td', { class: 'num', 'data-v': String(v), text: (v > 0 ? '+' : '') + fmtVal(v, m2) });
			td.style.color = v > 0 ? '#b2352b' : v < 0 ? '#2a5fb8' : '';
			return td;
		};
		const row = (name, ea, eb, ia, ib, cls, f) => {
			const tr = el('tr', { class: cls || '', 'data-func': String(f) });
			tr.appendChild(numCell(ea, X.totA[m], m));
			tr.appendChild(numCell(eb, X.totB[m], m));
			tr.appendChild(delta(eb - ea, m));
			tr.appendChild(numCell(ia, X.totA[m], m));
			tr.appendChild(numCell(ib, X.totB[m], m));
			tr.appendChild(delta(ib - ia, m));
			tr.appendChild(el('td', { class: 'name' }, nameNode(name), f >= 0 ? el('span', { class: 'obj' }, nameNode(funcObj(f))) : null));
			b.appendChild(tr);
		};
		row('<Total>', X.totA[m], X.totB[m], X.totA[m], X.totB[m], 'total', -1);
		for (const f of ids.slice(0, 300)) row(F.name[f], A.e[m][f], B.e[m][f], A.i[m][f], B.i[m][f], '', f);
		t.appendChild(b);
	}

	// ---- problems ------------------------------------------------------------------------

	function notesSection() {
		if (!D.notes || !D.notes.length) return;
		for (const n of D.notes) $('notes-body').appendChild(el('div', { class: 'note warn' }, nameNode(n)));
		show('sec-notes');
		navAdd('sec-notes', 'Problems');
	}

	// ---- start ------------------------------------------------------------------------------

	state.fv = funcValues(state.sv);
	headerSection();
	timelineSection();
	functionsSection();
	flameSection();
	sourceSection();
	traceSections();
	compareSection();
	notesSection();
	for (const [id, text] of navItems) $('nav').appendChild(el('a', { href: '#' + id, text }));
	$('footer').textContent = 'Written by ' + D.generator + ' from ' + D.exps.length + ' experiment' + (D.exps.length === 1 ? '' : 's') + '.';
	for (const fn of listeners) fn();
	if (state.sel < 0) {
		/* the hottest function's callers and callees to start with */
		const ids = sortedFuncs(state.fv);
		if (ids.length) selectFunc(ids[0]);
	}
	const renderMs = performance.now() - t0;

	window.sondeReport = {
		ready: true,
		renderMs,
		data: D,
		state,
		/* the frames drawn in the flame graph (or the comparison's):
		 * name, function, value and their place in the canvas */
		frames(which) {
			const G = which === 'diff' ? CG : FG;
			return (G.drawn || []).map((d) => ({ name: funcName(d.r.node.f), func: d.r.node.f, value: d.r.node.v[state.metric],
				x: d.px, y: d.y, w: d.pw, h: d.h, depth: d.r.depth }));
		},
		setRange(lo, hi) { setRange(lo, hi); },
		funcValues() { return state.fv; },
	};
})();
