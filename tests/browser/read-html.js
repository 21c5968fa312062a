/*
 * read-html.js: opens pages that `sonde print -printmode html` wrote in
 * Debian's headless Chromium (playwright-core) and prints, for each, what
 * a person sees: its title, its tables (each row's cells as rendered
 * text, h: a header row), its <pre> text, and any text that is not inside a <pre>, a table
 * cell or the title (there should be none: everything a view writes is
 * escaped into one of them).  Run by tests/t70-printmode-html.sh.
 *
 *	node read-html.js PAGE.html...     (JSON, one line a page)
 */
'use strict';
const path = require('path');
const { chromium } = require('playwright-core');

(async () => {
	const browser = await chromium.launch({
		executablePath: process.env.SONDE_CHROMIUM || '/usr/bin/chromium',
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
	const page = await browser.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	for (const file of process.argv.slice(2)) {
		await page.goto('file://' + path.resolve(file));
		const got = await page.evaluate(() => {
			const stray = [];
			const walk = (n) => {
				for (const c of n.childNodes) {
					if (c.nodeType === Node.TEXT_NODE) {
						if (c.textContent.trim()) stray.push(c.textContent.trim().slice(0, 80));
					} else if (c.nodeType === Node.ELEMENT_NODE && !/^(PRE|TABLE|STYLE|SCRIPT)$/.test(c.tagName)) {
						walk(c);
					}
				}
			};
			walk(document.body);
			return {
				title: document.title,
				tables: [...document.querySelectorAll('table')].map((t) =>
					[...t.rows].map((r) => ({ h: r.cells.length > 0 && [...r.cells].every((c) => c.tagName === 'TH'),
						c: [...r.cells].map((c) => c.innerText) }))),
				pre: [...document.querySelectorAll('pre')].map((p) => p.innerText).join(''),
				stray,
			};
		});
		got.errors = errors.splice(0);
		console.log(JSON.stringify(got));
	}
	await browser.close();
})().catch((e) => {
	console.error(String(e));
	process.exit(1);
});
