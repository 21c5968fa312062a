// Loads profiles into speedscope (npm speedscope, pinned in package.json) in
// headless Chromium (Debian's /usr/bin/chromium), driven with playwright-core
// over the DevTools protocol, and reports what a person would see:
//
//   node speedscope-load.mjs FILE [NAME...]
//
// FILE is given to speedscope's file input, as its "Browse" button does.
// Prints one line per check, "ok - ..." or "not ok - ...": the file was
// imported (no alert such as "Unrecognized format", no page or console
// error, the title names the file), and each NAME appears in the sandwich
// view's function table (speedscope draws its flame graphs on a canvas;
// the sandwich view's table is HTML) of one of the profiles (each is
// shown in turn).
// Also prints the page's title and toolbar (the profile shown, "(1/3)").
//
// Why playwright-core rather than chromium --headless --dump-dom: speedscope
// takes a local file only through a file input or a drop (a file:// URL
// in #profileURL is refused by the browser's file access rules), and a
// check needs the alerts and console errors of the page as well as its
// DOM after the import; the DevTools protocol gives all three.
import { chromium } from 'playwright-core';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const [file, ...names] = process.argv.slice(2);
if (!file) {
  console.error('usage: node speedscope-load.mjs FILE [NAME...]');
  process.exit(2);
}
const index = path.join(here, 'node_modules/speedscope/dist/release/index.html');
let fails = 0;
const ok = (cond, what) => {
  console.log(`${cond ? 'ok' : 'not ok'} - ${what}`);
  if (!cond) fails++;
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--use-gl=swiftshader', '--enable-unsafe-swiftshader'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const problems = [];
  page.on('dialog', async d => {
    problems.push(`dialog: ${d.message()}`);
    await d.dismiss();
  });
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  let importer = null;
  page.on('console', m => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    const t = m.text();
    if (t.startsWith('Importing as ')) importer = t.slice('Importing as '.length);
  });
  await page.goto('file://' + index);
  await page.setInputFiles('input[type=file]', file);
  const base = path.basename(file);
  // imported: speedscope said which importer it used and titled the page
  // "NAME - speedscope" (NAME: the profile's name, else the file's)
  let loaded = false;
  for (let i = 0; i < 300 && !loaded && !problems.length; i++) {
    await page.waitForTimeout(100);
    loaded = importer !== null && (await page.title()).endsWith(' - speedscope');
  }
  ok(loaded && !problems.length,
     `speedscope imported ${base}${importer ? ' as ' + importer : ''}${problems.length ? ': ' + problems.join('; ') : ''}`);
  if (loaded) {
    // the sandwich view lists every function of the profile shown
    await page.keyboard.press('3');
    await page.waitForTimeout(300);
    // every profile (one per thread): 'n' shows the next one
    let text = await page.evaluate(() => document.body.innerText);
    const m = text.match(/\((\d+)\/(\d+)\)/);
    const nprof = m ? Number(m[2]) : 1;
    console.log(`# profiles: ${nprof}`);
    for (let i = 1; i < nprof && i < 64; i++) {
      await page.keyboard.press('n');
      await page.waitForTimeout(200);
      text += '\n' + (await page.evaluate(() => document.body.innerText));
    }
    for (const n of names) ok(text.includes(n), `${base}: the sandwich view shows '${n}'`);
    console.log(`# title: ${await page.title()}`);
    const bar = await page.evaluate(() => document.body.innerText.split('\n').slice(0, 3).join(' | '));
    console.log(`# shown: ${bar}`);
  }
} finally {
  await browser.close();
}
process.exit(fails ? 1 : 0);
