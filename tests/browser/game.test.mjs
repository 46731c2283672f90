// A whole WinoGAViL game in Debian's chromium, driven by playwright-core: register, qualify,
// create a round, see the rival's picks, three players solve it (one on a phone-sized screen,
// one with the keyboard only), scores and leaderboard update, the export contains it, and a
// reported association is reviewed by an admin; each fixed feedback behaviour is checked on the
// way (no "null" text, a bad Submit's error in the viewport on a phone, buttons disabled while a
// request runs, the signed-in name, a confirmation before Remove). Then the HTML reports (eval,
// compare, WinoGAViL-style markdown pages) at 390 and 1280 px: no horizontal page overflow, and
// the example browser filters and sorts. Screenshots of every page at both widths go to
// tests/browser/screenshots/ (or $WINOKIT_SCREENSHOTS).
//
//   node game.test.mjs <winokit binary> <shared dir>
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [winokit, shared] = process.argv.slice(2);
if (!winokit) throw new Error('usage: node game.test.mjs <winokit> <shared dir>');
const chromePath = process.env.CHROMIUM || '/usr/bin/chromium';
const work = mkdtempSync(join(tmpdir(), 'winokit-browser-'));
const model = join(shared || '', 'golden/clip/models/tiny-quickgelu-hf');

const shots = process.env.WINOKIT_SCREENSHOTS || join(dirname(fileURLToPath(import.meta.url)), 'screenshots');
mkdirSync(shots, { recursive: true });
async function shot(page, name) {
  const w = page.viewportSize().width;
  await page.screenshot({ path: join(shots, name + '-' + w + '.png'), fullPage: true });
}
// The page at both widths: no horizontal overflow of the document, and a screenshot of each.
async function bothWidths(page, name) {
  const original = page.viewportSize();
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.waitForTimeout(50);
    const sw = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(sw <= width, name + ' at ' + width + ' px is ' + sw + ' px wide');
    await shot(page, name);
  }
  await page.setViewportSize(original);
}
async function noNullText(page, where) {
  const text = await page.locator('body').innerText();
  assert.ok(!/\bnull\b|\bundefined\b/.test(text), where + ' shows null/undefined: ' + text.slice(0, 300));
}

let passed = 0;
const t0 = Date.now();
function ok(name) { passed++; console.log('ok   - ' + name + ' (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)'); }

// An image pool from the synthetic dataset, and a one-instance qualification test.
execFileSync(winokit, ['synth', '--out', join(work, 'syn'), '--count', '12', '--image-size', '64']);
const pool = join(work, 'syn', 'images');
writeFileSync(join(work, 'q.csv'),
  'candidates,cue,associations,ID\n' +
  '"[""ex_0_img_0"",""ex_0_img_1"",""ex_1_img_0"",""ex_1_img_1"",""ex_2_img_0""]",pair,"[""ex_0_img_0"",""ex_0_img_1""]",q1\n');
const db = join(work, 'game.db');
const serverArgs = ['serve', '--images', pool, '--db', db, '--port', '0', '--password-cost', 'min',
  '--qualification', join(work, 'q.csv'), '--seed', '5',
  '--cache-dir', join(work, 'cache')];
let rivalIsRandom = true;
try { readFileSync(join(model, 'config.json')); serverArgs.push('--model', model); rivalIsRandom = false; } catch { /* random ViT-B/32 rival */ }
const server = spawn(winokit, serverArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
const base = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/listening on (http:\/\/[^/]+\/)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', (code) => reject(new Error('server exited ' + code)));
  setTimeout(() => reject(new Error('server did not start: ' + out)), 120000);
});

const browser = await chromium.launch({ executablePath: chromePath, args: ['--no-sandbox'] });
const desktop = { viewport: { width: 1280, height: 900 } };
const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

