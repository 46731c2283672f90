// The HTML reports as a reader sees them, in Debian's chromium driven by playwright-core:
// the example browser explains each failure (the text and image scores' two comparisons with
// their numbers and a mark), searches captions and ids, enlarges a thumbnail, filters compare
// reports by any run's outcome and by one run right and another wrong, says what to change when
// nothing matches, and marks the words that moved; the charts carry their labels and values
// without hovering (WinoGAViL bars with an axis and values, group-chart labels inside the chart);
// wide tables say that they scroll; probe plots come before the provenance and fit a phone; the
// heat-map report has a viewport, a colour scale and a provenance table. Screenshots at 390 and
// 1280 px go to tests/browser/screenshots/ (or $WINOKIT_SCREENSHOTS).
//
//   node report.test.mjs <winokit binary> <shared dir>
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [winokit, shared] = process.argv.slice(2);
if (!winokit) throw new Error('usage: node report.test.mjs <winokit> <shared dir>');
const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const chromePath = process.env.CHROMIUM || '/usr/bin/chromium';
const work = mkdtempSync(join(tmpdir(), 'winokit-reports-'));
const model = join(shared || '', 'golden/clip/models/tiny-quickgelu-hf');
const haveModel = existsSync(join(model, 'config.json'));
const shots = process.env.WINOKIT_SCREENSHOTS || join(here, 'screenshots');
mkdirSync(shots, { recursive: true });

let passed = 0;
const t0 = Date.now();
function ok(name) { passed++; console.log('ok   - ' + name + ' (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)'); }
function skip(name) { console.log('skip - ' + name); }

