#!/bin/bash
# -printmode html (er_print's "printmode html"), read as a person reads it:
# each view's page opened in Debian's headless Chromium
# (tests/browser/read-html.js) must show what the text form shows.  On the
# erprint fixture's experiment (traced too, for the tracing views):
#   - table views (-functions, -callers-callees, -calltree, -lines, -pcs,
#     -objects, -threads, -sync, -io): the rows of the pages' tables, as
#     rendered, are the text form's rows (the lines that start with a
#     number), in order, whitespace aside; <Total>'s name shows as
#     "<Total>" (escaped, not an element);
#   - text views (-fsummary, -header, -dump stacks, -overview): the
#     pages' <pre> text is the text form, line for line;
#   - every page: titled "sonde print -VIEW", no text outside its <pre>
#     blocks and tables, no script error; several views are several
#     documents, as er_print writes them.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
CHROMIUM=${SONDE_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ] || [ ! -d "$TOP/tests/browser/node_modules/playwright-core" ] || ! command -v node >/dev/null; then
	notok "the browser test needs chromium, node and tests/browser/node_modules (sh scripts/deps.sh check installs them)"
	exit 1
fi
"$SONDE" collect -p hi -s on -i on -o e.er "$FIX/erprint" 0.4 >/dev/null 2>&1 || notok "erprint collected"

TABLES="functions callers-callees calltree lines pcs objects threads sync io"
TEXTS="fsummary header overview dump"
pages=""
for v in $TABLES $TEXTS; do
	arg=""
	[ "$v" = dump ] && arg=stacks
	"$SONDE" print -$v $arg e.er >"$v.txt" 2>/dev/null
	"$SONDE" print -printmode html -$v $arg e.er >"$v.html" 2>/dev/null
	pages="$pages $TMP/$v.html"
done
(cd "$TOP/tests/browser" && node read-html.js $pages) >pages.json 2>read.err ||
	{ notok "read-html.js: $(head -3 read.err)"; exit 1; }

node -e '
const fs = require("fs");
const pages = fs.readFileSync("pages.json", "utf8").trim().split("\n").map(JSON.parse);
const [tables, texts] = [process.argv[1].split(" "), process.argv[2].split(" ")];
const norm = (s) => s.replace(/\s+/g, " ").trim();
let i = 0;
for (const v of [...tables, ...texts]) {
	const p = pages[i++];
	const text = fs.readFileSync(v + ".txt", "utf8");
	const bad = [];
	if (p.title !== "sonde print -" + v) bad.push("title " + JSON.stringify(p.title));
	if (p.stray.length) bad.push("text outside <pre> and tables: " + JSON.stringify(p.stray.slice(0, 2)));
	if (p.errors.length) bad.push("script errors: " + p.errors.join("; "));
	if (tables.includes(v)) {
		const want = text.split("\n").filter((l) => /^\s*[-+]?[0-9]/.test(l)).map(norm);
		const got = [].concat(...p.tables.map((t) => t.filter((r) => !r.h).map((r) => norm(r.c.join(" ")))));
		if (!want.length) bad.push("the text form has no rows");
		const first = want.findIndex((w, k) => w !== got[k]);
		if (got.length !== want.length || first >= 0)
			bad.push(`rows: ${got.length} in tables, ${want.length} in text; first difference at ${first}: ` +
				JSON.stringify(got[first]) + " / " + JSON.stringify(want[first]));
		const pre = p.pre.split("\n").map(norm).filter((l) => l);
		const lines = new Set(text.split("\n").map(norm));
		const lost = pre.filter((l) => !lines.has(l));
		if (lost.length) bad.push("<pre> lines not in the text form: " + JSON.stringify(lost.slice(0, 2)));
		if (v === "functions" && !got.some((r) => r.endsWith(" <Total>")))
			bad.push("no <Total> row as text");
		if (bad.length) console.log(`not ok - html -${v}: ` + bad.join("; "));
		else console.log(`ok - html -${v}: ${got.length} rows in ${p.tables.length} table(s), the text form'"'"'s`);
	} else {
		if (norm(p.pre) !== norm(text) || p.pre.trimEnd() !== text.trimEnd()) {
			const a = p.pre.split("\n"), b = text.split("\n");
			const k = b.findIndex((l, j) => l !== a[j]);
			bad.push(`<pre> text differs from the text form at line ${k + 1}: ` + JSON.stringify(a[k]) + " / " + JSON.stringify(b[k]));
		}
		if (bad.length) console.log(`not ok - html -${v}: ` + bad.join("; "));
		else console.log(`ok - html -${v}: the <pre> text is the text form (${text.split("\n").length} lines)`);
	}
}
' "$TABLES" "$TEXTS"

# several views: one document each, as er_print's
"$SONDE" print -printmode html -functions -objects e.er >two.html 2>/dev/null
n=$(grep -c '^<!DOCTYPE html>' two.html) m=$(grep -c '^</body></html>$' two.html)
[ "$n" = 2 ] && [ "$m" = 2 ] && ok "two views: two documents" || notok "two views: $n heads, $m ends"
rc 2 "-printmode htm: a usage error" "$SONDE" print -printmode htm -functions e.er
