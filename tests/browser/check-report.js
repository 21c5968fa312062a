/*
 * check-report.js: opens a report of `sonde report` in Debian's headless
 * Chromium (playwright-core, pinned in package.json) and checks it as a
 * person would use it.  Run by tests/t61-report.sh and bench/report.sh.
 *
 *	node check-report.js SPEC.json
 *
 * SPEC (written by the shell test; the files named are `sonde print
 * -printmode json` output, whose numbers the page must show exactly, in
 * the report's first metric or the one of `metric`):
 *   report       the HTML file
 *   shots        directory for screenshots (one PNG per section), or none
 *   tag          prefix of the screenshots' names
 *   functions    -functions: <Total> is the flame graph's root and the
 *                table's first row; the first `top` functions (default 5)
 *                are found in the table and clicked in the flame graph
 *   metric       a metric's name (-metrics' spelling): chosen in the
 *                page's Metric menu first, and the numbers checked are
 *                its (else the report's first metric's)
 *   csingle      -csingle NAME: a click on NAME in the table shows these
 *                callers and callees
 *   range        {from, to} fractions of the timeline to drag across,
 *                absent and present: names the range must not / must have, and
 *                truth: "report" (compare with `sonde report -time` of the
 *                selected range, run here: sonde, experiments) or
 *                "phases" (the synthetic experiment of test_report --write)
 *   names        names the page must show as text (escaping), [{name}]
 *   compare      -compare on -functions of two experiments, which the
 *                comparison table must show
 *   sections     section ids that must be shown
 *   mpi          a truth file of test_mpitimeline --write (mpitruth.json):
 *                the MPI section's timeline has its lanes (the ranks in
 *                order) and draws every call as a bar and every matched
 *                message as a line from its send (rank, time) to its
 *                receive (rank, time), the unmatched count is said, and
 *                the matrix's cells (messages, bytes) are the truth's
 *   viewmodes    an OpenMP program's report: {first: the mode the page
 *                opens in, user, expert, machine: each mode's -functions},
 *                the page's View mode menu switched to each in turn shows
 *                its <Total> and first 5 functions (the report's first
 *                metric)
 *   time_only    only load and time the first render (bench)
 *
 * Prints "ok - ..." / "not ok - ..." lines (tests/run.sh counts them) and
 * "# ..." notes; exits 1 when a check failed.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { chromium } = require('playwright-core');

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let failed = 0;
function ok(what) { console.log('ok - ' + what); }
function notok(what, why) {
	failed++;
	console.log('not ok - ' + what);
	if (why) for (const l of String(why).split('\n').slice(0, 12)) console.log('#   ' + l);
}
function check(cond, what, why) { if (cond) ok(what); else notok(what, why); }
function note(s) { console.log('# ' + s); }

/* The JSON data inside a report file. */
function reportData(file) {
	const html = fs.readFileSync(file, 'utf8');
	const m = /<script type="application\/json" id="sonde-data">([\s\S]*?)<\/script>/.exec(html);
	return JSON.parse(m[1]);
}

