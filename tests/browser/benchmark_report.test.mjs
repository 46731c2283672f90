// The HTML report of `winokit run NAME --html` as a reader sees it, in Debian's chromium driven by
// playwright-core, for two benchmarks of different shapes: SugarCrepe (1 image x its caption and
// a hard negative, 7 subsets) and EqBen (2 captions x 2 images, 3 checks, 2 sources). The example
// browser shows each item's thumbnail(s), its texts with the true one marked and the differing
// words highlighted, the score matrix and each check's comparisons with the failed ones marked;
// it filters by subset and by outcome (of each check), searches, sorts by margin, says what to
// change when nothing matches and enlarges a thumbnail; neither page scrolls sideways at 390 px.
// Screenshots at 390 and 1280 px go to tests/browser/screenshots/ (or $WINOKIT_SCREENSHOTS).
//
//   node benchmark_report.test.mjs <winokit binary>
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [winokit] = process.argv.slice(2);
if (!winokit) throw new Error('usage: node benchmark_report.test.mjs <winokit>');
const here = dirname(fileURLToPath(import.meta.url));
const chromePath = process.env.CHROMIUM || '/usr/bin/chromium';
const work = mkdtempSync(join(tmpdir(), 'winokit-benchmark-reports-'));
const shots = process.env.WINOKIT_SCREENSHOTS || join(here, 'screenshots');
mkdirSync(shots, { recursive: true });

let passed = 0;
const t0 = Date.now();
function ok(name) { passed++; console.log('ok   - ' + name + ' (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)'); }

async function bothWidths(page, name) {
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.waitForTimeout(50);
    const sw = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(sw <= width, name + ' at ' + width + ' px is ' + sw + ' px wide');
    await page.screenshot({ path: join(shots, 'benchmark-' + name + '-' + width + '.png'), fullPage: false });
    await page.locator('#items').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'benchmark-' + name + '-items-' + width + '.png'), fullPage: false });
    await page.evaluate(() => window.scrollTo(0, 0));
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

