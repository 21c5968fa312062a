/*
 * The MPI section of `sonde report` (doc/sonde-report.md): sonde writes
 * this script after report.js only into a report whose data has the "mpi"
 * view (lib/kinds/mpi_timeline.c), so that every other report stays what
 * it was.  It draws
 *   - the MPI timeline, as Vampir draws one: a lane per rank, each MPI
 *     call a bar coloured by its function, each matched message a line
 *     from its send (the sending call's start) to its receive (the end of
 *     the call that completed it); drag across it to zoom, double-click
 *     to zoom out;
 *   - the communication matrix: the point-to-point messages and bytes
 *     sent from each row's rank to each column's.
 * window.sondeReport.mpi is its interface for tests (tests/browser/).
 */
'use strict';

(function () {
	const $ = (id) => document.getElementById(id);
	let D = null;
	try {
		D = JSON.parse($('sonde-data').textContent);
	} catch (e) {
		return;
	}
	const M = D && D.views && D.views.mpi;
	if (!M || !window.sondeReport || window.sondeReport.nodata) return;

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
	const fmtNum = (v) => Math.round(v).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	function fmtBytes(v) {
		if (Math.abs(v) < 1024) return fmtNum(v) + ' B';
		const u = ['KiB', 'MiB', 'GiB', 'TiB'];
		let x = v, i = -1;
		while (Math.abs(x) >= 1024 && i < 3) { x /= 1024; i++; }
		return x.toFixed(1) + ' ' + u[i];
	}
	function fmtSec(ns) {
		const s = ns / 1e9;
		if (s === 0) return '0 s';
		if (Math.abs(s) < 0.001) return (s * 1e6).toFixed(3) + ' \u00b5s';
		if (Math.abs(s) < 1) return (s * 1000).toFixed(3) + ' ms';
		return s.toFixed(3) + ' s';
	}

	// ---- the section and its place ------------------------------------------------------

	const sec = el('section', { class: 'card', id: 'sec-mpi' });
	if (M.error) {
		sec.appendChild(el('h2', { text: 'MPI' }));
		sec.appendChild(el('div', { class: 'note err', text: M.error }));
	}
	const after = $('sec-compare');
	after.parentNode.insertBefore(sec, after);
	/* the menu's link, before the next shown section's */
	const link = el('a', { href: '#sec-mpi', text: 'MPI' });
	const nav = $('nav');
	const next = [...nav.children].find((a) => ['#sec-compare', '#sec-notes'].includes(a.getAttribute('href')));
	nav.insertBefore(link, next || null);
	if (M.error) {
		window.sondeReport.mpi = { error: M.error };
		return;
	}

	const NL = M.ranks.length;
	const calls = M.calls, msgs = M.msgs;
	/* functions coloured by their time, the longest first */
	const ftime = new Array(M.funcs.length).fill(0);
	for (const c of calls) ftime[c[1]] += c[3];
	const forder = M.funcs.map((_, i) => i).sort((a, b) => ftime[b] - ftime[a] || a - b);
	const PALETTE = ['#e0554b', '#4b7fe0', '#3fae5a', '#e0a23b', '#9b59b6', '#1fa5a5', '#d35ea4', '#8c6d31',
		'#6b8e23', '#c0392b', '#2c7fb8', '#7f7f7f'];
	const color = new Array(M.funcs.length);
	forder.forEach((f, k) => { color[f] = k < PALETTE.length ? PALETTE[k] : `hsl(${(k * 137.5) % 360},45%,60%)`; });

	sec.appendChild(el('h2', {}, 'MPI ', el('span', { class: 'sub', text:
		`${NL} rank${NL === 1 ? '' : 's'}, ${fmtNum(M.calls_total)} calls, ${fmtNum(M.msgs_total)} messages matched from send to receive` +
		(M.unmatched ? `, ${fmtNum(M.unmatched)} matched nothing` : '') + '; for the whole run' })));
	if (M.calls.length < M.calls_total)
		sec.appendChild(el('div', { class: 'note info', text: `The ${fmtNum(M.calls.length)} longest of ${fmtNum(M.calls_total)} calls are drawn.` }));
	if (M.msgs.length < M.msgs_total)
		sec.appendChild(el('div', { class: 'note info', text: `The first ${fmtNum(M.msgs.length)} of ${fmtNum(M.msgs_total)} messages are drawn.` }));

	// ---- the timeline ---------------------------------------------------------------------

	sec.appendChild(el('h3', { text: 'Timeline: a lane per rank, calls coloured by function, messages as lines from send to receive' }));
	const legend = el('div', { class: 'legend', id: 'mpi-legend' });
	for (const f of forder.slice(0, 16))
		legend.appendChild(el('span', {}, el('i', { style: 'background:' + color[f] }), M.funcs[f]));
	legend.appendChild(el('span', {}, el('i', { style: 'background:#18202b;height:2px' }), 'message'));
	const zoomOut = el('button', { id: 'mpi-zoomout', class: 'hidden', text: 'Zoom out' });
	sec.appendChild(el('div', { class: 'toolbar' }, legend, zoomOut));
	const wrap = el('div', { class: 'canvaswrap tall' });
	const cv = el('canvas', { id: 'mpi-canvas' });
	wrap.appendChild(cv);
	sec.appendChild(wrap);
	const detail = el('div', { class: 'detail', id: 'mpi-detail' });
	sec.appendChild(detail);

	const LABEL = 110, LANE = NL <= 32 ? 26 : NL <= 128 ? 10 : 4, TOP = 18;
	const byLane = Array.from({ length: NL }, () => []);
	for (const c of calls) byLane[c[0]].push(c);
	let view = [0, Math.max(M.span, 1)];
	const drawn = { bars: 0, lines: [] };

	function draw() {
		const dpr = window.devicePixelRatio || 1;
		const W = Math.max(wrap.clientWidth, 400), H = TOP + NL * LANE + 4;
		cv.width = W * dpr; cv.height = H * dpr;
		cv.style.width = W + 'px'; cv.style.height = H + 'px';
		const g = cv.getContext('2d');
		g.setTransform(dpr, 0, 0, dpr, 0, 0);
		g.clearRect(0, 0, W, H);
		const [a, b] = view, PW = W - LABEL - 8;
		const X = (t) => LABEL + (t - a) / (b - a) * PW;
		g.font = '11px system-ui, sans-serif';
		g.fillStyle = '#5d6875';
		g.textBaseline = 'middle';
		/* the time axis: the view's start and end */
		g.fillText(fmtSec(a), LABEL, 8);
		const endLabel = fmtSec(b);
		g.fillText(endLabel, LABEL + PW - g.measureText(endLabel).width, 8);
		drawn.bars = 0;
		drawn.lines = [];
		for (let l = 0; l < NL; l++) {
			const y = TOP + l * LANE;
			g.fillStyle = l % 2 ? '#f7f8fa' : '#ffffff';
			g.fillRect(LABEL, y, PW, LANE);
			if (LANE >= 8) {
				g.fillStyle = '#1d232b';
				g.fillText('rank ' + M.ranks[l].rank, 6, y + LANE / 2);
			}
			for (const c of byLane[l]) {
				if (c[2] + c[3] < a || c[2] > b) continue;
				const x0 = Math.max(X(c[2]), LABEL), x1 = Math.min(X(c[2] + c[3]), LABEL + PW);
				g.fillStyle = color[c[1]];
				g.fillRect(x0, y + 2, Math.max(x1 - x0, 1), LANE - 4);
				drawn.bars++;
			}
		}
		g.strokeStyle = '#18202b';
		g.lineWidth = 1;
		g.save();
		g.beginPath();
		g.rect(LABEL, TOP, PW, NL * LANE);
		g.clip();
		g.beginPath();
		for (const m of msgs) {
			if (m[3] < a || m[1] > b) continue;
			const x0 = X(m[1]), y0 = TOP + m[0] * LANE + LANE / 2, x1 = X(m[3]), y1 = TOP + m[2] * LANE + LANE / 2;
			g.moveTo(x0, y0);
			g.lineTo(x1, y1);
			drawn.lines.push({ from: m[0], to: m[2], send: m[1], recv: m[3], bytes: m[4], x0, y0, x1, y1 });
		}
		g.stroke();
		g.restore();
	}

	/* the call under a point, and the message nearest it */
	function at(px, py) {
		const l = Math.floor((py - TOP) / LANE);
		if (px < LABEL || l < 0 || l >= NL) return null;
		const W = parseFloat(cv.style.width), PW = W - LABEL - 8, [a, b] = view;
		const t = a + (px - LABEL) / PW * (b - a), slack = (b - a) / PW * 2;
		let best = null;
		for (const c of byLane[l]) if (c[2] - slack <= t && t <= c[2] + c[3] + slack && (!best || c[3] < best[3])) best = c;
		return { lane: l, t, call: best };
	}
	let drag = null;
	cv.addEventListener('mousedown', (ev) => { drag = { x: ev.offsetX }; });
	cv.addEventListener('mouseup', (ev) => {
		if (!drag) return;
		const W = parseFloat(cv.style.width), PW = W - LABEL - 8, [a, b] = view;
		const x0 = Math.min(drag.x, ev.offsetX), x1 = Math.max(drag.x, ev.offsetX);
		drag = null;
		if (x1 - x0 < 4) return;
		const t0 = a + (Math.max(x0, LABEL) - LABEL) / PW * (b - a), t1 = a + (Math.min(x1, LABEL + PW) - LABEL) / PW * (b - a);
		if (t1 > t0) {
			view = [t0, t1];
			zoomOut.classList.remove('hidden');
			draw();
		}
	});
	cv.addEventListener('dblclick', () => { view = [0, Math.max(M.span, 1)]; zoomOut.classList.add('hidden'); draw(); });
	zoomOut.addEventListener('click', () => { view = [0, Math.max(M.span, 1)]; zoomOut.classList.add('hidden'); draw(); });
	cv.addEventListener('mousemove', (ev) => {
		const h = at(ev.offsetX, ev.offsetY);
		if (!h) { detail.textContent = ''; return; }
		const r = M.ranks[h.lane];
		detail.textContent = h.call
			? `rank ${r.rank} (${r.process}): ${M.funcs[h.call[1]]} at ${fmtSec(h.call[2])}, ${fmtSec(h.call[3])}`
			: `rank ${r.rank} (${r.process}) at ${fmtSec(h.t)}`;
	});
	window.addEventListener('resize', draw);
	draw();

	// ---- the matrix -----------------------------------------------------------------------

	const N = M.nranks;
	sec.appendChild(el('h3', { text: `Communication matrix: point-to-point messages sent from the row's rank to the column's (${N} ranks)` }));
	const mode = { bytes: true };
	const seg = el('span', { class: 'seg', id: 'mpi-matrix-mode' },
		el('button', { 'data-mode': 'bytes', class: 'on', text: 'Bytes' }),
		el('button', { 'data-mode': 'count', text: 'Messages' }));
	sec.appendChild(el('div', { class: 'toolbar' }, seg));
	const mwrap = el('div', { class: 'tablewrap', style: 'max-height:560px', id: 'mpi-matrix-wrap' });
	sec.appendChild(mwrap);
	const cell = new Map();
	for (const c of M.matrix) cell.set(c[0] * N + c[1], c);

	function matrix() {
		mwrap.textContent = '';
		const key = mode.bytes ? 3 : 2;
		let max = 0;
		for (const c of M.matrix) max = Math.max(max, c[key]);
		if (N > 64) {
			/* too many for a table: the busiest pairs */
			const rows = [...M.matrix].sort((x, y) => y[key] - x[key]).slice(0, 100);
			const t = el('table', { class: 'grid', id: 'mpi-matrix' });
			t.appendChild(el('thead', {}, el('tr', {}, el('th', { text: 'From rank' }), el('th', { text: 'To rank' }),
				el('th', { text: 'Messages' }), el('th', { text: 'Bytes' }))));
			const tb = el('tbody');
			for (const c of rows)
				tb.appendChild(el('tr', {}, el('td', { class: 'num', text: String(c[0]) }), el('td', { class: 'num', text: String(c[1]) }),
					el('td', { class: 'num', text: fmtNum(c[2]) }), el('td', { class: 'num', text: fmtNum(c[3]) })));
			t.appendChild(tb);
			mwrap.appendChild(el('div', { class: 'muted', text: `The ${rows.length} busiest of ${M.matrix.length} pairs of ranks.` }));
			mwrap.appendChild(t);
			return;
		}
		const t = el('table', { class: 'grid', id: 'mpi-matrix' });
		const hr = el('tr', {}, el('th', { text: 'from \\ to' }));
		for (let d = 0; d < N; d++) hr.appendChild(el('th', { text: String(d) }));
		t.appendChild(el('thead', {}, hr));
		const tb = el('tbody');
		for (let s = 0; s < N; s++) {
			const tr = el('tr', {}, el('th', { text: String(s) }));
			for (let d = 0; d < N; d++) {
				const c = cell.get(s * N + d);
				const v = c ? c[key] : 0;
				const td = el('td', { class: 'num' + (v ? '' : ' z'), 'data-src': s, 'data-dst': d,
					'data-count': c ? c[2] : 0, 'data-bytes': c ? c[3] : 0,
					title: `rank ${s} to rank ${d}: ${fmtNum(c ? c[2] : 0)} messages, ${fmtNum(c ? c[3] : 0)} bytes`,
					text: mode.bytes ? (v ? fmtBytes(v) : '0') : fmtNum(v) });
				if (v && max) td.style.background = `rgba(42,98,201,${(0.08 + 0.6 * v / max).toFixed(3)})`;
				tr.appendChild(td);
			}
			tb.appendChild(tr);
		}
		t.appendChild(tb);
		mwrap.appendChild(t);
	}
	for (const b of seg.children)
		b.addEventListener('click', () => {
			mode.bytes = b.dataset.mode === 'bytes';
			for (const o of seg.children) o.classList.toggle('on', o === b);
			matrix();
		});
	matrix();

	window.sondeReport.mpi = {
		lanes: M.ranks.map((r) => r.rank),
		bars() { return drawn.bars; },
		lines() { return drawn.lines; },
		/* the matrix as the table shows it: cells with messages or bytes */
		cells() {
			return [...document.querySelectorAll('#mpi-matrix td[data-src]')]
				.map((td) => ({ src: +td.dataset.src, dst: +td.dataset.dst, count: +td.dataset.count, bytes: +td.dataset.bytes }))
				.filter((c) => c.count || c.bytes);
		},
		zoom(t0, t1) { view = [t0, t1]; draw(); },
	};
})();