(async () => {
	const browser = await chromium.launch({
		executablePath: process.env.SONDE_CHROMIUM || '/usr/bin/chromium',
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
	const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, offline: true });
	const page = await context.newPage();
	const errors = [], network = [];
	page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(m.type() + ': ' + m.text()); });
	page.on('pageerror', (e) => errors.push('page error: ' + e.message));
	page.on('request', (r) => { if (!r.url().startsWith('file:')) network.push(r.url()); });
	/* the network is off: any request that is not a file is refused */
	await context.route((url) => !url.href.startsWith('file:'), (route) => route.abort());

	const url = 'file://' + path.resolve(spec.report);
	const start = Date.now();
	await page.goto(url, { waitUntil: 'load', timeout: 120000 });
	await page.waitForFunction(() => window.sondeReport && window.sondeReport.ready, null, { timeout: 120000 });
	const wall = Date.now() - start;
	const renderMs = await page.evaluate(() => window.sondeReport.renderMs);
	note('load to first render ' + wall + ' ms (the script: ' + renderMs.toFixed(0) + ' ms)');
	if (spec.time_only) {
		console.log('render_ms ' + wall + ' script_ms ' + renderMs.toFixed(0));
		check(errors.length === 0, 'no console or page error', errors.join('\n'));
		await browser.close();
		process.exit(failed ? 1 : 0);
	}
	check(!(await page.evaluate(() => window.sondeReport.nodata)), 'the page has its data');
	/* the metric chosen in the page's Metric menu, as a person does */
	if (spec.metric) {
		const idx = await page.evaluate((n) => window.sondeReport.data.metrics.findIndex((d) => d.name === n), spec.metric);
		check(idx >= 0, 'the report has the metric ' + spec.metric);
		if (idx >= 0) await page.selectOption('#metric', String(idx));
	}
	const mname = spec.metric || await page.evaluate(() => window.sondeReport.data.metrics[window.sondeReport.data.first].name);
	const shown = (s) => String(s).replace(/[\uf700-\uf7ff]/g, (c) => '\\x' + (c.charCodeAt(0) - 0xf700).toString(16).padStart(2, '0'));
	const readDoc = (f) => JSON.parse(fs.readFileSync(f, 'utf8').split('\n')[0]);
	if (spec.functions) {
		const doc = readDoc(spec.functions);
		spec.total = doc.rows[0]['e.' + mname];
		spec.functions = doc.rows.slice(1, 1 + (spec.top || 5)).map((r) => ({ name: r.name, shown: shown(r.name), excl: r['e.' + mname], incl: r['i.' + mname] }));
		note('the first metric: ' + mname + '; <Total> ' + spec.total);
	}
	if (spec.csingle) {
		const b = readDoc(spec.csingle).blocks[0];
		const row = (r) => ({ name: shown(r.name), attr: r['a.' + mname] });
		spec.csingle = { name: shown(b.function.name), self: b.function['a.' + mname], callers: b.callers.map(row), callees: b.callees.map(row) };
	}
	if (spec.compare) {
		const doc = readDoc(spec.compare);
		spec.compare = { rows: doc.rows.map((r) => ({ name: shown(r.name), excl: [r['e.' + mname + '[1]'], r['e.' + mname + '[2]']], incl: [r['i.' + mname + '[1]'], r['i.' + mname + '[2]']] })) };
	}

	/* ---- sections shown ---- */
	for (const id of spec.sections || [])
		check(await page.evaluate((i) => !document.getElementById(i).classList.contains('hidden'), id), 'section ' + id + ' is shown');

	/* ---- the flame graph's root and top functions ---- */
	if (spec.total != null) {
		const root = await page.evaluate(() => {
			const f = window.sondeReport.frames().find((x) => x.func === -1);
			return f ? f.value : null;
		});
		check(root === spec.total, 'flame graph root <Total> is ' + spec.total, 'got ' + root);
		const tableTotal = await page.evaluate(() => +document.querySelector('#fn-table tr.total td.num').dataset.v);
		check(tableTotal === spec.total, 'function table <Total> is ' + spec.total, 'got ' + tableTotal);
	}
	for (const fn of spec.functions || []) {
		const row = await page.evaluate((name) => {
			for (const tr of document.querySelectorAll('#fn-table tbody tr[data-func]')) {
				const td = tr.querySelector('td.name');
				const obj = td.querySelector('.obj');
				const text = td.textContent.slice(0, td.textContent.length - (obj ? obj.textContent.length : 0));
				if (text === name) {
					const nums = tr.querySelectorAll('td.num');
					return { excl: +nums[0].dataset.v, incl: +nums[1].dataset.v };
				}
			}
			return null;
		}, fn.shown);
		check(row && row.excl === fn.excl && row.incl === fn.incl, 'table: ' + fn.name + ' excl ' + fn.excl + ' incl ' + fn.incl,
			JSON.stringify(row));
		/* its widest frame in the flame graph, clicked */
		const fr = await page.evaluate((name) => {
			const all = window.sondeReport.frames().filter((x) => x.name === name);
			all.sort((a, b) => b.w - a.w);
			return all[0] || null;
		}, fn.name);
		if (!fr) { notok('flame graph: a frame of ' + fn.name); continue; }
		const box = await clickCanvas(page, '#flame-canvas', fr.x + Math.min(fr.w / 2, 40), fr.y + fr.h / 2);
		const det = await page.evaluate(() => {
			const g = (r) => { const e = document.querySelector('#flame-detail [data-role="' + r + '"]'); return e ? +e.dataset.v : null; };
			return { excl: g('excl'), incl: g('incl'), name: (document.querySelector('#flame-detail b') || {}).textContent };
		});
		check(box && det.name === fn.shown && det.excl === fn.excl && det.incl === fn.incl,
			'flame graph: a click on ' + fn.name + ' shows excl ' + fn.excl + ' incl ' + fn.incl, JSON.stringify(det));
		await page.click('#flame-reset');
	}

	/* ---- callers and callees of a function clicked in the table ---- */
	if (spec.csingle) {
		const cs = spec.csingle;
		await page.fill('#fn-filter', '');
		const clicked = await page.evaluate((name) => {
			for (const tr of document.querySelectorAll('#fn-table tbody tr.click')) {
				const td = tr.querySelector('td.name');
				if (td.firstChild && td.firstChild.textContent === name) { tr.scrollIntoView({ block: 'center' }); return true; }
			}
			return false;
		}, cs.name);
		if (clicked) {
			const tr = await page.$('#fn-table tbody tr.sel');
			const target = await page.evaluateHandle((name) => {
				for (const tr of document.querySelectorAll('#fn-table tbody tr.click')) {
					const td = tr.querySelector('td.name');
					if (td.firstChild && td.firstChild.textContent === name) return tr.querySelector('td.name');
				}
				return null;
			}, cs.name);
			await target.asElement().click();
			void tr;
		}
		const got = await page.evaluate(() => {
			const rows = [];
			for (const tr of document.querySelectorAll('#cc-table tbody tr[data-role]')) {
				const td = tr.querySelector('td.name');
				const obj = td.querySelector('.obj');
				const name = td.textContent.slice(0, td.textContent.length - (obj ? obj.textContent.length : 0));
				rows.push({ role: tr.dataset.role, name, attr: +tr.querySelector('td.num').dataset.v });
			}
			return { title: document.getElementById('callers-title').textContent, rows };
		});
		check(clicked && got.title.endsWith(cs.name), 'a click on ' + cs.name + ' shows its callers and callees', got.title);
		const same = (role, want) => {
			const have = got.rows.filter((r) => r.role === role).map((r) => r.name + '=' + r.attr).sort();
			const exp = want.map((r) => r.name + '=' + r.attr).sort();
			check(JSON.stringify(have) === JSON.stringify(exp), role + 's of ' + cs.name + ' as sonde print -csingle: ' + exp.join(', '),
				'got ' + have.join(', '));
		};
		same('caller', cs.callers);
		same('callee', cs.callees);
		const self = got.rows.find((r) => r.role === 'function');
		check(self && self.attr === cs.self, cs.name + '\'s own attributed value ' + cs.self, JSON.stringify(self));
	}

	/* ---- a time range dragged on the timeline ---- */
	if (spec.range) {
		const before = await tableValues(page);
		const cv = await page.$('#tl-canvas');
		await page.evaluate(() => document.getElementById('tl-canvas').scrollIntoView({ block: 'center' }));
		const bb = await cv.boundingBox();
		const lab = 190, w = bb.width - lab - 8;
		const y = bb.y + 40;
		await page.mouse.move(bb.x + lab + w * spec.range.from, y);
		await page.mouse.down();
		for (let k = 1; k <= 8; k++) await page.mouse.move(bb.x + lab + w * (spec.range.from + (spec.range.to - spec.range.from) * k / 8), y);
		await page.mouse.up();
		const r = await page.evaluate(() => ({ lo: window.sondeReport.state.range.lo, hi: window.sondeReport.state.range.hi, w: window.sondeReport.data.time.w,
			status: document.getElementById('range-status').textContent }));
		check(r.hi > r.lo && r.hi !== Infinity, 'dragging across the timeline selects a range (' + r.status + ')', JSON.stringify(r));
		const after = await tableValues(page);
		check(JSON.stringify(after) !== JSON.stringify(before), 'the function table changes with the range');
		let want = null;
		if (spec.range.truth === 'report') {
			/* the model's own time filter: sonde report -time of the same range */
			const t = (ns) => (ns / 1e9).toFixed(9);
			const out = path.join(path.dirname(spec.report), 'range-check.html');
			execFileSync(spec.range.sonde, ['report', '-o', out, '-time', t(r.lo * r.w) + '-' + t(r.hi * r.w)].concat(spec.range.experiments), { stdio: 'pipe' });
			const d = reportData(out);
			want = {};
			for (let f = 0; f < d.funcs.name.length; f++) if (d.funcs.i[0][f]) want[d.funcs.name[f]] = [d.funcs.e[0][f], d.funcs.i[0][f]];
			want['<Total>'] = [d.total[0], d.total[0]];
		} else if (spec.range.truth === 'phases') {
			/* test_report --write: a sample every ms at k ms + 0.5 ms, 1 ms
			 * each, in phase_a below 1 s and phase_b after, under main */
			let a = 0, b = 0;
			for (let k = 0; k < 2000; k++) {
				const tt = k * 1e6 + 5e5;
				if (tt >= r.lo * r.w && tt < r.hi * r.w) { if (k < 1000) a += 1e6; else b += 1e6; }
			}
			want = { '<Total>': [a + b, a + b], main: [0, a + b] };
			if (a) want.phase_a = [a, a];
			if (b) want.phase_b = [b, b];
			note('truth of the range: phase_a ' + a / 1e9 + ' s, phase_b ' + b / 1e9 + ' s');
		}
		if (want) {
			const have = {};
			for (const [n, e, i] of after.rows) have[n] = [e, i];
			have['<Total>'] = [after.total, after.total];
			const bad = [];
			for (const n of Object.keys(want)) if (JSON.stringify(want[n]) !== JSON.stringify(have[n])) bad.push(n + ': want ' + want[n] + ' got ' + have[n]);
			for (const n of Object.keys(have)) if (!(n in want) && (have[n][0] || have[n][1])) bad.push(n + ': want none, got ' + have[n]);
			check(!bad.length, 'the table of the range equals ' + (spec.range.truth === 'report' ? 'the model\'s time filter (sonde report -time)' : 'the known truth') +
				' (' + Object.keys(want).length + ' functions)', bad.join('\n'));
		}
		for (const n of spec.range.absent || []) {
			const row = after.rows.find((x) => x[0] === n);
			check(!row || (!row[1] && !row[2]), 'the range has none of ' + JSON.stringify(n), JSON.stringify(row));
		}
		for (const n of spec.range.present || []) {
			const row = after.rows.find((x) => x[0] === n);
			check(row && row[1] > 0, 'the range has ' + n + ' (' + (row ? row[1] : 0) + ')');
		}
		await shoot(page, 'sec-timeline', 'timeline-range');
		await shoot(page, 'sec-functions', 'functions-range');
		await page.click('#tl-clear');
	}

	/* ---- names that need escaping ---- */
	for (const n of spec.names || []) {
		const found = await page.evaluate((name) => document.body.textContent.includes(name), n.name);
		check(found, 'the page shows the name ' + JSON.stringify(n.name) + ' as text');
	}
	if (spec.names) {
		/* the page's own: its code, and its data (one JSON element per
		 * view mode, sonde-data and sonde-data-MODE) */
		const scripts = await page.evaluate(() => [...document.querySelectorAll('script')].map((e) =>
			e.type === 'application/json' && /^sonde-data(-expert|-machine)?$/.test(e.id) ? 'data' : 'code').join(' '));
		const own = scripts.split(' ').filter((k) => k === 'code').length === 1 && scripts.includes('data');
		check(own, 'no script element came from the data (' + scripts + ')');
		const injected = await page.evaluate(() => !!document.querySelector('img, iframe, object, embed') || window.pwned === 1);
		check(!injected, 'no element or script came from a name');
	}

	/* ---- the comparison ---- */
	if (spec.compare) {
		await page.selectOption('#metric', '0');
		const rows = await page.evaluate(() => {
			const out = {};
			for (const tr of document.querySelectorAll('#cmp-table tbody tr')) {
				const td = tr.querySelector('td.name');
				const obj = td.querySelector('.obj');
				const name = td.textContent.slice(0, td.textContent.length - (obj ? obj.textContent.length : 0));
				const v = [...tr.querySelectorAll('td.num')].map((x) => +x.dataset.v);
				out[name] = { excl: [v[0], v[1]], incl: [v[3], v[4]] };
			}
			return out;
		});
		const bad = [];
		for (const w of spec.compare.rows) {
			const h = rows[w.name];
			if (!h || JSON.stringify(h.excl) !== JSON.stringify(w.excl) || JSON.stringify(h.incl) !== JSON.stringify(w.incl))
				bad.push(w.name + ': want ' + JSON.stringify(w) + ' got ' + JSON.stringify(h));
		}
		check(!bad.length, 'the comparison table equals sonde print -compare on (' + spec.compare.rows.length + ' rows)', bad.join('\n'));
		const diff = await page.evaluate(() => window.sondeReport.frames('diff').length);
		check(diff > 0, 'the differential flame graph draws ' + diff + ' frames');
	}

	/* ---- the other flame graph modes draw ---- */
	for (const mode of ['inverted', 'sandwich', 'flame']) {
		await page.click('#flame-mode button[data-mode="' + mode + '"]');
		const n = await page.evaluate(() => window.sondeReport.frames().length);
		check(n > 0 || !(spec.functions || []).length, mode + ' view draws ' + n + ' frames');
		if (mode !== 'flame') await shoot(page, 'sec-flame', 'flame-' + mode);
	}
	/* search */
	if ((spec.functions || []).length) {
		await page.fill('#flame-search', spec.functions[0].name.slice(0, 6));
		const m = await page.evaluate(() => document.getElementById('flame-match').textContent);
		check(/matched/.test(m), 'searching the flame graph says what it matched (' + m + ')');
		await shoot(page, 'sec-flame', 'flame-search');
		await page.fill('#flame-search', '');
	}

	/* ---- the MPI section (lib/views/report/mpi.js) ---- */
	if (spec.mpi) {
		const t = JSON.parse(fs.readFileSync(spec.mpi, 'utf8'));
		const got = await page.evaluate(() => {
			const m = window.sondeReport.mpi;
			if (!m) return null;
			return { lanes: m.lanes, bars: m.bars(), lines: m.lines().map((l) => [l.from, l.send, l.to, l.recv, l.bytes]),
				cells: m.cells().map((c) => [c.src, c.dst, c.count, c.bytes]),
				sub: document.querySelector('#sec-mpi h2 .sub').textContent,
				nav: [...document.querySelectorAll('#nav a')].map((a) => a.textContent) };
		});
		check(got !== null, 'the MPI section is drawn');
		if (got) {
			check(JSON.stringify(got.lanes) === JSON.stringify(t.lanes), 'MPI timeline: a lane per rank, in order ' + JSON.stringify(t.lanes), 'got ' + JSON.stringify(got.lanes));
			const calls = t.calls.reduce((a, b) => a + b, 0);
			check(got.bars === calls, 'MPI timeline: every call a bar (' + calls + ')', 'got ' + got.bars);
			const key = (a) => a.map((x) => x.join(' ')).sort();
			check(JSON.stringify(key(got.lines)) === JSON.stringify(key(t.msgs)),
				'MPI timeline: every matched message a line from its send to its receive (' + t.msgs.length + ')',
				'got  ' + key(got.lines).join(', ') + '\nwant ' + key(t.msgs).join(', '));
			check(got.sub.includes(t.unmatched + ' matched nothing'), 'MPI: the unmatched messages are said (' + got.sub + ')');
			check(JSON.stringify(key(got.cells)) === JSON.stringify(key(t.matrix)), 'MPI matrix: the cells are the truth (' + t.matrix.length + ' pairs)',
				'got  ' + key(got.cells).join(', ') + '\nwant ' + key(t.matrix).join(', '));
			check(got.nav.includes('MPI'), 'the menu links the MPI section');
			await page.click('#mpi-matrix-mode button[data-mode="count"]');
			const first = await page.evaluate(() => document.querySelector('#mpi-matrix td[data-src="0"][data-dst="1"]').textContent);
			const c01 = t.matrix.find((c) => c[0] === 0 && c[1] === 1);
			check(first === String(c01[2]), 'MPI matrix: in messages, rank 0 to 1 shows ' + c01[2], 'got ' + first);
			await shoot(page, 'sec-mpi', 'mpi-messages');
			await page.click('#mpi-matrix-mode button[data-mode="bytes"]');
		}
	}

	/* ---- a screenshot of each section ---- */
	const ids = await page.evaluate(() => [...document.querySelectorAll('section.card')].filter((s) => !s.classList.contains('hidden')).map((s) => s.id));
	for (const id of ids) await shoot(page, id, id.replace(/^sec-/, ''));
	if (spec.shots) {
		await page.screenshot({ path: path.join(spec.shots, spec.tag + '-page.png'), fullPage: false });
		note('screenshots in ' + spec.shots + ' (' + spec.tag + '-*.png)');
	}
	/* ---- the view modes, switched in the page's menu (last: the page
	 * is opened again in each) ---- */
	if (spec.viewmodes) {
		const first = await page.evaluate(() => window.sondeReport.data.filters.viewmode);
		const opts = await page.evaluate(() => [...document.querySelectorAll('#viewmode option')].map((o) => o.value));
		const shownBox = await page.evaluate(() => !document.getElementById('mode-box').classList.contains('hidden'));
		check(shownBox && opts.join(',') === 'user,expert,machine' && first === spec.viewmodes.first,
			'the View mode menu offers user, expert and machine, in ' + spec.viewmodes.first + ' first', opts.join(',') + ' in ' + first);
		for (const m of ['expert', 'machine', 'user']) {
			await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.selectOption('#viewmode', m)]);
			await page.waitForFunction(() => window.sondeReport && window.sondeReport.ready, null, { timeout: 120000 });
			const got = await page.evaluate(() => {
				const d = window.sondeReport.data, rows = {};
				for (const tr of document.querySelectorAll('#fn-table tbody tr[data-func]')) {
					const td = tr.querySelector('td.name');
					const obj = td.querySelector('.obj');
					const nums = tr.querySelectorAll('td.num');
					rows[td.textContent.slice(0, td.textContent.length - (obj ? obj.textContent.length : 0))] = [+nums[0].dataset.v, +nums[1].dataset.v];
				}
				const total = +document.querySelector('#fn-table tr.total td.num').dataset.v;
				return { mode: d.filters.viewmode, menu: document.getElementById('viewmode').value, metric: d.metrics[d.first].name, total, rows };
			});
			const doc = readDoc(spec.viewmodes[m]);
			const mn = got.metric;
			const want = doc.rows.slice(1, 6).map((r) => [shown(r.name), r['e.' + mn], r['i.' + mn]]);
			const bad = want.filter((w) => !got.rows[w[0]] || got.rows[w[0]][0] !== w[1] || got.rows[w[0]][1] !== w[2]);
			check(got.mode === m && got.menu === m && got.total === doc.rows[0]['e.' + mn] && bad.length === 0,
				'View mode ' + m + ': the page shows sonde print -viewmode ' + m + ' (<Total> and ' + want.map((w) => w[0]).join(', ') + ')',
				'mode ' + got.mode + ' menu ' + got.menu + ' total ' + got.total + ' want ' + doc.rows[0]['e.' + mn] + '; wrong: ' + JSON.stringify(bad.map((w) => [w, got.rows[w[0]]])));
		}
	}
	check(network.length === 0, 'no request left the file (offline)', network.join('\n'));
	check(errors.length === 0, 'no console error or page error', errors.join('\n'));
	await browser.close();
	process.exit(failed ? 1 : 0);
})().catch((e) => {
	notok('the browser check ran to its end', e.stack || String(e));
	process.exit(1);
});