// The page at both widths: no horizontal overflow of the document, and a screenshot of each.
async function bothWidths(page, name) {
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.waitForTimeout(50);
    const sw = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(sw <= width, name + ' at ' + width + ' px is ' + sw + ' px wide');
    await page.screenshot({ path: join(shots, 'report-' + name + '-' + width + '.png'), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

// Every <text> of every chart lies inside its <svg> (nothing clipped, like "djective-Color").
async function chartTextInside(page, where) {
  const out = await page.$$eval('svg', (svgs) => {
    const bad = [];
    for (const svg of svgs) {
      const box = svg.getBoundingClientRect();
      if (box.width === 0) continue;
      for (const t of svg.querySelectorAll('text')) {
        const r = t.getBoundingClientRect();
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
          bad.push(t.textContent + ' [' + [r.left, r.top, r.right, r.bottom].map(Math.round) + '] outside [' +
            [box.left, box.top, box.right, box.bottom].map(Math.round) + ']');
        }
      }
    }
    return bad;
  });
  assert.deepEqual(out, [], where + ': chart labels clipped');
}

const run = (args) => execFileSync(winokit, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const rep = join(work, 'reports');
mkdirSync(rep, { recursive: true });
execFileSync(winokit, ['synth', '--out', join(work, 'syn'), '--count', '40', '--image-size', '256', '--seed', '4']);
const data = join(work, 'syn');
run(['eval', '--data', data, '--scorer', 'bag-of-words', '--quiet', '--scores-out', join(rep, 'bow.jsonl')]);
run(['eval', '--data', data, '--scorer', 'random', '--quiet', '--scores-out', join(rep, 'random.jsonl'), '--html', join(rep, 'eval.html')]);
run(['eval', '--data', data, '--scorer', 'oracle', '--quiet', '--scores-out', join(rep, 'oracle.jsonl')]);
run(['compare', '--data', data, '--quiet', '--html', join(rep, 'compare.html'), 'oracle=' + join(rep, 'oracle.jsonl'),
  'bag-of-words=' + join(rep, 'bow.jsonl'), 'random=' + join(rep, 'random.jsonl')]);

const browser = await chromium.launch({ executablePath: chromePath, args: ['--no-sandbox'] });
const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
const page = await context.newPage();
page.on('pageerror', (e) => { throw e; });
const shown = () => page.locator('#examples .ex:not([hidden])');

try {
  // --- eval report: each example's four comparisons, with the failed ones marked ---
  await page.goto('file://' + join(rep, 'eval.html'));
  await bothWidths(page, 'eval');
  const rows = await page.$$eval('#examples .ex', (exs) => exs.map((ex) => ({
    o: +ex.dataset.o,
    fails: [...ex.querySelectorAll('table.ineq tr.fail')].map((r) => r.querySelector('th').textContent),
    cells: [...ex.querySelectorAll('table.ineq tr.pass, table.ineq tr.fail')].map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
    heads: [...ex.querySelectorAll('table.ineq tr.hd th')].map((th) => th.textContent),
  })));
  assert.equal(rows.length, 40);
  let failures = 0;
  for (const r of rows) {
    const textOk = !!(r.o & 1), imageOk = !!(r.o & 2);
    const textFails = r.fails.filter((w) => w === 'i0' || w === 'i1').length;
    const imageFails = r.fails.filter((w) => w === 'c0' || w === 'c1').length;
    assert.equal(textFails === 0, textOk, 'text score right exactly when neither text comparison fails: ' + JSON.stringify(r));
    assert.equal(imageFails === 0, imageOk, 'image score right exactly when neither image comparison fails');
    assert.match(r.heads[0], textOk ? /^Text score ✓ right/ : /^Text score ✗ wrong/);
    assert.match(r.heads[1], imageOk ? /^Image score ✓ right/ : /^Image score ✗ wrong/);
    assert.equal(r.cells.length, 4, 'four comparisons');
    for (const [mark, left, op, right, diff] of r.cells) {
      // One format: "s(cX, iY) 0.1234" on both sides, the actual relation, a signed difference.
      assert.match(left, /^s\(c[01], i[01]\) -?\d+\.\d{4}$/);
      assert.match(right, /^s\(c[01], i[01]\) -?\d+\.\d{4}$/);
      const a = Number(left.split(' ').pop()), b = Number(right.split(' ').pop());
      assert.equal(op, a > b ? '>' : a < b ? '<' : '=', 'the relation shown is the real one');
      assert.match(diff, /^([+−](\d+\.\d{4}|<0\.0001)|tie)$/);
      assert.equal(mark, a > b ? '✓' : '✗');
    }
    failures += r.fails.length;
  }
  assert.ok(failures > 0, 'the random scorer fails some comparisons');
  const failRow = page.locator('#examples table.ineq tr.fail').first();
  const bg = await failRow.locator('td').nth(1).evaluate((td) => getComputedStyle(td).backgroundColor);
  assert.notEqual(bg, 'rgba(0, 0, 0, 0)', 'a failed comparison has a background');
  ok('eval browser: the two comparisons of the text and of the image score with numbers in one format and the failed ones marked');

  // Search by id and by caption word.
  const firstId = await page.locator('#examples .ex').nth(7).getAttribute('data-id');
  await page.fill('#f-search', firstId);
  assert.equal(await shown().count(), 1, 'an id finds its example');
  assert.equal(await shown().first().getAttribute('data-id'), firstId);
  const caption = await page.locator('#examples .ex').nth(3).getAttribute('data-text');
  const word = caption.split(' ').find((w) => w.length > 3);
  await page.fill('#f-search', word.toUpperCase());
  const hits = await shown().evaluateAll((e) => e.map((x) => x.dataset.text));
  assert.ok(hits.length >= 1 && hits.every((t) => t.includes(word)), 'caption word "' + word + '" search');
  assert.match(await page.textContent('#ex-count'), new RegExp('^' + hits.length + ' of 40'));
  ok('search by id and by caption word (case-insensitive)');

  // Nothing matches: the message names the filters to change, and "Clear all filters" works.
  await page.fill('#f-search', 'zzzz-no-such-word');
  await page.locator('#ex-empty').waitFor({ state: 'visible' });
  assert.match(await page.textContent('#ex-empty'), /No example matches search “zzzz-no-such-word”\. Change this filter/);
  await page.selectOption('#f-outcome', 'group');
  assert.match(await page.textContent('#ex-empty'), /search “zzzz-no-such-word” and outcome “group right”\. Change or clear one of these filters/);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(shots, 'report-eval-empty-390.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.click('#f-clear');
  assert.equal(await page.locator('#ex-empty').isVisible(), false);
  assert.equal(await shown().count(), 40);
  assert.equal(await page.$eval('#f-search', (i) => i.value), '');
  ok('an empty result says which filters to change and clears them');

  // Click a thumbnail: the image enlarged in a dialog with its caption; Escape closes it.
  const thumb = page.locator('#examples button.zoom').first();
  const src = await thumb.locator('img').getAttribute('src');
  await thumb.click();
  await page.locator('#zoom').waitFor({ state: 'visible' });
  assert.equal(await page.getAttribute('#zoom-img', 'src'), src);
  const big = await page.$eval('#zoom-img', (i) => i.getBoundingClientRect().width);
  const small = await thumb.evaluate((b) => b.getBoundingClientRect().width);
  assert.ok(big > 2 * small, 'enlarged: ' + big + ' px vs ' + small + ' px');
  assert.match(await page.textContent('#zoom-cap'), /i0, its caption c0:/);
  await page.screenshot({ path: join(shots, 'report-eval-zoom-1280.png') });
  await page.keyboard.press('Escape');
  await page.locator('#zoom').waitFor({ state: 'hidden' });
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('zoom')), true, 'focus returns to the thumbnail');
  ok('a thumbnail enlarges on click and Escape closes it');

  // Word diff: the words that moved are marked, the shared ones in place are not.
  const diffs = await page.$$eval('#examples .ex', (exs) => exs.map((ex) => [...ex.querySelectorAll('figcaption .cap')].map((cap) => {
    const words = [];
    for (const n of cap.childNodes) {
      if (n.nodeType === Node.TEXT_NODE) n.textContent.split(/\s+/).filter(Boolean).forEach((w) => words.push([w, false]));
      else words.push([n.textContent, n.tagName === 'MARK']);
    }
    return words;
  })));
  let marked = 0;
  for (const [a, b] of diffs) {
    const keptA = a.filter(([, m]) => !m).map(([w]) => w.toLowerCase());
    const keptB = b.filter(([, m]) => !m).map(([w]) => w.toLowerCase());
    // The unmarked words are one sequence common to both captions; the marked ones are the rest.
    assert.deepEqual(keptA, keptB, 'unmarked words in the same order: ' + JSON.stringify([a, b]));
    const ma = a.filter(([, m]) => m).length;
    if (a.map(([w]) => w).join(' ') !== b.map(([w]) => w).join(' ')) assert.ok(ma > 0 && ma < a.length, 'some, not all, words marked');
    marked += ma;
  }
  assert.ok(marked > 0);
  ok('word diff: unmarked words are one common sequence, marked words moved or changed');

  // Wide tables say so at 390 px and not at 1280 px when they fit.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(100);
  const overflowing = await page.$$eval('.scroll', (ds) => ds.filter((d) => d.scrollWidth > d.clientWidth + 1).length);
  const hints = await page.locator('.scroll-hint').count();
  assert.ok(overflowing > 0, 'some table is wider than a phone');
  assert.equal(hints, overflowing, 'every overflowing table has a hint');
  assert.match(await page.locator('.scroll-hint').first().textContent(), /scroll sideways/);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForTimeout(100);
  const wide = await page.$$eval('.scroll', (ds) => ds.filter((d) => d.scrollWidth > d.clientWidth + 1).length);
  assert.equal(await page.locator('.scroll-hint').count(), wide, 'hints follow the window size');
  ok('wide tables show that they scroll (' + overflowing + ' at 390 px, ' + wide + ' at 1280 px)');

  // Charts: group-chart labels inside the chart at both widths.
  await chartTextInside(page, 'eval');
  await page.setViewportSize({ width: 390, height: 844 });
  await chartTextInside(page, 'eval at 390 px');
  await page.setViewportSize({ width: 1280, height: 900 });
  ok('eval charts: no label outside its chart');

  // --- compare report: filter by any run's outcome and by one run right, another wrong ---
  await page.goto('file://' + join(rep, 'compare.html'));
  await bothWidths(page, 'compare');
  const runs = await page.$$eval('#f-run option', (o) => o.map((x) => x.textContent));
  assert.deepEqual(runs, ['oracle', 'bag-of-words', 'random']);
  await page.selectOption('#f-run', '2');
  await page.selectOption('#f-outcome', 'text-wrong');
  const outs = await shown().evaluateAll((e) => e.map((x) => x.dataset.o.split(',').map(Number)));
  assert.ok(outs.length > 0 && outs.every((o) => !(o[2] & 1)), 'outcome of the chosen run (random): text wrong');
  assert.ok(outs.length < 40);
  await page.selectOption('#f-outcome', '');
  await page.selectOption('#f-model', '2:1:2');  // random image right, bag-of-words wrong
  const pairs = await shown().evaluateAll((e) => e.map((x) => x.dataset.o.split(',').map(Number)));
  assert.ok(pairs.length > 0 && pairs.every((o) => (o[2] & 2) && !(o[1] & 2)), 'random image right, bag-of-words image wrong');
  const option = await page.$eval('#f-model', (s) => s.options[s.selectedIndex].textContent);
  assert.equal(option, 'random image right, bag-of-words wrong');
  await page.selectOption('#f-model', '1:0:4');  // bag-of-words group right, oracle wrong: none
  await page.locator('#ex-empty').waitFor({ state: 'visible' });
  assert.match(await page.textContent('#ex-empty'), /runs “bag-of-words group right, oracle wrong”/);
  await page.selectOption('#f-model', '');
  // The margin sort follows the chosen run.
  await page.selectOption('#f-sort', 'margin-asc');
  const m = await page.locator('#examples .ex').evaluateAll((e) => e.map((x) => Number(x.dataset.margin.split(',')[2])));
  assert.deepEqual(m, [...m].sort((a, b) => a - b), 'sorted by the random run\'s margin');
  // Each example shows every run's comparisons.
  assert.equal(await page.locator('#examples .ex').first().locator('table.ineq').count(), 3);
  ok('compare browser: outcome of any run, "A right, B wrong" per score, empty message names the runs filter, sort by the chosen run');

  // --- WinoGAViL report: bars with an axis, values and a headline naming the game's solvers ---
  const wga = join(repo, 'tests/fixtures/winogavil');
  run(['winogavil', '--data', join(wga, 'test_sets_with_zero_shot_predictions/game_10_12_with_predictions.csv'),
    '--predictions-column', 'clip_vit_32_predictions', '--types', join(wga, 'model_analysis_on_different_association_types.csv'),
    '--bootstrap', '50', '--quiet', '--html', join(rep, 'winogavil.html')]);
  await page.goto('file://' + join(rep, 'winogavil.html'));
  await bothWidths(page, 'winogavil');
  const headline = await page.textContent('.headline');
  assert.ok(!/humans/.test(headline), 'the headline does not call the game\'s solvers humans: ' + headline);
  assert.match(headline, /the game's own solvers/);
  const charts = await page.$$eval('.chart svg', (svgs) => svgs.map((s) => ({
    ticks: [...s.querySelectorAll('text.tick')].map((t) => t.textContent),
    axis: s.querySelector('text.axis-title')?.textContent,
    values: [...s.querySelectorAll('text.value')].map((t) => t.textContent),
    bars: s.querySelectorAll('rect.bar').length,
  })));
  assert.ok(charts.length >= 3);
  for (const c of charts) {
    assert.deepEqual(c.ticks, ['0', '25', '50', '75', '100']);
    assert.equal(c.axis, 'Mean Jaccard (%)');
    assert.equal(c.values.length, c.bars);
    for (const v of c.values) assert.match(v, /^\d+\.\d$/);
  }
  // The values printed are the table's.
  const first = await page.$eval('.chart svg text.value', (t) => t.textContent);
  const table = await page.$eval('.chart + .scroll table tr:nth-child(2) td:nth-child(3)', (td) => td.textContent);
  assert.equal(first, table);
  await chartTextInside(page, 'winogavil');
  ok('WinoGAViL report: bars with a 0-100 axis and their values, labels inside, headline names the game\'s solvers');

  if (haveModel) {
    // --- heat-map report on a phone ---
    run(['heatmap', '--data', data, '--model', model, '--examples', '0,3', '--no-cache', '--html', join(rep, 'heatmap.html'), '--out-dir', join(rep, 'maps')]);
    await page.goto('file://' + join(rep, 'heatmap.html'));
    assert.equal(await page.getAttribute('meta[name=viewport]', 'content'), 'width=device-width, initial-scale=1');
    await bothWidths(page, 'heatmap');
    assert.equal(await page.locator('.heat-scale svg linearGradient stop').count(), 9, 'colour scale');
    assert.match(await page.textContent('.heat-scale figcaption'), /lowest similarity in the map.*highest/);
    assert.equal(await page.locator('table.prov').count(), 1, 'provenance is a table');
    await page.setViewportSize({ width: 390, height: 844 });
    const perRow = await page.$$eval('.maps', (ms) => {
      const f = [...ms[0].querySelectorAll('figure')].map((x) => Math.round(x.getBoundingClientRect().top));
      return f.filter((t) => t === f[0]).length;
    });
    assert.ok(perRow >= 2, 'two maps per row on a phone');
    const names = execFileSync('ls', [join(rep, 'maps')]).toString().trim().split('\n');
    assert.ok(names.every((n) => /^ex\d+_i[01]_c[01]_t\d+_[a-z0-9]+\.png$/.test(n)), 'PNGs named by word: ' + names.slice(0, 3));
    ok('heat-map report: viewport, colour scale, provenance table, two maps per row on a phone, PNGs named by word');

    // --- probe report: plots before the provenance, inside the page on a phone ---
    run(['probe', '--data', data, '--model', model, '--no-cache', '--seeds', '1', '--epochs', '5', '--layers', 'all', '--quiet', '--html', join(rep, 'probe.html')]);
    await page.goto('file://' + join(rep, 'probe.html'));
    await bothWidths(page, 'probe');
    const order = await page.evaluate(() => {
      const plot = document.querySelector('.chart svg');
      const prov = [...document.querySelectorAll('h2')].find((h) => h.textContent === 'Provenance');
      return plot.compareDocumentPosition(prov) & Node.DOCUMENT_POSITION_FOLLOWING ? 'plots first' : 'provenance first';
    });
    assert.equal(order, 'plots first');
    await page.setViewportSize({ width: 390, height: 844 });
    const fits = await page.$$eval('.chart svg', (s) => s.every((x) => x.getBoundingClientRect().right <= window.innerWidth));
    assert.ok(fits, 'probe plots inside a phone screen');
    await chartTextInside(page, 'probe at 390 px');
    ok('probe report: plots before the provenance and inside a phone screen');
  } else {
    skip('heat-map and probe reports: no tiny checkpoint in ' + model);
  }
} finally {
  await browser.close();
}
console.log('report browser tests: ' + passed + ' passed');