async function player(name, options = desktop) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.on('pageerror', (e) => { throw e; });
  await page.goto(base);
  await page.locator('#name').waitFor();
  if (name === 'spy1') await bothWidths(page, 'game-login');
  await page.fill('#name', name);
  await page.fill('#password', 'password-' + name);
  await page.click('#register-btn');
  await page.waitForURL(/#qualify/);
  await page.getByRole('heading', { name: 'Qualification test' }).waitFor();
  assert.equal(await page.textContent('#whoami'), 'Signed in as ' + name);
  assert.match(await page.textContent('#flash'), new RegExp('Welcome, ' + name));  // kept across the page change
  if (name === 'spy1') await bothWidths(page, 'game-qualify');
  await page.getByRole('checkbox', { name: 'ex_0_img_0' }).check();
  assert.match(await page.locator('#main .counter').first().textContent(), /1 of 2 selected/);
  await page.getByRole('checkbox', { name: 'ex_0_img_1' }).check();
  await page.click('#qualify-submit');
  await page.waitForURL(/#create/);
  return page;
}

async function inViewport(page, locator) {
  const box = await locator.boundingBox();
  const vp = page.viewportSize();
  return box && box.y >= 0 && box.y + box.height <= vp.height && box.x >= 0 && box.x + box.width <= vp.width;
}

// The HTML reports: eval (with the example browser), compare, a markdown-page report.
async function checkReports() {
  const rep = join(work, 'reports');
  mkdirSync(rep, { recursive: true });
  execFileSync(winokit, ['synth', '--out', join(work, 'syn2'), '--count', '40', '--image-size', '256', '--seed', '4']);
  const data = join(work, 'syn2');
  const run = (args) => execFileSync(winokit, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  run(['eval', '--data', data, '--scorer', 'bag-of-words', '--quiet', '--html', join(rep, 'eval.html'), '--scores-out', join(rep, 'bow.jsonl')]);
  run(['eval', '--data', data, '--scorer', 'random', '--quiet', '--scores-out', join(rep, 'random.jsonl')]);
  run(['eval', '--data', data, '--scorer', 'oracle', '--quiet', '--scores-out', join(rep, 'oracle.jsonl'), '--html', join(rep, 'eval-link.html'), '--html-images', 'link']);
  run(['compare', '--data', data, '--quiet', '--html', join(rep, 'compare.html'), 'oracle=' + join(rep, 'oracle.jsonl'),
    'bag-of-words=' + join(rep, 'bow.jsonl'), 'random=' + join(rep, 'random.jsonl')]);
  const pages = ['eval', 'compare', 'eval-link'];
  if (!rivalIsRandom) {  // a markdown-page report (retrieval) with the tiny checkpoint
    run(['retrieval', '--data', data, '--model', model, '--quiet', '--no-cache', '--html', join(rep, 'retrieval.html')]);
    pages.push('retrieval');
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
  const page = await context.newPage();
  page.on('pageerror', (e) => { throw e; });
  const external = [];
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) external.push(r.url()); });
  for (const name of pages) {
    await page.goto('file://' + join(rep, name + '.html'));
    await bothWidths(page, 'report-' + name);
  }
  assert.deepEqual(external, [], 'reports load nothing from outside');
  ok('reports: no horizontal overflow at 390 and 1280 px, nothing loaded from outside, screenshots written');

  // The example browser: outcome filter, tag filter, sort by margin.
  await page.goto('file://' + join(rep, 'compare.html'));
  const items = page.locator('#examples .ex');
  const total = await items.count();
  assert.equal(total, 40);
  const images = await page.locator('#examples img').evaluateAll((imgs) => imgs.map((i) => i.src.slice(0, 23)));
  assert.ok(images.length === 80 && images.every((s) => s === 'data:image/jpeg;base64,'), 'thumbnails are embedded');
  assert.ok(await page.locator('#examples img').first().evaluate((i) => i.complete && i.naturalWidth > 0 && i.naturalWidth <= 160));
  await page.selectOption('#f-outcome', 'not-group');  // outcome of the first run (oracle): none
  assert.match(await page.textContent('#ex-count'), /^0 of 40/);
  await page.selectOption('#f-outcome', '');
  await page.selectOption('#f-model', '0:1:4');  // oracle right, bag-of-words wrong
  const shown = await page.locator('#examples .ex:not([hidden])').count();
  assert.ok(shown > 0 && shown <= 40);
  for (const o of await page.locator('#examples .ex:not([hidden])').evaluateAll((e) => e.map((x) => x.dataset.o))) {
    const [a, b] = o.split(',').map(Number);
    assert.ok((a & 4) && !(b & 4), 'model filter: ' + o);
  }
  await page.selectOption('#f-model', '');
  const tag = await page.locator('#f-tag option').nth(1).getAttribute('value');
  await page.selectOption('#f-tag', tag);
  for (const t of await page.locator('#examples .ex:not([hidden])').evaluateAll((e) => e.map((x) => x.dataset.tags))) {
    assert.ok(t.split('|').includes(tag), 'tag filter');
  }
  await page.selectOption('#f-tag', '');
  await page.selectOption('#f-sort', 'margin-asc');
  const m = await page.locator('#examples .ex').evaluateAll((e) => e.map((x) => Number(x.dataset.margin.split(',')[0])));
  assert.deepEqual(m, [...m].sort((a, b) => a - b), 'sorted by margin');
  // Keyboard: the filters are reachable with Tab and change with the arrow keys.
  await page.focus('#f-outcome');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.$eval('#f-outcome', (s) => s.value), 'group');
  assert.match(await page.textContent('#ex-count'), /^40 of 40/);
  ok('example browser: filters by outcome, model disagreement and tag; sorts by margin; keyboard works');

  await page.goto('file://' + join(rep, 'eval.html'));
  assert.match(await page.textContent('.headline'), /Group score/);
  assert.equal(await page.locator('table.prov').count(), 1, 'provenance is a table');
  assert.ok((await page.locator('mark').count()) > 0, 'differing words are marked');
  console.log('# report sizes: eval.html ' + statSync(join(rep, 'eval.html')).size + ' bytes (40 examples, embedded), eval-link.html ' + statSync(join(rep, 'eval-link.html')).size);
  ok('eval report: headline summary, provenance table, marked caption differences');
  await context.close();
}