async function shoot(page, id, name) {
	if (!spec.shots) return;
	const h = await page.$('#' + id);
	if (!h) return;
	await h.scrollIntoViewIfNeeded();
	/* the sticky bar scrolled away, so it does not cover the section */
	await h.screenshot({ path: path.join(spec.shots, spec.tag + '-' + name + '.png'),
		style: 'header.top { position: static !important; } .tip { display: none !important; }' });
}

/* A click at (x, y) of a canvas (CSS pixels in the canvas), scrolled into
 * view first; false when the point is not in view. */
async function clickCanvas(page, sel, x, y) {
	const ok = await page.evaluate(([s, xx, yy]) => {
		const cv = document.querySelector(s);
		const box = cv.parentElement;
		/* a canvas taller than its scrolling box: bring y into it */
		if (box.scrollHeight > box.clientHeight) box.scrollTop = Math.max(0, yy - box.clientHeight / 2);
		cv.scrollIntoView({ block: 'nearest' });
		const r = cv.getBoundingClientRect();
		const px = r.left + xx, py = r.top + yy;
		window.scrollBy(0, py - window.innerHeight / 2);
		return true;
	}, [sel, x, y]);
	const r = await page.evaluate((s) => { const b = document.querySelector(s).getBoundingClientRect(); return { x: b.left, y: b.top }; }, sel);
	await page.mouse.click(r.x + x, r.y + y);
	return ok;
}

/* The function table: [[name, excl, incl]] of the first metric and <Total>. */
async function tableValues(page) {
	return page.evaluate(() => {
		const rows = [];
		for (const tr of document.querySelectorAll('#fn-table tbody tr.click')) {
			const td = tr.querySelector('td.name');
			const obj = td.querySelector('.obj');
			const name = td.textContent.slice(0, td.textContent.length - (obj ? obj.textContent.length : 0));
			const nums = tr.querySelectorAll('td.num');
			rows.push([name, +nums[0].dataset.v, +nums[1].dataset.v]);
		}
		const total = +document.querySelector('#fn-table tr.total td.num').dataset.v;
		return { total, rows };
	});
}