const run = (args) => execFileSync(winokit, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const syn = join(work, 'syn');
run(['synth', '--out', syn, '--count', '6', '--image-size', '96', '--seed', '3']);
const img = (k, i) => join(syn, 'images', 'ex_' + k + '_img_' + i + '.png');

// SugarCrepe: one file per subset; swap_att holds 3 items (right, a tie, right), add_obj is
// wrong, the others right.
const sc = join(work, 'sc');
mkdirSync(join(sc, 'data'), { recursive: true });
mkdirSync(join(sc, 'images'), { recursive: true });
for (let k = 0; k < 4; k++) copyFileSync(img(k, 0), join(sc, 'images', 'im' + k + '.png'));
const subsets = ['add_obj', 'add_att', 'replace_obj', 'replace_att', 'replace_rel', 'swap_obj', 'swap_att'];
const scores = [];
subsets.forEach((s, n) => {
  const items = s === 'swap_att'
    ? [['a red circle above a blue square', 'a blue circle above a red square', [0.9, 0.1]],
       ['a green square next to a circle', 'a square next to a green circle', [0.5, 0.5]],
       ['two circles', 'one circle', [0.3, 0.2]]]
    : [['a circle on grass', 'a circle and a dog on grass', s === 'add_obj' ? [0.1, 0.2] : [0.6, 0.4]]];
  const file = {};
  items.forEach(([c, d, [p, q]], k) => {
    const key = String(7 * n + k);
    file[key] = { filename: 'im' + (s === 'swap_att' ? k + 1 : 0) + '.png', caption: c, negative_caption: d };
    scores.push(JSON.stringify({ id: s + '/' + key, scores: [[p], [q]] }));
  });
  writeFileSync(join(sc, 'data', (s === 'add_obj' ? 'add_ent' : s) + '.json'), JSON.stringify(file));
});
writeFileSync(join(sc, 'scores.jsonl'), scores.join('\n') + '\n');
run(['run', 'sugarcrepe', '--data', join(sc, 'data'), '--images', join(sc, 'images'), '--scores',
  join(sc, 'scores.jsonl'), '--html', join(work, 'sugarcrepe.html'), '--quiet']);

// EqBen: 3 Winoground-style pairs over two sources: all right; a text tie; image wrong.
const eq = join(work, 'eq');
mkdirSync(join(eq, 'image_subset', 'eqbenag'), { recursive: true });
mkdirSync(join(eq, 'image_subset', 'eqbenkubric'), { recursive: true });
for (let k = 0; k < 3; k++) {
  const src = k < 2 ? 'eqbenag' : 'eqbenkubric';
  copyFileSync(img(k + 2, 0), join(eq, 'image_subset', src, k + 'a.png'));
  copyFileSync(img(k + 2, 1), join(eq, 'image_subset', src, k + 'b.png'));
}
const pair = (k, src) => ({ image0: src + '/' + k + 'a.png', caption0: 'the door is open', image1: src + '/' + k + 'b.png', caption1: 'the door is closed' });
writeFileSync(join(eq, 'eqben.json'), JSON.stringify([pair(0, 'eqbenag'), pair(1, 'eqbenag'), pair(2, 'eqbenkubric')]));
writeFileSync(join(eq, 'scores.jsonl'), [[[0.9, 0.1], [0.2, 0.8]], [[0.9, 0.1], [0.9, 0.95]], [[0.5, 0.6], [0.1, 0.9]]]
  .map((s, k) => JSON.stringify({ id: String(k), scores: s })).join('\n') + '\n');
run(['run', 'eqben', '--data', join(eq, 'eqben.json'), '--images', join(eq, 'image_subset'), '--scores',
  join(eq, 'scores.jsonl'), '--html', join(work, 'eqben.html'), '--quiet']);

const browser = await chromium.launch({ executablePath: chromePath, args: ['--no-sandbox'] });
const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
const page = await context.newPage();
page.on('pageerror', (e) => { throw e; });
const shown = () => page.locator('#items .ex:not([hidden])');
const shownIds = () => shown().evaluateAll((e) => e.map((x) => x.dataset.id));

try {
  // --- SugarCrepe ---
  await page.goto('file://' + join(work, 'sugarcrepe.html'));
  await bothWidths(page, 'sugarcrepe');
  assert.equal(await page.locator('#items .ex').count(), 9);
  assert.match(await page.textContent('#b-count'), /^9 of 9 items shown$/);
  const thumbs = await page.$$eval('#items .ex img', (imgs) => imgs.map((i) => i.complete && i.naturalWidth > 0));
  assert.equal(thumbs.length, 9, 'one thumbnail per item');
  assert.ok(thumbs.every(Boolean), 'every thumbnail decodes');
  const first = page.locator('#items .ex').first();
  assert.match(await first.locator('li.true').textContent(), /^t0 true a circle on grass$/);
  assert.match(await first.locator('li.foil').textContent(), /^t1 foil a circle and a dog on grass$/);
  assert.deepEqual(await first.locator('li.foil mark').allTextContents(), ['and', 'a', 'dog'], 'the words the foil adds are marked');
  assert.match(await first.locator('h3').textContent(), /^Item add_obj\/0 ✗ wrong$/);
  assert.deepEqual(await first.locator('table.ineq tr.fail td').allTextContents(), ['✗', 's(t0, i0) 0.1000', '<', 's(t1, i0) 0.2000', '−0.1000']);
  ok('sugarcrepe: thumbnails, the true caption against its marked foil, the failed comparison with its numbers');

  await page.selectOption('#b-subset', 'swap_att');
  assert.deepEqual(await shownIds(), ['swap_att/42', 'swap_att/43', 'swap_att/44']);
  await page.selectOption('#b-outcome', '0:0');
  assert.deepEqual(await shownIds(), ['swap_att/43'], 'swap_att and wrong: the tie');
  assert.deepEqual(await shown().locator('table.ineq tr.fail td.d').allTextContents(), ['tie']);
  await page.selectOption('#b-subset', '');
  assert.deepEqual(await shownIds(), ['add_obj/0', 'swap_att/43']);
  await page.selectOption('#b-outcome', 'ties');
  assert.deepEqual(await shownIds(), ['swap_att/43']);
  await page.selectOption('#b-outcome', '0:1');
  assert.equal(await shown().count(), 7);
  assert.match(await page.textContent('#b-count'), /^7 of 9 items shown$/);
  ok('sugarcrepe: filter by subset, by right / wrong and ties, alone and together');

  await page.selectOption('#b-outcome', '');
  await page.selectOption('#b-sort', 'margin-asc');
  assert.deepEqual((await shownIds()).slice(0, 2), ['add_obj/0', 'swap_att/43'], 'most wrong first');
  await page.selectOption('#b-sort', 'id');
  await page.fill('#b-search', 'GREEN');
  assert.deepEqual(await shownIds(), ['swap_att/43'], 'search a word of either text');
  await page.fill('#b-search', 'zzzz-no-such-word');
  await page.selectOption('#b-subset', 'add_att');
  await page.locator('#b-empty').waitFor({ state: 'visible' });
  assert.match(await page.textContent('#b-empty'), /No item matches search “zzzz-no-such-word” and subset “add_att \(1\)”\. Change or clear one of these filters/);
  await page.click('#b-clear');
  assert.equal(await shown().count(), 9);
  assert.ok(await page.locator('#b-empty').isHidden());
  ok('sugarcrepe: sort by margin, search, the empty message names the filters, Clear all filters');

  await page.locator('#items .ex').nth(6).locator('button.zoom').click();
  await page.locator('#zoom').waitFor({ state: 'visible' });
  assert.match(await page.getAttribute('#zoom-img', 'src'), /^data:image\/jpeg;base64,/);
  assert.match(await page.textContent('#zoom-cap'), /i0 im1\.png/);
  await page.click('#zoom-close');
  ok('sugarcrepe: a click enlarges a thumbnail');

  // --- EqBen: 2 x 2 items, three checks, two sources ---
  await page.goto('file://' + join(work, 'eqben.html'));
  await bothWidths(page, 'eqben');
  assert.equal(await page.locator('#items .ex img').count(), 6, 'two thumbnails per item');
  assert.deepEqual(await page.locator('#items .ex').first().locator('li.true .badge').allTextContents(), ['true of i0', 'true of i1']);
  assert.deepEqual(await page.locator('#items .ex').first().locator('p.check').allTextContents(),
    ['group score: ✓ right', 'text score: ✓ right', 'image score: ✓ right']);
  assert.equal(await page.locator('#items .ex').first().locator('table.matrix td.truth').count(), 2, 'the true pairs in bold');
  await page.selectOption('#b-outcome', '1:0');
  assert.deepEqual(await shownIds(), ['1'], 'text score wrong: the text tie');
  await page.selectOption('#b-outcome', '2:0');
  assert.deepEqual(await shownIds(), ['2'], 'image score wrong');
  assert.deepEqual(await shown().locator('table.ineq tr.fail td:nth-child(2)').allTextContents(), ['s(t0, i0) 0.5000', 's(t0, i0) 0.5000'],
    'the failed comparison in the group and the image check');
  await page.selectOption('#b-outcome', '');
  await page.selectOption('#b-subset', 'eqbenag');
  assert.deepEqual(await shownIds(), ['0', '1']);
  ok('eqben: two images, both true pairs, group/text/image checks filterable, filter by source');
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(passed + ' passed');