try {
  // The spymaster.
  const spy = await player('spy1');
  ok('register and pass the qualification test');
  if (rivalIsRandom) assert.match(await spy.textContent('#rival-note'), /random-weight/);
  await spy.getByRole('heading', { name: 'Spymaster' }).waitFor();
  await noNullText(spy, 'spymaster page');
  await bothWidths(spy, 'game-spymaster');
  // A bad Submit (no images, no cue): the error shows next to the button, in the viewport.
  await spy.setViewportSize({ width: 390, height: 844 });
  await spy.evaluate(() => document.getElementById('cue').removeAttribute('required'));
  await spy.click('#submit-round');
  const spyErr = spy.locator('#main .inline-error').first();
  await spyErr.waitFor();
  assert.ok(await spyErr.isVisible());
  assert.ok(await inViewport(spy, spyErr), 'the Submit error is in the viewport on a phone');
  await shot(spy, 'game-spymaster-error');
  await spy.setViewportSize({ width: 1280, height: 900 });
  ok('spymaster: a bad Submit shows its error next to the button, in view on a phone');
  const boxes = spy.locator('#main .grid input[type=checkbox]');
  const n = await boxes.count();
  assert.ok([5, 6, 10, 12].includes(n), 'candidates: ' + n);
  const gold = [await boxes.nth(n - 1).getAttribute('value'), await boxes.nth(n - 2).getAttribute('value')];
  await boxes.nth(n - 1).check();
  await boxes.nth(n - 2).check();
  assert.match(await spy.locator('#main .counter').textContent(), /2 selected \(choose 2.5\)/);
  await spy.fill('#cue', 'ocean');
  // While the request runs the button is disabled and says so.
  let release;
  const held = new Promise((r) => { release = r; });
  await spy.route('**/api/rounds/*/submit', async (route) => { await held; await route.continue(); });
  await spy.click('#submit-round');
  await spy.waitForFunction(() => document.getElementById('submit-round').disabled);
  assert.match(await spy.textContent('#submit-round'), /Asking the rival/);
  release();
  await spy.locator('#model-score').waitFor();
  await spy.unroute('**/api/rounds/*/submit');
  assert.equal(await spy.locator('#main .inline-error:visible').count(), 0, 'old errors are cleared after a success');
  ok('spymaster: Submit is disabled while its request runs; the old error is gone after success');
  assert.match(await spy.textContent('#model-score'), /Model score: \d+\.\d/);
  assert.match(await spy.textContent('#fool-score'), /Fool-the-AI: \d+\.\d/);
  assert.equal(await spy.locator('#round-result .card.model').count(), 2);
  assert.equal(await spy.locator('#round-result .badge.model').count(), 2, 'rival picks are marked in words');
  assert.equal(await spy.locator('#round-result .badge.gold').count(), 2, 'your images are marked in words');
  assert.match(await spy.textContent('#round-result h3'), /ocean/);  // the cue is repeated
  assert.match(await spy.textContent('#score-help'), /Jaccard/);
  await noNullText(spy, 'round result');
  await bothWidths(spy, 'game-spymaster-result');
  ok('create a round and see the rival\'s picks and scores');

  // Three solvers: desktop, phone, keyboard only.
  for (const [name, options, keyboard] of [['solver1', desktop, false], ['solver2', phone, false], ['solver3', desktop, true]]) {
    const page = await player(name, options);
    await page.goto(base + '#solve');
    await page.locator('#solve-cue').waitFor();
    assert.equal(await page.textContent('#solve-cue'), 'ocean');
    assert.equal(await page.locator('.card.gold').count(), 0, 'no answer shown before solving');
    if (options === phone) {
      await page.click('#submit-solve');  // nothing selected
      const err = page.locator('#main .inline-error').first();
      await err.waitFor();
      assert.ok(await inViewport(page, err), 'the solve error is in the viewport on a phone');
      await shot(page, 'game-solve-error');
    }
    if (name === 'solver1') await bothWidths(page, 'game-solve');
    for (const g of gold) {
      const box = page.getByRole('checkbox', { name: g });
      if (keyboard) { await box.focus(); await page.keyboard.press('Space'); } else { await box.check(); }
    }
    if (keyboard) { await page.locator('#submit-solve').focus(); await page.keyboard.press('Enter'); } else { await page.click('#submit-solve'); }
    await page.locator('#solve-score').waitFor();
    assert.equal(await page.textContent('#solve-score'), 'Your score: 100.0');
    assert.equal(await page.locator('#solve-result .badge.mine').count(), 2, 'the solver\'s own picks are shown');
    assert.equal(await page.locator('#solve-result .badge.gold').count(), 2);
    await noNullText(page, 'solve result');
    if (name === 'solver1') await bothWidths(page, 'game-solve-result');
    ok('solve it: ' + name + (keyboard ? ' (keyboard only)' : options === phone ? ' (phone-sized screen)' : ''));
    await page.context().close();
  }

  await spy.goto(base + '#dashboard');
  await spy.locator('#dash-rounds tbody tr').first().waitFor();
  const row = await spy.locator('#dash-rounds tbody tr').first().textContent();
  assert.match(row, /ocean/);
  assert.match(row, /complete/);
  assert.match(row, /100\.0/);  // solvable-by-humans
  await noNullText(spy, 'dashboard');
  await bothWidths(spy, 'game-dashboard');
  ok('dashboard shows the completed association');
  await spy.goto(base + '#leaderboard');
  await spy.locator('#lb-solvers tbody tr').first().waitFor();
  assert.match(await spy.locator('#lb-spymasters').textContent(), /spy1/);
  assert.equal(await spy.locator('#lb-solvers tbody tr').count(), 3);
  await bothWidths(spy, 'game-leaderboard');
  // The leaderboard's last column is reachable on a phone (inside its scroll box).
  await spy.setViewportSize({ width: 390, height: 844 });
  const wrapFits = await spy.evaluate(() => [...document.querySelectorAll('.table-wrap')].every(w => w.getBoundingClientRect().right <= window.innerWidth + 0.5));
  assert.ok(wrapFits, 'leaderboard tables stay inside the phone screen');
  await spy.setViewportSize({ width: 1280, height: 900 });
  // The menu link of the page shown starts it again.
  await spy.goto(base + '#create');
  await spy.locator('#cue').waitFor();
  const firstCandidates = await spy.locator('#main .grid input').evaluateAll((e) => e.map((x) => x.value).join());
  await spy.fill('#cue', 'leftover');
  await spy.click('nav a[href="#create"]');
  await spy.waitForFunction(() => document.getElementById('cue') && document.getElementById('cue').value === '');
  ok('clicking the current page\'s menu link starts it again' + (firstCandidates ? '' : ''));
  ok('leaderboard lists the spymaster and the three solvers');

  const csv = execFileSync(winokit, ['game', 'export', '--db', db, '--min-solvable', '80']).toString();
  assert.match(csv, /ocean/);
  assert.match(csv, /^candidates,cue,associations,score_fool_the_ai/);
  ok('export contains the association');

  // A second round, reported by a solver, reviewed by the admin.
  await spy.locator('#cue').waitFor();
  const b2 = spy.locator('#main .grid input[type=checkbox]');
  await b2.nth(0).check();
  await b2.nth(1).check();
  await spy.fill('#cue', 'mystery');
  await spy.click('#submit-round');
  await spy.locator('#model-score').waitFor();
  const reporter = await player('reporter');
  await reporter.goto(base + '#solve');
  await reporter.locator('#solve-cue').waitFor();
  reporter.on('dialog', () => { throw new Error('no browser dialogs: the report form is in the page'); });
  await reporter.click('#report');
  await reporter.locator('#report-reason').waitFor();
  await bothWidths(reporter, 'game-report-form');
  await reporter.fill('#report-reason', 'not a real association');
  await reporter.click('#report-send');
  await reporter.getByText('nothing to solve right now').waitFor();
  ok('report takes the association from its reporter at once (hidden for everyone at a second reporter)');
  const admin = await player('admin1');
  // The admin role by secret: granted offline to the existing account, never by name at start.
  execFileSync(winokit, ['game', 'admin', '--db', db, '--grant', 'admin1']);
  await admin.goto(base + '#admin');
  await admin.reload();
  await admin.getByText('not a real association').waitFor();
  await noNullText(admin, 'admin page');
  await bothWidths(admin, 'game-admin');
  // Remove asks first; Cancel keeps the report.
  await admin.getByRole('button', { name: 'Remove\u2026' }).click();
  const confirm = admin.locator('.confirm');
  await confirm.waitFor();
  assert.match(await confirm.textContent(), /for good/);
  await shot(admin, 'game-admin-confirm');
  await admin.getByRole('button', { name: 'Cancel' }).click();
  assert.ok(await confirm.isHidden());
  await admin.getByText('not a real association').waitFor();
  ok('Remove asks for confirmation first');
  await admin.getByRole('button', { name: 'Restore' }).click();
  await admin.getByText('Nothing to review.').waitFor();
  await bothWidths(admin, 'game-admin-empty');
  ok('admin reviews and restores it');

  await checkReports();
} finally {
  server.kill('SIGTERM');
  await browser.close();
}
console.log('browser: ' + passed + ' passed, 0 failed (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)');
process.exit(0);
